package audit

import (
	"slices"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/audit/catalog"
	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/result"
)

// readinessChecks are one check per area the cases below read, with the
// area a built-in check of that kind has.
var readinessChecks = []check.Check{
	{ID: "firewall.ufw-active", Area: result.AreaNetwork, Severity: result.SeverityCritical, Symptom: false},
	{ID: "kubeproxy.healthz-failing", Area: result.AreaNetwork, Severity: result.SeverityCritical, Symptom: true},
	{ID: "etcd.snapshot-old", Area: result.AreaEtcd, Severity: result.SeverityWarning},
	{ID: "certs.leaf-renews-at-restart", Area: result.AreaCertificates, Severity: result.SeverityInfo},
	{ID: "cluster.removed-api-requested", Area: result.AreaRemovedAPIs, Severity: result.SeverityCritical, Scope: probe.ScopeCluster},
	{ID: "k8s.drain-pdb-blocked", Area: result.AreaDrain, Severity: result.SeverityWarning},
	{ID: "host.reboot-pending", Area: result.AreaNodes, Severity: result.SeverityWarning},
	{ID: "my.own-check", Area: result.AreaOther, Severity: result.SeverityWarning},
}

func TestReadinessVerdicts(t *testing.T) {
	pass := func(id, node string) result.CheckResult {
		return result.CheckResult{Check: id, Node: node, Outcome: result.OutcomePass}
	}
	fail := func(id, node string, sev result.Severity) result.CheckResult {
		return result.CheckResult{Check: id, Node: node, Outcome: result.OutcomeFail, Severity: sev}
	}
	finding := func(id string, sev result.Severity, nodes ...string) result.Finding {
		return result.Finding{Check: id, Severity: sev, Nodes: nodes}
	}
	for _, tc := range []struct {
		name     string
		checks   []result.CheckResult
		findings []result.Finding
		target   string
		failOn   result.Severity
		want     map[result.Area]result.Verdict
		// wantWhy is a piece of an area's Summary.
		wantWhy map[result.Area]string
		// wantFailed is an area's count of failed judgements.
		wantFailed map[result.Area]int
	}{
		{
			name:   "a gate failure blocks its area, a warning below the gate warns",
			checks: []result.CheckResult{fail("firewall.ufw-active", "n1", result.SeverityCritical), pass("firewall.ufw-active", "n2"), fail("etcd.snapshot-old", "n1", result.SeverityWarning)},
			findings: []result.Finding{
				finding("firewall.ufw-active", result.SeverityCritical, "n1"),
				finding("etcd.snapshot-old", result.SeverityWarning, "n1"),
			},
			want:    map[result.Area]result.Verdict{result.AreaNetwork: result.VerdictBlocked, result.AreaEtcd: result.VerdictWarnings},
			wantWhy: map[result.Area]string{result.AreaNetwork: "firewall.ufw-active", result.AreaEtcd: "etcd.snapshot-old"},
		},
		{
			name:     "at --fail-on warning the warning blocks too",
			checks:   []result.CheckResult{fail("etcd.snapshot-old", "n1", result.SeverityWarning)},
			findings: []result.Finding{finding("etcd.snapshot-old", result.SeverityWarning, "n1")},
			failOn:   result.SeverityWarning,
			want:     map[result.Area]result.Verdict{result.AreaEtcd: result.VerdictBlocked},
		},
		{
			name:     "a correlation counts in its symptom's area",
			checks:   []result.CheckResult{pass("etcd.snapshot-old", "n1")},
			findings: []result.Finding{finding(catalog.CorrelationPrefix+"kubeproxy.healthz-failing", result.SeverityCritical, "n1")},
			want:     map[result.Area]result.Verdict{result.AreaNetwork: result.VerdictBlocked, result.AreaEtcd: result.VerdictReady},
		},
		{
			name:     "an info failure is a note: the area is ready",
			checks:   []result.CheckResult{fail("certs.leaf-renews-at-restart", "n1", result.SeverityInfo), pass("certs.leaf-renews-at-restart", "n2")},
			findings: []result.Finding{finding("certs.leaf-renews-at-restart", result.SeverityInfo, "n1")},
			want:     map[result.Area]result.Verdict{result.AreaCertificates: result.VerdictReady},
			wantWhy:  map[result.Area]string{result.AreaCertificates: "2 passed"},
		},
		{
			name: "a check that could not be judged is not a pass",
			checks: []result.CheckResult{pass("k8s.drain-pdb-blocked", "n1"),
				{Check: "k8s.drain-pdb-blocked", Node: "n2", Outcome: result.OutcomeUnjudged, Detail: "k8s.drain.pdb_blocked=unknown"}},
			want:    map[result.Area]result.Verdict{result.AreaDrain: result.VerdictNotJudged},
			wantWhy: map[result.Area]string{result.AreaDrain: "k8s.drain-pdb-blocked on n2: k8s.drain.pdb_blocked=unknown"},
		},
		{
			name:    "without --target-version the removed APIs are not judged",
			checks:  []result.CheckResult{{Check: "cluster.removed-api-requested", Node: result.ClusterNode, Outcome: result.OutcomeSkip, Detail: catalog.TargetVersionNotGiven}},
			want:    map[result.Area]result.Verdict{result.AreaRemovedAPIs: result.VerdictNotJudged},
			wantWhy: map[result.Area]string{result.AreaRemovedAPIs: "--target-version"},
		},
		{
			name:   "skips beside passes leave the area ready, and say so",
			checks: []result.CheckResult{pass("host.reboot-pending", "n1"), {Check: "host.reboot-pending", Node: "n2", Outcome: result.OutcomeSkip, Detail: "reboot.required not collected"}},
			want:   map[result.Area]result.Verdict{result.AreaNodes: result.VerdictReady},
			wantWhy: map[result.Area]string{
				result.AreaNodes: "1 passed, 1 skipped",
			},
		},
		{
			name:   "a check that applies nowhere leaves its area not checked",
			checks: []result.CheckResult{{Check: "etcd.snapshot-old", Node: "n1", Outcome: result.OutcomeNotApplicable}},
			want:   map[result.Area]result.Verdict{result.AreaEtcd: result.VerdictNotChecked, result.AreaDrain: result.VerdictNotChecked},
		},
		{
			name:     "a waived finding does not block",
			checks:   []result.CheckResult{fail("k8s.drain-pdb-blocked", "n1", result.SeverityWarning)},
			findings: []result.Finding{{Check: "k8s.drain-pdb-blocked", Severity: result.SeverityWarning, Nodes: []string{"n1"}, Waived: &result.Waiver{Reason: "accepted"}}},
			failOn:   result.SeverityWarning,
			want:     map[result.Area]result.Verdict{result.AreaDrain: result.VerdictReady},
		},
		{
			name:     "a user's check without an area is listed under other once it judged",
			checks:   []result.CheckResult{fail("my.own-check", "n1", result.SeverityWarning)},
			findings: []result.Finding{finding("my.own-check", result.SeverityWarning, "n1")},
			want:     map[result.Area]result.Verdict{result.AreaOther: result.VerdictWarnings},
		},
		{
			name:     "version skew judged in Go: the versions area is judged without a check",
			checks:   []result.CheckResult{pass("host.reboot-pending", "n1")},
			findings: []result.Finding{finding(catalog.SkewMixedVersionsID, result.SeverityWarning, "n1")},
			target:   "v1.32.5+rke2r1",
			want:     map[result.Area]result.Verdict{result.AreaVersions: result.VerdictWarnings},
			// Judged on n1 alone, which the finding names: a failed
			// judgement, not a passed one (it was counted passed while
			// goJudged left its severity unknown).
			wantFailed: map[result.Area]int{result.AreaVersions: 1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			failOn := tc.failOn
			if failOn == result.SeverityUnknown {
				failOn = result.SeverityCritical
			}
			r := &result.Report{
				Nodes: []result.Node{
					{Name: "n1", Status: result.StatusOK, Facts: map[string]string{"rke2.version": "v1.31.4+rke2r1"}},
					{Name: "n2", Status: result.StatusOK, Facts: map[string]string{}},
				},
				Checks: tc.checks, Findings: tc.findings, TargetVersion: tc.target,
				Gate: result.Gate{FailOn: failOn},
			}
			Readiness(r, Rules{Checks: readinessChecks})
			got := map[result.Area]result.AreaReadiness{}
			var order []result.Area
			for _, a := range r.Readiness {
				got[a.Area] = a
				order = append(order, a.Area)
			}
			if !slices.IsSortedFunc(order, func(a, b result.Area) int { return slices.Index(result.Areas, a) - slices.Index(result.Areas, b) }) {
				t.Errorf("areas out of order: %v", order)
			}
			for area, want := range tc.want {
				if got[area].Verdict != want {
					t.Errorf("%s: verdict %q (%s), want %q", area, got[area].Verdict, got[area].Summary(), want)
				}
			}
			for area, want := range tc.wantFailed {
				if got[area].Failed != want {
					t.Errorf("%s: %d failed, want %d", area, got[area].Failed, want)
				}
			}
			for area, want := range tc.wantWhy {
				if s := got[area].Summary(); !strings.Contains(s, want) {
					t.Errorf("%s: summary %q, want it to say %q", area, s, want)
				}
			}
			if _, listed := got[result.AreaOther]; listed != (tc.want[result.AreaOther] != "") {
				t.Errorf("other listed = %t, want %t", listed, !listed)
			}
		})
	}
}

// TestReadinessFollowsARejudgedGate: fleet-audit report --fail-on
// re-judges a saved run; its readiness must block what its gate fails on.
func TestReadinessFollowsARejudgedGate(t *testing.T) {
	r := &result.Report{
		Nodes:    []result.Node{{Name: "n1", Status: result.StatusOK}},
		Checks:   []result.CheckResult{{Check: "etcd.snapshot-old", Node: "n1", Outcome: result.OutcomeFail, Severity: result.SeverityWarning}},
		Findings: []result.Finding{{Check: "etcd.snapshot-old", Severity: result.SeverityWarning, Nodes: []string{"n1"}}},
		Gate:     result.Gate{FailOn: result.SeverityCritical},
	}
	Readiness(r, Rules{Checks: readinessChecks})
	verdict := func() result.Verdict {
		i := slices.IndexFunc(r.Readiness, func(a result.AreaReadiness) bool { return a.Area == result.AreaEtcd })
		return r.Readiness[i].Verdict
	}
	if v := verdict(); v != result.VerdictWarnings {
		t.Fatalf("at critical: %q, want warnings", v)
	}
	r.Gate = EvaluateGate(r, GatePolicy{FailOn: result.SeverityWarning})
	JudgeReadiness(r)
	if v := verdict(); v != result.VerdictBlocked {
		t.Errorf("re-judged at warning: %q, want blocked", v)
	}
}

// TestEveryBuiltinJudgementNamesAnArea: a built-in check or Go finding
// without an area would count under "other checks", where no board looks
// for etcd or drain.
func TestEveryBuiltinJudgementNamesAnArea(t *testing.T) {
	checks, err := check.BuiltinChecks()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		if c.Area == result.AreaOther || c.Area == "" {
			t.Errorf("%s (%s): no area", c.ID, c.Source)
		}
	}
	for _, g := range catalog.GoFindings {
		waiver := g.ID == catalog.WaiverExpiredID || g.ID == catalog.WaiverUnusedID
		correlation := strings.HasPrefix(g.ID, catalog.CorrelationPrefix)
		switch {
		case correlation && g.Area != "":
			t.Errorf("%s: a correlation counts in its symptom's area, not %q", g.ID, g.Area)
		case !correlation && !waiver && (g.Area == "" || g.Area == result.AreaOther):
			t.Errorf("%s: no area", g.ID)
		}
	}
}

// TestReadinessOfANodeNotAudited: an area cannot be ready for a node
// nobody saw; a node the audit does not apply to does not count.
func TestReadinessOfANodeNotAudited(t *testing.T) {
	r := &result.Report{
		Nodes: []result.Node{
			{Name: "n1", Status: result.StatusOK},
			{Name: "n2", Status: result.StatusUnreachable},
			{Name: "win-1", Status: result.StatusNotApplicable},
		},
		Checks: []result.CheckResult{
			{Check: "etcd.snapshot-old", Node: "n1", Outcome: result.OutcomePass},
			{Check: "etcd.snapshot-old", Node: "n2", Outcome: result.OutcomeSkip, Detail: "node not audited: unreachable"},
			{Check: "host.reboot-pending", Node: "n1", Outcome: result.OutcomePass},
			{Check: "host.reboot-pending", Node: "win-1", Outcome: result.OutcomeSkip, Detail: "node not audited: not_applicable"},
		},
		Gate: result.Gate{FailOn: result.SeverityCritical},
	}
	Readiness(r, Rules{Checks: readinessChecks})
	for _, a := range r.Readiness {
		switch a.Area {
		case result.AreaEtcd:
			if a.Verdict != result.VerdictNotJudged || !strings.Contains(a.Summary(), "not audited: n2") {
				t.Errorf("etcd: %s: %s, want not judged for n2", a.Verdict, a.Summary())
			}
		case result.AreaNodes:
			if a.Verdict != result.VerdictReady {
				t.Errorf("nodes: %s: %s, want ready (win-1 is not applicable)", a.Verdict, a.Summary())
			}
		}
	}
}
