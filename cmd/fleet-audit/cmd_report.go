package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/fleet-audit/fleet-audit/audit"
	"github.com/fleet-audit/fleet-audit/report"
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
run's gate, so CI can re-gate a stored run.

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
			r, err := untilDone(c.Context, func() (*audit.Report, error) {
				f, err := os.Open(path)
				if err != nil {
					return nil, &usageError{fmt.Errorf("report: %w", err)}
				}
				defer f.Close()
				r, err := report.ReadJSON(f)
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
				if err := checkOutputDir(format, p); err != nil {
					return err
				}
				outputs[format] = p
			}
			return emitReport(r, outputs, outputOptions{Quiet: c.Bool("quiet"), Verbose: c.Bool("verbose")}, c.App.Writer, c.App.ErrWriter)
		},
	}
}
