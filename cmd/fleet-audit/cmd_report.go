package main

import (
	"context"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/fleet-audit/fleet-audit/audit"
	"github.com/fleet-audit/fleet-audit/result"
)

// reportOptions is what the report command's flags fill in.
type reportOptions struct {
	// Path is the saved results file.
	Path string
	// Outputs maps a report format to the file it is written to.
	Outputs map[string]string
	Output  outputOptions
	// FailOn, when not nil, re-judges the saved run at this severity
	// instead of exiting with its saved gate.
	FailOn *result.Severity
}

// reportExitStatus is run's exit status as report gives it back: the saved
// gate, not a new one.
const reportExitStatus = `EXIT STATUS:
   0    the saved run's gate passed
   1    the saved run had a finding at or above its --fail-on (or this --fail-on)
   2    usage or input error (bad flag, unexpected argument, a file that is not a
        saved run, or one whose gate is not what its own findings give)
   3    the saved run had no failing finding, but some node was not audited
        (unless it ran with --allow-unreachable)
   4    internal failure (a report could not be written or printed)
   130  the saved run was interrupted, or this command was`

func reportCommand(act func(context.Context, reportOptions, streams) error) *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "re-render a saved run (--json results) in any format, without contacting a node",
		UsageText: "fleet-audit report RESULTS.json [--fail-on SEVERITY] " + formatUsage() + " [-q]",
		Description: `Reads the JSON a run wrote with --json and renders it again: the terminal
summary on stdout and any report file asked for. The saved judgement is kept
as it was on the day (findings, waivers, gate), so a report attached to a
change request today says what the audit said then. Exits with the saved
run's gate, so CI can re-gate a stored run; a file whose gate (exit_code,
passed, fail_on) is not what its own findings and node statuses give is
refused with exit 2. Every fact value and every text that can quote a node
goes through this release's redactor again, so a file written before a
secret's shape was known does not publish it (diff and merge do the same).

--fail-on re-judges the saved findings at another severity with run's own
gate (a run gated at critical, judged again at warning); the run's
--allow-unreachable and --allow-partial stay as they were. The reports
then carry the new gate, and say that it was re-judged.

EXAMPLES:
   fleet-audit report results.json
   fleet-audit report results.json --html report.html --markdown report.md --junit junit.xml
   fleet-audit report results.json --fail-on warning -q

` + reportExitStatus,
		ArgsUsage: "RESULTS.json",
		Flags: flags([]cli.Flag{&cli.StringFlag{Name: "fail-on", Usage: "re-judge the saved run: fail the gate on findings at or above `SEVERITY` (" + severityWords + "; default: the run's own)"}},
			formatFlags(), outputFlags()),
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return &usageError{fmt.Errorf("report: want one saved results file (written by run --json)")}
			}
			o := reportOptions{
				Path: c.Args().First(), Outputs: outputsFrom(c),
				Output: outputOptions{Quiet: c.Bool("quiet"), Verbose: c.Bool("verbose")},
			}
			if c.IsSet("fail-on") {
				sev, err := result.ParseSeverity(c.String("fail-on"))
				if err != nil {
					return &usageError{fmt.Errorf("--fail-on: %w", err)}
				}
				o.FailOn = &sev
			}
			return internal(act(c.Context, o, streamsOf(c)))
		},
	}
}

// runReport reads a saved run, refuses it if its gate was tampered with,
// and emits it as run would have.
func runReport(ctx context.Context, o reportOptions, s streams) error {
	if err := checkOutputs(o.Outputs, pathArg{"saved run", o.Path}); err != nil {
		return err
	}
	// A pipe (report /dev/stdin) or a FIFO can block for ever: an
	// interrupt must still end the command.
	r, err := untilDone(ctx, func() (*result.Report, error) {
		f, err := os.Open(o.Path)
		if err != nil {
			return nil, &usageError{fmt.Errorf("report: %w", err)}
		}
		defer f.Close()
		r, err := result.ReadJSON(f)
		if err == nil {
			err = checkSavedGate(r)
		}
		if err == nil {
			// A file written before a secret's shape was known still
			// holds it: every render redacts again.
			audit.RedactSaved(r)
			if o.FailOn != nil {
				rejudge(r, *o.FailOn)
			}
			audit.JudgeReadiness(r)
		}
		if err != nil {
			return nil, &usageError{fmt.Errorf("report: %s: %w", o.Path, err)}
		}
		return r, nil
	})
	if err != nil {
		return err
	}
	return emitReport(r, o.Outputs, o.Output, s.out, s.err)
}

// checkSavedGate refuses a saved run whose gate is not the one its own
// findings, node statuses and policy (fail_on, allow_unreachable,
// allow_partial) give:
// report exits with that gate, so a hand-edited or hostile exit_code
// (256, which a shell sees as 0; 0 over a critical finding) must not become
// a CI verdict. The reasons are display text and may be worded by an older
// release; the verdict fields are not.
func checkSavedGate(r *result.Report) error {
	g := r.Gate
	if _, err := result.ParseSeverity(g.FailOn.String()); err != nil {
		return fmt.Errorf("gate.fail_on: %w", err)
	}
	want := audit.EvaluateGate(r, audit.GatePolicy{FailOn: g.FailOn, AllowUnreachable: g.AllowUnreachable, AllowPartial: g.AllowPartial})
	if g.ExitCode != want.ExitCode {
		return fmt.Errorf("gate.exit_code is %d, but the file's findings and node statuses under gate.fail_on %s, gate.allow_unreachable %t and gate.allow_partial %t give %d: refusing an inconsistent file",
			g.ExitCode, g.FailOn, g.AllowUnreachable, g.AllowPartial, want.ExitCode)
	}
	if g.Passed != want.Passed {
		return fmt.Errorf("gate.passed is %t, but gate.exit_code %d means %t: refusing an inconsistent file", g.Passed, g.ExitCode, want.Passed)
	}
	return nil
}

// rejudge replaces a saved run's gate (already checked against its
// findings) with run's gate at failOn, the run's other policy kept, and
// says so in the reasons: a report that shows a verdict the run never
// gave must not pass for the run's own.
func rejudge(r *result.Report, failOn result.Severity) {
	saved := r.Gate.FailOn
	r.Gate = audit.EvaluateGate(r, audit.GatePolicy{FailOn: failOn, AllowUnreachable: r.Gate.AllowUnreachable, AllowPartial: r.Gate.AllowPartial})
	if failOn != saved {
		r.Gate.Reasons = append(r.Gate.Reasons, fmt.Sprintf("re-judged at --fail-on %s by fleet-audit report (the run gated at %s)", failOn, saved))
	}
}
