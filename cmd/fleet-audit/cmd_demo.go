package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/fleet-audit/fleet-audit/cmd/fleet-audit/internal/demo"
	"github.com/fleet-audit/fleet-audit/inventory"
	"github.com/fleet-audit/fleet-audit/report"
)

// demoOptions is what the demo command's flags fill in: run's, less the
// inventory, SSH and report flags, which the demo sets itself.
type demoOptions struct {
	// Out is the directory the reports are written to.
	Out string
	runOptions
}

func demoCommand(act func(context.Context, demoOptions, streams) error) *cli.Command {
	return &cli.Command{
		Name:      "demo",
		Usage:     "audit a simulated 9-node fleet that reproduces the UFW / kube-proxy incident",
		UsageText: "fleet-audit demo [--out DIR]",
		Description: `Starts 9 SSH servers on 127.0.0.1 (3 etcd, 2 control-plane, 4 workers), each
running the real probe scripts with /bin/sh against a simulated node (stub
commands and files), with UFW active on etcd-1, etcd-2, worker-2 and worker-4,
and beside that incident an etcd snapshot three days old on etcd-3, a pod on
worker-1 whose PodDisruptionBudget blocks its drain, and a client of an API
that the default --target-version (` + demo.Target + `) removes.
It audits them through the same code path as run, writes every report
(report.html, report.md, summary.md, results.json, junit.xml,
fleet-audit.prom, and the runbook plan.md and plan.yml) to DIR, and exits 0
even though the gate fails, since the failure is the point of the demo.

EXAMPLES:
   fleet-audit demo
   fleet-audit demo --out /tmp/fleet-audit-demo
   fleet-audit demo --probes examples/probes --skip 'conntrack.*'`,
		Flags: flags([]cli.Flag{
			&cli.StringFlag{Name: "out", Value: "demo-out", Usage: "write the reports to `DIR`"},
		}, auditFlags(), outputFlags(), ruleFlags(), changeFlags()),
		Action: func(c *cli.Context) error {
			o, err := runOptionsFrom(c)
			if err != nil {
				return err
			}
			return internal(act(c.Context, demoOptions{Out: c.String("out"), runOptions: o}, streamsOf(c)))
		},
	}
}

// runDemo starts the simulated fleet and audits it through run's pipeline,
// writing every file format of the report registry into o.Out.
func runDemo(ctx context.Context, o demoOptions, s streams) error {
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return &usageError{fmt.Errorf("--out: %w", err)}
	}
	work, err := os.MkdirTemp("", "fleet-audit-demo-")
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	defer os.RemoveAll(work)
	fleet, err := demo.Start(ctx, work, demo.Members(), demo.Options{})
	if err != nil {
		return err
	}
	defer fleet.Close()
	inv, err := inventory.Load(fleet.InventoryPath, inventory.LoadOptions{})
	if err != nil {
		return fmt.Errorf("demo inventory: %w", err)
	}
	ro := o.runOptions
	ro.NoAgent = true
	if ro.TargetVersion == "" {
		ro.TargetVersion = demo.Target
	}
	ro.Outputs = map[string]string{}
	for _, f := range report.FileFormats() {
		ro.Outputs[f.Name] = filepath.Join(o.Out, f.DemoFile)
	}
	err = auditAndReport(ctx, inv, ro, s.out, s.err)
	if ge, ok := err.(*gateError); ok && ge.code == exitGateFailed {
		fmt.Fprintln(s.err, "fleet-audit: the demo's gate failed as intended: `fleet-audit run` would exit 1 here")
		return nil
	}
	return err
}
