package report

import (
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/result"
)

// TestWriteExplanation: the sections come in a change board's order, a
// command is never wrapped, a missing why says so, and text from a user's
// --probes file cannot drive the terminal.
func TestWriteExplanation(t *testing.T) {
	long := "curl -s " + strings.Repeat("x", 150)
	for _, tc := range []struct {
		name string
		e    result.Explanation
		want []string
		not  []string
	}{
		{
			name: "check",
			e: result.Explanation{ID: "a.b", Kind: "check", Title: "t", Severity: "critical", Scope: "node", Source: "builtin",
				Summary: "s", Why: "w", Remediation: "r", References: []string{"ref"},
				Facts: []result.FactHow{{Facts: []string{"f.x", "f.y"}, On: result.CollectOnServer, Commands: []string{long}}}},
			want: []string{"a.b: t\n   severity critical · scope node · check (builtin)\n",
				"\nWHAT IT MEANS\n   s\n\nWHY IT MATTERS FOR AN UPGRADE\n   w\n\nFACTS IT READS, AND HOW TO COLLECT THEM BY HAND\n   f.x, f.y (on any RKE2 server node)\n      $ " + long + "\n\nREMEDIATION\n   r\n\nREFERENCES\n   - ref\n"},
		},
		{
			name: "user check without why",
			e: result.Explanation{ID: "site.c", Kind: "check", Title: "\x1b[31mred", Severity: "warning", Scope: "node", Source: "site/x.yaml:1",
				Summary: "line1\nline2", Facts: []result.FactHow{{Facts: []string{"site.f"}, Commands: []string{}}}},
			want: []string{"WHY IT MATTERS FOR AN UPGRADE\n   (not given)", "site.f (no command known for this fact)", "REFERENCES\n   (not given)"},
			not:  []string{"\x1b", "line1\nline2"},
		},
		{
			name: "correlation",
			e:    result.Explanation{ID: "correlation.x", Kind: "finding", Scope: "fleet", Source: "builtin (Go)", Summary: "s", Facts: []result.FactHow{}},
			want: []string{"severity: its symptom's when a fact explains it, info otherwise", "none of its own"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := WriteExplanation(&b, tc.e, 100); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, b.String())
				}
			}
			for _, n := range tc.not {
				if strings.Contains(b.String(), n) {
					t.Errorf("output holds %q:\n%s", n, b.String())
				}
			}
		})
	}
}

// TestHTMLExplainsFindings: a finding with an explanation gets it as a
// collapsed section, in ExplainSections' order, every value escaped; a
// finding without one (a user's check) gets none, and without Explain the
// page is what it always was.
func TestHTMLExplainsFindings(t *testing.T) {
	r := incidentReport()
	id := r.Findings[0].Check
	e := result.Explanation{ID: id, Kind: "check", Title: "t", Severity: "critical", Scope: "node", Source: "builtin",
		Summary: "s", Why: "why <script>alert(1)</script>", Remediation: "r", References: []string{"https://example.invalid/ref"},
		Facts: []result.FactHow{{Facts: []string{"ufw.active"}, On: result.CollectOnNode, Probe: "firewall", Commands: []string{"sudo systemctl is-active ufw && echo '<b>'"}}}}
	render := func(explain map[string]result.Explanation) string {
		var b strings.Builder
		if err := (&HTML{Explain: explain}).Format(&b, r); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	plain, explained := render(nil), render(map[string]result.Explanation{id: e})
	if strings.Contains(plain, `class="explain"`) {
		t.Errorf("a report without explanations has an explain section")
	}
	if n := strings.Count(explained, `<details class="explain">`); n != countFindings(r, id) {
		t.Errorf("%d explain sections; want one per finding %s (%d)", n, id, countFindings(r, id))
	}
	for _, want := range []string{
		"why &lt;script&gt;alert(1)&lt;/script&gt;",
		"<pre>sudo systemctl is-active ufw &amp;&amp; echo &#39;&lt;b&gt;&#39;</pre>",
		"<p><code>ufw.active (on the node; probe firewall)</code></p>",
		"<ul><li>https://example.invalid/ref</li></ul>",
	} {
		if !strings.Contains(explained, want) {
			t.Errorf("the explained page lacks %q", want)
		}
	}
	if strings.Contains(explained, "<script>alert") {
		t.Errorf("the explanation's text reached the page unescaped")
	}
	order := []string{"What it means", "Why it matters for an upgrade", "Facts it reads", "Remediation", "References"}
	at := 0
	for _, h := range order {
		i := strings.Index(explained[at:], "<strong>"+h)
		if i < 0 {
			t.Fatalf("section %q missing or out of order", h)
		}
		at += i
	}
}

func countFindings(r *result.Report, id string) int {
	n := 0
	for _, f := range r.Findings {
		if f.Check == id {
			n++
		}
	}
	return n
}
