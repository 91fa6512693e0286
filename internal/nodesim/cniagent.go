package nodesim

import (
	"fmt"
	"hash/fnv"
	"maps"
	"strings"
)

// cniAgent is the DaemonSet of one CNI agent as RKE2's charts define it
// (rancher/rke2-charts packages/<chart>/charts/templates, the table of
// fleet-shapes.md §4), and what on a node shows it runs there.
type cniAgent struct {
	cni, namespace, ds string
	// k8sApp and app are its pods' k8s-app and app labels ("" = none).
	k8sApp, app      string
	init, containers []string
	// conflist is the file it writes to /etc/cni/net.d: a node with it
	// runs this agent (WithCNI writes what RKE2 would).
	conflist string
	// alive says whether the agent's process is up on the node, by what
	// kubelet's probes of its main container ask (alivePath) or, with no
	// probe, what it leaves behind when it started.
	alive func(s State) bool
}

// Where the agents answer kubelet's probes, as "port/path" on the node's
// loopback (State.HTTP; the agents run with hostNetwork).
const (
	// felixHealth is calico-node's health port 9099, the port of its
	// readinessProbe (httpGet localhost:9099/readiness, rke2-canal
	// daemonset.yaml); its livenessProbe runs `calico-node -felix-live`,
	// which asks felix's liveness on the same port (the /liveness path is
	// unverified).
	felixHealth = "9099/liveness"
	// ciliumHealth is the agent's liveness and startup probe: GET
	// http://127.0.0.1:9879/healthz (rke2-cilium
	// templates/cilium-agent/daemonset.yaml, healthPort 9879).
	ciliumHealth = "9879/healthz"
	// flannelSubnetEnv is what flanneld writes once it holds its node's
	// lease (flannel pkg/subnet WriteSubnetFile, --subnet-file default
	// /run/flannel/subnet.env); the kube-flannel container has no probe
	// (rke2-canal daemonset.yaml), so a flanneld that never comes up
	// since boot (/run is a tmpfs) is one that exits before it.
	flannelSubnetEnv = "run/flannel/subnet.env"
)

func answers(portPath string) func(State) bool {
	return func(s State) bool { return s.HTTP[portPath].Code == 200 }
}

var cniAgents = []cniAgent{
	// rke2-canal daemonset.yaml: kube-system (hard-coded), name
	// {{ .Release.Name }}, k8s-app: canal.
	{cni: "canal", namespace: "kube-system", ds: "rke2-canal", k8sApp: "canal",
		init: []string{"install-cni", "flexvol-driver"}, containers: []string{"calico-node", "kube-flannel"},
		conflist: "10-canal.conflist", alive: answers(felixHealth)},
	// tigera/operator pkg/common/common.go (CalicoNamespace,
	// NodeDaemonSetName) and pkg/render/node.go (k8s-app: calico-node);
	// its init containers are left out (not checked).
	{cni: "calico", namespace: "calico-system", ds: "calico-node", k8sApp: "calico-node",
		containers: []string{"calico-node"}, conflist: "10-calico.conflist", alive: answers(felixHealth)},
	// rke2-cilium templates/cilium-agent/daemonset.yaml: .Values.name
	// (cilium), selector k8s-app: cilium, container cilium-agent, init
	// install-cni-binaries (the others are left out).
	{cni: "cilium", namespace: "kube-system", ds: "cilium", k8sApp: "cilium",
		init: []string{"install-cni-binaries"}, containers: []string{"cilium-agent"},
		conflist: "05-cilium.conflist", alive: answers(ciliumHealth)},
	// rke2-flannel: kube-flannel-ds, app: flannel, tier: node.
	{cni: "flannel", namespace: "kube-system", ds: "kube-flannel-ds", app: "flannel",
		init: []string{"install-cni-plugins"}, containers: []string{"kube-flannel"},
		conflist: "10-flannel.conflist", alive: func(s State) bool { _, ok := s.Files[flannelSubnetEnv]; return ok }},
	// rke2-multus daemonSet.yaml: {{ .Release.Name }}, app: rke2-multus,
	// init cni-plugins, container kube-{{ .Chart.Name }}. Its thin
	// entrypoint has no probe; nodesim never crashes it.
	{cni: "multus", namespace: "kube-system", ds: "rke2-multus", app: "rke2-multus",
		init: []string{"cni-plugins"}, containers: []string{"kube-rke2-multus"},
		conflist: "00-multus.conf", alive: func(State) bool { return true }},
}

// nodeAgents are the CNI agents a node runs, by its /etc/cni/net.d.
func nodeAgents(s State) []cniAgent {
	var out []cniAgent
	for _, a := range cniAgents {
		if _, ok := s.Files[cniDir+a.conflist]; ok {
			out = append(out, a)
		}
	}
	return out
}

// primaryAgent is the node's CNI agent other than multus, nil if none.
func primaryAgent(s State) *cniAgent {
	for _, a := range nodeAgents(s) {
		if a.cni != "multus" {
			return &a
		}
	}
	return nil
}

// agentAlive sets what the node shows while agent a runs (alive) or
// keeps crashing (not).
func agentAlive(s State, a cniAgent, alive bool) State {
	switch a.cni {
	case "canal", "calico", "cilium":
		path := felixHealth
		if a.cni == "cilium" {
			path = ciliumHealth
		}
		h := make(map[string]HTTP, len(s.HTTP)+1)
		maps.Copy(h, s.HTTP)
		if alive {
			h[path] = HTTP{Code: 200, Body: "ok"}
		} else {
			delete(h, path) // nothing listens: kubelet's probe is refused
		}
		s.HTTP = h
	case "flannel":
		s.Files = hostFiles(s)
		if alive {
			s.Files[flannelSubnetEnv] = "FLANNEL_NETWORK=10.42.0.0/16\nFLANNEL_SUBNET=10.42.1.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n"
		} else {
			delete(s.Files, flannelSubnetEnv)
		}
	}
	return s
}

// withAgentsAlive makes every CNI agent the node runs up and healthy.
func withAgentsAlive(s State) State {
	for _, a := range nodeAgents(s) {
		s = agentAlive(s, a, true)
	}
	return s
}

// WithCNIAgentCrashLoop is a node whose CNI agent (canal, calico, cilium
// or flannel, the one its /etc/cni/net.d says it runs) keeps dying: its
// process does not answer kubelet's liveness probe, so kubelet restarts
// it with a growing back-off (CrashLoopBackOff in the cluster view,
// WithCluster). It panics on a node that runs no such agent.
func WithCNIAgentCrashLoop(s State) State {
	a := primaryAgent(s)
	if a == nil {
		panic("nodesim: WithCNIAgentCrashLoop on a node without a CNI agent")
	}
	if a.cni == "cilium" {
		// Its API socket stops answering too (WithCiliumAgentDown).
		return WithCiliumAgentDown(s)
	}
	return agentAlive(s, *a, false)
}

// agentPodName is a DaemonSet pod's name: the DaemonSet's, a dash and
// five characters of apimachinery's rand alphabet
// (k8s.io/apimachinery pkg/util/rand String), here from the node's name
// so a fleet's pods keep their names from run to run.
func agentPodName(ds, node string) string {
	const alphanums = "bcdfghjklmnpqrstvwxz2456789"
	h := fnv.New32a()
	h.Write([]byte(ds + "/" + node))
	v := h.Sum32()
	var b strings.Builder
	b.WriteString(ds + "-")
	for range 5 {
		b.WriteByte(alphanums[v%uint32(len(alphanums))])
		v /= uint32(len(alphanums))
	}
	return b.String()
}

// AgentPodName is the name of the pod of the node's CNI agent cni
// ("canal", "calico", "cilium", "flannel", "multus") on member's node.
func AgentPodName(cni, member string) string {
	for _, a := range cniAgents {
		if a.cni == cni {
			return agentPodName(a.ds, K8sNodeName(member))
		}
	}
	return ""
}

// agentPodLines are the lines kubectl prints for the cluster probe's
// agent template (namespace, name, node, phase, k8s-app, app, owner kind,
// init and main containers as name/ready/restarts/waiting/last exit) for
// the agents of node s; a dead agent's main container is in
// CrashLoopBackOff after restarts restarts (kubelet
// pkg/kubelet/kuberuntime: a container that exits is restarted after a
// back-off, shown as waiting CrashLoopBackOff), the others run.
func agentPodLines(s State, node string, restarts int) (byLabel map[string]string) {
	byLabel = map[string]string{}
	for _, a := range nodeAgents(s) {
		var init, ctrs []string
		for _, c := range a.init {
			init = append(init, c+"/true/0//")
		}
		dead := !a.alive(s)
		for i, c := range a.containers {
			if dead && i == 0 {
				ctrs = append(ctrs, fmt.Sprintf("%s/false/%d/CrashLoopBackOff/2026-12-02T09:40:12Z", c, restarts))
				continue
			}
			ctrs = append(ctrs, c+"/true/0//")
		}
		key := "app"
		if a.k8sApp != "" {
			key = "k8s-app"
		}
		byLabel[key] += fmt.Sprintf("%s\t%s\t%s\tRunning\t%s\t%s\tDaemonSet\t%s\t%s\n",
			a.namespace, agentPodName(a.ds, node), node, a.k8sApp, a.app, spaced(init), spaced(ctrs))
	}
	return byLabel
}

// spaced is a jsonpath range with {" "} after each item.
func spaced(items []string) string {
	var b strings.Builder
	for _, it := range items {
		b.WriteString(it + " ")
	}
	return b.String()
}
