package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/fleet-audit/fleet-audit/audit"
	"github.com/fleet-audit/fleet-audit/audit/catalog"
	"github.com/fleet-audit/fleet-audit/report"
	"github.com/fleet-audit/fleet-audit/result"
)

// diffOptions is what the diff command's flags fill in.
type diffOptions struct {
	Before, After string
	// Outputs maps a diff format to the file it is written to.
	Outputs          map[string]string
	FailOn           result.Severity
	AllowUnreachable bool
	IncludeVolatile  bool
	Quiet            bool
}

// diffExitStatus is the diff's own gate, not either run's.
const diffExitStatus = `EXIT STATUS:
   0    nothing got worse
   1    a finding at or above --fail-on (default critical) is new or got worse
   2    usage or input error (bad flag, unexpected argument, a file that is not
        a saved run)
   3    a node audited before could not be audited after (unless
        --allow-unreachable)
   4    internal failure (a diff could not be written or printed)
   130  interrupted`

func diffCommand(act func(context.Context, diffOptions, streams) error) *cli.Command {
	var formatFlags []cli.Flag
	usage := "fleet-audit diff BEFORE.json AFTER.json"
	for _, f := range diffFormats() {
		formatFlags = append(formatFlags, &cli.StringFlag{Name: f, Usage: "write the diff as " + f + " to `FILE`"})
		usage += " [--" + f + " FILE]"
	}
	return &cli.Command{
		Name:      "diff",
		Usage:     "show what changed between two saved runs (--json results): nodes, statuses, facts, findings",
		UsageText: usage + " [--fail-on SEVERITY] [-q]",
		ArgsUsage: "BEFORE.json AFTER.json",
		Description: `Compares two runs of the same fleet, as saved with run --json: "audit
before, audit after the upgrade", or the drift that crept in since the last
audit. It lists nodes added and removed, node status changes, fact changes
grouped across the nodes they happened on (volatile facts such as counters
and load are left out unless --include-volatile), and findings that are new
or resolved, per check and node. Each run's judgement is kept as it was on
its day; a finding waived in a run counts as absent there.

The diff's own gate exits 1 when a finding at or above --fail-on (default
critical) is new or got worse, and 3 when a node audited before could not be
audited after (unless --allow-unreachable), since then the diff cannot say
nothing broke there.

EXAMPLES:
   fleet-audit diff before.json after.json
   fleet-audit diff last-week.json today.json --markdown diff.md --json diff.json

` + diffExitStatus,
		Flags: flags(formatFlags, []cli.Flag{
			&cli.StringFlag{Name: "fail-on", Value: "critical", Usage: "exit 1 when a new finding is at least `SEVERITY` (" + severityWords + ")"},
			&cli.BoolFlag{Name: "allow-unreachable", Usage: "do not exit 3 when a node audited before was not audited after"},
			&cli.BoolFlag{Name: "include-volatile", Usage: "also compare volatile facts (counters, load, timings)"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only the verdict line"},
		}),
		Action: func(c *cli.Context) error {
			if c.NArg() < 2 {
				return &usageError{fmt.Errorf("diff: want two saved results files (BEFORE.json AFTER.json, written by run --json), got %d arguments", c.NArg())}
			}
			failOn, err := result.ParseSeverity(c.String("fail-on"))
			if err != nil {
				return &usageError{fmt.Errorf("--fail-on: %w", err)}
			}
			o := diffOptions{
				Before: c.Args().Get(0), After: c.Args().Get(1), Outputs: map[string]string{}, FailOn: failOn,
				AllowUnreachable: c.Bool("allow-unreachable"), IncludeVolatile: c.Bool("include-volatile"), Quiet: c.Bool("quiet"),
			}
			for _, f := range diffFormats() {
				if p := c.String(f); p != "" {
					o.Outputs[f] = p
				}
			}
			return internal(act(c.Context, o, streamsOf(c)))
		},
	}
}

// runDiff compares two saved runs and gates on what got worse.
func runDiff(ctx context.Context, o diffOptions, s streams) error {
	if err := checkOutputs(o.Outputs, pathArg{"BEFORE", o.Before}, pathArg{"AFTER", o.After}); err != nil {
		return err
	}
	before, err := untilDone(ctx, func() (*result.Report, error) { return readSavedRun(o.Before) })
	if err != nil {
		return err
	}
	after, err := untilDone(ctx, func() (*result.Report, error) { return readSavedRun(o.After) })
	if err != nil {
		return err
	}
	cat, err := catalog.Builtin()
	if err != nil {
		return err
	}
	do := audit.DiffOptionsFor(cat.Probes)
	do.FailOn, do.AllowUnreachable, do.IncludeVolatile = o.FailOn, o.AllowUnreachable, o.IncludeVolatile
	d := audit.Compare(before, after, do)
	d.Before.Source, d.After.Source = o.Before, o.After
	return emitDiff(d, o.Outputs, o.Quiet, s.out, s.err)
}

func readSavedRun(path string) (*result.Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &usageError{fmt.Errorf("diff: %w", err)}
	}
	defer f.Close()
	r, err := result.ReadJSON(f)
	if err != nil {
		return nil, &usageError{fmt.Errorf("diff: %s: %w", path, err)}
	}
	audit.RedactSaved(r)
	return r, nil
}

// emitDiff writes a diff (emit), with the terminal diff or, with -q, the
// diff gate's verdict as its summary.
func emitDiff(d *result.Diff, outputs map[string]string, quiet bool, stdout, stderr io.Writer) error {
	return emit(document{
		noun:    "diff",
		formats: report.DiffFormats(),
		render: func(w io.Writer, format string) error {
			return report.FormatDiff(w, format, d, terminalWidth(w, os.Getenv))
		},
		summary: func(w io.Writer) error {
			if quiet {
				_, err := fmt.Fprintln(w, "diff gate: "+report.Verdict(d.Gate))
				return err
			}
			return report.FormatDiff(w, "terminal", d, terminalWidth(w, os.Getenv))
		},
		exit: d.Gate.ExitCode,
	}, outputs, stdout, stderr)
}
