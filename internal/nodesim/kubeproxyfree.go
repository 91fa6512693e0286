package nodesim

import (
	"encoding/json"
	"os"
	"strings"
)

// Nodes whose Services are not kube-proxy's: Cilium's kube-proxy
// replacement and Calico's eBPF dataplane, as RKE2 runs them with
// disable-kube-proxy: true (fleet-shapes.md §1-§3). On such a node RKE2's
// Bootstrap has removed kube-proxy.yaml (rancher/rke2
// pkg/executor/staticpod, Bootstrap → removeTemplate("kube-proxy")),
// nothing listens on 10256 or 10249, and no KUBE-SVC chain exists (RKE2's
// e2e tests ciliumnokp and calico_ebpf assert exactly that). Neither CNI
// puts a command-line tool on the host: rke2-cilium leaves only the
// agent's API socket (its cilium-run hostPath), the cilium and cilium-dbg
// binaries stay in the agent's image.

// CiliumSock is the Cilium agent's API socket below the node root: cilium
// pkg/defaults RuntimePath + "/cilium.sock", on the host through the
// chart's cilium-run hostPath (rke2-cilium templates/cilium-agent/daemonset.yaml).
const CiliumSock = "var/run/cilium/cilium.sock"

// CiliumHealthPort is the agent's socket-free health endpoint on
// 127.0.0.1, the port of the chart's startup and liveness probes
// (healthPort: 9879, GET /healthz with the header "brief: true").
const CiliumHealthPort = 9879

// calicoBPFGlobals is where Calico's BPF dataplane pins its maps (felix
// bpf/bpfdefs GlobalPinDir); its NAT frontend and backend maps exist only
// in BPF mode (felix bpf/nat MapParameters "cali_v4_nat_fe" version 3 and
// "cali_v4_nat_be"; maps.versionedStr appends a version above 1).
const calicoBPFGlobals = "sys/fs/bpf/tc/globals/"

// bpfFS is the BPF filesystem, which systemd mounts with mode=0700
// (systemd src/shared/mount-setup.c, mount_table "bpf"): only root sees
// the pins.
const bpfFS = "sys/fs/bpf"

// CiliumStatus is the agent's GET /v1/healthz answer (cilium
// api/v1/openapi.yaml, definitions StatusResponse, Status, K8sStatus and
// KubeProxyReplacement) on a small RKE2 node: each component's Status
// {state: Ok|Warning|Failure|Disabled, msg}, and kube-proxy-replacement
// with its mode ('True'|'False'; before Cilium 1.14 the enum was
// Disabled|Strict|Probe|Partial) after its features, whose nodePort has a
// mode of its own (SNAT|DSR|Hybrid). The agent writes it as compact JSON
// with a newline (go-openapi runtime JSONProducer: json.Encoder), the
// fields of the generated models in the order of their Go names, so
// "features" comes before "mode"; encoding/json's sorted map keys give the
// same order here.
func CiliumStatus(kprMode string) string {
	ok := func(msg string) map[string]any {
		m := map[string]any{"state": "Ok"}
		if msg != "" {
			m["msg"] = msg
		}
		return m
	}
	kpr := map[string]any{
		"mode":                kprMode,
		"devices":             []string{"eth0"},
		"deviceList":          []any{map[string]any{"name": "eth0", "ip": []string{"192.168.10.21", "fe80::be24:11ff:fe5a:1c3"}}},
		"directRoutingDevice": "eth0",
		"features": map[string]any{
			"nodePort":        map[string]any{"enabled": kprMode != "False", "mode": "SNAT", "algorithm": "Random", "acceleration": "None", "portMin": 30000, "portMax": 32767},
			"hostPort":        map[string]any{"enabled": kprMode != "False"},
			"externalIPs":     map[string]any{"enabled": kprMode != "False"},
			"socketLB":        map[string]any{"enabled": kprMode != "False"},
			"sessionAffinity": map[string]any{"enabled": true},
		},
	}
	body := map[string]any{
		"cilium":                 ok(""),
		"kvstore":                map[string]any{"state": "Disabled", "msg": "Disabled"},
		"kubernetes":             map[string]any{"state": "Ok", "msg": "1.31 (v1.31.4+rke2r1) [linux/amd64]", "k8s-api-versions": []string{"EndpointSliceOrEndpoint", "cilium/v2::CiliumNode", "core/v1::Pods", "core/v1::Service"}},
		"container-runtime":      ok(""),
		"cni-file":               ok("/host/etc/cni/net.d/05-cilium.conflist"),
		"kube-proxy-replacement": kpr,
		"cluster":                map[string]any{"ciliumHealth": ok("")},
		"controllers":            []any{map[string]any{"name": "sync-host-ips", "status": map[string]any{"success-count": 41, "failure-count": 0}}},
		"masquerading":           map[string]any{"enabled": true, "mode": "BPF"},
		"routing":                map[string]any{"intra-host-routing-mode": "BPF", "inter-host-routing-mode": "Tunnel", "tunnel-protocol": "VXLAN"},
		"attach-mode":            "tcx",
		"datapath-mode":          "veth",
	}
	b, err := json.Marshal(body)
	if err != nil {
		panic(err) // a literal of strings, numbers and bools always marshals
	}
	return string(b) + "\n"
}

func copySockets(m map[string]map[string]HTTP) map[string]map[string]HTTP {
	out := make(map[string]map[string]HTTP, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

func copyDirModes(m map[string]os.FileMode) map[string]os.FileMode {
	out := make(map[string]os.FileMode, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// withCiliumAgent runs a healthy Cilium agent whose kube-proxy replacement
// is kprMode: its API socket answers /v1/healthz, and its health endpoint
// on 127.0.0.1:9879 answers 200 with no body, as the agent's healthz
// handler does while its state is Ok or Disabled (cilium agent-healthz
// cell, agentHealthHandler.ServeHTTP: 503 otherwise).
func withCiliumAgent(s State, kprMode string) State {
	s.Sockets = copySockets(s.Sockets)
	s.Sockets[CiliumSock] = map[string]HTTP{"/v1/healthz": {Code: 200, Body: CiliumStatus(kprMode)}}
	s.HTTP = kubeProxyHTTP(s.HTTP)
	s.HTTP["9879/healthz"] = HTTP{Code: 200}
	if !hasPort(s.Listening, CiliumHealthPort) {
		s.Listening = append(append([]int{}, s.Listening...), CiliumHealthPort)
	}
	return s
}

// withCalicoBPF pins the maps Calico's BPF dataplane keeps in the global
// pin directory, its NAT maps among them.
func withCalicoBPF(s State) State {
	s.Files = hostFiles(s)
	for _, m := range []string{"cali_v4_nat_fe3", "cali_v4_nat_be", "cali_v4_nat_aff", "cali_v4_ct3", "cali_v4_arp2", "cali_v4_routes", "cali_iface"} {
		s.Files[calicoBPFGlobals+m] = ""
	}
	return s
}

// withoutKubeProxyAtAll is a node of a cluster started with
// disable-kube-proxy: true: no manifest (RKE2's Bootstrap removed it and
// nothing wrote it back) and no kube-proxy process.
func withoutKubeProxyAtAll(s State) State {
	s.Files = hostFiles(s)
	delete(s.Files, KubeProxyManifest)
	return WithoutKubeProxy(s)
}

// WithCiliumKPR is a healthy node of a cluster whose Services Cilium's
// kube-proxy replacement serves (disable-kube-proxy: true and the
// rke2-cilium HelmChartConfig's kubeProxyReplacement: true): Cilium's CNI
// config, its agent answering on its socket with KubeProxyReplacement
// True and on 127.0.0.1:9879, no cilium CLI on the host, no kube-proxy,
// and only kubelet's and Cilium's chains in iptables.
func WithCiliumKPR(s State) State { return WithCNI(s, "cilium", true) }

// WithCalicoEBPF is a healthy node of a cluster on Calico's eBPF
// dataplane (disable-kube-proxy: true; the rke2-calico HelmChartConfig's
// linuxDataplane: BPF): Calico's CNI config, its BPF maps pinned, no
// kube-proxy, and only kubelet's and Calico's chains in iptables (Felix
// removes kube-proxy's: bpfKubeProxyIptablesCleanupEnabled, default true).
func WithCalicoEBPF(s State) State { return WithCNI(s, "calico", true) }

// WithCiliumAgentDown is the node side of a crash-looping Cilium agent:
// the socket file stays behind in the hostPath but nothing accepts on it,
// and nothing listens on 127.0.0.1:9879.
func WithCiliumAgentDown(s State) State {
	s.Sockets = copySockets(s.Sockets)
	s.Sockets[CiliumSock] = nil
	s.HTTP = kubeProxyHTTP(s.HTTP)
	delete(s.HTTP, "9879/healthz")
	return WithoutPort(s, CiliumHealthPort)
}

// WithStaleKubeProxyChains is a node where kube-proxy's iptables chains
// and rules outlived it: a migration to Cilium's replacement or Calico's
// eBPF dataplane that never ran kube-proxy --cleanup (Cilium's
// kubeproxy-free.rst: "iptables-save | grep -v KUBE | iptables-restore").
// Its CNI's chains stay as they are.
func WithStaleKubeProxyChains(s State) State {
	renderSaves(&s, cniOf(s), true)
	return s
}

// WithBPFTool installs bpftool (a distribution's linux-tools, never RKE2's)
// answering `bpftool map list` with Cilium's load-balancer maps.
func WithBPFTool(s State) State {
	s.SetCommand(Command{Name: "bpftool", Args: "map list", Out: bpftoolMaps})
	return s
}

// bpftoolMaps is `bpftool map list` on a Cilium node: its load-balancer
// maps (names cut to 15 characters by the kernel) among the others.
const bpftoolMaps = `12: lpm_trie  flags 0x1
	key 8B  value 8B  max_entries 1  memlock 4096B
37: hash  name cilium_lb4_serv  flags 0x1
	key 12B  value 12B  max_entries 65536  memlock 1839104B
	btf_id 132
38: hash  name cilium_lb4_back  flags 0x1
	key 4B  value 16B  max_entries 65536  memlock 1576960B
	btf_id 133
39: hash  name cilium_lb4_reve  flags 0x1
	key 2B  value 6B  max_entries 65536  memlock 1052672B
40: lru_hash  name cilium_lb4_affi  flags 0x0
	key 16B  value 16B  max_entries 65536  memlock 2101248B
41: hash  name cilium_lb_affini  flags 0x1
	key 8B  value 1B  max_entries 65536  memlock 1052672B
52: lru_hash  name cilium_ct4_glob  flags 0x0
	key 14B  value 56B  max_entries 131072  memlock 9437184B
	btf_id 140
53: prog_array  name cilium_calls_ov  flags 0x0
	key 4B  value 4B  max_entries 50  memlock 4096B
	owner_prog_type sched_cls  owner jited
`

// cniOf names the CNI whose config comes first in the node's
// /etc/cni/net.d, as WithCNI writes them ("canal" when none).
func cniOf(s State) string {
	for _, c := range []struct{ file, name string }{
		{"05-cilium.conflist", "cilium"}, {"10-calico.conflist", "calico"}, {"10-flannel.conflist", "flannel"},
	} {
		if _, ok := s.Files[cniDir+c.file]; ok {
			return c.name
		}
	}
	return "canal"
}

// renderSaves installs the *-save answers of a node running cni, with
// kube-proxy's chains or without, on the backend its iptables reports.
func renderSaves(s *State, cni string, kubeProxy bool) {
	ver := strings.TrimPrefix(s.IPTables, "iptables ")
	if v, ok := strings.CutSuffix(ver, " (legacy)"); ok {
		legacy := RuleSet("iptables-save", v, cni, kubeProxy, "ACCEPT")
		setSaves(s, legacy, "", legacy)
		return
	}
	nft := RuleSet("iptables-nft-save", ver, cni, kubeProxy, "ACCEPT")
	setSaves(s, nft, nft, "")
}
