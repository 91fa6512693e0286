package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/fleet-audit/fleet-audit/audit/catalog"
	"github.com/fleet-audit/fleet-audit/report"
)

// catalogEntry is one row of `fleet-audit probes`, and one element of its
// --json output. Probes leave Severity empty; checks leave NeedsRoot false
// and list the facts they read in Facts.
type catalogEntry struct {
	Kind        string   `json:"kind"`
	ID          string   `json:"id"`
	Scope       string   `json:"scope"`
	NeedsRoot   bool     `json:"needs_root"`
	Severity    string   `json:"severity,omitempty"`
	Source      string   `json:"source"`
	Description string   `json:"description"`
	Facts       []string `json:"facts"`
	// Timeout is the probe's bound, in seconds (0 for checks).
	TimeoutSeconds float64 `json:"timeout_seconds,omitempty"`
}

// probesOptions is what the probes command's flags fill in.
type probesOptions struct {
	ProbesDir string
	JSON      bool
}

func probesCommand(act func(context.Context, probesOptions, streams) error) *cli.Command {
	return &cli.Command{
		Name:      "probes",
		Usage:     "list the probes, checks, and findings and facts built in, that a run would use",
		UsageText: "fleet-audit probes [--probes DIR] [--json]",
		Description: `Lists the probes embedded in the binary and the checks judged on their
facts, with each one's scope (node or cluster), whether it needs root, its
severity and where it is defined ("builtin" or a file of --probes DIR),
then the findings and facts fleet-audit computes in Go. The check and
finding ids are what --only, --skip and waivers match. Contacts nothing;
a --probes DIR with errors exits 2 with file:line, as run would.

EXAMPLES:
   fleet-audit probes
   fleet-audit probes --probes examples/probes
   fleet-audit probes --json | jq -r '.checks[].id'`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "probes", Usage: "also list the probes and checks in `DIR`"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON ({\"probes\": [...], \"checks\": [...], \"findings\": [...], \"facts\": [...]}) for machines"},
		},
		Action: func(c *cli.Context) error {
			return internal(act(c.Context, probesOptions{ProbesDir: c.String("probes"), JSON: c.Bool("json")}, streamsOf(c)))
		},
	}
}

// runProbes lists the rules a run with the same --probes would load.
func runProbes(ctx context.Context, o probesOptions, s streams) error {
	cat, err := untilDone(ctx, func() (*catalog.Catalog, error) { return loadCatalog(o.ProbesDir) })
	if err != nil {
		return err
	}
	probes, checks := listing(cat)
	findings, facts := goCatalog()
	if o.JSON {
		enc := json.NewEncoder(s.out)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string][]catalogEntry{"probes": probes, "checks": checks, "findings": findings, "facts": facts})
	}
	// One titled table per kind, as the terminal report's lists: each
	// has only the columns that mean something for its kind, so that the
	// tables fit a terminal.
	width := terminalWidth(s.out, os.Getenv)
	id := report.Column{Title: "ID", Min: 20, Fit: report.Ident}
	scope := report.Column{Title: "SCOPE", Min: 7, Fit: report.Words}
	source := report.Column{Title: "SOURCE", Min: 7, Fit: report.Ident}
	about := report.Column{Title: "DESCRIPTION", Min: 24, Fit: report.Words}
	var b strings.Builder
	section := func(title string, entries []catalogEntry, cols []report.Column, cells func(catalogEntry) []string) {
		if len(entries) == 0 {
			return
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s (%d)\n", title, len(entries))
		var rows [][]string
		for _, e := range entries {
			// Every cell but root can come from a --probes file (its
			// name included), so all are escaped as in a report.
			row := cells(e)
			for i := range row {
				row[i] = report.OneLine(row[i])
			}
			rows = append(rows, row)
		}
		for _, l := range report.Table(width, 0, cols, rows) {
			b.WriteString(l + "\n")
		}
	}
	section("Probes", probes, []report.Column{id, scope, {Title: "ROOT", Fit: report.Truncate}, source, about}, func(e catalogEntry) []string {
		return []string{e.ID, e.Scope, map[bool]string{true: "yes", false: "no"}[e.NeedsRoot], e.Source, e.Description}
	})
	section("Checks", checks, []report.Column{id, scope, {Title: "SEVERITY", Fit: report.Truncate}, source, about}, func(e catalogEntry) []string {
		return []string{e.ID, e.Scope, e.Severity, e.Source, e.Description}
	})
	section("Findings computed in Go", findings, []report.Column{id, scope, about}, func(e catalogEntry) []string {
		return []string{e.ID, e.Scope, e.Description}
	})
	section("Facts computed in Go", facts, []report.Column{id, scope, about}, func(e catalogEntry) []string {
		return []string{e.ID, e.Scope, e.Description}
	})
	_, err = io.WriteString(s.out, b.String())
	return err
}

// listing turns the catalogue into listing rows.
func listing(cat *catalog.Catalog) (probes, checks []catalogEntry) {
	probes, checks = []catalogEntry{}, []catalogEntry{}
	for _, p := range cat.Probes {
		facts := append(append([]string{}, p.Facts...), p.NodeFacts...)
		probes = append(probes, catalogEntry{Kind: "probe", ID: p.ID, Scope: p.Scope, NeedsRoot: p.NeedsRoot,
			Source: p.Source, Description: p.Description, Facts: facts, TimeoutSeconds: p.Timeout.Seconds()})
	}
	for _, c := range cat.Checks {
		src := cat.CheckSource(c)
		// A fact a check reads twice is listed once, where it first appears.
		facts := []string{}
		for _, f := range c.Facts() {
			if !slices.Contains(facts, f) {
				facts = append(facts, f)
			}
		}
		checks = append(checks, catalogEntry{Kind: "check", ID: c.ID, Scope: c.Scope, Severity: c.Severity.String(),
			Source: src, Description: c.Title, Facts: facts})
	}
	return probes, checks
}

// goCatalog lists what fleet-audit computes in Go, from catalog's one table:
// the findings (which --only, --skip and waivers may name when marked so)
// and the facts (which a check may read when marked so).
func goCatalog() (findings, facts []catalogEntry) {
	findings, facts = []catalogEntry{}, []catalogEntry{}
	for _, f := range catalog.GoFindings {
		scope := "fleet"
		if !f.Operator {
			scope = "fleet (not waivable or selectable)"
		}
		findings = append(findings, catalogEntry{Kind: "finding", ID: f.ID, Scope: scope, Source: "builtin (Go)", Description: f.About, Facts: []string{}})
	}
	for _, f := range catalog.GoFacts {
		scope := "node"
		if !f.Checkable {
			scope = "node (not readable by checks)"
		}
		facts = append(facts, catalogEntry{Kind: "fact", ID: f.Key, Scope: scope, Source: "builtin (Go)", Description: f.About, Facts: []string{}})
	}
	return findings, facts
}
