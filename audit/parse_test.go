package audit

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fleet-audit/fleet-audit/result"
)

var testProbes = []Probe{
	{ID: "a", Timeout: time.Second, Facts: []string{"a.x", "a.y", "a.token"}},
	{ID: "b", Timeout: time.Second, Facts: []string{"b.z"}},
}

func TestParseOutput(t *testing.T) {
	const n = "abc"
	tests := []struct {
		name      string
		out       string
		wantFacts map[string]string
		wantRuns  string // status of a, b
	}{
		{"both ok", "@@FA:abc:begin:a\na.x=1\na.y=two words\n\n@@FA:abc:end:a:0\n@@FA:abc:begin:b\nb.z=3\n@@FA:abc:end:b:0\n",
			map[string]string{"a.x": "1", "a.y": "two words", "b.z": "3"}, "ok ok"},
		{"undeclared key dropped, other probe's key not forged", "@@FA:abc:begin:a\na.x=1\nb.z=forged\nnoise line\n@@FA:abc:end:a:0\n",
			map[string]string{"a.x": "1"}, "ok missing"},
		{"wrong nonce ignored", "@@FA:zzz:begin:a\na.x=1\n@@FA:zzz:end:a:0\n", map[string]string{}, "missing missing"},
		{"unterminated section", "@@FA:abc:begin:a\na.x=1\n", map[string]string{"a.x": "1"}, "truncated missing"},
		{"timeout exit code", "@@FA:abc:begin:a\na.x=1\n@@FA:abc:end:a:124\n", map[string]string{"a.x": "1"}, "timeout missing"},
		{"failed exit code", "@@FA:abc:begin:a\n@@FA:abc:end:a:2\n", map[string]string{}, "failed missing"},
		{"secret redacted by key", "@@FA:abc:begin:a\na.token=abc\n@@FA:abc:end:a:0\n", map[string]string{"a.token": result.Redacted}, "ok missing"},
		{"secret redacted by value", "@@FA:abc:begin:a\na.x=token: K10abcdef0123456789abcdef::server:x\na.y=Bearer abcdefghijkl\n@@FA:abc:end:a:0\n",
			map[string]string{"a.x": result.Redacted, "a.y": result.Redacted}, "ok missing"},
		{"empty value", "@@FA:abc:begin:a\na.x=\n@@FA:abc:end:a:0\n", map[string]string{"a.x": "empty"}, "ok missing"},
		{"invalid UTF-8 escaped, valid kept", "@@FA:abc:begin:a\na.x=bad \xff\xe6\x97 \xc0\xaf end\na.y=日本 ✓\n@@FA:abc:end:a:0\n",
			map[string]string{"a.x": `bad \xff\xe6\x97 \xc0\xaf end`, "a.y": "日本 ✓"}, "ok missing"},
		{"a cut value ends on a rune boundary", "@@FA:abc:begin:a\na.x=" + strings.Repeat("v", maxValueLen-1) + "日本\n@@FA:abc:end:a:0\n",
			map[string]string{"a.x": strings.Repeat("v", maxValueLen-1) + "…"}, "ok missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := ParseOutput([]byte(tt.out), n, testProbes)
			if len(p.Facts) != len(tt.wantFacts) {
				t.Errorf("facts = %v, want %v", p.Facts, tt.wantFacts)
			}
			for k, v := range tt.wantFacts {
				if p.Facts[k] != v {
					t.Errorf("fact %s = %q, want %q", k, p.Facts[k], v)
				}
			}
			got := p.Runs[0].Status + " " + p.Runs[1].Status
			if got != tt.wantRuns {
				t.Errorf("runs = %s, want %s", got, tt.wantRuns)
			}
		})
	}
}

func TestParseOutputBoundsLongLines(t *testing.T) {
	out := "@@FA:n:begin:a\na.x=" + strings.Repeat("v", 10<<20) + "\na.y=ok\n@@FA:n:end:a:0\n"
	p := ParseOutput([]byte(out), "n", testProbes)
	if len(p.Facts["a.x"]) > maxValueLen+len("…") {
		t.Errorf("value kept %d bytes", len(p.Facts["a.x"]))
	}
	if p.Facts["a.y"] != "ok" {
		t.Errorf("fact after a long line lost: %v", p.Facts)
	}
}

func FuzzParseOutput(f *testing.F) {
	f.Add([]byte("@@FA:n:begin:a\na.x=1\n@@FA:n:end:a:0\n"))
	f.Add([]byte("@@FA:n:begin:b\nb.z=\x00\xff\n@@FA:n:end:b:x\n@@FA:n:begin:a"))
	f.Add([]byte("a.x=1\n\n\n@@FA:n:end:a:0"))
	f.Fuzz(func(t *testing.T, out []byte) {
		p := ParseOutput(out, "n", testProbes)
		if len(p.Runs) != len(testProbes) {
			t.Fatalf("runs = %d", len(p.Runs))
		}
		for k, v := range p.Facts {
			if strings.ContainsAny(v, "\n") || len(v) > maxValueLen+len("…") || !utf8.ValidString(v) {
				t.Fatalf("fact %s=%q escapes its line or bound", k, v)
			}
		}
	})
}

func TestCheckEvaluate(t *testing.T) {
	tests := []struct {
		cond  Condition
		facts map[string]string
		want  string
	}{
		{Condition{Fact: "f", Op: "eq", Value: "active"}, map[string]string{"f": "active"}, result.OutcomeFail},
		{Condition{Fact: "f", Op: "eq", Value: "active"}, map[string]string{"f": "inactive"}, result.OutcomePass},
		{Condition{Fact: "f", Op: "ne", Value: "1"}, map[string]string{"f": "0"}, result.OutcomeFail},
		{Condition{Fact: "f", Op: "ne", Value: "1"}, map[string]string{}, result.OutcomeSkip},
		{Condition{Fact: "f", Op: "not_in", Value: "200,absent"}, map[string]string{"f": "503"}, result.OutcomeFail},
		{Condition{Fact: "f", Op: "in", Value: "a, b"}, map[string]string{"f": "b"}, result.OutcomeFail},
		{Condition{Fact: "f", Op: "ge", Value: "10"}, map[string]string{"f": "abc"}, result.OutcomeSkip},
		{Condition{Fact: "f", Op: "lt", Value: "10"}, map[string]string{"f": "9"}, result.OutcomeFail},
		{Condition{Fact: "c", Op: "pct_of_ge", Ref: "m", Value: "80"}, map[string]string{"c": "110000", "m": "131072"}, result.OutcomeFail},
		{Condition{Fact: "c", Op: "pct_of_ge", Ref: "m", Value: "80"}, map[string]string{"c": "817", "m": "131072"}, result.OutcomePass},
		{Condition{Fact: "c", Op: "pct_of_ge", Ref: "m", Value: "80"}, map[string]string{"c": "817", "m": "absent"}, result.OutcomeSkip},
	}
	for _, tt := range tests {
		c := Check{ID: "x", When: []Condition{tt.cond}}
		if got, detail := c.Evaluate(tt.facts); got != tt.want {
			t.Errorf("%+v on %v = %s (%s), want %s", tt.cond, tt.facts, got, detail, tt.want)
		}
	}
}

func TestParseChecksRejectsBadInput(t *testing.T) {
	for name, text := range map[string]string{
		"unknown field": "- {id: a, title: t, severity: critical, summary: s, remediation: r, when: [{fact: f, op: eq, value: x}], bogus: 1}",
		"unknown op":    "- {id: a, title: t, severity: critical, summary: s, remediation: r, when: [{fact: f, op: like, value: x}]}",
		"bad severity":  "- {id: a, title: t, severity: huge, summary: s, remediation: r, when: [{fact: f, op: eq, value: x}]}",
		"no when":       "- {id: a, title: t, severity: critical, summary: s, remediation: r}",
		"duplicate id":  "- {id: a, title: t, severity: info, summary: s, remediation: r, when: [{fact: f, op: eq}]}\n- {id: a, title: t, severity: info, summary: s, remediation: r, when: [{fact: f, op: eq}]}",
	} {
		if _, err := ParseChecks("t.yaml", []byte(text)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestCorrelateNearMatchAndNoMatch(t *testing.T) {
	probes := []Probe{{ID: "k", Facts: []string{"hz"}}, {ID: "f", Facts: []string{"fw", "kern"}}}
	checks := []Check{{ID: "hz", Title: "healthz", Severity: result.SeverityCritical, Symptom: true, When: []Condition{{Fact: "hz", Op: "ne", Value: "200"}}}}
	mk := func(name, hz, fw, kern string) result.Node {
		return result.Node{Name: name, Status: result.StatusOK, Facts: map[string]string{"hz": hz, "fw": fw, "kern": kern}}
	}
	// fw=on explains 4 of 4 sick nodes plus one healthy node: a near match.
	nodes := []result.Node{mk("a", "503", "on", "1"), mk("b", "503", "on", "2"), mk("c", "503", "on", "1"), mk("d", "503", "on", "2"),
		mk("e", "200", "on", "1"), mk("f", "200", "off", "2"), mk("g", "200", "off", "1"), mk("h", "200", "off", "2"), mk("i", "200", "off", "1")}
	fs := Correlate(nodes, checks, Judge(nodes, nil, checks), probes)
	if len(fs) != 1 || fs[0].Cause == nil || fs[0].Cause.Fact != "fw" || fs[0].Cause.Exact || fs[0].Cause.Extra != 1 {
		t.Fatalf("near match: %+v", fs)
	}
	// Nothing splits like the symptom: an info finding that says so.
	nodes[4].Facts["fw"], nodes[0].Facts["fw"], nodes[1].Facts["fw"] = "off", "off", "off"
	fs = Correlate(nodes, checks, Judge(nodes, nil, checks), probes)
	if len(fs) != 1 || fs[0].Cause != nil || fs[0].Severity != result.SeverityInfo {
		t.Fatalf("no match: %+v", fs)
	}
	// Every node sick: cluster-wide, not drift.
	for i := range nodes {
		nodes[i].Facts["hz"] = "503"
	}
	fs = Correlate(nodes, checks, Judge(nodes, nil, checks), probes)
	if len(fs) != 1 || !strings.Contains(fs[0].Summary, "cluster-wide") {
		t.Fatalf("all sick: %+v", fs)
	}
}

func TestEvaluateGate(t *testing.T) {
	crit := result.Finding{Severity: result.SeverityCritical}
	warn := result.Finding{Severity: result.SeverityWarning}
	ok := result.Node{Status: result.StatusOK}
	down := result.Node{Status: result.StatusUnreachable}
	tests := []struct {
		name        string
		r           result.Report
		p           GatePolicy
		want        int
		interrupted bool
	}{
		{"clean", result.Report{Nodes: []result.Node{ok}}, GatePolicy{FailOn: result.SeverityCritical}, 0, false},
		{"critical", result.Report{Nodes: []result.Node{ok}, Findings: []result.Finding{crit}}, GatePolicy{FailOn: result.SeverityCritical}, 1, false},
		{"warning below fail-on", result.Report{Nodes: []result.Node{ok}, Findings: []result.Finding{warn}}, GatePolicy{FailOn: result.SeverityCritical}, 0, false},
		{"warning at fail-on", result.Report{Nodes: []result.Node{ok}, Findings: []result.Finding{warn}}, GatePolicy{FailOn: result.SeverityWarning}, 1, false},
		{"unreachable", result.Report{Nodes: []result.Node{ok, down}}, GatePolicy{FailOn: result.SeverityCritical}, 3, false},
		{"unreachable allowed", result.Report{Nodes: []result.Node{ok, down}}, GatePolicy{FailOn: result.SeverityCritical, AllowUnreachable: true}, 0, false},
		{"both", result.Report{Nodes: []result.Node{ok, down}, Findings: []result.Finding{crit}}, GatePolicy{FailOn: result.SeverityCritical}, 1, false},
		{"interrupted", result.Report{Nodes: []result.Node{ok}, Interrupted: true}, GatePolicy{FailOn: result.SeverityCritical}, 130, true},
	}
	for _, tt := range tests {
		g := EvaluateGate(&tt.r, tt.p)
		if g.ExitCode != tt.want || g.Passed != (tt.want == 0) {
			t.Errorf("%s: gate = %+v, want exit %d", tt.name, g, tt.want)
		}
		if tt.name == "both" && len(g.Reasons) != 2 {
			t.Errorf("both: reasons = %v, want the finding and the unaudited node", g.Reasons)
		}
	}
}
