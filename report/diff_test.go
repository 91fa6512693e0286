package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/audit"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

// sampleDiff is an upgrade diff with a drift that crept in, and node values
// that try to break out of every format.
func sampleDiff() *result.Diff {
	before, after := incidentReport(), incidentReport()
	after.Nodes = append([]result.Node{}, after.Nodes...)
	for i := range after.Nodes {
		n := &after.Nodes[i]
		facts := map[string]string{}
		for k, v := range n.Facts {
			facts[k] = v
		}
		facts["rke2.version"] = "v1.32.1+rke2r1"
		n.Facts = facts
	}
	after.Nodes[0].Facts["os.pretty_name"] = "Evil | <script>alert(1)</script> `x` \x1b[31mred\x1b[0m\nline2"
	after.Nodes[len(after.Nodes)-1].Status = result.StatusUnreachable
	after.Nodes[len(after.Nodes)-1].Message = "connection refused \x1b]0;pwned\x07"
	after.Findings = append(append([]result.Finding{}, after.Findings...), result.Finding{
		Check: "sysctl.ip-forward", Title: "IPv4 forwarding is off <b>", Severity: result.SeverityCritical,
		Nodes: []string{after.Nodes[1].Name}})
	after.Findings = after.Findings[1:]
	after.Inventory = "staging <b>"
	after.Warnings = []string{"host keys were NOT verified \x1b[31m<script>x</script> see http://evil.example"}
	probes, _ := probe.BuiltinProbes()
	d := audit.Compare(before, after, audit.DiffOptionsFor(probes))
	d.Before.Source, d.After.Source = "before.json", "after.json"
	return d
}

func TestDiffGolden(t *testing.T) {
	d := sampleDiff()
	for format, ext := range map[string]string{"terminal": "txt", "markdown": "md", "json": "json"} {
		var b bytes.Buffer
		if err := FormatDiff(&b, format, d, 0); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", "diff."+ext)
		if *update {
			if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./report -update to create it)", err)
		}
		if !bytes.Equal(want, b.Bytes()) {
			t.Errorf("%s differs from the golden file; if intended run go test ./report -update\n%s", path, testtools.FirstDiff(want, b.Bytes()))
		}
	}
}

func TestDiffEscapes(t *testing.T) {
	d := sampleDiff()
	var term, md bytes.Buffer
	if err := FormatDiff(&term, "terminal", d, 0); err != nil {
		t.Fatal(err)
	}
	if err := FormatDiff(&md, "markdown", d, 0); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(term.String(), "os.pretty_name") || !strings.Contains(md.String(), "os.pretty\\_name") && !strings.Contains(md.String(), "`os.pretty_name`") {
		t.Fatalf("the hostile fact change is not shown at all:\n%s", term.String())
	}
	checkTerminalControls(t, "diff", term.Bytes())
	for _, bad := range []string{"<script", "<b>", "\x1b", "\x07"} {
		if strings.Contains(md.String(), bad) {
			t.Errorf("markdown diff contains %q", bad)
		}
	}
	// Every table row has as many cells as its header: a node's "|" or
	// newline must not add one.
	var cols int
	for _, line := range strings.Split(md.String(), "\n") {
		if !strings.HasPrefix(line, "|") {
			cols = 0
			continue
		}
		n := strings.Count(line, "|") - strings.Count(line, `\|`)
		if cols == 0 {
			cols = n
		} else if n != cols {
			t.Errorf("row has %d cell separators, header %d: %s", n, cols, line)
		}
	}
	if FormatDiff(&bytes.Buffer{}, "html", d, 0) == nil {
		t.Error("an unknown diff format was accepted")
	}
}
