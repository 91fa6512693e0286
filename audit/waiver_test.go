package audit

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/audit/catalog"
	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/result"
)

// waiverChecks stand in for the builtin ones, so these tests do not follow
// every change to the shipped conditions.
const waiverChecks = `
- id: firewall.ufw-active
  title: UFW is active
  severity: critical
  when: [{fact: ufw.active, op: eq, value: active}]
  summary: UFW fights kube-proxy.
  remediation: systemctl disable --now ufw
- id: sysctl.ip-forward
  title: forwarding is off
  severity: critical
  when: [{fact: net.ipv4.ip_forward, op: ne, value: "1"}]
  summary: s
  remediation: r
`

// waiverReport is a small judged fleet: UFW active on etcd-1 and worker-2,
// not on worker-1, plus a cluster-level finding.
func waiverReport(t *testing.T) *result.Report {
	t.Helper()
	checks, err := check.ParseChecks("test.yaml", []byte(waiverChecks))
	if err != nil {
		t.Fatal(err)
	}
	nodes := []result.Node{
		{Name: "etcd-1", Roles: []string{"etcd"}, Status: result.StatusOK, Facts: map[string]string{"ufw.active": "active"}},
		{Name: "worker-1", Roles: []string{"worker"}, Status: result.StatusOK, Facts: map[string]string{"ufw.active": "inactive"}},
		{Name: "worker-2", Roles: []string{"worker"}, Status: result.StatusOK, Facts: map[string]string{"ufw.active": "active"}},
	}
	r := &result.Report{Nodes: nodes}
	r.Checks = check.Judge(nodes, nil, checks, nil)
	r.Findings = check.CheckFindings(checks, r.Checks)
	r.Findings = append(r.Findings, clusterFindings(&result.Cluster{Status: result.ClusterFailed, Message: "no server reachable"}, false)...)
	addRollouts(r.Findings, r.Nodes, checks, r.Checks)
	return r
}

func findingsOf(fs []result.Finding, id string) []result.Finding {
	var out []result.Finding
	for _, f := range fs {
		if f.Check == id {
			out = append(out, f)
		}
	}
	return out
}

func outcomes(r *result.Report, check string) map[string]result.Outcome {
	out := map[string]result.Outcome{}
	for _, c := range r.Checks {
		if c.Check == check {
			out[c.Node] = c.Outcome
		}
	}
	return out
}

func TestApplyWaivers(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	ufw := func(nodes, roles []string, expires string) result.Waiver {
		return result.Waiver{Check: "firewall.ufw-active", Nodes: nodes, Roles: roles, Reason: "NET-1 by J. Doe", Expires: expires, Source: "w.yaml:2"}
	}
	type part struct {
		nodes  string
		waived bool
	}
	tests := []struct {
		name    string
		waivers []result.Waiver
		now     time.Time
		// ufw is the firewall.ufw-active findings after waiving.
		ufw []part
		// outcome per node of firewall.ufw-active.
		outcome map[string]result.Outcome
		// bookkeeping findings expected (id → evidence substring).
		extra map[string]string
		// cluster: whether cluster.unavailable ends waived.
		cluster bool
	}{
		{name: "no waivers", ufw: []part{{"etcd-1,worker-2", false}},
			outcome: map[string]result.Outcome{"etcd-1": result.OutcomeFail, "worker-1": result.OutcomePass, "worker-2": result.OutcomeFail}},
		{name: "all nodes", waivers: []result.Waiver{ufw(nil, nil, "2026-06-30")}, ufw: []part{{"etcd-1,worker-2", true}},
			outcome: map[string]result.Outcome{"etcd-1": result.OutcomeWaived, "worker-1": result.OutcomePass, "worker-2": result.OutcomeWaived}},
		{name: "glob", waivers: []result.Waiver{{Check: "firewall.*", Reason: "r", Expires: "2026-06-30", Source: "w.yaml:9"}},
			ufw: []part{{"etcd-1,worker-2", true}}, cluster: false,
			outcome: map[string]result.Outcome{"etcd-1": result.OutcomeWaived, "worker-2": result.OutcomeWaived}},
		{name: "some nodes split the finding", waivers: []result.Waiver{ufw([]string{"worker-2"}, nil, "2026-06-30")},
			ufw:     []part{{"etcd-1", false}, {"worker-2", true}},
			outcome: map[string]result.Outcome{"etcd-1": result.OutcomeFail, "worker-1": result.OutcomePass, "worker-2": result.OutcomeWaived}},
		{name: "by role", waivers: []result.Waiver{ufw(nil, []string{"etcd"}, "2026-06-30")},
			ufw:     []part{{"worker-2", false}, {"etcd-1", true}},
			outcome: map[string]result.Outcome{"etcd-1": result.OutcomeWaived, "worker-2": result.OutcomeFail}},
		{name: "nodes and roles add up", waivers: []result.Waiver{ufw([]string{"worker-2"}, []string{"etcd"}, "2026-06-30")},
			ufw: []part{{"etcd-1,worker-2", true}}, outcome: map[string]result.Outcome{"etcd-1": result.OutcomeWaived, "worker-2": result.OutcomeWaived}},
		{name: "two waivers each take a node", waivers: []result.Waiver{ufw([]string{"worker-2"}, nil, "2026-06-30"), ufw([]string{"etcd-1"}, nil, "2026-06-30")},
			ufw: []part{{"etcd-1", true}, {"worker-2", true}}, outcome: map[string]result.Outcome{"etcd-1": result.OutcomeWaived, "worker-2": result.OutcomeWaived}},
		{name: "applies through its last day UTC", now: time.Date(2026, 6, 30, 23, 59, 59, 0, time.UTC),
			waivers: []result.Waiver{ufw(nil, nil, "2026-06-30")}, ufw: []part{{"etcd-1,worker-2", true}},
			outcome: map[string]result.Outcome{"etcd-1": result.OutcomeWaived}},
		{name: "the day after, in another zone, it has expired", now: time.Date(2026, 6, 30, 21, 0, 0, 0, time.FixedZone("UTC-3", -3*3600)),
			waivers: []result.Waiver{ufw(nil, nil, "2026-06-30")}, ufw: []part{{"etcd-1,worker-2", false}},
			outcome: map[string]result.Outcome{"etcd-1": result.OutcomeFail},
			extra:   map[string]string{catalog.WaiverExpiredID: "w.yaml:2: firewall.ufw-active on all nodes, expires 2026-06-30: NET-1 by J. Doe"}},
		{name: "expired", waivers: []result.Waiver{ufw([]string{"worker-2"}, nil, "2026-05-31")}, ufw: []part{{"etcd-1,worker-2", false}},
			outcome: map[string]result.Outcome{"worker-2": result.OutcomeFail},
			extra:   map[string]string{catalog.WaiverExpiredID: "w.yaml:2: firewall.ufw-active on nodes worker-2, expires 2026-05-31: NET-1 by J. Doe"}},
		{name: "bad date counts as expired", waivers: []result.Waiver{ufw(nil, nil, "someday")}, ufw: []part{{"etcd-1,worker-2", false}},
			extra: map[string]string{catalog.WaiverExpiredID: "someday"}},
		{name: "unused: node without the finding", waivers: []result.Waiver{ufw([]string{"worker-1"}, nil, "2026-06-30")},
			ufw: []part{{"etcd-1,worker-2", false}}, extra: map[string]string{catalog.WaiverUnusedID: "firewall.ufw-active on nodes worker-1"}},
		{name: "unused: check that did not fail", waivers: []result.Waiver{{Check: "sysctl.ip-forward", Reason: "r", Expires: "2026-06-30", Source: "w.yaml:5"}},
			ufw: []part{{"etcd-1,worker-2", false}}, extra: map[string]string{catalog.WaiverUnusedID: "w.yaml:5: sysctl.ip-forward"}},
		{name: "redundant waiver is unused", waivers: []result.Waiver{ufw(nil, nil, "2026-06-30"), {Check: "firewall.ufw-active", Nodes: []string{"etcd-1"}, Reason: "r", Expires: "2026-06-30", Source: "w.yaml:7"}},
			ufw: []part{{"etcd-1,worker-2", true}}, extra: map[string]string{catalog.WaiverUnusedID: "w.yaml:7"}},
		{name: "cluster finding waived by a waiver naming no nodes", waivers: []result.Waiver{{Check: "cluster.unavailable", Reason: "r", Expires: "2026-06-30", Source: "w.yaml:3"}},
			ufw: []part{{"etcd-1,worker-2", false}}, cluster: true},
		{name: "cluster finding not waived by a node waiver", waivers: []result.Waiver{{Check: "cluster.*", Nodes: []string{"etcd-1"}, Reason: "r", Expires: "2026-06-30", Source: "w.yaml:3"}},
			ufw: []part{{"etcd-1,worker-2", false}}, cluster: false, extra: map[string]string{catalog.WaiverUnusedID: "w.yaml:3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := waiverReport(t)
			when := now
			if !tt.now.IsZero() {
				when = tt.now
			}
			got := ApplyWaivers(r, tt.waivers, when)
			fs := findingsOf(got, "firewall.ufw-active")
			if len(fs) != len(tt.ufw) {
				t.Fatalf("got %d ufw findings, want %d: %+v", len(fs), len(tt.ufw), fs)
			}
			for i, want := range tt.ufw {
				f := fs[i]
				if strings.Join(f.Nodes, ",") != want.nodes || (f.Waived != nil) != want.waived {
					t.Errorf("ufw finding %d: nodes %v waived %v, want %s waived %v", i, f.Nodes, f.Waived, want.nodes, want.waived)
				}
				// Evidence and summary follow the finding's own nodes.
				for _, n := range []string{"etcd-1", "worker-2"} {
					in := slices.Contains(f.Nodes, n)
					if has := strings.Contains(strings.Join(f.Evidence, "\n"), n+": ufw.active=active"); has != in {
						t.Errorf("ufw finding %d (nodes %v): evidence %q, want %s's line %v", i, f.Nodes, f.Evidence, n, in)
					}
					if has := strings.Contains(f.Summary, n); has != in {
						t.Errorf("ufw finding %d (nodes %v): summary %q", i, f.Nodes, f.Summary)
					}
				}
				for _, s := range f.Rollout {
					for _, n := range s.Nodes {
						if !slices.Contains(f.Nodes, n) {
							t.Errorf("ufw finding %d: rollout names %s outside %v", i, n, f.Nodes)
						}
					}
				}
				if f.Waived != nil {
					last := f.Evidence[len(f.Evidence)-1]
					if !strings.Contains(last, "waived until "+f.Waived.Expires) || !strings.Contains(last, f.Waived.Reason) || !strings.Contains(last, f.Waived.Source) {
						t.Errorf("waived evidence %q lacks expiry, source or reason", last)
					}
				}
			}
			for node, want := range tt.outcome {
				if got := outcomes(r, "firewall.ufw-active")[node]; got != want {
					t.Errorf("outcome on %s = %s, want %s", node, got, want)
				}
			}
			for _, id := range []string{catalog.WaiverExpiredID, catalog.WaiverUnusedID} {
				bk := findingsOf(got, id)
				want, wanted := tt.extra[id]
				if !wanted {
					if len(bk) != 0 {
						t.Errorf("unexpected %s: %+v", id, bk)
					}
					continue
				}
				if len(bk) != 1 || !strings.Contains(strings.Join(bk[0].Evidence, "\n"), want) {
					t.Fatalf("%s = %+v, want one with evidence %q", id, bk, want)
				}
				wantSev := map[string]result.Severity{catalog.WaiverExpiredID: result.SeverityWarning, catalog.WaiverUnusedID: result.SeverityInfo}[id]
				if bk[0].Severity != wantSev || bk[0].Waived != nil || bk[0].Title == "" || bk[0].Remediation == "" {
					t.Errorf("%s = %+v, want severity %s, a title and a remediation", id, bk[0], wantSev)
				}
			}
			cl := findingsOf(got, "cluster.unavailable")
			if len(cl) != 1 || (cl[0].Waived != nil) != tt.cluster {
				t.Errorf("cluster.unavailable = %+v, want one, waived=%v", cl, tt.cluster)
			}
		})
	}
}

// The incident fleet with the UFW check and its correlation waived on all
// nodes still fails the gate, on the kube-proxy symptom alone.
func TestIncidentWithWaivers(t *testing.T) {
	cat := builtinCatalog(t)
	waivers, err := cat.ParseWaivers("w.yaml", []byte(`
- check: firewall.ufw-active
  reason: accepted by test
  expires: 2026-12-31
- check: correlation.*
  reason: accepted by test
  expires: 2026-12-31
- check: firewall.firewalld-active
  nodes: [etcd-1]
  reason: not expected to match
  expires: 2026-12-31
- check: sysctl.ip-forward
  reason: old
  expires: 2026-01-31
`))
	if err != nil {
		t.Fatal(err)
	}
	// Judged as a run started on 2026-06-01.
	r := judgeFixture(t, "incident", func(r *result.Report, rules *Rules) {
		r.StartedAt = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
		rules.Waivers = waivers
	})
	waived := map[string]bool{}
	for _, f := range r.Findings {
		if f.Waived != nil {
			waived[f.Check] = true
		}
	}
	if !waived["firewall.ufw-active"] || !waived["correlation.k8s.kubeproxy-crashloop"] {
		t.Errorf("waived = %v, want the ufw check and its correlation", waived)
	}
	if len(findingsOf(r.Findings, catalog.WaiverUnusedID)) != 1 || len(findingsOf(r.Findings, catalog.WaiverExpiredID)) != 1 {
		t.Errorf("want one unused and one expired finding: %+v", r.Findings)
	}
	if r.Gate.ExitCode != result.ExitGateFailed || !strings.HasSuffix(strings.Join(r.Gate.Reasons, "; "), "critical findings; 2 findings waived") {
		t.Errorf("gate = %+v, want exit 1 for the kube-proxy symptoms with 2 waived", r.Gate)
	}
	if live := findingsOf(r.Findings, "kubeproxy.healthz-failing"); len(live) != 1 || live[0].Waived != nil {
		t.Errorf("kubeproxy.healthz-failing = %+v, want it live", live)
	}
	// Waived findings sort after the live ones.
	if last := r.Findings[len(r.Findings)-1]; last.Waived == nil {
		t.Errorf("last finding %s is not waived", last.Check)
	}
	for _, c := range r.Checks {
		if c.Check == "firewall.ufw-active" && c.Outcome == result.OutcomeFail {
			t.Errorf("%s still fails firewall.ufw-active", c.Node)
		}
	}
}

// TestRestrictEvidenceOwner holds restrict to the owner of an evidence line
// being the longest node named before a ": " (w-10 is not w-1), a name with
// ": " in it included, and lines naming no node kept.
func TestRestrictEvidenceOwner(t *testing.T) {
	f := result.Finding{
		Check: "x", Nodes: []string{"a: b", "w-1", "w-10"},
		Evidence: []string{"w-1: one", "w-10: ten", "a: b: both", "a: neither node", "cluster: kept"},
	}
	for _, tc := range []struct {
		keep []string
		want string
	}{
		{[]string{"w-10"}, "w-10: ten|a: neither node|cluster: kept"},
		{[]string{"w-1"}, "w-1: one|a: neither node|cluster: kept"},
		{[]string{"a: b"}, "a: b: both|a: neither node|cluster: kept"},
	} {
		if got := strings.Join(restrict(f, tc.keep).Evidence, "|"); got != tc.want {
			t.Errorf("restrict to %v: evidence %q, want %q", tc.keep, got, tc.want)
		}
	}
}
