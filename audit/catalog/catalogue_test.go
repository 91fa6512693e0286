package catalog

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/audit/probe"
)

var update = flag.Bool("update", false, "rewrite docs/catalogue.md from the embedded probes and checks")

// TestCatalogueDocIsCurrent keeps docs/catalogue.md, the operator's list of
// every probe and check, in step with what the binary embeds: run
// `go test ./audit/catalog -run Catalogue -update` after changing a probe or check.
func TestCatalogueDocIsCurrent(t *testing.T) {
	c := builtin(t)
	got := renderCatalogue(c.Probes, c.Checks)
	path := filepath.Join("..", "..", "docs", "catalogue.md")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./audit/catalog -run Catalogue -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("docs/catalogue.md is stale: run go test ./audit/catalog -run Catalogue -update")
	}
}

func renderCatalogue(probes []probe.Probe, checks []check.Check) []byte {
	var b bytes.Buffer
	cell := func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ") }
	b.WriteString("# Diagnosis catalogue\n\n")
	b.WriteString("Generated from the embedded probes and checks by `go test ./audit/catalog -run Catalogue -update`; ")
	b.WriteString("`fleet-audit probes` prints the same from the binary.\n\n")
	b.WriteString("## Probes\n\n| probe | scope | root | timeout | what it reads | facts |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, p := range probes {
		facts := append(append([]string{}, p.Facts...), p.NodeFacts...)
		root := "no"
		if p.NeedsRoot {
			root = "yes"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", p.ID, p.Scope, root, p.Timeout, cell(p.Description), "`"+strings.Join(facts, "` `")+"`")
	}
	b.WriteString("\nFacts marked volatile (left out of drift and correlation): ")
	var vol []string
	for _, p := range probes {
		vol = append(vol, p.Volatile...)
	}
	b.WriteString("`" + strings.Join(vol, "` `") + "`.\n")
	var srv []string
	for _, p := range probes {
		srv = append(srv, p.ServerOnly...)
	}
	if len(srv) > 0 {
		b.WriteString("\nFacts kept only on RKE2 servers (server_only: a setting only `rke2 server` honours, dropped on other nodes): `" + strings.Join(srv, "` `") + "`.\n")
	}
	b.WriteString("\n## Checks\n\n| check | severity | scope | title | when | remediation |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, c := range checks {
		var when []string
		if c.Uniform != "" {
			when = append(when, "uniform "+c.Uniform)
		}
		for _, cond := range c.When {
			operand := cond.Value
			if cond.Ref != "" && cond.Value != "" {
				operand = cond.Value + " of " + cond.Ref
			} else if cond.Ref != "" {
				operand = cond.Ref
			}
			w := fmt.Sprintf("%s %s %s", cond.Fact, cond.Op, operand)
			if cond.Peers != "" {
				w += " among the same " + cond.Peers
			}
			when = append(when, w)
		}
		title := c.Title
		if c.Symptom {
			title += " (symptom)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", c.ID, c.Severity, c.Scope, cell(title), cell("`"+strings.Join(when, "` and `")+"`"), cell(c.Remediation))
	}
	b.WriteString("\n## Findings computed in Go\n\n| finding | what it reports | waivable, --only/--skip |\n| --- | --- | --- |\n")
	for _, f := range GoFindings {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", f.ID, cell(f.About), map[bool]string{true: "yes", false: "no"}[f.Operator])
	}
	b.WriteString("\n## Facts computed in Go\n\n| fact | what it is | a check may read it |\n| --- | --- | --- |\n")
	for _, f := range GoFacts {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", f.Key, cell(f.About), map[bool]string{true: "yes", false: "no"}[f.Checkable])
	}
	b.WriteString("\n## Collecting facts by hand\n\nThe commands `fleet-audit explain` prints for each fact a check reads (audit/probe/collect.yaml): what an operator types to see the fact without fleet-audit.\n\n| facts | where | commands |\n| --- | --- | --- |\n")
	table, err := probe.CollectTable()
	if err != nil {
		fmt.Fprintf(&b, "collect.yaml: %v\n", err)
	}
	for _, c := range table {
		var cmds []string
		for _, cmd := range c.Commands {
			cmds = append(cmds, "`"+cmd+"`")
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", cell("`"+strings.Join(c.Facts, "` `")+"`"), c.On, cell(strings.Join(cmds, "<br>")))
	}
	return b.Bytes()
}
