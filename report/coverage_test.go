package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/audit"
	"github.com/fleet-audit/fleet-audit/result"
)

// coverageReport is a fleet where every kind of check gap meets a pass: a
// server whose config.yaml names the CNI it runs (network.cni-mismatch
// passes), two agents where that server-only setting was dropped (the
// check does not apply), and on one agent UFW's status read without root
// (firewall.ufw-active could not be judged: the node is partial).
func coverageReport() *result.Report {
	r := newReport("inventories/coverage.yaml")
	server := baseFacts("rke2-server")
	server["cni.configured"], server["cni.name"] = "canal", "canal"
	agent := func() map[string]string {
		f := baseFacts("rke2-agent")
		f["cni.name"] = "canal"
		return f
	}
	blind := agent()
	blind["ufw.active"], blind["ufw.status"], blind["ufw.config_enabled"] = "active", "not-root", "yes"
	r.Nodes = append(r.Nodes,
		node("cov-server-1", "192.0.2.31", []string{"etcd", "control-plane"}, server, 1.1),
		node("cov-agent-1", "192.0.2.41", []string{"worker"}, agent(), 1.2),
		node("cov-agent-2", "192.0.2.42", []string{"worker"}, blind, 1.3),
	)
	analyze(r, []string{"network.cni-mismatch", "firewall.ufw-active"}, "")
	return r
}

// TestCheckGapsInEveryFormat: a check that does not apply on agents (a
// server-only setting) and one that could not be judged are neither
// passed nor lumped together: each format names and counts both kinds
// apart, and only the second makes a node partial.
func TestCheckGapsInEveryFormat(t *testing.T) {
	r := coverageReport()
	outcomes := map[string]result.Outcome{}
	for _, c := range r.Checks {
		outcomes[c.Check+"@"+c.Node] = c.Outcome
	}
	for key, want := range map[string]result.Outcome{
		"network.cni-mismatch@cov-server-1": result.OutcomePass,
		"network.cni-mismatch@cov-agent-1":  result.OutcomeNotApplicable,
		"network.cni-mismatch@cov-agent-2":  result.OutcomeNotApplicable,
		"firewall.ufw-active@cov-agent-2":   result.OutcomeUnjudged,
	} {
		if outcomes[key] != want {
			t.Errorf("%s: %s, want %s", key, outcomes[key], want)
		}
	}
	for i, want := range []result.NodeStatus{result.StatusOK, result.StatusOK, result.StatusPartial} {
		if n := r.Nodes[i]; n.Status != want {
			t.Errorf("%s: status %s, want %s", n.Name, n.Status, want)
		}
	}

	unjudged, unjudgedWhy := "hecks that could not be judged (1)", ", a fact they read could not be read"
	notApplicable, notApplicableWhy := "hecks not applicable (1)", ", by design: they read a setting of RKE2 servers only"
	for _, tc := range []struct {
		format string
		want   []string
	}{
		{"terminal", []string{"c" + unjudged + unjudgedWhy, "cov-agent-2: firewall.ufw-active", "c" + notApplicable + notApplicableWhy}},
		{"markdown", []string{"**C" + unjudged + "**" + unjudgedWhy, "- cov-agent-2: firewall.ufw-active", "**C" + notApplicable + "**" + notApplicableWhy, `- cov-agent-\[1-2\]: network.cni-mismatch`}},
		{"html", []string{"<strong>C" + unjudged + "</strong>" + unjudgedWhy, "<li>cov-agent-2: firewall.ufw-active</li>", "<strong>C" + notApplicable + "</strong>" + notApplicableWhy, "<li>cov-agent-[1-2]: network.cni-mismatch</li>"}},
	} {
		// Wide enough that no terminal line wraps: the words are tested
		// here, the fitting in TestTerminalFitsWidth.
		out := string(render(t, tc.format, Options{Width: 400}, r))
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s does not say %q", tc.format, w)
			}
		}
		if strings.Contains(out, "skipped on audited nodes") {
			t.Errorf("%s lists a check as skipped for a fact not reported, none was", tc.format)
		}
	}

	var saved struct {
		Checks []result.CheckResult `json:"checks"`
	}
	if err := json.Unmarshal(render(t, "json", Options{}, r), &saved); err != nil {
		t.Fatal(err)
	}
	count := map[result.Outcome]int{}
	for _, c := range saved.Checks {
		count[c.Outcome]++
	}
	if count[result.OutcomeNotApplicable] != 2 || count[result.OutcomeUnjudged] != 1 {
		t.Errorf("json outcomes %v, want 2 not_applicable and 1 unjudged", count)
	}

	checks := suiteNamed(junitDoc(t, r), "checks")
	for _, tc := range []struct{ name, skipped string }{
		{"network.cni-mismatch", ""},
		{"network.cni-mismatch (not applicable)", "not applicable on 2 nodes (cov-agent-[1-2]): cni.configured is a setting of RKE2 servers only"},
		{"firewall.ufw-active", ""},
		{"firewall.ufw-active (could not be judged)", "could not be judged on 1 node (cov-agent-2): ufw.status=not-root"},
	} {
		c := caseNamed(checks, tc.name)
		switch {
		case c == nil:
			t.Errorf("junit: no case %q", tc.name)
		case tc.skipped == "" && c.Skipped != nil:
			t.Errorf("junit: %s skipped: %s", tc.name, c.Skipped.Message)
		case tc.skipped != "" && (c.Skipped == nil || !strings.HasPrefix(c.Skipped.Message, tc.skipped)):
			t.Errorf("junit: %s = %+v, want skipped %q", tc.name, c.Skipped, tc.skipped)
		}
	}
	if got, want := checks.Skipped, 2; got != want {
		t.Errorf("junit checks suite counts %d skipped, want %d", got, want)
	}
}

// TestFailedClusterViewInEveryFormat: a cluster view that failed (its
// probe killed by the watchdog) is named in every format and never reads
// "Cluster: ok" or a bare "upgrade allowed", also when --allow-unreachable
// lets the gate pass.
func TestFailedClusterViewInEveryFormat(t *testing.T) {
	r := cleanReport()
	r.Cluster = &result.Cluster{Node: "lab-1", Status: result.ClusterFailed, Facts: map[string]string{"cluster.api": "ok"},
		Message:  "no server answered: lab-1: probe cluster: timeout (exit 137)",
		Probes:   []result.ProbeRun{{ID: "cluster", Status: result.ProbeTimeout, ExitCode: 137}},
		Attempts: []result.ClusterAttempt{{Node: "lab-1", Outcome: result.ClusterFailed, Reason: "probe cluster: timeout (exit 137)"}}}
	analyze(r, fixtureChecks, "")
	if r.Gate.ExitCode != result.ExitUnaudited {
		t.Fatalf("gate exit %d, want 3", r.Gate.ExitCode)
	}
	r.Gate = audit.EvaluateGate(r, audit.GatePolicy{FailOn: result.SeverityCritical, AllowUnreachable: true})
	const why = "probe cluster: timeout (exit 137)"
	for _, format := range []string{"terminal", "markdown", "html", "json"} {
		out := string(render(t, format, Options{}, r))
		if !strings.Contains(out, why) {
			t.Errorf("%s does not say why the cluster view failed", format)
		}
		if format != "json" && !strings.Contains(out, "upgrade allowed with the cluster view NOT audited") {
			t.Errorf("%s: the decision does not say the cluster view was not audited", format)
		}
	}
	cl := caseNamed(suiteNamed(junitDoc(t, r), "nodes"), result.ClusterNode)
	if cl == nil || cl.Error == nil || !strings.Contains(cl.Error.Message, why) {
		t.Errorf("junit (cluster) case = %+v, want an error naming %q", cl, why)
	}
}
