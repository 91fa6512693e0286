package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/fleet-audit/fleet-audit/audit"
	"github.com/fleet-audit/fleet-audit/result"
)

// mergeOptions is what the merge command's flags fill in.
type mergeOptions struct {
	// Paths are the shard reports (run --shard K/N --json).
	Paths []string
	// Judge holds the rules and gate policy merge judges the union by
	// (the rest of runOptions is unused).
	Judge runOptions
	// RunID is --run-id: when given, the run every shard must be of.
	RunID   string
	Outputs map[string]string
	Output  outputOptions
}

const mergeExitStatus = `EXIT STATUS:
   0    the merged gate passed
   1    a finding at or above --fail-on (default critical)
   2    usage or input error (bad flag, a file that is not a shard report, shards
        of different runs, inventories, releases or rules, the same shard twice,
        overlapping nodes, rules other than the shards ran with)
   3    no finding failed, but some node was not audited, the hosts of a shard
        not given included (unless --allow-unreachable)
   4    internal failure (a report could not be written or printed)
   130  a shard was interrupted, or this command was`

// The rules are given to merge again, not read from the shards: a report
// can carry neither the embedded probes and checks of the release nor a
// --probes directory, and Analyze needs them (which facts are volatile,
// role-scoped). Each shard records a digest of its rules, so merge refuses
// to judge by any others.
func mergeCommand(act func(context.Context, mergeOptions, streams) error) *cli.Command {
	return &cli.Command{
		Name:      "merge",
		Usage:     "join the reports of run --shard K/N into the report of one run, judged as one",
		UsageText: "fleet-audit merge SHARD.json... [--run-id ID] [--fail-on SEVERITY] [--allow-unreachable] [--waivers FILE] [--only P] [--skip P] [--probes DIR] [--target-version V] [--etcd-snapshot-max-age D] [--ca-horizon D] " + formatUsage() + " [-q|-v]",
		Description: `Reads the JSON reports that run --shard K/N --json wrote, one per shard,
puts their nodes together in inventory order and judges them again as one
fleet: checks, drift, correlation, version skew, the cluster view (the one a
single run would have had: the first server in inventory order that
answered), waivers and the gate. N shards merged give the report a single run
of the whole inventory gives, byte for byte but for its times.

Give merge the rule flags the shards ran with (--fail-on, --allow-unreachable,
--waivers, --only, --skip, --probes, --target-version, --etcd-snapshot-max-age,
--ca-horizon): each shard records what judged it, and merge refuses other rules. It also refuses shards of different
runs (run --run-id; with merge's own --run-id, shards of any other run), of
different inventories or fleet-audit releases, the same shard twice and
overlapping nodes. The hosts of
a shard not given are nodes with status shard_missing: not audited, so the gate
exits 3 unless --allow-unreachable.

EXAMPLES:
   fleet-audit run -i inventory.yaml --shard 1/2 --run-id 4711 --json shard-1.json   # on one runner
   fleet-audit run -i inventory.yaml --shard 2/2 --run-id 4711 --json shard-2.json   # on another
   fleet-audit merge shard-1.json shard-2.json --run-id 4711 --json results.json --html report.html --junit junit.xml

` + mergeExitStatus,
		ArgsUsage: "SHARD.json...",
		Flags:     flags([]cli.Flag{runIDFlag(), failOnFlag(), allowUnreachableFlag(), allowPartialFlag()}, ruleFlags(), changeFlags(), formatFlags(), outputFlags()),
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return &usageError{errors.New("merge: want the shard reports (written by run --shard K/N --json)")}
			}
			o := mergeOptions{Paths: c.Args().Slice(), Outputs: outputsFrom(c), Output: outputOptions{Quiet: c.Bool("quiet"), Verbose: c.Bool("verbose")}}
			if err := judgeOptionsFrom(c, &o.Judge); err != nil {
				return err
			}
			var err error
			if o.RunID, err = runIDFrom(c); err != nil {
				return err
			}
			return internal(act(c.Context, o, streamsOf(c)))
		},
	}
}

// runMerge reads the shards, merges them under the rules given and emits
// the merged report as run would have.
func runMerge(ctx context.Context, o mergeOptions, s streams) error {
	inputs := []pathArg{{"--waivers", o.Judge.WaiversPath}}
	for _, p := range o.Paths {
		inputs = append(inputs, pathArg{"shard", p})
	}
	if err := checkOutputs(o.Outputs, inputs...); err != nil {
		return err
	}
	rl, err := untilDone(ctx, func() (audit.Rules, error) { return loadRules(o.Judge) })
	if err != nil {
		return err
	}
	var shards []audit.ShardFile
	for _, p := range o.Paths {
		// A pipe or a FIFO can block for ever: an interrupt must still
		// end the command.
		r, err := untilDone(ctx, func() (*result.Report, error) { return readShard(p) })
		if err != nil {
			return err
		}
		shards = append(shards, audit.ShardFile{Path: p, Report: r})
	}
	r, err := audit.Merge(shards, audit.MergeOptions{Rules: rl, TargetVersion: o.Judge.TargetVersion, Thresholds: &o.Judge.Thresholds, ToolVersion: buildVersion, RunID: o.RunID, Change: o.Judge.Change})
	if err != nil {
		return &usageError{fmt.Errorf("merge: %w", err)}
	}
	return emitReport(r, o.Outputs, o.Output, s.out, s.err)
}

// readShard reads a shard report; a file that is no saved run is input,
// exit 2.
func readShard(path string) (*result.Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &usageError{fmt.Errorf("merge: %w", err)}
	}
	defer f.Close()
	r, err := result.ReadJSON(f)
	if err != nil {
		return nil, &usageError{fmt.Errorf("merge: %s: %w", path, err)}
	}
	audit.RedactSaved(r)
	return r, nil
}
