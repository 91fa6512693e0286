package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/fleet-audit/fleet-audit/audit/catalog"
	"github.com/fleet-audit/fleet-audit/report"
)

// explainOptions is what the explain command's flags fill in.
type explainOptions struct {
	// ID is the check or finding to explain; empty lists the ids.
	ID        string
	ProbesDir string
	JSON      bool
}

func explainCommand(act func(context.Context, explainOptions, streams) error) *cli.Command {
	return &cli.Command{
		Name:      "explain",
		Usage:     "explain a check or finding: what it means, why it matters for an upgrade, how to check it by hand",
		UsageText: "fleet-audit explain [ID] [--probes DIR] [--json]",
		Description: `Prints, for a check or finding id (as in a report, --only, --skip or a
waiver): its title and severity, what it means, why it matters for an
upgrade, each fact it reads with the commands that show that fact on a node
by hand, the remediation, and the upstream references. Without an id it
lists every id it can explain. Contacts nothing; --probes DIR explains your
own checks too, as run would load them.

EXAMPLES:
   fleet-audit explain firewall.ufw-active
   fleet-audit explain skew.kubelet-newer --json
   fleet-audit explain correlation.kubeproxy.healthz-failing
   fleet-audit explain

EXIT STATUS:
   0    explained (or listed)
   2    usage error: an id that names no check or finding (the closest are
        suggested), a bad flag, or a --probes DIR with errors
   4    internal failure (the output could not be written)`,
		ArgsUsage: "[ID]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "probes", Usage: "also explain the checks in `DIR`"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON for machines (a list of {id, kind, title} without an id)"},
		},
		Action: func(c *cli.Context) error {
			return internal(act(c.Context, explainOptions{ID: c.Args().First(), ProbesDir: c.String("probes"), JSON: c.Bool("json")}, streamsOf(c)))
		},
	}
}

// runExplain explains one id, or lists them all.
func runExplain(ctx context.Context, o explainOptions, s streams) error {
	cat, err := untilDone(ctx, func() (*catalog.Catalog, error) { return loadCatalog(o.ProbesDir) })
	if err != nil {
		return err
	}
	if o.ID == "" {
		return listExplainable(cat, o.JSON, s)
	}
	e, err := cat.Explain(o.ID)
	var unknown *catalog.UnknownIDError
	if errors.As(err, &unknown) {
		return &usageError{fmt.Errorf("explain: %w", err)}
	}
	if err != nil {
		return err
	}
	out := &errWriter{w: s.out}
	if o.JSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		// Commands hold <node-name> and &&: kept readable, as typed.
		enc.SetEscapeHTML(false)
		if err := enc.Encode(e); err != nil {
			return err
		}
		return out.err
	}
	if err := report.WriteExplanation(out, e, terminalWidth(s.out, os.Getenv)); err != nil {
		return err
	}
	return out.err
}

// listExplainable prints every id explain knows with what it is.
func listExplainable(cat *catalog.Catalog, asJSON bool, s streams) error {
	type row struct {
		ID    string `json:"id"`
		Kind  string `json:"kind"`
		Title string `json:"title"`
	}
	all, err := cat.ExplainAll()
	if err != nil {
		return err
	}
	rows := []row{}
	for _, e := range all {
		title := e.Title
		if title == "" {
			title = e.Summary
		}
		rows = append(rows, row{e.ID, e.Kind, title})
	}
	out := &errWriter{w: s.out}
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rows); err != nil {
			return err
		}
		return out.err
	}
	// Ids and titles can come from a --probes file: escaped as in a report.
	cells := make([][]string, len(rows))
	for i, r := range rows {
		cells[i] = []string{report.OneLine(r.ID), report.OneLine(r.Title)}
	}
	width := terminalWidth(s.out, os.Getenv)
	for _, l := range report.Table(width, 0, []report.Column{
		{Min: 20, Fit: report.Ident},
		{Min: 20, Fit: report.Words},
	}, cells) {
		fmt.Fprintln(out, l)
	}
	fmt.Fprintln(out)
	for _, l := range report.Wrap("fleet-audit explain ID explains one; fleet-audit probes lists the probes and facts too.", width, 2) {
		fmt.Fprintln(out, l)
	}
	return out.err
}
