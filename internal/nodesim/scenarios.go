package nodesim

import (
	"fmt"
	"time"
)

// Member is one node of a simulated fleet.
type Member struct {
	Name  string
	Roles []string
	State State
}

const debian12 = `PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"
NAME="Debian GNU/Linux"
VERSION_ID="12"
ID=debian
`

// Healthy returns the state of a well-configured RKE2 node: firewall managers
// off, forwarding and bridge sysctls on, modules loaded, kube-proxy healthy.
func Healthy(hostname string, server bool) State {
	svc := map[bool]string{true: "rke2-server", false: "rke2-agent"}[server]
	s := State{
		Hostname:  hostname,
		Kernel:    "6.1.0-28-amd64",
		OSRelease: debian12,
		IPTables:  "iptables v1.8.10 (nf_tables)",
		UFW:       "inactive",
		Units: map[string]Unit{
			"ufw": {Active: "inactive", Enabled: "disabled"},
			svc:   {Active: "active", Enabled: "enabled"},
		},
		Sysctls: map[string]string{
			"net.ipv4.ip_forward": "1",
			// RKE2 sets IPv6 forwarding only in an IPv6 or dual-stack
			// cluster (WithDualStack); the kernel's default is 0.
			"net.ipv6.conf.all.forwarding":        "0",
			"net.bridge.bridge-nf-call-iptables":  "1",
			"net.bridge.bridge-nf-call-ip6tables": "1",
			"net.netfilter.nf_conntrack_count":    "817",
			"net.netfilter.nf_conntrack_max":      "131072",
		},
		Modules:     []string{"br_netfilter", "nf_conntrack", "ip_tables", "iptable_nat", "x_tables", "overlay"},
		Listening:   []int{10250, 10256},
		HealthHTTP:  HealthyProxy().Answers(),
		RKE2Version: "v1.31.4+rke2r1",
		Files: map[string]string{
			// A real config.yaml holds the join token; the probes must never print it.
			"etc/rancher/rke2/config.yaml": "token: K10aaaabbbbccccddddeeeeffff0000111122223333::server:s3cr3t-demo-token\n",
		},
	}
	// Each area of the probe catalogue adds what a healthy node shows to
	// its probes, in its own file.
	healthyNetfilter(&s, server)
	healthyKubeProxy(&s, server)
	healthyHost(&s, server)
	healthyConntrack(&s)
	return WithCertificates(s, server, HealthyCertificates())
}

// WithUFWActive is the seed incident's drift: UFW enabled and running, and
// kube-proxy's rule syncs failing as a consequence for the last 19 minutes.
// Its health server then answers 503 on /healthz and on /livez alike (see
// ProxyHealth): the seed's "healthz 503, livez 200" is what a node being
// deleted or scaled down serves, not a failing sync loop.
func WithUFWActive(s State) State {
	s.UFW = "active"
	s.Units = copyUnits(s.Units)
	s.Units["ufw"] = Unit{Active: "active", Enabled: "enabled"}
	return WithProxyHealth(s, LateProxy(18*time.Minute+49*time.Second+100*time.Millisecond))
}

// Incident is the seed incident's fleet: 3 etcd, 2 control-plane and 4
// worker nodes, UFW active on etcd-1, etcd-2, worker-2 and worker-4, whose
// kube-proxy pods loop in CrashLoopBackOff (one with the seed's transient
// RBAC denial in its previous log). worker-3 runs a newer kernel, a
// harmless drift that must not be blamed.
func Incident() []Member { return WithCluster(incidentNodes()) }

// incidentNodes are Incident's members before WithCluster derives the
// cluster's objects from their states.
func incidentNodes() []Member {
	var fleet []Member
	add := func(name string, roles []string, server, ufw bool) {
		s := Healthy(name, server)
		if ufw {
			s = WithUFWActive(s)
		}
		fleet = append(fleet, Member{Name: name, Roles: roles, State: s})
	}
	for i := 1; i <= 3; i++ {
		add(fmt.Sprintf("etcd-%d", i), []string{"etcd"}, true, i <= 2)
	}
	for i := 1; i <= 2; i++ {
		add(fmt.Sprintf("cp-%d", i), []string{"control-plane"}, true, false)
	}
	for i := 1; i <= 4; i++ {
		add(fmt.Sprintf("worker-%d", i), []string{"worker"}, false, i == 2 || i == 4)
	}
	fleet[7].State.Kernel = "6.1.0-31-amd64" // worker-3
	return fleet
}

// DemoTarget is the release `fleet-audit demo` audits the upgrade to, one
// minor after the demo cluster's v1.31.4+rke2r1 (RKE2 upgrades one minor
// at a time: docs.rke2.io upgrades/manual_upgrade).
const DemoTarget = "v1.32.5+rke2r1"

// Demo is the fleet `fleet-audit demo` audits: the seed incident (Incident)
// and beside it one of each thing an upgrade runbook checks by hand, on
// nodes the incident leaves healthy, so that the demo's readiness answers
// more than the network half:
//   - etcd: etcd-3's newest local snapshot is three days old (its
//     snapshot schedule stopped there; RKE2's default takes one every 12
//     hours, k3s pkg/cli/cmds/server.go etcd-snapshot-schedule-cron
//     "0 */12 * * *");
//   - drain: worker-1 runs the only pod of a StatefulSet whose
//     PodDisruptionBudget allows no disruption, so kubectl drain retries
//     its eviction forever (k8s.io/kubectl pkg/drain, evictPods);
//   - removed APIs: none requested, judged against DemoTarget.
//
// They are warnings, not blockers: the demo's blockers stay the seed's
// four, whose fixes fit the report's first screen. Incident stays the
// seed alone: the tests that reproduce the seed read it, and no plant
// here may change its probable cause.
func Demo() []Member {
	fleet := incidentNodes()
	byName := map[string]*State{}
	for i := range fleet {
		byName[fleet[i].Name] = &fleet[i].State
	}
	*byName["etcd-3"] = WithEtcdSnapshotsAged(*byName["etcd-3"], 74*time.Hour)
	db := map[string]string{"app.kubernetes.io/name": "postgres"}
	byName["worker-1"].Pods = append(byName["worker-1"].Pods,
		Pod{Namespace: "billing", Name: "postgres-0", OwnerKind: "StatefulSet", OwnerName: "postgres", Labels: db})
	byName["etcd-1"].PDBs = append(byName["etcd-1"].PDBs,
		PDB{Namespace: "billing", Name: "postgres", MatchLabels: db, DisruptionsAllowed: 0})
	byName["etcd-1"].Workloads = append(byName["etcd-1"].Workloads,
		Workload{Kind: "StatefulSet", Namespace: "billing", Name: "postgres", Replicas: 1})
	// The cluster objects are derived from the members' states.
	return WithCluster(fleet)
}

// Clean is a fleet of n healthy nodes with no drift at all; node-1 is the
// server the cluster-scoped probes run on.
func Clean(n int) []Member {
	var fleet []Member
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("node-%d", i)
		role := map[bool]string{true: "control-plane", false: "worker"}[i == 1]
		fleet = append(fleet, Member{Name: name, Roles: []string{role}, State: Healthy(name, i == 1)})
	}
	return WithCluster(fleet)
}

func copyUnits(m map[string]Unit) map[string]Unit {
	out := make(map[string]Unit, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
