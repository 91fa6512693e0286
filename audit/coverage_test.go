package audit

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/result"
)

// TestMarkNotRoot: a root probe that ran as the login user leaves out what
// it could not see; those facts read not-root, never "does not apply".
func TestMarkNotRoot(t *testing.T) {
	probes := []probe.Probe{
		{ID: "r", NeedsRoot: true, Facts: []string{"r.a", "r.b"}},
		{ID: "l", Facts: []string{"l.a"}},
	}
	for _, tc := range []struct {
		name string
		meta map[string]string
		want map[string]string
	}{
		{"root login", map[string]string{probe.MetaUID: "0", probe.MetaSudo: "not_requested"}, map[string]string{"r.a": "1"}},
		{"sudo ok", map[string]string{probe.MetaUID: "1000", probe.MetaSudo: "ok"}, map[string]string{"r.a": "1"}},
		{"no become", map[string]string{probe.MetaUID: "1000", probe.MetaSudo: "not_requested"}, map[string]string{"r.a": "1", "r.b": probe.NotRoot}},
		{"sudo refused", map[string]string{probe.MetaUID: "1000", probe.MetaSudo: "password_required"}, map[string]string{"r.a": "1", "r.b": probe.NotRoot}},
		{"no meta (old bundle, lost)", map[string]string{}, map[string]string{"r.a": "1"}},
	} {
		facts := map[string]string{"r.a": "1"}
		markNotRoot(facts, tc.meta, probes)
		if !maps.Equal(facts, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, facts, tc.want)
		}
	}
}

// TestMarkPartial: an ok node with an unjudged check becomes partial with
// the check and the fix named; judged again without it, ok again; a node
// in another status keeps it.
func TestMarkPartial(t *testing.T) {
	nodes := []result.Node{
		{Name: "a", Status: result.StatusOK},
		{Name: "b", Status: result.StatusPartial, Message: "stale"},
		{Name: "c", Status: result.StatusProbeFailed, Message: "probe x failed"},
	}
	checks := []result.CheckResult{
		{Check: "x.one", Node: "a", Outcome: result.OutcomeUnjudged, Detail: "f=not-root: " + probe.Unjudgeable[probe.NotRoot]},
		{Check: "x.two", Node: "c", Outcome: result.OutcomeUnjudged, Detail: "f=not-root: " + probe.Unjudgeable[probe.NotRoot]},
		{Check: "x.one", Node: "b", Outcome: result.OutcomePass},
	}
	markPartial(nodes, checks)
	want := "1 check could not be judged: x.one (not-root: " + probe.Unjudgeable[probe.NotRoot] + ")"
	if nodes[0].Status != result.StatusPartial || nodes[0].Message != want {
		t.Errorf("a: %s %q, want partial %q", nodes[0].Status, nodes[0].Message, want)
	}
	if nodes[1].Status != result.StatusOK || nodes[1].Message != "" {
		t.Errorf("b: %s %q, want ok", nodes[1].Status, nodes[1].Message)
	}
	if nodes[2].Status != result.StatusProbeFailed || nodes[2].Message != "probe x failed" {
		t.Errorf("c: %s %q, want probe_failed kept", nodes[2].Status, nodes[2].Message)
	}
}

// TestMarkNotApplicable: a check reading a server_only fact, skipped on an
// agent because the fact was dropped there, does not apply; the same skip
// on a server (the fact should be there) or on a node not audited stays a
// skip, and a check reading no server_only fact is left alone.
func TestMarkNotApplicable(t *testing.T) {
	probes := []probe.Probe{{ID: "net", Facts: []string{"cni.configured", "cni.running"}, ServerOnly: []string{"cni.configured"}}}
	checks := []check.Check{
		{ID: "cni.mismatch", When: []check.Condition{{Fact: "cni.configured", Op: "ne", Ref: "cni.running"}}},
		{ID: "other", When: []check.Condition{{Fact: "x.y", Op: "eq", Value: "1"}}},
	}
	nodes := []result.Node{
		{Name: "agent", Status: result.StatusOK, Facts: map[string]string{"rke2.service": "rke2-agent", "cni.running": "canal"}},
		{Name: "server", Status: result.StatusOK, Facts: map[string]string{"rke2.service": "rke2-server", "cni.running": "canal"}},
		{Name: "down", Status: result.StatusUnreachable, Roles: []string{"worker"}},
	}
	skip := func(id, node string) result.CheckResult {
		return result.CheckResult{Check: id, Node: node, Outcome: result.OutcomeSkip, Detail: "not collected"}
	}
	results := []result.CheckResult{skip("cni.mismatch", "agent"), skip("cni.mismatch", "server"), skip("cni.mismatch", "down"), skip("other", "agent")}
	markNotApplicable(nodes, results, checks, probes)
	want := []result.Outcome{result.OutcomeNotApplicable, result.OutcomeSkip, result.OutcomeSkip, result.OutcomeSkip}
	for i, r := range results {
		if r.Outcome != want[i] {
			t.Errorf("%s on %s: %s (%s), want %s", r.Check, r.Node, r.Outcome, r.Detail, want[i])
		}
	}
}

// TestUnknownHealthIsNotHealthy: a kube-proxy whose health answer is
// neither its 200 nor its 503 (here a 500; behind a login's proxy it was
// the proxy's refusal) reads kubeproxy.health=unknown. That used to pass
// kubeproxy.healthz-failing, so the gate passed with the node's kube-proxy
// never judged; it is "could not judge" on that node, the node partial
// with the answer it got, and the gate names it.
func TestUnknownHealthIsNotHealthy(t *testing.T) {
	fleet := nodesim.Clean(3)
	s := fleet[2].State
	h := maps.Clone(s.HealthHTTP)
	h["/healthz"] = nodesim.HTTP{Code: 500, Body: "internal error"}
	h["/livez"] = nodesim.HTTP{Code: 500, Body: "internal error"}
	s.HealthHTTP = h
	fleet[2].State = s
	inv, tr := simulate(t, nodesim.WithCluster(fleet))
	r := runSim(t, inv, tr)
	n := r.Nodes[2]
	if n.Facts["kubeproxy.health"] != "unknown" {
		t.Fatalf("kubeproxy.health = %q, want unknown: the test proves nothing", n.Facts["kubeproxy.health"])
	}
	if n.Status != result.StatusPartial || !strings.Contains(n.Message, "kubeproxy.healthz-failing") || !strings.Contains(n.Message, check.UnknownWhy) {
		t.Errorf("node %s: status %s (%q), want partial naming kubeproxy.healthz-failing and why", n.Name, n.Status, n.Message)
	}
	var detail string
	for _, c := range r.Checks {
		if c.Node == n.Name && c.Check == "kubeproxy.healthz-failing" {
			detail = string(c.Outcome) + ": " + c.Detail
		}
	}
	if !strings.Contains(detail, "unjudged") || !strings.Contains(detail, "kubeproxy.healthz.code=500") {
		t.Errorf("kubeproxy.healthz-failing on %s = %q, want unjudged with the code it got", n.Name, detail)
	}
	for _, o := range r.Nodes[:2] {
		if o.Status != result.StatusOK {
			t.Errorf("healthy node %s: status %s (%s)", o.Name, o.Status, o.Message)
		}
	}
	// kubelet's liveness probe fails on the 500 as well, so the cluster
	// view shows the pod crash-looping: that critical finding decides the
	// exit code (1 before 3), and the partial node is named beside it.
	if r.Gate.Passed {
		t.Errorf("gate passed: %v", r.Gate.Reasons)
	}
	if !slices.ContainsFunc(r.Gate.Reasons, func(s string) bool { return strings.Contains(s, "partial") }) {
		t.Errorf("gate reasons %v do not name the partial node", r.Gate.Reasons)
	}
}

// TestUnreadMetricsAreNotHealthy: kube-proxy answers its health port, and
// its metrics port answers 403 (an auth proxy such as kube-rbac-proxy in
// front of it). Its metrics used to read "absent", as if kube-proxy
// exported none, and every sync check skipped: the gate passed with the
// node's syncs never looked at. They read "unknown" now, and the checks on
// them are could-not-judge on that node, quoting the answer it got.
func TestUnreadMetricsAreNotHealthy(t *testing.T) {
	fleet := nodesim.Clean(3)
	s := fleet[2].State
	h := maps.Clone(s.HTTP)
	h["10249/metrics"] = nodesim.HTTP{Code: 403, Body: "Forbidden\n"}
	s.HTTP = h
	fleet[2].State = s
	inv, tr := simulate(t, nodesim.WithCluster(fleet))
	r := runSim(t, inv, tr)
	n := r.Nodes[2]
	if n.Facts["kubeproxy.health"] != "healthy" || n.Facts["kubeproxy.metrics.status"] != "http-403" {
		t.Fatalf("health %q, metrics %q: want healthy and http-403, or the test proves nothing", n.Facts["kubeproxy.health"], n.Facts["kubeproxy.metrics.status"])
	}
	if n.Status != result.StatusPartial || !strings.Contains(n.Message, "kubeproxy.sync-stale") {
		t.Errorf("node %s: status %s (%q), want partial naming kubeproxy.sync-stale", n.Name, n.Status, n.Message)
	}
	for _, id := range []string{"kubeproxy.sync-stale", "kubeproxy.sync-loop-hung", "kubeproxy.restore-failures", "kubeproxy.sync-slow",
		"kubeproxy.sync-mean-slow", "kubeproxy.netprog-slow", "kubeproxy.rules-below-peers"} {
		var got string
		for _, c := range r.Checks {
			if c.Node == n.Name && c.Check == id {
				got = string(c.Outcome) + ": " + c.Detail
			}
		}
		if !strings.HasPrefix(got, string(result.OutcomeUnjudged)) || !strings.Contains(got, "kubeproxy.metrics.status=http-403") {
			t.Errorf("%s on %s = %q, want unjudged quoting the 403", id, n.Name, got)
		}
	}
	for _, o := range r.Nodes[:2] {
		if o.Status != result.StatusOK {
			t.Errorf("healthy node %s: status %s (%s)", o.Name, o.Status, o.Message)
		}
	}
	if r.Gate.Passed {
		t.Errorf("gate passed with %s's kube-proxy syncs never read", n.Name)
	}
}

// TestUnitStatesOfADownManagerAreNotHealthy: on a node booted with
// systemd whose manager does not answer (a hung PID 1), systemctl prints
// nothing, which read as "absent" before: UFW, firewalld and
// NetworkManager were then taken as not running and their critical checks
// passed blind. They read "unknown" now, and the checks that read them
// are unjudged on that node, which is partial, and the gate does not pass.
func TestUnitStatesOfADownManagerAreNotHealthy(t *testing.T) {
	fleet := nodesim.Clean(3)
	fleet[2].State = nodesim.WithSystemdManagerDown(nodesim.WithUFWActive(fleet[2].State))
	inv, tr := simulate(t, nodesim.WithCluster(fleet))
	r := runSim(t, inv, tr)
	n := r.Nodes[2]
	for _, f := range []string{"ufw.active", "ufw.enabled"} {
		if n.Facts[f] != "unknown" {
			t.Errorf("%s = %q on %s, want unknown", f, n.Facts[f], n.Name)
		}
	}
	if n.Status != result.StatusPartial || !strings.Contains(n.Message, "firewall.ufw-active") {
		t.Errorf("node %s: status %s (%q), want partial naming firewall.ufw-active", n.Name, n.Status, n.Message)
	}
	for _, c := range r.Checks {
		if c.Node == n.Name && c.Check == "firewall.ufw-active" && c.Outcome != result.OutcomeUnjudged {
			t.Errorf("firewall.ufw-active on %s: %s (%s), want unjudged", n.Name, c.Outcome, c.Detail)
		}
	}
	for _, o := range r.Nodes[:2] {
		if o.Status != result.StatusOK {
			t.Errorf("healthy node %s: status %s (%s)", o.Name, o.Status, o.Message)
		}
	}
	if r.Gate.Passed {
		t.Errorf("gate passed with %s's firewall never read", n.Name)
	}
}
