package nodesim

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// KubeProxyManifest is where RKE2 writes kube-proxy's static pod.
const KubeProxyManifest = "var/lib/rancher/rke2/agent/pod-manifests/kube-proxy.yaml"

// ProxyMetrics describes what a simulated kube-proxy's /metrics shows. The
// text is rendered in the Prometheus text exposition format kube-proxy
// serves: per family "# HELP name [ALPHA] help" (k8s.io/component-base
// metrics prefixes an ALPHA metric's help with its stability level) and
// "# TYPE", families in name order as the registry gathers them, series
// sorted by label values. Names, help texts, types and labels are those
// kubernetes pkg/proxy/metrics/metrics.go registers, as the Kubernetes
// Metrics Reference lists them; TestProxyMetricsAsKubeProxyServesThem pins
// them.
// Timestamps are given as ages ("seconds before the scrape") and rendered as
// @NOW-<age>@, which the curl stub turns into absolute times at request time,
// so the ages a probe computes do not depend on when the node was built.
type ProxyMetrics struct {
	// Mode decides which rule metrics exist: iptables exports
	// kubeproxy_sync_proxy_rules_iptables_*, nftables its nftables_*
	// failures, ipvs neither.
	Mode string
	// Families, when set (e.g. IPv4, IPv6), adds the ip_family label newer
	// kube-proxy versions put on per-proxier series, one series each.
	Families []string
	// Sync and NetProg map an observed duration in seconds to how many
	// syncs (or programmed endpoints) took that long.
	Sync, NetProg map[float64]int
	// LastAgo and QueuedAgo are the ages of the last successful sync and of
	// the last queued one; per family when Families is set (missing
	// families get the first value).
	LastAgo, QueuedAgo []float64
	RestoreFailures    int
	EndpointsPending   int
	ServicesPending    int
	FilterRules        int
	NATRules           int
}

// HealthyProxyMetrics is a quiet, healthy iptables-mode kube-proxy: syncs
// of tens of milliseconds, last one 4 s ago, nothing queued since.
func HealthyProxyMetrics() ProxyMetrics {
	return ProxyMetrics{
		Mode: "iptables",
		Sync: map[float64]int{0.003: 3, 0.006: 48, 0.012: 209, 0.024: 111, 0.05: 31, 0.1: 7, 0.2: 2, 0.4: 1},
		NetProg: map[float64]int{
			0.2: 150, 0.4: 40, 0.8: 15, 1.5: 5, 3: 2,
		},
		LastAgo:     []float64{4.2},
		QueuedAgo:   []float64{4.5},
		FilterRules: 9,
		NATRules:    112,
	}
}

// Render returns the /metrics body.
func (m ProxyMetrics) Render() string {
	var b strings.Builder
	fams := m.Families
	if len(fams) == 0 {
		fams = []string{""}
	}
	lbl := func(fam string, extra ...string) string {
		var ls []string
		if fam != "" {
			ls = append(ls, `ip_family="`+fam+`"`)
		}
		ls = append(ls, extra...)
		if len(ls) == 0 {
			return ""
		}
		return "{" + strings.Join(ls, ",") + "}"
	}
	at := func(list []float64, i int) float64 {
		if i < len(list) {
			return list[i]
		}
		if len(list) > 0 {
			return list[0]
		}
		return 0
	}
	head := func(name, typ, help string) {
		fmt.Fprintf(&b, "# HELP %s [ALPHA] %s\n# TYPE %s %s\n", name, help, name, typ)
	}
	b.WriteString("# HELP go_goroutines Number of goroutines that currently exist.\n# TYPE go_goroutines gauge\ngo_goroutines 63\n")
	head("kubeproxy_network_programming_duration_seconds", "histogram", "In Cluster Network Programming Latency in seconds")
	for _, f := range fams {
		histogram(&b, "kubeproxy_network_programming_duration_seconds", lbl, f, netProgBounds(), m.NetProg)
	}
	head("kubeproxy_sync_full_proxy_rules_duration_seconds", "histogram", "SyncProxyRules latency in seconds for full resyncs")
	for _, f := range fams {
		histogram(&b, "kubeproxy_sync_full_proxy_rules_duration_seconds", lbl, f, syncBounds(), map[float64]int{0.05: 2})
	}
	head("kubeproxy_sync_proxy_rules_duration_seconds", "histogram", "SyncProxyRules latency in seconds")
	for _, f := range fams {
		histogram(&b, "kubeproxy_sync_proxy_rules_duration_seconds", lbl, f, syncBounds(), m.Sync)
	}
	head("kubeproxy_sync_proxy_rules_endpoint_changes_pending", "gauge", "Pending proxy rules Endpoint changes")
	fmt.Fprintf(&b, "kubeproxy_sync_proxy_rules_endpoint_changes_pending %d\n", m.EndpointsPending)
	head("kubeproxy_sync_proxy_rules_endpoint_changes_total", "counter", "Cumulative proxy rules Endpoint changes")
	b.WriteString("kubeproxy_sync_proxy_rules_endpoint_changes_total 388\n")
	if m.Mode == "iptables" {
		head("kubeproxy_sync_proxy_rules_iptables_last", "gauge", "Number of iptables rules written by kube-proxy in last sync")
		for _, f := range fams {
			fmt.Fprintf(&b, "kubeproxy_sync_proxy_rules_iptables_last%s 4\n", lbl(f, `table="filter"`))
			fmt.Fprintf(&b, "kubeproxy_sync_proxy_rules_iptables_last%s 11\n", lbl(f, `table="nat"`))
		}
		head("kubeproxy_sync_proxy_rules_iptables_partial_restore_failures_total", "counter", "Cumulative proxy iptables partial restore failures")
		for _, f := range fams {
			fmt.Fprintf(&b, "kubeproxy_sync_proxy_rules_iptables_partial_restore_failures_total%s 0\n", lbl(f))
		}
		head("kubeproxy_sync_proxy_rules_iptables_restore_failures_total", "counter", "Cumulative proxy iptables restore failures")
		for _, f := range fams {
			fmt.Fprintf(&b, "kubeproxy_sync_proxy_rules_iptables_restore_failures_total%s %d\n", lbl(f), m.RestoreFailures)
		}
		head("kubeproxy_sync_proxy_rules_iptables_total", "gauge", "Total number of iptables rules owned by kube-proxy")
		for _, f := range fams {
			fmt.Fprintf(&b, "kubeproxy_sync_proxy_rules_iptables_total%s %d\n", lbl(f, `table="filter"`), m.FilterRules)
			fmt.Fprintf(&b, "kubeproxy_sync_proxy_rules_iptables_total%s %d\n", lbl(f, `table="nat"`), m.NATRules)
		}
	}
	head("kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds", "gauge", "The last time a sync of proxy rules was queued")
	for i, f := range fams {
		fmt.Fprintf(&b, "kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds%s @NOW-%s@\n", lbl(f), ftoa(at(m.QueuedAgo, i)))
	}
	head("kubeproxy_sync_proxy_rules_last_timestamp_seconds", "gauge", "The last time proxy rules were successfully synced")
	for i, f := range fams {
		fmt.Fprintf(&b, "kubeproxy_sync_proxy_rules_last_timestamp_seconds%s @NOW-%s@\n", lbl(f), ftoa(at(m.LastAgo, i)))
	}
	if m.Mode == "nftables" {
		head("kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total", "counter", "Cumulative proxy nftables cleanup failures")
		for _, f := range fams {
			fmt.Fprintf(&b, "kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total%s 0\n", lbl(f))
		}
		head("kubeproxy_sync_proxy_rules_nftables_sync_failures_total", "counter", "Cumulative proxy nftables sync failures")
		for _, f := range fams {
			fmt.Fprintf(&b, "kubeproxy_sync_proxy_rules_nftables_sync_failures_total%s %d\n", lbl(f), m.RestoreFailures)
		}
	}
	head("kubeproxy_sync_proxy_rules_no_local_endpoints_total", "gauge", "Number of services with a Local traffic policy and no endpoints")
	for _, f := range fams {
		fmt.Fprintf(&b, "kubeproxy_sync_proxy_rules_no_local_endpoints_total%s 0\n", lbl(f, `traffic_policy="external"`))
		fmt.Fprintf(&b, "kubeproxy_sync_proxy_rules_no_local_endpoints_total%s 0\n", lbl(f, `traffic_policy="internal"`))
	}
	head("kubeproxy_sync_proxy_rules_service_changes_pending", "gauge", "Pending proxy rules Service changes")
	fmt.Fprintf(&b, "kubeproxy_sync_proxy_rules_service_changes_pending %d\n", m.ServicesPending)
	head("kubeproxy_sync_proxy_rules_service_changes_total", "counter", "Cumulative proxy rules Service changes")
	b.WriteString("kubeproxy_sync_proxy_rules_service_changes_total 146\n")
	head("kubernetes_build_info", "gauge", "A metric with a constant '1' value labeled by major, minor, git version, git commit, git tree state, build date, Go version, and compiler from which Kubernetes was built, and platform on which it is running.")
	b.WriteString(`kubernetes_build_info{build_date="2024-12-12T18:02:09Z",compiler="gc",git_commit="9d7db2a7b4b4d1e8b1e6f83d4fb8de2ba4e1c0f7",git_tree_state="clean",git_version="v1.31.4+rke2r1",go_version="go1.22.9 X:boringcrypto",major="1",minor="31",platform="linux/amd64"} 1` + "\n")
	b.WriteString("# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.\n# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds @NOW-86400@\n")
	head("rest_client_requests_total", "counter", "Number of HTTP requests, partitioned by status code, method, and host.")
	b.WriteString(`rest_client_requests_total{code="200",host="127.0.0.1:6443",method="GET"} 2841` + "\n")
	b.WriteString(`rest_client_requests_total{code="201",host="127.0.0.1:6443",method="POST"} 3` + "\n")
	return b.String()
}

// syncBounds are kube-proxy's sync histogram buckets (pkg/proxy/metrics
// SyncProxyRulesLatency): ExponentialBuckets(0.001, 2, 15).
func syncBounds() []float64 {
	var out []float64
	for v, i := 0.001, 0; i < 15; v, i = v*2, i+1 {
		out = append(out, v)
	}
	return out
}

// netProgBounds are the network programming histogram's buckets
// (pkg/proxy/metrics NetworkProgrammingLatency): 0.25, 0.5, 1..59 s,
// 60..115 s by 5, 120..300 s by 30, after a 0 bucket that metrics.go's
// merge() puts first (it starts from make([]float64, 1)).
func netProgBounds() []float64 {
	out := []float64{0, 0.25, 0.5}
	for v := 1.0; v <= 59; v++ {
		out = append(out, v)
	}
	for v := 60.0; v <= 115; v += 5 {
		out = append(out, v)
	}
	for v := 120.0; v <= 300; v += 30 {
		out = append(out, v)
	}
	return out
}

// histogram writes one histogram's cumulative buckets (le="+Inf" last,
// equal to _count), _sum and _count, as the text format carries them.
func histogram(b *strings.Builder, name string, lbl func(string, ...string) string, fam string, bounds []float64, obs map[float64]int) {
	durs := make([]float64, 0, len(obs))
	for d := range obs {
		durs = append(durs, d)
	}
	sort.Float64s(durs)
	var sum float64
	total := 0
	for _, d := range durs {
		sum += d * float64(obs[d])
		total += obs[d]
	}
	for _, ub := range bounds {
		n := 0
		for _, d := range durs {
			if d <= ub {
				n += obs[d]
			}
		}
		fmt.Fprintf(b, "%s_bucket%s %d\n", name, lbl(fam, `le="`+ftoa(ub)+`"`), n)
	}
	fmt.Fprintf(b, "%s_bucket%s %d\n", name, lbl(fam, `le="+Inf"`), total)
	fmt.Fprintf(b, "%s_sum%s %s\n", name, lbl(fam), ftoa(sum))
	fmt.Fprintf(b, "%s_count%s %d\n", name, lbl(fam), total)
}

// ftoa formats a float as the Prometheus text format writes it
// (prometheus/common expfmt writeFloat: strconv.AppendFloat(f, 'g', -1, 64)).
func ftoa(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// healthyKubeProxy adds what a healthy node shows to the kube-proxy mode and
// metrics probes: kube-proxy's metrics server on 127.0.0.1:10249 says it runs
// iptables mode and serves quiet, healthy sync metrics. The kube-proxy static
// pod manifest comes from healthyHost (RKE2 passes --proxy-mode only when
// configured, and kube-proxy's default is iptables).
func healthyKubeProxy(s *State, server bool) {
	s.HTTP = kubeProxyHTTP(s.HTTP)
	s.HTTP["10249/proxyMode"] = HTTP{Code: 200, Body: "iptables"}
	s.HTTP["10249/metrics"] = HTTP{Code: 200, Body: HealthyProxyMetrics().Render()}
}

// kubeProxyHTTP copies m so a With helper never changes the State it was
// derived from.
func kubeProxyHTTP(m map[string]HTTP) map[string]HTTP {
	out := make(map[string]HTTP, len(m)+2)
	for k, v := range m {
		out[k] = v
	}
	return out
}

func kubeProxyFiles(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+2)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// withKubeProxyManifest writes kube-proxy's static pod as RKE2 renders it:
// the flags of k3s's kubeProxyArgs (pkg/daemons/agent/agent_linux.go:
// proxy-mode iptables, healthz on 127.0.0.1, conntrack-max-per-core 0 and
// both conntrack TCP timeouts 0s, that is "leave the kernel's values"), with
// flags (kube-proxy-arg in config.yaml) replacing those of the same name,
// as k3s's GetArgsList does, sorted as RKE2 writes them.
func withKubeProxyManifest(s State, flags ...string) State {
	s.Files = kubeProxyFiles(s.Files)
	args := []string{
		"--cluster-cidr=10.42.0.0/16",
		"--conntrack-max-per-core=0",
		"--conntrack-tcp-timeout-close-wait=0s",
		"--conntrack-tcp-timeout-established=0s",
		"--healthz-bind-address=127.0.0.1",
		"--hostname-override=" + s.Hostname,
		"--kubeconfig=/var/lib/rancher/rke2/agent/kubeproxy.kubeconfig",
	}
	for _, f := range flags {
		name, _, _ := strings.Cut(f, "=")
		args = slices.DeleteFunc(args, func(a string) bool { return strings.HasPrefix(a, name+"=") })
		args = append(args, f)
	}
	sort.Strings(args)
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Pod\nmetadata:\n  labels:\n    component: kube-proxy\n    tier: control-plane\n  name: kube-proxy\n  namespace: kube-system\nspec:\n  containers:\n  - args:\n")
	for _, a := range args {
		fmt.Fprintf(&b, "    - %s\n", a)
	}
	b.WriteString("    command:\n    - kube-proxy\n    image: index.docker.io/rancher/hardened-kubernetes:v1.31.4-rke2r1-build20241212\n    name: kube-proxy\n  hostNetwork: true\n  priorityClassName: system-node-critical\n")
	s.Files[KubeProxyManifest] = b.String()
	return s
}

// WithoutKubeProxy is a node where no kube-proxy process runs: nothing
// listens on 10256 or 10249 and nothing answers there.
func WithoutKubeProxy(s State) State {
	var ps []int
	for _, p := range s.Listening {
		if p != 10256 && p != 10249 {
			ps = append(ps, p)
		}
	}
	s.Listening = ps
	s.HealthHTTP = nil
	s.HTTP = kubeProxyHTTP(s.HTTP)
	for k := range s.HTTP {
		if strings.HasPrefix(k, "10249/") {
			delete(s.HTTP, k)
		}
	}
	return s
}

// WithHealthPortDown is kube-proxy configured but not running (exiting at
// start or crash-looping between restarts): 10256 does not listen and
// nothing answers on 10256 or 10249.
func WithHealthPortDown(s State) State { return WithoutKubeProxy(s) }

// ipvsTable is ipvsadm -Ln on a small RKE2 cluster in IPVS mode (its
// layout as commonly seen, not checked against ipvsadm's source; no probe
// reads it without root): the
// apiserver, CoreDNS (TCP, UDP, metrics), the ingress controller with
// ClientIP affinity (persistent), and an IPv6 ClusterIP.
const ipvsTable = `IP Virtual Server version 1.2.1 (size=4096)
Prot LocalAddress:Port Scheduler Flags
  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn
TCP  10.43.0.1:443 rr
  -> 192.168.10.11:6443           Masq    1      4          0
  -> 192.168.10.12:6443           Masq    1      3          0
TCP  10.43.0.10:53 rr
  -> 10.42.0.5:53                 Masq    1      0          0
  -> 10.42.1.7:53                 Masq    1      0          0
TCP  10.43.0.10:9153 rr
  -> 10.42.0.5:9153               Masq    1      0          0
  -> 10.42.1.7:9153               Masq    1      0          0
TCP  10.43.88.14:443 rr persistent 10800
  -> 10.42.2.9:8443               Masq    1      0          1
UDP  10.43.0.10:53 rr
  -> 10.42.0.5:53                 Masq    1      0          12
  -> 10.42.1.7:53                 Masq    1      0          11
TCP  [fd00:43::1]:443 rr
  -> [fd00:10::11]:6443           Masq    1      0          0
`

// ipvsProc is the same table as the kernel lists it in /proc/net/ip_vs,
// printed with the formats of linux net/netfilter/ipvs/ip_vs_ctl.c
// ip_vs_info_seq_show: addresses and ports in hex, IPv6 ones with %pI6
// (every group, zero-padded), a service line ending in the scheduler and
// two blanks ("%s %s " with no "ops "), or one for IPv6 ("%s "), or in
// "persistent <timeout> <netmask>" where the timeout is svc->timeout, held
// in jiffies (ip_vs_add_service stores u->timeout * HZ; Debian's kernels
// run at HZ=250), real servers "%-7s %-6d %-10d %-10d" with their trailing
// blanks.
var ipvsProc = func() string {
	const hz = 250
	var b strings.Builder
	b.WriteString("IP Virtual Server version 1.2.1 (size=4096)\nProt LocalAddress:Port Scheduler Flags\n  -> RemoteAddress:Port Forward Weight ActiveConn InActConn\n")
	type rs struct {
		addr          string
		active, inact int
	}
	svc := func(proto, addr, sched string, persistent int, dests ...rs) {
		switch {
		case strings.HasPrefix(addr, "["):
			fmt.Fprintf(&b, "%s  %s %s \n", proto, addr, sched)
		case persistent > 0:
			fmt.Fprintf(&b, "%s  %s %s  persistent %d %08X\n", proto, addr, sched, persistent*hz, 0xFFFFFFFF)
		default:
			fmt.Fprintf(&b, "%s  %s %s  \n", proto, addr, sched)
		}
		for _, d := range dests {
			fmt.Fprintf(&b, "  -> %s      %-7s %-6d %-10d %-10d\n", d.addr, "Masq", 1, d.active, d.inact)
		}
	}
	svc("TCP", "0A2B0001:01BB", "rr", 0, rs{"C0A80A0B:192B", 4, 0}, rs{"C0A80A0C:192B", 3, 0})
	svc("TCP", "0A2B000A:0035", "rr", 0, rs{"0A2A0005:0035", 0, 0}, rs{"0A2A0107:0035", 0, 0})
	svc("TCP", "0A2B000A:23C1", "rr", 0, rs{"0A2A0005:23C1", 0, 0}, rs{"0A2A0107:23C1", 0, 0})
	svc("TCP", "0A2B580E:01BB", "rr", 10800, rs{"0A2A0209:20FB", 0, 1})
	svc("UDP", "0A2B000A:0035", "rr", 0, rs{"0A2A0005:0035", 0, 12}, rs{"0A2A0107:0035", 0, 11})
	svc("TCP", "[fd00:0043:0000:0000:0000:0000:0000:0001]:01BB", "rr", 0, rs{"[fd00:0010:0000:0000:0000:0000:0000:0011]:192B", 0, 0})
	return b.String()
}()

// IPVSVirtualServices and IPVSRealServers count the simulated IPVS table.
const (
	IPVSVirtualServices = 6
	IPVSRealServers     = 10
)

// WithIPVS is kube-proxy in IPVS mode (kube-proxy-arg: proxy-mode=ipvs):
// /proxyMode says ipvs, the IPVS modules are loaded, ipvsadm -Ln and
// /proc/net/ip_vs list a few services, and the metrics carry no iptables
// rule counts.
func WithIPVS(s State) State {
	s = withKubeProxyManifest(s, "--proxy-mode=ipvs")
	s.Files["proc/net/ip_vs"] = ipvsProc
	s.Modules = append(append([]string{}, s.Modules...), "ip_vs", "ip_vs_rr", "ip_vs_wrr", "ip_vs_sh", "nf_defrag_ipv6")
	s.SetCommand(Command{Name: "ipvsadm", Args: "-Ln", Out: ipvsTable})
	m := HealthyProxyMetrics()
	m.Mode = "ipvs"
	s.HTTP = kubeProxyHTTP(s.HTTP)
	s.HTTP["10249/proxyMode"] = HTTP{Code: 200, Body: "ipvs"}
	s.HTTP["10249/metrics"] = HTTP{Code: 200, Body: m.Render()}
	return s
}

// WithHungSync is kube-proxy whose sync loop stopped 15 minutes ago while
// changes keep being queued: the last sync is 900 s old, the last queued
// change 3 s, changes are pending, and both /healthz and /livez report the
// late sync with 503 (ProxyHealth).
func WithHungSync(s State) State {
	m := HealthyProxyMetrics()
	m.LastAgo = []float64{900}
	m.QueuedAgo = []float64{3}
	m.EndpointsPending = 14
	m.ServicesPending = 2
	s.HTTP = kubeProxyHTTP(s.HTTP)
	s.HTTP["10249/metrics"] = HTTP{Code: 200, Body: m.Render()}
	return WithProxyHealth(s, LateProxy(15*time.Minute))
}

// WithNFTablesOldKernel is a node configured for nftables mode
// (kube-proxy-arg: proxy-mode=nftables) on a 5.10 kernel: kube-proxy refuses
// to start there (nftables mode needs 5.13), so nothing answers and only the
// manifest tells the mode.
func WithNFTablesOldKernel(s State) State {
	s = withKubeProxyManifest(s, "--proxy-mode=nftables")
	s.Kernel = "5.10.0-33-amd64"
	s.Modules = append(append([]string{}, s.Modules...), "nf_tables")
	return WithoutKubeProxy(s)
}

// WithKubeProxyArgs is a node whose config.yaml sets kube-proxy-arg flags
// ("--conntrack-max-per-core=32768"): RKE2 renders them into the manifest.
func WithKubeProxyArgs(s State, flags ...string) State {
	return withKubeProxyManifest(s, flags...)
}

// healthProbesSinceStart is how many answers the simulated kube-proxy's
// health server gave per endpoint since it started: kubelet's liveness
// probe every 10 s (core/v1 Probe periodSeconds default) for an hour.
const healthProbesSinceStart = 360

// withHealthCounters adds to a kube-proxy /metrics body the counters its
// health server keeps of its own answers, kubeproxy_proxy_healthz_total
// and kubeproxy_proxy_livez_total by code (kubernetes pkg/proxy/metrics/
// metrics.go ProxyHealthzTotal, ProxyLivezTotal; incremented per request
// in pkg/proxy/healthcheck/proxy_health.go ServeHTTP), derived from what
// the node's health server answers now (health, by path): every answer
// since start carried that code. The families go where the registry
// sorts them, before the kubeproxy_sync_ ones; a body that is not
// kube-proxy's, or has them already, is left alone.
func withHealthCounters(body string, health map[string]HTTP) string {
	at := strings.Index(body, "# HELP kubeproxy_sync_")
	if at < 0 || strings.Contains(body, "kubeproxy_proxy_healthz_total") {
		return body
	}
	var b strings.Builder
	for _, ep := range []string{"healthz", "livez"} {
		h, ok := health["/"+ep]
		if !ok || h.Hang || h.Code == 0 {
			continue
		}
		name := "kubeproxy_proxy_" + ep + "_total"
		fmt.Fprintf(&b, "# HELP %s [ALPHA] Cumulative proxy %s HTTP status\n# TYPE %s counter\n", name, ep, name)
		fmt.Fprintf(&b, "%s{code=\"%d\"} %d\n", name, h.Code, healthProbesSinceStart)
	}
	return body[:at] + b.String() + body[at:]
}
