package report

import (
	"fmt"
	"sort"
	"time"

	"github.com/fleet-audit/fleet-audit/result"
)

// The fixtures are built in Go, not read from JSON, so that a change to the
// model breaks them at compile time. Everything is sorted and the clock is
// fixed, so the golden files are byte-stable without scrubbing.

var (
	fixtureStart = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	fixtureEnd   = fixtureStart.Add(12*time.Second + 400*time.Millisecond)
	fixtureTool  = result.Tool{Name: "fleet-audit", Version: "v0.1.0"}
)

var probeIDs = []string{"firewall", "iptables", "kubeproxy", "modules", "os", "rke2", "sysctl"}

func okProbes() []result.ProbeRun {
	runs := make([]result.ProbeRun, len(probeIDs))
	for i, id := range probeIDs {
		runs[i] = result.ProbeRun{ID: id, Status: "ok"}
	}
	return runs
}

// baseFacts is a healthy RKE2 node as the seed incident describes it.
func baseFacts(service string) map[string]string {
	return map[string]string{
		"conntrack.count":                           "817",
		"conntrack.max":                             "131072",
		"firewalld.active":                          "inactive",
		"firewalld.installed":                       "no",
		"iptables.backend":                          "nf_tables",
		"iptables.version":                          "1.8.10",
		"kubeproxy.healthz.code":                    "200",
		"kubeproxy.healthz.node_eligible":           "true",
		"kubeproxy.livez.code":                      "200",
		"module.br_netfilter":                       "loaded",
		"os.kernel":                                 "6.8.0-49-generic",
		"os.pretty_name":                            "Ubuntu 24.04.1 LTS",
		"rke2.service":                              service,
		"rke2.version":                              "v1.31.4+rke2r1",
		"sysctl.net.bridge.bridge-nf-call-iptables": "1",
		"sysctl.net.ipv4.ip_forward":                "1",
		"ufw.active":                                "inactive",
		"ufw.enabled":                               "disabled",
		"ufw.installed":                             "yes",
	}
}

// fixtureChecks are the checks judged in every scenario, sorted by id.
var fixtureChecks = []struct {
	id       string
	severity result.Severity
	fail     func(map[string]string) (bool, string)
}{
	{"firewall.firewalld-active", result.SeverityCritical, func(f map[string]string) (bool, string) {
		return f["firewalld.active"] == "active", "firewalld.active=" + f["firewalld.active"] + " (want not active)"
	}},
	{"firewall.ufw-active", result.SeverityCritical, func(f map[string]string) (bool, string) {
		return f["ufw.active"] == "active", "ufw.active=" + f["ufw.active"] + " (want not active)"
	}},
	{"kubeproxy.healthz-failing", result.SeverityCritical, func(f map[string]string) (bool, string) {
		return f["kubeproxy.healthz.code"] != "200", "kubeproxy.healthz.code=" + f["kubeproxy.healthz.code"] + ", kubeproxy.livez.code=" + f["kubeproxy.livez.code"]
	}},
	{"kubeproxy.node-not-eligible", result.SeverityInfo, func(f map[string]string) (bool, string) {
		return f["kubeproxy.healthz.node_eligible"] == "false", "kubeproxy.healthz.node_eligible=" + f["kubeproxy.healthz.node_eligible"]
	}},
	{"module.br-netfilter", result.SeverityCritical, func(f map[string]string) (bool, string) {
		return f["module.br_netfilter"] == "absent", "module.br_netfilter=" + f["module.br_netfilter"]
	}},
	{"sysctl.ip-forward", result.SeverityCritical, func(f map[string]string) (bool, string) {
		return f["sysctl.net.ipv4.ip_forward"] != "1", "sysctl.net.ipv4.ip_forward=" + f["sysctl.net.ipv4.ip_forward"] + " (want 1)"
	}},
}

// judge fills Checks the way audit does: node order, then check id; a node
// without facts skips every check.
func judge(r *result.Report) {
	for _, n := range r.Nodes {
		for _, c := range fixtureChecks {
			cr := result.CheckResult{Check: c.id, Node: n.Name, Severity: c.severity, Outcome: result.OutcomePass}
			if len(n.Facts) == 0 {
				cr.Outcome, cr.Detail = result.OutcomeSkip, "node not audited: "+n.Status.String()
			} else if fail, detail := c.fail(n.Facts); fail {
				cr.Outcome, cr.Detail = result.OutcomeFail, detail
			} else {
				cr.Detail = detail
			}
			r.Checks = append(r.Checks, cr)
		}
	}
}

func newReport(inventory string) *result.Report {
	return &result.Report{
		SchemaVersion: result.SchemaVersion,
		Tool:          fixtureTool,
		Inventory:     inventory,
		StartedAt:     fixtureStart,
		FinishedAt:    fixtureEnd,
		Gate:          result.Gate{FailOn: result.SeverityCritical, Passed: true, Reasons: []string{}},
		Findings:      []result.Finding{},
		Drift:         []result.Drift{},
	}
}

func node(name, address string, roles []string, facts map[string]string, seconds float64) result.Node {
	n := result.Node{Name: name, Address: address, Roles: roles, Status: result.StatusOK, Facts: facts, DurationSeconds: seconds, Probes: okProbes()}
	return n
}

// incidentReport is the seed incident: UFW active on etcd-1, etcd-2,
// worker-2 and worker-4, kube-proxy /healthz 503 on exactly those four. It
// also carries what a real run adds around it: a --target-version, the
// rollout plans, the ranked candidate causes, the cluster probes (run on
// etcd-1, which see a tenth Kubernetes node the inventory lacks), one
// cluster-scoped check, and a conntrack warning on worker-3 that a waiver
// accepts.
func incidentReport() *result.Report {
	r := newReport("inventories/cluster-a.yaml")
	ufw := map[string]bool{"cluster-a-etcd-1": true, "cluster-a-etcd-2": true, "cluster-a-worker-2": true, "cluster-a-worker-4": true}
	add := func(name, role, service string, i int) {
		f := baseFacts(service)
		f["conntrack.count"] = fmt.Sprint(700 + 37*i)
		if ufw[name] {
			f["ufw.active"], f["ufw.enabled"], f["kubeproxy.healthz.code"] = "active", "enabled", "503"
		}
		if name == "cluster-a-worker-3" {
			f["os.kernel"] = "6.8.0-51-generic"
			f["conntrack.count"] = "121344"
		}
		r.Nodes = append(r.Nodes, node(name, fmt.Sprintf("10.0.1.%d", 10+i), []string{role}, f, 1.5+float64(i)/10))
	}
	i := 0
	for _, n := range []string{"cluster-a-etcd-1", "cluster-a-etcd-2", "cluster-a-etcd-3"} {
		add(n, "etcd", "rke2-server", i)
		i++
	}
	for _, n := range []string{"cluster-a-cp-1", "cluster-a-cp-2"} {
		add(n, "control-plane", "rke2-server", i)
		i++
	}
	for _, n := range []string{"cluster-a-worker-1", "cluster-a-worker-2", "cluster-a-worker-3", "cluster-a-worker-4"} {
		add(n, "worker", "rke2-agent", i)
		i++
	}
	judge(r)
	r.TargetVersion = "v1.32.1+rke2r1"
	waiver := result.Waiver{
		Check: "conntrack.pressure", Nodes: []string{"cluster-a-worker-3"},
		Reason:  "worker-3 carries the ingress load test until the upgrade window; accepted by j.doe (CHG-4711)",
		Expires: "2026-12-31", Source: "waivers.yaml:4",
	}
	// conntrack.pressure is judged on every node, as audit does; only the
	// incident has it, so the other scenarios' goldens do not move.
	for _, n := range r.Nodes {
		cr := result.CheckResult{Check: "conntrack.pressure", Node: n.Name, Severity: result.SeverityWarning, Outcome: result.OutcomePass}
		cr.Detail = fmt.Sprintf("conntrack.count=%s of conntrack.max=%s", n.Facts["conntrack.count"], n.Facts["conntrack.max"])
		if n.Name == "cluster-a-worker-3" {
			cr.Outcome = result.OutcomeWaived
			cr.Detail += " (92%, want below 90%) (waived until 2026-12-31 by waivers.yaml:4)"
		}
		r.Checks = append(r.Checks, cr)
	}
	r.Checks = append(r.Checks, result.CheckResult{Check: "cluster.readyz", Node: result.ClusterNode, Severity: result.SeverityCritical, Outcome: result.OutcomePass, Detail: "cluster.readyz=ok"})
	joined := map[string]string{"cluster-a-worker-5": ""}
	for _, n := range r.Nodes {
		joined[n.Name] = n.Name
	}
	r.Cluster = &result.Cluster{
		Node: "cluster-a-etcd-1", Status: result.ClusterOK,
		Facts: map[string]string{
			"cluster.nodes.count":    "10",
			"cluster.rbac.ok":        "yes",
			"cluster.readyz":         "ok",
			"cluster.server_version": "v1.31.4+rke2r1",
		},
		Probes: []result.ProbeRun{{ID: "cluster", Status: "ok"}},
		Joined: joined,
	}

	four := []string{"cluster-a-etcd-1", "cluster-a-etcd-2", "cluster-a-worker-2", "cluster-a-worker-4"}
	rollout := []result.RolloutStep{
		{Class: "etcd", Nodes: []string{"cluster-a-etcd-1", "cluster-a-etcd-2"}, OneAtATime: true},
		{Class: "worker", Nodes: []string{"cluster-a-worker-2", "cluster-a-worker-4"}},
	}
	five := []string{"cluster-a-cp-1", "cluster-a-cp-2", "cluster-a-etcd-3", "cluster-a-worker-1", "cluster-a-worker-3"}
	var ufwEvidence, healthzEvidence []string
	for _, n := range four {
		ufwEvidence = append(ufwEvidence, n+": ufw.active=active")
		healthzEvidence = append(healthzEvidence, n+": kubeproxy.healthz.code=503, kubeproxy.livez.code=200")
	}
	r.Findings = []result.Finding{
		{
			Check: "correlation.kubeproxy.healthz-failing", Kind: result.KindCorrelation,
			Title: "probable cause: ufw.active=active", Severity: result.SeverityCritical, Nodes: four,
			Summary: "kube-proxy /healthz fails on exactly the nodes where UFW is active.",
			Evidence: []string{
				"healthz 503 on 4 nodes; ufw.active=active on the same 4 and on none of the 5 healthy ones",
				"ufw.enabled=enabled splits the fleet the same way",
			},
			Remediation: "Stop and disable UFW one node at a time: systemctl stop ufw && systemctl disable ufw && ufw disable, then restart rke2-server or rke2-agent.",
			Cause: &result.Cause{
				Fact: "ufw.active", Value: "active", Symptom: "kubeproxy.healthz-failing", Symptoms: []string{"kubeproxy.healthz-failing"},
				Matched: 4, Extra: 0, Missed: 0, Healthy: 5, Score: 1, Exact: true, Also: []string{"ufw.enabled"},
				Ranked: []result.Candidate{
					{Fact: "ufw.active", Value: "active", Matched: 4, Score: 1},
					{Fact: "ufw.enabled", Value: "enabled", Matched: 4, Score: 1},
					{Fact: "os.kernel", Value: "6.8.0-49-generic", Matched: 4, Extra: 4, Score: 0.5},
				},
			},
			Rollout: rollout,
		},
		{
			Check: "firewall.ufw-active", Kind: result.KindCheck, Title: "UFW is active on a Kubernetes node",
			Severity: result.SeverityCritical, Nodes: four,
			Summary:     "UFW manages iptables policy and chains beside kube-proxy; it breaks Service rules and makes kube-proxy's /healthz fail.",
			Evidence:    ufwEvidence,
			Remediation: "Stop and disable UFW one node at a time: systemctl stop ufw && systemctl disable ufw && ufw disable, then restart rke2-server or rke2-agent; add it to the node baseline so it does not come back on reboot.",
			Rollout:     rollout,
		},
		{
			Check: "kubeproxy.healthz-failing", Kind: result.KindCheck, Title: "kube-proxy /healthz fails while /livez is fine",
			Severity: result.SeverityCritical, Nodes: four,
			Summary:     "kube-proxy is alive (/livez 200) but reports its dataplane unhealthy on /healthz; a liveness probe on /healthz makes kubelet kill it into CrashLoopBackOff.",
			Evidence:    healthzEvidence,
			Remediation: "Find what differs on these nodes (see the probable cause) and fix that; as a tactical mitigation only, point the kube-proxy liveness and startup probes at /livez.",
		},
		{
			Check: "drift.os.kernel", Kind: result.KindDrift, Title: "os.kernel differs within role worker",
			Severity: result.SeverityWarning, Nodes: []string{"cluster-a-worker-3"},
			Summary:     "cluster-a-worker-3 runs kernel 6.8.0-51-generic; the other 3 workers run 6.8.0-49-generic.",
			Evidence:    []string{"cluster-a-worker-3: os.kernel=6.8.0-51-generic"},
			Remediation: "Bring the node image in line with its role, or record why it differs.",
		},
		{
			Check: "cluster.nodes-not-in-inventory", Kind: result.KindCheck, Title: "the cluster has nodes the inventory does not list",
			Severity: result.SeverityWarning, Nodes: []string{},
			Summary:     "1 Kubernetes node is not audited because no inventory host matches: cluster-a-worker-5.",
			Evidence:    []string{"cluster-a-worker-5"},
			Remediation: "Add these nodes to the inventory (or set their inventory name or address to match), so drift on them is seen before the upgrade.",
		},
		{
			Check: "conntrack.pressure", Kind: result.KindCheck, Title: "conntrack table close to full",
			Severity: result.SeverityWarning, Nodes: []string{"cluster-a-worker-3"},
			Summary: "A full conntrack table drops new connections, Service traffic first (default threshold 90% of conntrack.max) (1 node: cluster-a-worker-3)",
			Evidence: []string{
				"cluster-a-worker-3: conntrack.count=121344 of conntrack.max=131072 (92%, want below 90%)",
				"waived until 2026-12-31 by waivers.yaml:4: " + waiver.Reason,
			},
			Remediation: "sysctl -w net.netfilter.nf_conntrack_max=262144 and persist it in /etc/sysctl.d/90-conntrack.conf.",
			Rollout:     []result.RolloutStep{{Class: "worker", Nodes: []string{"cluster-a-worker-3"}}},
			Waived:      &waiver,
		},
	}
	eight := []string{"cluster-a-cp-1", "cluster-a-cp-2", "cluster-a-etcd-1", "cluster-a-etcd-2", "cluster-a-etcd-3", "cluster-a-worker-1", "cluster-a-worker-2", "cluster-a-worker-4"}
	r.Drift = []result.Drift{
		{Fact: "kubeproxy.healthz.code", Scope: "fleet", Majority: "200", Groups: []result.DriftGroup{{Value: "200", Nodes: five}, {Value: "503", Nodes: four}}},
		{Fact: "os.kernel", Scope: "fleet", Majority: "6.8.0-49-generic", Groups: []result.DriftGroup{{Value: "6.8.0-49-generic", Nodes: eight}, {Value: "6.8.0-51-generic", Nodes: []string{"cluster-a-worker-3"}}}},
		{Fact: "ufw.active", Scope: "fleet", Majority: "inactive", Groups: []result.DriftGroup{{Value: "inactive", Nodes: five}, {Value: "active", Nodes: four}}},
		{Fact: "ufw.enabled", Scope: "fleet", Majority: "disabled", Groups: []result.DriftGroup{{Value: "disabled", Nodes: five}, {Value: "enabled", Nodes: four}}},
		{Fact: "os.kernel", Scope: "role:worker", Majority: "6.8.0-49-generic", Groups: []result.DriftGroup{{Value: "6.8.0-49-generic", Nodes: []string{"cluster-a-worker-1", "cluster-a-worker-2", "cluster-a-worker-4"}}, {Value: "6.8.0-51-generic", Nodes: []string{"cluster-a-worker-3"}}}},
	}
	r.Gate = result.Gate{FailOn: result.SeverityCritical, Passed: false, ExitCode: 1, Reasons: []string{"3 critical findings", "1 finding waived"}}
	return r
}

// cleanReport is three identical, healthy nodes.
func cleanReport() *result.Report {
	r := newReport("inventories/lab.yaml")
	for i, n := range []string{"lab-1", "lab-2", "lab-3"} {
		f := baseFacts("rke2-server")
		delete(f, "conntrack.count") // volatile; keeps the three nodes identical
		r.Nodes = append(r.Nodes, node(n, fmt.Sprintf("192.0.2.%d", 11+i), []string{"etcd", "control-plane"}, f, 1.2))
	}
	judge(r)
	return r
}

// unreachableReport has one node that never answered: the gate exits 3.
func unreachableReport() *result.Report {
	r := newReport("inventories/edge.yaml")
	r.Nodes = append(r.Nodes,
		node("edge-cp-1", "198.51.100.10", []string{"etcd", "control-plane"}, baseFacts("rke2-server"), 1.4),
		node("edge-worker-1", "198.51.100.21", []string{"worker"}, baseFacts("rke2-agent"), 1.6),
		result.Node{
			Name: "edge-worker-2", Address: "198.51.100.22", Roles: []string{"worker"}, Status: result.StatusUnreachable,
			Message:         "cannot reach 198.51.100.22:22 within 10s; check the address, the port and any firewall or security group in between",
			Error:           "dial tcp 198.51.100.22:22: i/o timeout",
			DurationSeconds: 10, Facts: map[string]string{}, Probes: []result.ProbeRun{},
		},
	)
	r.Nodes[1].Facts["conntrack.count"] = "901"
	r.Warnings = []string{"host keys were NOT verified for 1 node (edge-worker-1, --host-key-policy insecure-ignore): a man-in-the-middle would have gone unnoticed"}
	judge(r)
	r.Gate = result.Gate{FailOn: result.SeverityCritical, Passed: false, ExitCode: 3, Reasons: []string{"1 node not audited: edge-worker-2 (unreachable)"}}
	return r
}

// hostile are strings a compromised or broken node could send.
var hostile = []string{
	"<script>alert(1)</script>",
	`"><img src=x onerror=alert(1)>`,
	"javascript:alert(1)",
	"</textarea>",
	"{{.}}",
	"\x1b[31mred\x1b[0m",
	"\x1b]0;title\x07",
	"a|b|c",
	"`code` ``x``",
	"line1\nline2\r\nline3",
	"back\bspace\x00nul\x7f\u009b2J",
	"\u202eevil",
	"[link](javascript:alert(1)) ![img](x) *em* _u_",
	"# heading",
	"\xff\xfe invalid utf-8",
	`\|`,
	"]]><x>&amp;</x><![CDATA[",
}

// autolinkBait is text GFM would turn into links if left as it is.
const autolinkBait = "see http://evil.example/x, HTTPS://evil.example, ftp://evil.example and www.evil.example or mailto:a@evil.example or ops@evil.example"

// Markers name the new model fields in the hostile fixture, so that a test
// can tell a hostile value that was rendered inert from one that was
// dropped.
const (
	markWaiver    = "mark-waiver-reason"
	markClusterV  = "mark-cluster-value"
	markK8sNode   = "mark-k8s-node"
	markCandidate = "mark-candidate"
	markRollout   = "mark-rollout-node"
	markTarget    = "mark-target"
	markSymptom   = "mark-symptom"
)

// hostileReport puts hostile text everywhere a node or an inventory can.
func hostileReport() *result.Report {
	r := newReport("<script>alert('inv')</script>\x1b[2J")
	join := func(i int) string { return hostile[i%len(hostile)] + " " + hostile[(i+5)%len(hostile)] }
	var names []string
	for i := 0; i < 3; i++ {
		name := fmt.Sprintf("n%d-%s", i, hostile[i])
		names = append(names, name)
		f := map[string]string{"ufw.active": "inactive"}
		for j, h := range hostile {
			f[fmt.Sprintf("x.f%02d", j)] = h
		}
		f["x.join"] = join(i)
		r.Nodes = append(r.Nodes, result.Node{
			Name: name, Address: hostile[(i+1)%len(hostile)], Roles: []string{hostile[(i+2)%len(hostile)]},
			Status: result.StatusProbeTimeout, Message: join(i + 3), Error: join(i + 4), Facts: f,
			Probes: []result.ProbeRun{{ID: "firewall", Status: "failed", ExitCode: 1, Stderr: join(i + 6)}},
		})
	}
	r.Nodes[0].Facts["ufw.active"] = "active\x1b[0m<b>"
	r.Warnings = []string{join(7), join(8), autolinkBait}
	r.Nodes[0].Facts["x.url"] = autolinkBait
	r.Nodes[1].Message += " " + autolinkBait
	r.Nodes = append(r.Nodes, result.Node{Name: hostile[1], Status: result.StatusUnreachable, Message: hostile[0], Error: hostile[6], Facts: map[string]string{}})
	for _, n := range r.Nodes {
		r.Checks = append(r.Checks,
			result.CheckResult{Check: "firewall.ufw-active", Node: n.Name, Severity: result.SeverityCritical, Outcome: result.OutcomeFail, Detail: join(7)},
			result.CheckResult{Check: "kubeproxy.node-not-eligible", Node: n.Name, Severity: result.SeverityInfo, Outcome: result.OutcomeFail, Detail: join(8)},
			result.CheckResult{Check: "x." + hostile[9], Node: n.Name, Severity: result.SeverityWarning, Outcome: result.OutcomeSkip, Detail: join(9)})
	}
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	var evidence []string
	for i, n := range names {
		evidence = append(evidence, n+": "+join(i+10))
	}
	r.TargetVersion = markTarget + hostile[0] + hostile[5]
	rolloutNode := markRollout + hostile[1] + hostile[9]
	rollout := []result.RolloutStep{
		{Class: result.RolloutClass(hostile[0]), Nodes: []string{rolloutNode, names[0]}, OneAtATime: true},
		{Class: result.RolloutClass(hostile[13]), Nodes: append([]string{rolloutNode + hostile[6]}, names[1:]...)},
	}
	waiver := &result.Waiver{
		Check: hostile[4], Nodes: []string{names[0], hostile[1]}, Roles: []string{hostile[2]},
		Reason: markWaiver + join(22), Expires: hostile[6] + hostile[3], Source: join(23),
	}
	r.Checks = append(r.Checks,
		result.CheckResult{Check: hostile[4], Node: names[0], Severity: result.SeverityCritical, Outcome: result.OutcomeWaived, Detail: join(24)},
		result.CheckResult{Check: "cluster." + hostile[0], Node: result.ClusterNode, Severity: result.SeverityCritical, Outcome: result.OutcomeFail, Detail: join(25)},
		result.CheckResult{Check: "cluster." + hostile[4], Node: result.ClusterNode, Severity: result.SeverityWarning, Outcome: result.OutcomeWaived, Detail: join(26)})
	cf := map[string]string{
		"cluster.readyz":         markClusterV + hostile[0] + hostile[5],
		"cluster.server_version": markClusterV + hostile[6] + hostile[9],
		"cluster." + hostile[1]:  markClusterV + join(27),
	}
	for j, h := range hostile {
		cf[fmt.Sprintf("cluster.f%02d", j)] = markClusterV + h
	}
	joined := map[string]string{names[0]: names[0]}
	for j, h := range hostile {
		joined[fmt.Sprintf("%s%02d-%s", markK8sNode, j, h)] = ""
	}
	r.Cluster = &result.Cluster{
		Node: hostile[0] + hostile[6], Status: result.ClusterFailed, Message: join(28), Facts: cf,
		Probes: []result.ProbeRun{{ID: hostile[2], Status: "failed", ExitCode: 2, Stderr: join(29)}},
		Joined: joined,
	}
	r.Findings = []result.Finding{
		{
			Check: "correlation." + hostile[0], Kind: result.KindCorrelation, Title: join(11), Severity: result.SeverityCritical,
			Nodes: names, Summary: join(12), Evidence: evidence, Remediation: join(13),
			Cause: &result.Cause{
				Fact: hostile[5], Value: join(14), Symptom: hostile[1], Symptoms: []string{markSymptom + hostile[1], markSymptom + hostile[7]},
				Matched: 3, Healthy: 0, Exact: true, Also: []string{hostile[2]},
				Ranked: []result.Candidate{
					{Fact: hostile[5], Value: markCandidate + join(14), Matched: 3, Score: 1},
					{Fact: markCandidate + hostile[8], Value: hostile[9] + hostile[16], Matched: 2, Missed: 1, Score: 0.67},
				},
			},
			Rollout: rollout,
		},
		{Check: "firewall.ufw-active", Kind: result.KindCheck, Title: join(15), Severity: result.SeverityCritical, Nodes: names, Summary: join(16), Evidence: evidence, Remediation: join(17), Rollout: rollout},
		{Check: hostile[8], Kind: result.KindDrift, Title: join(18), Severity: result.SeverityWarning, Nodes: names[:1], Summary: join(19)},
		{
			Check: hostile[4], Kind: result.KindCheck, Title: join(30), Severity: result.SeverityCritical, Nodes: names[:1],
			Summary: join(31), Evidence: evidence[:1], Remediation: join(32), Rollout: rollout[:1], Waived: waiver,
		},
		{
			Check: "correlation." + hostile[4], Kind: result.KindCorrelation, Title: join(33), Severity: result.SeverityCritical, Nodes: names[:1],
			Summary: join(34), Cause: &result.Cause{Fact: hostile[3], Value: join(35), Symptom: hostile[4], Matched: 1, Healthy: 2,
				Ranked: []result.Candidate{{Fact: hostile[3], Value: markCandidate + hostile[0], Matched: 1, Score: 1}}},
			Rollout: rollout, Waived: waiver,
		},
		{Check: "cluster." + hostile[4], Kind: result.KindCheck, Title: join(36), Severity: result.SeverityWarning, Nodes: []string{}, Summary: join(37), Waived: waiver},
	}
	r.Drift = []result.Drift{
		{Fact: "ufw.active", Scope: "fleet", Majority: "inactive", Groups: []result.DriftGroup{{Value: "inactive", Nodes: sorted[1:]}, {Value: "active\x1b[0m<b>", Nodes: names[:1]}}},
		{Fact: "x.join", Scope: result.RoleScope(hostile[2]), Majority: join(0), Groups: []result.DriftGroup{{Value: join(0), Nodes: names[:1]}, {Value: join(1), Nodes: names[1:2]}, {Value: join(2), Nodes: names[2:]}}},
	}
	r.Gate = result.Gate{FailOn: result.SeverityCritical, Passed: false, ExitCode: 1, Reasons: []string{join(20), join(21)}}
	return r
}
