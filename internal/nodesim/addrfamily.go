package nodesim

import (
	"strconv"
	"strings"
)

// loopbackBind is where a server listens, as the loopback addresses a
// client on the node reaches it at: "127.0.0.1", "::1" or both.
type loopbackBind struct {
	hosts []string
	port  int
}

// kubeProxyBinds says where the node's kube-proxy serves health and
// metrics, from the flags in its static pod manifest, with kube-proxy's
// defaults where a flag is missing (cmd/kube-proxy/app/options.go:
// --healthz-bind-address 0.0.0.0:10256, --metrics-bind-address
// 127.0.0.1:10249). A flag holds an IP or IP:port; without a port the
// default one is kept (options.go, addressFromDeprecatedFlags). 0.0.0.0 is
// every IPv4 address, so 127.0.0.1 reaches it; :: is every address of
// both families on Linux, where IPV6_V6ONLY is off by default (ipv6(7)).
func kubeProxyBinds(s State) (health, metrics loopbackBind) {
	manifest := s.Files[KubeProxyManifest]
	flag := func(name string, def loopbackBind) loopbackBind {
		v := ""
		for _, l := range strings.Split(manifest, "\n") {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "- --"+name+"="); ok {
				v = rest
			}
		}
		if v == "" {
			return def
		}
		host, port := v, def.port
		if i := strings.LastIndex(v, "]:"); strings.HasPrefix(v, "[") && i > 0 {
			host = v[1:i]
			if p, err := strconv.Atoi(v[i+2:]); err == nil {
				port = p
			}
		} else if strings.Count(v, ":") == 1 {
			h, p, _ := strings.Cut(v, ":")
			host = h
			if n, err := strconv.Atoi(p); err == nil {
				port = n
			}
		}
		switch host {
		case "::1":
			return loopbackBind{[]string{"::1"}, port}
		case "::":
			return loopbackBind{[]string{"127.0.0.1", "::1"}, port}
		}
		return loopbackBind{[]string{"127.0.0.1"}, port}
	}
	return flag("healthz-bind-address", loopbackBind{[]string{"127.0.0.1"}, 10256}),
		flag("metrics-bind-address", loopbackBind{[]string{"127.0.0.1"}, 10249})
}

// The cluster CIDRs of the simulated clusters: RKE2's default IPv4 one,
// and the IPv6 one of RKE2's dual-stack example (rke2-docs
// docs/networking/basic_network_options.md, "Dual-stack configuration").
const (
	ipv4ClusterCIDR = "10.42.0.0/16"
	ipv6ClusterCIDR = "2001:cafe:42::/56"
)

// clusterCIDRs returns the --cluster-cidr of the node's kube-proxy
// manifest, split on commas.
func clusterCIDRs(s State) []string {
	for _, l := range strings.Split(s.Files[KubeProxyManifest], "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "- --cluster-cidr="); ok {
			return strings.Split(v, ",")
		}
	}
	return nil
}

// WithDualStack is a dual-stack node, IPv4 first (RKE2 cluster-cidr
// "10.42.0.0/16,2001:cafe:42::/56"): kube-proxy gets both ranges in
// --cluster-cidr (k3s kubeProxyArgs: util.JoinIPNets(cfg.ClusterCIDRs)),
// RKE2 turns IPv6 forwarding and bridge-nf-call-ip6tables on at start
// because the cluster CIDRs are dual-stack (k3s pkg/agent/run.go run:
// enableIPv6 := dualCluster || clusterIPv6, then syssetup.Configure and
// kernelSysctls: net/ipv6/conf/all/forwarding = 1 and, with the bridge
// filter, net/bridge/bridge-nf-call-ip6tables = 1), and kube-proxy's
// metrics carry one series per ip_family. ip6tables holds kube-proxy's
// rules on every node (healthyNetfilter). Applied after WithIPv6Primary it keeps IPv6 first.
func WithDualStack(s State) State {
	cidrs := clusterCIDRs(s)
	switch {
	case len(cidrs) == 1 && strings.Contains(cidrs[0], ":"):
		cidrs = []string{cidrs[0], ipv4ClusterCIDR}
	case len(cidrs) == 1:
		cidrs = []string{cidrs[0], ipv6ClusterCIDR}
	case len(cidrs) == 0:
		cidrs = []string{ipv4ClusterCIDR, ipv6ClusterCIDR}
	}
	return withIPFamilies(s, cidrs)
}

// WithIPv6Primary is a node whose first node-ip is IPv6: IPv6 single-stack,
// or dual-stack with IPv6 first after WithDualStack. RKE2 then binds
// kube-proxy's health server to ::1 instead of 127.0.0.1 (k3s
// pkg/daemons/agent/agent_linux.go kubeProxyArgs: bindAddress "::1" when
// utilsnet.IsIPv6(cfg.NodeIP), set as healthz-bind-address; it sets no
// metrics-bind-address, so metrics stay on kube-proxy's default
// 127.0.0.1:10249), and kube-proxy's --cluster-cidr lists the IPv6 range
// first.
func WithIPv6Primary(s State) State {
	cidrs := []string{ipv6ClusterCIDR}
	if len(clusterCIDRs(s)) > 1 {
		cidrs = append(cidrs, ipv4ClusterCIDR)
	}
	s = withIPFamilies(s, cidrs)
	if _, ok := s.Files[KubeProxyManifest]; !ok {
		return s
	}
	return withKubeProxyFlag(s, "--healthz-bind-address=::1")
}

// withKubeProxyFlag sets one flag in the node's kube-proxy manifest and
// keeps the others it has (withKubeProxyManifest renders RKE2's defaults
// and the flags given).
func withKubeProxyFlag(s State, flag string) State {
	var flags []string
	for _, l := range strings.Split(s.Files[KubeProxyManifest], "\n") {
		if f, ok := strings.CutPrefix(strings.TrimSpace(l), "- --"); ok {
			flags = append(flags, "--"+f)
		}
	}
	return withKubeProxyManifest(s, append(flags, flag)...)
}

// withIPFamilies gives the node's kube-proxy the cluster CIDRs cidrs and
// what RKE2 sets up for their families (see WithDualStack).
func withIPFamilies(s State, cidrs []string) State {
	if _, ok := s.Files[KubeProxyManifest]; ok {
		s = withKubeProxyFlag(s, "--cluster-cidr="+strings.Join(cidrs, ","))
	}
	v6 := false
	for _, c := range cidrs {
		v6 = v6 || strings.Contains(c, ":")
	}
	if !v6 {
		return s
	}
	sys := make(map[string]string, len(s.Sysctls)+1)
	for k, v := range s.Sysctls {
		sys[k] = v
	}
	sys["net.ipv6.conf.all.forwarding"] = "1"
	if _, ok := sys["net.bridge.bridge-nf-call-iptables"]; ok {
		sys["net.bridge.bridge-nf-call-ip6tables"] = "1"
	}
	s.Sysctls = sys
	if len(cidrs) > 1 && s.HTTP["10249/metrics"].Body == HealthyProxyMetrics().Render() {
		pm := HealthyProxyMetrics()
		pm.Families = []string{"IPv4", "IPv6"}
		s.HTTP = kubeProxyHTTP(s.HTTP)
		s.HTTP["10249/metrics"] = HTTP{Code: 200, Body: pm.Render()}
	}
	return s
}
