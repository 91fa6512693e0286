package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/audit"
	"github.com/fleet-audit/fleet-audit/result"
)

func TestDecide(t *testing.T) {
	allowUnreachable := func() *result.Report {
		r := unreachableReport()
		r.Gate = audit.EvaluateGate(r, audit.GatePolicy{FailOn: result.SeverityCritical, AllowUnreachable: true})
		return r
	}
	interrupted := func() *result.Report {
		r := cleanReport()
		r.Interrupted = true
		r.Nodes[2].Status = result.StatusInterrupted
		r.Nodes[2].Facts = map[string]string{}
		r.Gate = audit.EvaluateGate(r, audit.GatePolicy{FailOn: result.SeverityCritical, AllowUnreachable: true})
		return r
	}
	waivedOnly := func() *result.Report {
		r := cleanReport()
		r.Findings = []result.Finding{{Check: "firewall.ufw-active", Kind: result.KindCheck, Severity: result.SeverityCritical, Nodes: []string{"lab-1"},
			Waived: &result.Waiver{Check: "firewall.ufw-active", Reason: "lab", Expires: "2099-01-01", Source: "w.yaml:1"}}}
		r.Gate = audit.EvaluateGate(r, audit.GatePolicy{FailOn: result.SeverityCritical})
		return r
	}
	tests := []struct {
		name       string
		report     *result.Report
		blocked    bool
		headline   string
		mark       string // the tone's mark: amber ⚠ for allowed with nodes not audited
		blockers   []string
		warnings   []string
		waived     []string
		notAudited []string
	}{
		{name: "clean", report: cleanReport(), headline: "upgrade allowed", mark: "✔"},
		{
			name: "incident", report: incidentReport(), blocked: true, headline: "upgrade BLOCKED", mark: "✘",
			// the probable cause first: it is fixed first
			blockers: []string{"correlation.kubeproxy.healthz-failing", "firewall.ufw-active", "kubeproxy.healthz-failing"},
			warnings: []string{"cluster.nodes-not-in-inventory", "skew.upgrade-order"},
			waived:   []string{"conntrack.pressure"},
		},
		{name: "waived only", report: waivedOnly(), headline: "upgrade allowed", mark: "✔", waived: []string{"firewall.ufw-active"}},
		{name: "unreachable", report: unreachableReport(), blocked: true, headline: "upgrade BLOCKED", mark: "✘", notAudited: []string{"edge-worker-2"}},
		{
			name: "unreachable allowed", report: allowUnreachable(), headline: "upgrade allowed with 1 node NOT audited", mark: "⚠",
			notAudited: []string{"edge-worker-2"},
		},
		{
			name: "interrupted", report: interrupted(), blocked: true, headline: "upgrade BLOCKED: the run was interrupted", mark: "✘",
			notAudited: []string{"lab-3"},
		},
	}
	ids := func(fs []result.Finding) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Check)
		}
		return out
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(tt.report)
			if d.Blocked() != tt.blocked || d.Headline != tt.headline {
				t.Errorf("Decide = blocked %v %q, want blocked %v %q", d.Blocked(), d.Headline, tt.blocked, tt.headline)
			}
			if got := d.Tone.Mark(); got != tt.mark {
				t.Errorf("mark %s (tone %s), want %s", got, d.Tone, tt.mark)
			}
			for _, c := range []struct {
				what      string
				got, want []string
			}{{"blockers", ids(d.Blockers), tt.blockers}, {"warnings", ids(d.Warnings), tt.warnings}, {"waived", ids(d.Waived), tt.waived}} {
				if !slices.Equal(c.got, c.want) {
					t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
				}
			}
			var na []string
			for _, u := range d.NotAudited {
				na = append(na, u.Node)
				if u.Message == "" {
					t.Errorf("not audited %s has no message", u.Node)
				}
			}
			if !slices.Equal(na, tt.notAudited) {
				t.Errorf("not audited = %q, want %q", na, tt.notAudited)
			}
			if !d.Blocked() && len(d.NotAudited) > 0 && !strings.Contains(d.Headline, "NOT audited") {
				t.Errorf("allowed with unaudited nodes reads %q", d.Headline)
			}
		})
	}
}

// A probe that did not finish ok on a node whose status is ok still makes
// the node not fully audited, and a check skipped on an audited node is
// listed.
func TestDecideProbesAndSkips(t *testing.T) {
	r := cleanReport()
	r.Nodes[0].Probes[1].Status = result.ProbeFailed
	r.Checks = append(r.Checks,
		result.CheckResult{Check: "x.check", Node: "lab-2", Outcome: result.OutcomeSkip},
		result.CheckResult{Check: "x.check", Node: "lab-3", Outcome: result.OutcomeSkip},
		result.CheckResult{Check: "z.check", Node: "lab-2", Outcome: result.OutcomeSkip},
		result.CheckResult{Check: "z.check", Node: "lab-3", Outcome: result.OutcomeSkip},
		result.CheckResult{Check: "y.check", Node: "lab-3", Outcome: result.OutcomePass})
	d := Decide(r)
	if len(d.NotAudited) != 1 || d.NotAudited[0].Node != "lab-1" || !slices.Equal(d.NotAudited[0].Probes, []string{r.Nodes[0].Probes[1].ID + ": failed"}) {
		t.Errorf("not audited = %+v, want lab-1 with its failed probe", d.NotAudited)
	}
	if len(d.Skipped) != 1 || d.Skipped[0].NodeSet != "lab-[2-3]" || !slices.Equal(d.Skipped[0].Checks, []string{"x.check", "z.check"}) {
		t.Errorf("skipped = %+v, want x.check and z.check on lab-[2-3]", d.Skipped)
	}
	if d.Headline != "upgrade allowed with 1 node NOT audited" {
		t.Errorf("headline = %q", d.Headline)
	}
}

// TestAllowedListsUnaudited: a gate passed with --allow-unreachable never
// reads as a bare "allowed" in any human format; each names the node that
// was not audited after the decision.
func TestAllowedListsUnaudited(t *testing.T) {
	unreachable := unreachableReport()
	unreachable.Gate = audit.EvaluateGate(unreachable, audit.GatePolicy{FailOn: result.SeverityCritical, AllowUnreachable: true})
	// A node whose status is ok but one of whose probes did not finish
	// (a saved report edited by hand): the gate passes, the decision does
	// not cover it.
	probe := cleanReport()
	probe.Nodes[1].Probes[0].Status = result.ProbeMissing
	for _, tt := range []struct {
		r    *result.Report
		node string
	}{{unreachable, "edge-worker-2"}, {probe, "lab-2"}} {
		if !tt.r.Gate.Passed {
			t.Fatalf("the fixture's gate failed: %+v", tt.r.Gate)
		}
		for _, format := range []string{"terminal", "markdown", "markdown-summary", "html"} {
			out := string(render(t, format, Options{}, tt.r))
			i := strings.Index(out, "upgrade allowed with 1 node NOT audited")
			if i < 0 {
				t.Errorf("%s: no %q", format, "upgrade allowed with 1 node NOT audited")
				continue
			}
			if !strings.Contains(out[i:], tt.node) {
				t.Errorf("%s: the unaudited %s is not listed after the decision", format, tt.node)
			}
			if strings.Contains(strings.ReplaceAll(out, "upgrade allowed with", ""), "upgrade allowed") {
				t.Errorf("%s: a bare \"upgrade allowed\" beside an unaudited node", format)
			}
		}
		// Amber, never the green of an upgrade every node was audited for.
		col := string(render(t, "terminal", Options{Color: true}, tt.r))
		if !strings.Contains(col, sgrYellow+"decision: upgrade allowed with") {
			t.Errorf("the terminal's decision is not in the warning colour:\n%q", col[max(0, len(col)-600):])
		}
		md := string(render(t, "markdown", Options{}, tt.r))
		if !strings.Contains(md, "**⚠ upgrade allowed with") || strings.Contains(md, "✔ upgrade allowed") {
			t.Error("markdown: the decision is not marked ⚠")
		}
	}
}

func TestNodeStates(t *testing.T) {
	partial := cleanReport()
	partial.Nodes[0].Probes[1].Status = result.ProbeTimeout
	partial.Nodes[1].Status = result.StatusProbeTimeout
	for _, tt := range []struct {
		name   string
		report *result.Report
		want   map[string]string
	}{
		// The upgrade order (info) names every node; it is no fault of any.
		{"incident", incidentReport(), map[string]string{
			"cluster-a-etcd-1": "3 findings", "cluster-a-etcd-3": "ok", "cluster-a-worker-4": "3 findings",
			"cluster-a-worker-3": "ok", // its conntrack pressure is waived
		}},
		{"unreachable", unreachableReport(), map[string]string{"edge-cp-1": "ok", "edge-worker-2": "not audited (unreachable)"}},
		{"partial", partial, map[string]string{
			"lab-1": "partially audited (1 probe not ok)", "lab-2": "partially audited (probe_timeout)", "lab-3": "ok",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := nodeStates(tt.report, Decide(tt.report))
			for n, want := range tt.want {
				if got[n].Word != want || got[n].OK != (want == "ok") {
					t.Errorf("%s: %+v, want %q", n, got[n], want)
				}
			}
		})
	}
}
