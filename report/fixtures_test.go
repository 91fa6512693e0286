package report

import (
	"fmt"
	"sort"
	"time"

	"github.com/fleet-audit/fleet-audit/audit"
	"github.com/fleet-audit/fleet-audit/audit/catalog"
	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/result"
)

// The fixtures are what nodes sent, built in Go so that a change to the
// model breaks them at compile time; what a run makes of it (check results,
// findings, causes, rollouts, waivers, drift, the gate) is judged by
// audit.Analyze with the built-in probes and checks, so that the report
// tests render what audit really produces and not what a second judge here
// thinks it would. Everything is sorted and the clock is fixed, so the
// golden files are byte-stable without scrubbing.

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

// baseFacts is a healthy RKE2 node as the seed incident describes it, in
// the facts the built-in probes emit.
func baseFacts(service string) map[string]string {
	return map[string]string{
		"cni.bridge_nf_required":                    "yes",
		"conntrack.count":                           "817",
		"conntrack.max":                             "131072",
		"firewalld.active":                          "inactive",
		"firewalld.installed":                       "no",
		"iptables.backend":                          "nf_tables",
		"iptables.version":                          "1.8.10",
		"kubeproxy.health":                          "healthy",
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
		"ufw.config_enabled":                        "no",
		"ufw.enabled":                               "disabled",
		"ufw.installed":                             "yes",
		"ufw.status":                                "inactive",
	}
}

// ufwActive is what the firewall and kube-proxy probes report on a node of
// the seed incident: UFW running and enabled, and kube-proxy's sync loop
// failing, so /healthz and /livez both answer 503.
func ufwActive(f map[string]string) {
	f["ufw.active"], f["ufw.enabled"], f["ufw.status"], f["ufw.config_enabled"] = "active", "enabled", "active", "yes"
	f["kubeproxy.healthz.code"], f["kubeproxy.livez.code"], f["kubeproxy.health"] = "503", "503", "unhealthy"
}

// fixtureChecks are the built-in checks judged in every scenario: the ones
// the facts above are about, so that the goldens stay readable.
var fixtureChecks = []string{
	"firewall.firewalld-active", "firewall.ufw-active", "kubeproxy.healthz-failing",
	"kubeproxy.node-not-eligible", "module.br-netfilter", "sysctl.ip-forward",
}

// analyze judges r as a run would: the built-in checks selected by only
// (as --only does) and every finding built in Go, waivers parsed from waiversYAML (as --waivers does),
// the gate failing on critical findings. A fixture has no *testing.T, and a
// built-in check or waiver that does not load is a broken build, so it
// panics.
func analyze(r *result.Report, only []string, waiversYAML string) {
	cat, err := catalog.Builtin()
	if err != nil {
		panic(err)
	}
	// The findings built in Go stay, as they do in a run whose --only
	// names them all besides the checks.
	if only != nil {
		only = append(append([]string{}, only...), catalog.GoSelectableIDs()...)
	}
	rules := audit.Rules{Probes: cat.Probes, Selection: check.Selection{Only: only}}
	if rules.Checks, err = cat.Select(rules.Selection); err != nil {
		panic(err)
	}
	// Waivers are validated against every check, as --waivers is, not
	// only the selected ones.
	if waiversYAML != "" {
		if rules.Waivers, err = cat.ParseWaivers("waivers.yaml", []byte(waiversYAML)); err != nil {
			panic(err)
		}
	}
	rules.Gate = audit.GatePolicy{FailOn: result.SeverityCritical}
	audit.Analyze(r, rules)
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

// incidentWaivers accepts the conntrack pressure on worker-3.
const incidentWaivers = `# Accepted risks of cluster-a, reviewed by the change board.

# CHG-4711
- check: conntrack.pressure
  nodes: [cluster-a-worker-3]
  reason: worker-3 carries the ingress load test until the upgrade window; accepted by j.doe (CHG-4711)
  expires: 2026-12-31
`

// incidentReport is the seed incident: UFW active on etcd-1, etcd-2,
// worker-2 and worker-4, kube-proxy's health 503 on exactly those four. It
// also carries what a real run adds around it: a --target-version, the
// cluster probes (run on etcd-1, which see a tenth Kubernetes node the
// inventory lacks), one cluster-scoped check, and a conntrack table close to
// full on worker-3 that a waiver accepts.
func incidentReport() *result.Report {
	r := newReport("inventories/cluster-a.yaml")
	ufw := map[string]bool{"cluster-a-etcd-1": true, "cluster-a-etcd-2": true, "cluster-a-worker-2": true, "cluster-a-worker-4": true}
	add := func(name, role, service string, i int) {
		f := baseFacts(service)
		f["conntrack.count"] = fmt.Sprint(700 + 37*i)
		if ufw[name] {
			ufwActive(f)
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
	r.TargetVersion = "v1.32.1+rke2r1"
	r.Change = &result.Change{ID: "CHG-4711", Title: "upgrade cluster-a to v1.32.1+rke2r1", RequestedBy: "j.doe"}
	joined := map[string]string{"cluster-a-worker-5": ""}
	for _, n := range r.Nodes {
		joined[n.Name] = n.Name
	}
	r.Cluster = &result.Cluster{
		Node: "cluster-a-etcd-1", Status: result.ClusterOK,
		Facts: map[string]string{
			"cluster.nodes.count":    "10",
			"cluster.rbac.ok":        "yes",
			"cluster.api":            "ok",
			"cluster.server_version": "v1.31.4+rke2r1",
		},
		Probes: []result.ProbeRun{{ID: "cluster", Status: "ok"}},
		Joined: joined,
	}
	// conntrack.pressure and the cluster check are judged only here, so the
	// other scenarios' goldens do not carry them.
	analyze(r, append([]string{"conntrack.pressure", "cluster.api-unavailable"}, fixtureChecks...), incidentWaivers)
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
	analyze(r, fixtureChecks, "")
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
	analyze(r, fixtureChecks, "")
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

// hostileFleet is hostileReport grown past foldNodesAbove: its three
// audited nodes, each copied under hostile names, so that the formats'
// folded layouts (node sets as column headings and titles, trimmed node
// details) carry the hostile text too.
func hostileFleet() *result.Report {
	r := hostileReport()
	var nodes []result.Node
	for i := 0; len(nodes) <= foldNodesAbove; i++ {
		n := r.Nodes[i%3]
		n.Name = fmt.Sprintf("%s-%02d", hostile[i%len(hostile)], i)
		nodes = append(nodes, n)
	}
	r.Nodes = append(nodes, r.Nodes[3:]...)
	return r
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
	markLimit     = "mark-limit"
)

// hostileReport puts hostile text everywhere a node or an inventory can,
// and in the fields audit only ever fills with its own words (check ids,
// rollout classes, drift scopes, gate reasons). It is built by hand, not
// judged by audit as the other fixtures are, on purpose: `fleet-audit
// report` renders a results file read from disk, which anyone can craft,
// so every field the model has must render inert, not only those a real
// audit would fill with node text.
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
	r.Change = &result.Change{ID: hostile[0] + hostile[5], Title: join(11), RequestedBy: hostile[1] + autolinkBait}
	r.Limit = &result.Limit{Pattern: markLimit + hostile[0] + hostile[6], Selected: 3, Inventory: 9}
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
		"cluster.api":            markClusterV + hostile[0] + hostile[5],
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
