package report

import (
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/audit"
	"github.com/fleet-audit/fleet-audit/result"
)

// TestSeverityOrderAgrees renders one report holding a finding of every
// severity, unknown included, in every format that lists findings, and
// wants each to list them in result.SeverityOrder: a format with an order
// of its own (the terminal once put unknown last, the HTML right after
// critical) is what this pins.
func TestSeverityOrderAgrees(t *testing.T) {
	r := newReport("inventories/lab.yaml")
	r.Nodes = []result.Node{node("n1", "192.0.2.1", []string{"worker"}, baseFacts("rke2-agent"), 1)}
	id := func(s result.Severity) string { return "test.sev-" + s.String() }
	// Given least severe first, so that a format keeping the file's order
	// fails too.
	for _, sev := range []result.Severity{result.SeverityInfo, result.SeverityWarning, result.SeverityUnknown, result.SeverityCritical} {
		r.Findings = append(r.Findings, result.Finding{
			Check: id(sev), Kind: result.KindCheck, Severity: sev, Title: "title " + id(sev),
			Summary: "summary " + id(sev), Nodes: []string{"n1"},
		})
	}
	r.Gate = audit.EvaluateGate(r, audit.GatePolicy{FailOn: result.SeverityCritical})
	for _, format := range []string{"terminal", "markdown", "markdown-summary", "html", "junit", "prom"} {
		t.Run(format, func(t *testing.T) {
			out := string(render(t, format, Options{Width: 200}, r))
			last, lastID := -1, ""
			for _, sev := range result.SeverityOrder {
				i := strings.Index(out, id(sev))
				if i < 0 {
					t.Fatalf("%s not rendered:\n%s", id(sev), out)
				}
				if i < last {
					t.Errorf("%s comes before %s, want result.SeverityOrder %v", id(sev), lastID, result.SeverityOrder)
				}
				last, lastID = i, id(sev)
			}
		})
	}
}
