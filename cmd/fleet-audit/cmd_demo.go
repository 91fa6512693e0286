package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/fleet-audit/fleet-audit/internal/demo"
	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/inventory"
)

func demoCommand() *cli.Command {
	return &cli.Command{
		Name:      "demo",
		Usage:     "audit a simulated 9-node fleet that reproduces the UFW / kube-proxy incident",
		UsageText: "fleet-audit demo [--out DIR]",
		Description: `Starts 9 SSH servers on 127.0.0.1 (3 etcd, 2 control-plane, 4 workers), each
running the real probe scripts with /bin/sh against a simulated node (stub
commands and files), with UFW active on etcd-1, etcd-2, worker-2 and worker-4.
It audits them through the same code path as run, writes report.html,
report.md, results.json and junit.xml to DIR, and exits 0 even though the
gate fails, since the failure is the point of the demo.

EXAMPLES:
   fleet-audit demo
   fleet-audit demo --out /tmp/fleet-audit-demo
   fleet-audit demo --probes examples/probes --skip 'conntrack.*'`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "out", Value: "demo-out", Usage: "write the reports to `DIR`"},
		}, append(append(append([]cli.Flag{}, auditFlags()[:4]...), outputFlags()...), ruleFlags()...)...),
		Action: func(c *cli.Context) error {
			o, err := runOptionsFrom(c)
			if err != nil {
				return err
			}
			out := c.String("out")
			if err := os.MkdirAll(out, 0o755); err != nil {
				return &usageError{fmt.Errorf("--out: %w", err)}
			}
			work, err := os.MkdirTemp("", "fleet-audit-demo-")
			if err != nil {
				return fmt.Errorf("demo: %w", err)
			}
			defer os.RemoveAll(work)
			fleet, err := demo.Start(c.Context, work, nodesim.Incident(), demo.Options{})
			if err != nil {
				return err
			}
			defer fleet.Close()
			inv, err := inventory.Load(fleet.InventoryPath, inventory.LoadOptions{})
			if err != nil {
				return fmt.Errorf("demo inventory: %w", err)
			}
			o.NoAgent = true
			o.Outputs = map[string]string{
				"html": filepath.Join(out, "report.html"), "markdown": filepath.Join(out, "report.md"),
				"json": filepath.Join(out, "results.json"), "junit": filepath.Join(out, "junit.xml"),
			}
			err = auditAndReport(c.Context, inv, o, c.App.Writer, c.App.ErrWriter)
			if ge, ok := err.(*gateError); ok && ge.code == exitGateFailed {
				fmt.Fprintln(c.App.ErrWriter, "fleet-audit: the demo's gate failed as intended: `fleet-audit run` would exit 1 here")
				return nil
			}
			return err
		},
	}
}
