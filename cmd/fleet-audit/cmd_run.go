package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fleet-audit/fleet-audit/audit"
	"github.com/fleet-audit/fleet-audit/remote"
	"github.com/fleet-audit/fleet-audit/result"
)

// runOptions is what the run and demo commands' flags fill in.
type runOptions struct {
	Inventory        inventorySource
	Forks            int
	ConnectTimeout   time.Duration
	NodeTimeout      time.Duration
	FailOn           result.Severity
	AllowUnreachable bool
	NoAgent          bool
	// HostKeyPolicy is --host-key-policy; HostKeyDefault when not given,
	// so each host's own (inventory, ssh_config) applies.
	HostKeyPolicy remote.HostKeyPolicy
	// Quiet and Verbose choose how much of the terminal report is printed.
	Quiet, Verbose bool
	// Outputs maps a report format to the file it is written to.
	Outputs map[string]string
	// RetryFile is --retry-file: where the names of the nodes not fully
	// audited are written.
	RetryFile string
	// WaiversPath, ProbesDir, Only, Skip and TargetVersion choose what the
	// run judges; see loadRules.
	WaiversPath   string
	ProbesDir     string
	Only, Skip    []string
	TargetVersion string
}

func runCommand(act func(context.Context, runOptions, streams) error) *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "audit every node of an inventory and gate on the findings",
		UsageText: "fleet-audit run -i FILE [options]",
		Description: `Connects to every inventory host over SSH (or locally for connection: local),
runs the embedded read-only probes in one session per node, compares the nodes
and prints findings first, then drift. Host keys are checked against known_hosts;
an unknown or changed key fails that node, never silently trusted.

EXAMPLES:
   fleet-audit run -i inventory.yaml
   fleet-audit run -i inventory.yaml --forks 20 --html report.html --junit junit.xml
   fleet-audit run -i inventory.yaml --fail-on warning --allow-unreachable
   fleet-audit run -i inventory.yaml --waivers waivers.yaml --skip 'conntrack.*'
   fleet-audit run -i inventory.yaml --probes ./site-probes --target-version v1.32.5+rke2r1

Report formats: ` + formatNames() + `

` + exitStatusHelp,
		Flags: flags(inventoryFlags(), []cli.Flag{
			&cli.BoolFlag{Name: "no-agent", Usage: "do not use the ssh-agent at SSH_AUTH_SOCK"},
			&cli.StringFlag{Name: "host-key-policy", Value: "strict", Usage: "what to do with a host key known_hosts does not vouch for: `POLICY` strict (refuse), accept-new (record unknown keys, refuse changed ones) or insecure-ignore (accept anything; the report says so). Given, it beats the inventory's host_key_policy and ssh_config's StrictHostKeyChecking"},
		}, auditFlags(), []cli.Flag{
			&cli.BoolFlag{Name: "allow-unreachable", Usage: "do not fail the gate (exit 3) because some node could not be audited"},
			&cli.StringFlag{Name: "retry-file", Usage: "write the nodes that could not be fully audited to `FILE`, one per line (empty when all were), for a later --limit @FILE"},
		}, formatFlags(), outputFlags(), ruleFlags()),
		Action: func(c *cli.Context) error {
			o, err := runOptionsFrom(c)
			if err != nil {
				return err
			}
			return internal(act(c.Context, o, streamsOf(c)))
		},
	}
}

// runOptionsFrom reads run's flags; demo reads the ones it shares with
// run through it too (a flag demo does not have reads as its zero value).
func runOptionsFrom(c *cli.Context) (runOptions, error) {
	src, err := inventorySourceFrom(c)
	if err != nil {
		return runOptions{}, err
	}
	o := runOptions{
		Inventory: src, NoAgent: c.Bool("no-agent"),
		Forks: c.Int("forks"), ConnectTimeout: c.Duration("connect-timeout"), NodeTimeout: c.Duration("node-timeout"),
		AllowUnreachable: c.Bool("allow-unreachable"), RetryFile: c.String("retry-file"), Quiet: c.Bool("quiet"), Verbose: c.Bool("verbose"), Outputs: outputsFrom(c),
	}
	sev, err := result.ParseSeverity(c.String("fail-on"))
	if err != nil {
		return o, &usageError{fmt.Errorf("--fail-on: %w", err)}
	}
	o.FailOn = sev
	if o.Forks < 1 {
		return o, &usageError{fmt.Errorf("--forks: want at least 1, got %d", o.Forks)}
	}
	if o.ConnectTimeout <= 0 || o.NodeTimeout <= 0 {
		return o, &usageError{fmt.Errorf("--connect-timeout and --node-timeout must be positive")}
	}
	o.WaiversPath, o.ProbesDir = c.String("waivers"), c.String("probes")
	o.Only, o.Skip = patterns(c.StringSlice("only")), patterns(c.StringSlice("skip"))
	o.TargetVersion = strings.TrimSpace(c.String("target-version"))
	if o.TargetVersion != "" && !audit.TargetVersionRe.MatchString(o.TargetVersion) {
		return o, &usageError{fmt.Errorf("--target-version %q: want an RKE2 release such as v1.31.4+rke2r1 (v1.MINOR.PATCH+rke2rN)", o.TargetVersion)}
	}
	// Only given: the default leaves each host's own policy in force.
	if c.IsSet("host-key-policy") {
		if o.HostKeyPolicy, err = remote.ParseHostKeyPolicy(c.String("host-key-policy")); err != nil {
			return o, &usageError{fmt.Errorf("--host-key-policy: %w", err)}
		}
	}
	return o, nil
}

// runAudit is the run command: load the inventory, then the shared
// pipeline.
func runAudit(ctx context.Context, o runOptions, s streams) error {
	// -i /dev/stdin or a FIFO can block for ever.
	inv, err := untilDone(ctx, o.Inventory.load)
	if err != nil {
		return err
	}
	return auditAndReport(ctx, inv, o, s.out, s.err)
}
