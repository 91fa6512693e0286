package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/fleet-audit/fleet-audit/audit"
	"github.com/fleet-audit/fleet-audit/result"
)

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "re-render a saved run (--json results) in any format, without contacting a node",
		UsageText: "fleet-audit report RESULTS.json [--html FILE] [--markdown FILE] [--junit FILE] [--json FILE] [-q]",
		Description: `Reads the JSON a run wrote with --json and renders it again: the terminal
summary on stdout and any report file asked for. The saved judgement is kept
as it was on the day (findings, waivers, gate), so a report attached to a
change request today says what the audit said then. Exits with the saved
run's gate, so CI can re-gate a stored run; a file whose gate (exit_code,
passed, fail_on) is not what its own findings and node statuses give is
refused with exit 2.

EXAMPLES:
   fleet-audit report results.json
   fleet-audit report results.json --html report.html --markdown report.md --junit junit.xml

` + exitStatusHelp,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "json", Usage: "write the results again to `FILE` (normalised)"},
			&cli.StringFlag{Name: "markdown", Usage: "write a Markdown report to `FILE`"},
			&cli.StringFlag{Name: "html", Usage: "write a self-contained HTML report to `FILE`"},
			&cli.StringFlag{Name: "junit", Usage: "write JUnit XML to `FILE`"},
			&cli.BoolFlag{Name: reparsedFlag, Hidden: true},
		}, outputFlags()...),
		Action: func(c *cli.Context) error {
			if rerun, err := rerunWithTrailingFlags(c, "report"); rerun {
				return err
			}
			if c.NArg() != 1 {
				return &usageError{fmt.Errorf("report: want one saved results file (written by run --json), got %d arguments", c.NArg())}
			}
			path := c.Args().First()
			// A pipe (report /dev/stdin) or a FIFO can block for ever:
			// an interrupt must still end the command.
			r, err := untilDone(c.Context, func() (*result.Report, error) {
				f, err := os.Open(path)
				if err != nil {
					return nil, &usageError{fmt.Errorf("report: %w", err)}
				}
				defer f.Close()
				r, err := result.ReadJSON(f)
				if err == nil {
					err = checkSavedGate(r)
				}
				if err != nil {
					return nil, &usageError{fmt.Errorf("report: %s: %w", path, err)}
				}
				return r, nil
			})
			if err != nil {
				return err
			}
			outputs := map[string]string{}
			for _, format := range []string{"json", "markdown", "html", "junit"} {
				p := c.String(format)
				if p == "" {
					continue
				}
				outputs[format] = p
			}
			if err := checkOutputs(outputs); err != nil {
				return err
			}
			return emitReport(r, outputs, outputOptions{Quiet: c.Bool("quiet"), Verbose: c.Bool("verbose")}, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// checkSavedGate refuses a saved run whose gate is not the one its own
// findings, node statuses and policy (fail_on, allow_unreachable) give:
// report exits with that gate, so a hand-edited or hostile exit_code
// (256, which a shell sees as 0; 0 over a critical finding) must not become
// a CI verdict. The reasons are display text and may be worded by an older
// release; the verdict fields are not.
func checkSavedGate(r *result.Report) error {
	g := r.Gate
	if _, err := result.ParseSeverity(g.FailOn.String()); err != nil {
		return fmt.Errorf("gate.fail_on: %w", err)
	}
	want := audit.EvaluateGate(r, audit.GatePolicy{FailOn: g.FailOn, AllowUnreachable: g.AllowUnreachable})
	if g.ExitCode != want.ExitCode {
		return fmt.Errorf("gate.exit_code is %d, but the file's findings and node statuses under gate.fail_on %s and gate.allow_unreachable %t give %d: refusing an inconsistent file",
			g.ExitCode, g.FailOn, g.AllowUnreachable, want.ExitCode)
	}
	if g.Passed != want.Passed {
		return fmt.Errorf("gate.passed is %t, but gate.exit_code %d means %t: refusing an inconsistent file", g.Passed, g.ExitCode, want.Passed)
	}
	return nil
}
