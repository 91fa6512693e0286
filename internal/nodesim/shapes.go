package nodesim

import (
	"fmt"
	"slices"
	"strings"
)

// A fleet shape is one way RKE2 clusters are really built: a distribution,
// a CNI with or without kube-proxy (and in which mode), an address family,
// and whether the login environment names an HTTP proxy. Healthy builds a
// Canal, iptables-mode, IPv4 Debian 12 node; a shape turns it into another
// supported layout through the same With* helpers the single-drift tests
// use, so a healthy node of every shape is a node of that shape, not a
// flag the probes are told. Which login runs the probes (root, or a user
// with sudo) is the session's, not the node's: the tests choose it.

// Net is a CNI together with how Services are routed on the node.
type Net struct {
	Name  string
	apply func(State) State
}

// Apply turns a healthy (Canal, iptables-mode) node into this network shape.
func (n Net) Apply(s State) State { return n.apply(s) }

// Nets are the CNI × Service-proxy combinations RKE2 supports
// (rke2-docs docs/networking/basic_network_options.md: canal, calico,
// cilium and flannel as cni:, multus as an add-on before one of them;
// kube-proxy in iptables, ipvs or nftables mode through kube-proxy-arg,
// or disable-kube-proxy with Cilium's replacement or Calico's eBPF
// dataplane).
var Nets = []Net{
	{"canal+iptables", func(s State) State { return s }},
	{"canal+ipvs", WithIPVS},
	{"canal+nftables", WithKubeProxyNFTablesMode},
	{"calico+iptables", func(s State) State { return WithCNI(s, "calico", false) }},
	{"calico-ebpf", WithCalicoEBPF},
	{"cilium+kube-proxy", func(s State) State { return WithCNI(s, "cilium", false) }},
	{"cilium-kpr", WithCiliumKPR},
	{"flannel", func(s State) State { return WithCNI(s, "flannel", false) }},
	{"multus+canal", func(s State) State { return WithCNI(s, "multus+canal", false) }},
	{"multus+calico", func(s State) State { return WithCNI(s, "multus+calico", false) }},
	{"multus+cilium", func(s State) State { return WithCNI(s, "multus+cilium", false) }},
	{"multus+cilium-kpr", func(s State) State { return WithCNI(s, "multus+cilium", true) }},
	{"multus+flannel", func(s State) State { return WithCNI(s, "multus+flannel", false) }},
}

// Family is a cluster's address family.
type Family struct {
	Name  string
	apply func(State) State
}

// Families are the address families RKE2 supports (rke2-docs
// docs/networking/basic_network_options.md, "Dual-stack" and
// "IPv6 only" setups).
var Families = []Family{
	{"ipv4", func(s State) State { return s }},
	{"dual-stack", WithDualStack},
	{"ipv6-primary", WithIPv6Primary},
}

// Shape is one fleet shape.
type Shape struct {
	OS     OS
	Net    Net
	Family Family
	// HTTPProxy is a login environment naming an HTTP proxy
	// (/etc/environment's http_proxy, read by pam_env at login).
	HTTPProxy bool
}

func (sh Shape) String() string {
	s := fmt.Sprintf("%s/%s/%s", sh.OS.Name, sh.Net.Name, sh.Family.Name)
	if sh.HTTPProxy {
		s += "/http_proxy"
	}
	return s
}

// Node is a healthy node of the shape.
func (sh Shape) Node(hostname string, server bool) State {
	s := WithOS(Healthy(hostname, server), sh.OS)
	s = sh.Net.Apply(s)
	s = sh.Family.apply(s)
	if sh.HTTPProxy {
		s = WithHTTPProxyEnv(s)
	}
	return s
}

// Fleet is a healthy fleet of the shape: one server and agents, n nodes
// in all, with the cluster view on the server.
func (sh Shape) Fleet(n int) []Member { return WithCluster(sh.Members(n)) }

// Members are the nodes of Fleet before the cluster view is added, for a
// test to plant a problem on one of them first.
func (sh Shape) Members(n int) []Member {
	prefix := strings.NewReplacer("/", "-", "+", "-", "_", "-", ".", "").Replace(sh.String())
	var fleet []Member
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("%s-%d", prefix, i)
		role := "worker"
		if i == 1 {
			role = "control-plane"
		}
		fleet = append(fleet, Member{Name: name, Roles: []string{role}, State: sh.Node(name, i == 1)})
	}
	return fleet
}

// WithKubeProxyNFTablesMode is kube-proxy in nftables mode as RKE2 runs it
// with kube-proxy-arg: proxy-mode=nftables (experimental since RKE2
// v1.34.10/v1.35.7/v1.36.3): the flag in its static pod, /proxyMode
// answering nftables (kubernetes cmd/kube-proxy/app/server.go serves the
// mode on the metrics server), the nftables proxier's metrics (no
// iptables rule counts: pkg/proxy/metrics/metrics.go registers
// SyncProxyRulesNFTablesSyncFailuresTotal for it), its own kube-proxy
// tables in nftables (pkg/proxy/nftables/proxier.go) and nf_tables loaded.
// Its iptables chains are gone: started in nftables mode, kube-proxy
// removes the rules of the other modes (cmd/kube-proxy/app/server_linux.go,
// platformCleanup, cleanupLeftovers), so iptables holds Canal's chains.
func WithKubeProxyNFTablesMode(s State) State {
	s = withKubeProxyManifest(s, "--proxy-mode=nftables")
	s = WithNFTKubeProxy(s)
	renderSaves(&s, cniOf(s), false)
	m := HealthyProxyMetrics()
	m.Mode = "nftables"
	s.HTTP = kubeProxyHTTP(s.HTTP)
	s.HTTP["10249/proxyMode"] = HTTP{Code: 200, Body: "nftables"}
	s.HTTP["10249/metrics"] = HTTP{Code: 200, Body: m.Render()}
	if !slices.Contains(s.Modules, "nf_tables") {
		s.Modules = append(append([]string{}, s.Modules...), "nf_tables")
	}
	return s
}
