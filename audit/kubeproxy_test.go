package audit

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

// wantFacts compares the facts a case names; a value "~lo..hi" accepts any
// number in that range, for ages that depend on the second the probe ran,
// and "re:EXPR" any value the regular expression matches whole, for texts
// holding the node's time.
func wantFacts(t *testing.T, got, want map[string]string) {
	t.Helper()
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s not emitted", k)
			continue
		}
		if expr, ok := strings.CutPrefix(w, "re:"); ok {
			if !regexp.MustCompile("^(?:" + expr + ")$").MatchString(g) {
				t.Errorf("%s = %q, want a match of %s", k, g, expr)
			}
			continue
		}
		if lo, hi, isRange := strings.Cut(strings.TrimPrefix(w, "~"), ".."); strings.HasPrefix(w, "~") && isRange {
			n, err := strconv.ParseFloat(g, 64)
			l, _ := strconv.ParseFloat(lo, 64)
			h, _ := strconv.ParseFloat(hi, 64)
			if err != nil || n < l || n > h {
				t.Errorf("%s = %q, want a number in [%s, %s]", k, g, lo, hi)
			}
			continue
		}
		if g != w {
			t.Errorf("%s = %q, want %q", k, g, w)
		}
	}
}

func healthy() nodesim.State { return nodesim.Healthy("node-1", false) }

func withHTTP(s nodesim.State, portPath string, h nodesim.HTTP) nodesim.State {
	m := make(map[string]nodesim.HTTP, len(s.HTTP)+1)
	for k, v := range s.HTTP {
		m[k] = v
	}
	m[portPath] = h
	s.HTTP = m
	return s
}

// withoutMetricsPort is a node on which nothing answers kube-proxy's
// metrics address, whatever answers on its health port.
func withoutMetricsPort(s nodesim.State) nodesim.State {
	m := map[string]nodesim.HTTP{}
	for k, v := range s.HTTP {
		if !strings.HasPrefix(k, "10249/") {
			m[k] = v
		}
	}
	s.HTTP = m
	s.Listening = slices.DeleteFunc(slices.Clone(s.Listening), func(p int) bool { return p == 10249 })
	return s
}

func withMetrics(s nodesim.State, m nodesim.ProxyMetrics) nodesim.State {
	return withHTTP(s, "10249/metrics", nodesim.HTTP{Code: 200, Body: m.Render()})
}

func withHealthz(s nodesim.State, code int, body string) nodesim.State {
	s.HealthHTTP = map[string]nodesim.HTTP{"/healthz": {Code: code, Body: body}, "/livez": s.HealthHTTP["/livez"]}
	return s
}

func withFile(s nodesim.State, path, content string) nodesim.State {
	f := make(map[string]string, len(s.Files)+1)
	for k, v := range s.Files {
		f[k] = v
	}
	if content == "\x00delete" {
		delete(f, path)
	} else {
		f[path] = content
	}
	s.Files = f
	return s
}

func withoutFile(s nodesim.State, path string) nodesim.State { return withFile(s, path, "\x00delete") }

func withModules(s nodesim.State, drop []string, add ...string) nodesim.State {
	var out []string
	for _, m := range s.Modules {
		keep := true
		for _, d := range drop {
			if m == d {
				keep = false
			}
		}
		if keep {
			out = append(out, m)
		}
	}
	s.Modules = append(out, add...)
	return s
}

func withoutSysctls(s nodesim.State, names ...string) nodesim.State {
	m := make(map[string]string, len(s.Sysctls))
	for k, v := range s.Sysctls {
		m[k] = v
	}
	for _, n := range names {
		delete(m, n)
	}
	s.Sysctls = m
	return s
}

func withCommand(s nodesim.State, c nodesim.Command) nodesim.State {
	s.SetCommand(c)
	return s
}

func TestKubeProxyHealthProbe(t *testing.T) {
	// kube-proxy's times as Go's Time.String() prints them in UTC, with
	// the monotonic reading of a process started 985 s ago.
	goNow := `\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)? \+0000 UTC m=\+985\.000000000`
	live := `re:\{"lastUpdated": "` + goNow + `","currentTime": "` + goNow + `"\}`
	// An answer of kube-proxy 1.27: /healthz only, without nodeEligible.
	old := func(late bool) nodesim.State {
		p := nodesim.HealthyProxy()
		p.Minor, p.SyncLate = 27, late
		return nodesim.WithProxyHealth(healthy(), p)
	}
	beingDeleted := func(late bool) nodesim.State {
		p := nodesim.LateProxy(10 * time.Minute)
		p.Ineligible, p.SyncLate = true, late
		return nodesim.WithProxyHealth(healthy(), p)
	}
	tcp6 := "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n" +
		"   0: 00000000000000000000000001000000:2810 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 31337 1 0000000000000000 100 0 0 10 0\n"
	cases := []struct {
		name  string
		state nodesim.State
		want  map[string]string
	}{
		{"healthy", healthy(), map[string]string{
			"kubeproxy.port10256.listening": "yes", "kubeproxy.healthz.code": "200", "kubeproxy.livez.code": "200",
			"kubeproxy.healthz.node_eligible": "true", "kubeproxy.healthz.stale_seconds": "0.0", "kubeproxy.livez.body": live,
			"kubeproxy.health": "healthy",
		}},
		// Upstream semantics (pkg/proxy/healthcheck/proxy_health.go): a late
		// sync loop fails both endpoints; only an ineligible node splits them.
		{"ufw: sync loop late 19 min, 503 on both", nodesim.WithUFWActive(healthy()), map[string]string{
			"kubeproxy.healthz.code": "503", "kubeproxy.livez.code": "503", "kubeproxy.healthz.stale_seconds": "1129.1",
			"kubeproxy.healthz.node_eligible": "true", "kubeproxy.health": "unhealthy",
		}},
		{"node being deleted: healthz 503, livez 200", beingDeleted(false), map[string]string{
			"kubeproxy.healthz.code": "503", "kubeproxy.livez.code": "200", "kubeproxy.healthz.node_eligible": "false",
			"kubeproxy.health": "ineligible",
		}},
		{"node being deleted with a late sync loop", beingDeleted(true), map[string]string{
			"kubeproxy.healthz.code": "503", "kubeproxy.livez.code": "503", "kubeproxy.health": "unhealthy",
		}},
		{"1.27 late: no /livez", old(true), map[string]string{
			"kubeproxy.healthz.code": "503", "kubeproxy.livez.code": "404", "kubeproxy.healthz.node_eligible": "absent",
			"kubeproxy.health": "unhealthy",
		}},
		{"1.27 healthy", old(false), map[string]string{"kubeproxy.livez.code": "404", "kubeproxy.health": "healthy"}},
		// Not served by any kube-proxy (eligible, healthz 503, livez 200):
		// the answers changed between the two requests. Not judged.
		{"answers that contradict each other", withHealthz(healthy(), 503,
			`{"lastUpdated": "2026-12-02 10:00:00.5 +0000 UTC","currentTime": "2026-12-02 10:00:30 +0000 UTC", "nodeEligible": true}`),
			map[string]string{"kubeproxy.health": "unknown"}},
		{"monotonic clock suffix and a node being deleted", withHealthz(healthy(), 503,
			`{"lastUpdated": "2026-12-02 10:00:00.5 +0000 UTC m=+2466.131578404","currentTime": "2026-12-02 10:02:00.5 +0000 UTC m=+2586.131578404", "nodeEligible": false}`),
			map[string]string{"kubeproxy.healthz.stale_seconds": "120.0", "kubeproxy.healthz.node_eligible": "false", "kubeproxy.healthz.code": "503"}},
		{"positive zone offset", withHealthz(healthy(), 200,
			`{"lastUpdated": "2026-12-02 11:00:00 +0100 CET","currentTime": "2026-12-02 10:00:30 +0000 UTC", "nodeEligible": true}`),
			map[string]string{"kubeproxy.healthz.stale_seconds": "30.0"}},
		{"negative zone offset", withHealthz(healthy(), 200,
			`{"lastUpdated": "2026-12-02 04:59:00 -0500 EST","currentTime": "2026-12-02 10:00:00 +0000 UTC", "nodeEligible": true}`),
			map[string]string{"kubeproxy.healthz.stale_seconds": "60.0"}},
		{"across new year", withHealthz(healthy(), 200,
			`{"lastUpdated": "2026-12-31 23:59:50 +0000 UTC","currentTime": "2027-01-01 00:00:10 +0000 UTC", "nodeEligible": true}`),
			map[string]string{"kubeproxy.healthz.stale_seconds": "20.0"}},
		{"across a leap day", withHealthz(healthy(), 503,
			`{"lastUpdated": "2028-02-28 23:59:59 +0000 UTC","currentTime": "2028-03-01 00:00:01 +0000 UTC", "nodeEligible": true}`),
			map[string]string{"kubeproxy.healthz.stale_seconds": "86402.0"}},
		{"never synced (zero time)", withHealthz(healthy(), 503,
			`{"lastUpdated": "0001-01-01 00:00:00 +0000 UTC","currentTime": "2026-12-02 10:00:01.2 +0000 UTC", "nodeEligible": true}`),
			map[string]string{"kubeproxy.healthz.stale_seconds": "never"}},
		{"body without times", withHealthz(healthy(), 200, "ok"),
			map[string]string{"kubeproxy.healthz.stale_seconds": "absent", "kubeproxy.healthz.node_eligible": "absent", "kubeproxy.healthz.body": "ok"}},
		{"port down", nodesim.WithHealthPortDown(healthy()), map[string]string{
			"kubeproxy.port10256.listening": "no", "kubeproxy.healthz.code": "connect-failed", "kubeproxy.livez.code": "connect-failed",
			"kubeproxy.healthz.body": "absent", "kubeproxy.healthz.stale_seconds": "absent", "kubeproxy.healthz.node_eligible": "absent",
		}},
		{"listening on IPv6 only", withFile(nodesim.WithoutPort(healthy(), 10256), "proc/net/tcp6", tcp6),
			map[string]string{"kubeproxy.port10256.listening": "yes"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantFacts(t, runProbe(t, "kubeproxy", c.state).Facts, c.want)
		})
	}
}

func TestKubeProxyMetricsProbe(t *testing.T) {
	m := nodesim.HealthyProxyMetrics
	hung := m()
	hung.LastAgo, hung.QueuedAgo, hung.EndpointsPending, hung.ServicesPending = []float64{900}, []float64{3}, 14, 2
	dual := m()
	dual.Families, dual.LastAgo, dual.QueuedAgo = []string{"IPv4", "IPv6"}, []float64{5, 700}, []float64{6, 2}
	failing := m()
	failing.RestoreFailures = 3
	nft := m()
	nft.Mode, nft.RestoreFailures = "nftables", 2
	ipvs := m()
	ipvs.Mode = "ipvs"
	idle := m()
	idle.Sync, idle.NetProg = map[float64]int{}, map[float64]int{}
	offScale := m()
	offScale.Sync = map[float64]int{30: 10}
	slowTail := m()
	slowTail.Sync = map[float64]int{0.01: 90, 6: 10}
	slowNet := m()
	slowNet.NetProg = map[float64]int{0.2: 50, 45: 50}
	absent, unknown := map[string]string{}, map[string]string{}
	for _, k := range []string{"sync_count", "sync_sum_seconds", "sync_mean_seconds", "sync_p50_seconds", "sync_p95_seconds", "sync_p99_seconds",
		"netprog_p99_seconds", "iptables_rules_filter", "iptables_rules_nat", "sync_age_seconds", "queue_lag_seconds", "restore_failures",
		"endpoint_changes_pending", "service_changes_pending", "healthz_503", "livez_503"} {
		absent["kubeproxy.metrics."+k] = "absent"
		unknown["kubeproxy.metrics."+k] = "unknown"
	}
	cases := []struct {
		name  string
		state nodesim.State
		want  map[string]string
	}{
		{"healthy", healthy(), map[string]string{
			"kubeproxy.metrics.status": "ok", "kubeproxy.metrics.sync_count": "412", "kubeproxy.metrics.sync_sum_seconds": "8.519",
			"kubeproxy.metrics.sync_mean_seconds": "0.021", "kubeproxy.metrics.sync_p50_seconds": "0.014",
			"kubeproxy.metrics.sync_p95_seconds": "0.053", "kubeproxy.metrics.sync_p99_seconds": "0.118",
			"kubeproxy.metrics.netprog_p99_seconds": "1.976", "kubeproxy.metrics.iptables_rules_filter": "9",
			"kubeproxy.metrics.iptables_rules_nat": "112", "kubeproxy.metrics.sync_age_seconds": "~1..15",
			"kubeproxy.metrics.queue_lag_seconds": "0", "kubeproxy.metrics.restore_failures": "0",
			"kubeproxy.metrics.endpoint_changes_pending": "0", "kubeproxy.metrics.service_changes_pending": "0",
			"kubeproxy.metrics.healthz_503": "0", "kubeproxy.metrics.livez_503": "0",
		}},
		// Its health server counted every answer since start: 503s where
		// the sync loop is late, on both endpoints; only /healthz where
		// the node is being deleted.
		{"503s counted by kube-proxy itself", nodesim.WithUFWActive(healthy()), map[string]string{
			"kubeproxy.metrics.healthz_503": "360", "kubeproxy.metrics.livez_503": "360", "kubeproxy.metrics.sync_count": "412"}},
		{"node being deleted: /healthz 503s only", nodesim.WithNodeBeingDeleted(healthy()), map[string]string{
			"kubeproxy.metrics.healthz_503": "360", "kubeproxy.metrics.livez_503": "0"}},
		{"hung sync loop", withMetrics(healthy(), hung), map[string]string{
			"kubeproxy.metrics.queue_lag_seconds": "897", "kubeproxy.metrics.sync_age_seconds": "~897..915",
			"kubeproxy.metrics.endpoint_changes_pending": "14", "kubeproxy.metrics.service_changes_pending": "2",
		}},
		{"WithHungSync", nodesim.WithHungSync(healthy()), map[string]string{
			"kubeproxy.metrics.queue_lag_seconds": "897", "kubeproxy.healthz.code": "503", "kubeproxy.healthz.stale_seconds": "900.0",
		}},
		{"dual-stack ip_family series are summed, oldest family counts", withMetrics(healthy(), dual), map[string]string{
			"kubeproxy.metrics.sync_count": "824", "kubeproxy.metrics.sync_sum_seconds": "17.038", "kubeproxy.metrics.sync_p99_seconds": "0.118",
			"kubeproxy.metrics.iptables_rules_nat": "224", "kubeproxy.metrics.iptables_rules_filter": "18",
			"kubeproxy.metrics.sync_age_seconds": "~697..715", "kubeproxy.metrics.queue_lag_seconds": "698",
		}},
		{"restore failures", withMetrics(healthy(), failing), map[string]string{"kubeproxy.metrics.restore_failures": "3"}},
		{"nftables mode", withMetrics(healthy(), nft), map[string]string{
			"kubeproxy.metrics.restore_failures": "2", "kubeproxy.metrics.iptables_rules_nat": "absent", "kubeproxy.metrics.sync_count": "412",
		}},
		{"ipvs mode", withMetrics(healthy(), ipvs), map[string]string{
			"kubeproxy.metrics.restore_failures": "absent", "kubeproxy.metrics.iptables_rules_filter": "absent", "kubeproxy.metrics.sync_p99_seconds": "0.118",
		}},
		{"no sync yet", withMetrics(healthy(), idle), map[string]string{
			"kubeproxy.metrics.sync_count": "0", "kubeproxy.metrics.sync_mean_seconds": "none", "kubeproxy.metrics.sync_p50_seconds": "none",
			"kubeproxy.metrics.sync_p99_seconds": "none", "kubeproxy.metrics.netprog_p99_seconds": "none",
		}},
		{"every sync beyond the last bucket", withMetrics(healthy(), offScale), map[string]string{
			"kubeproxy.metrics.sync_p50_seconds": "16.384", "kubeproxy.metrics.sync_p99_seconds": "16.384", "kubeproxy.metrics.sync_mean_seconds": "30.000",
		}},
		{"slow tail interpolated in its bucket", withMetrics(healthy(), slowTail), map[string]string{
			"kubeproxy.metrics.sync_p50_seconds": "0.012", "kubeproxy.metrics.sync_p95_seconds": "6.144", "kubeproxy.metrics.sync_p99_seconds": "7.782",
			"kubeproxy.metrics.sync_mean_seconds": "0.609",
		}},
		{"slow network programming", withMetrics(healthy(), slowNet), map[string]string{"kubeproxy.metrics.netprog_p99_seconds": "44.980"}},
		// An answer that is not kube-proxy's 200 is no reading: its
		// metrics are unknown, never absent, or the checks on them pass
		// blind (issue 27 item 4).
		{"metrics endpoint errors", withHTTP(healthy(), "10249/metrics", nodesim.HTTP{Code: 500, Body: "Internal Server Error\n"}),
			mergeFacts(unknown, map[string]string{"kubeproxy.metrics.status": "http-500"})},
		{"something else in front of 10249 refuses", withHTTP(healthy(), "10249/metrics", nodesim.HTTP{Code: 403, Body: "Forbidden\n"}),
			mergeFacts(unknown, map[string]string{"kubeproxy.metrics.status": "http-403", "kubeproxy.health": "healthy"})},
		// kube-proxy answers on its health port, and its metrics port
		// (bound elsewhere than this login could read) refuses.
		{"metrics refused while kube-proxy answers", withoutMetricsPort(healthy()),
			mergeFacts(unknown, map[string]string{"kubeproxy.metrics.status": "connect-failed", "kubeproxy.health": "healthy"})},
		// Nothing of kube-proxy answers (down, or replaced): not there.
		{"nothing on 10249", nodesim.WithHealthPortDown(healthy()),
			mergeFacts(absent, map[string]string{"kubeproxy.metrics.status": "connect-failed"})},
		{"another exporter on 10249", withHTTP(healthy(), "10249/metrics", nodesim.HTTP{Code: 200, Body: "# TYPE up gauge\nup 1\n"}),
			mergeFacts(absent, map[string]string{"kubeproxy.metrics.status": "ok"})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantFacts(t, runProbe(t, "kubeproxy", c.state).Facts, c.want)
		})
	}
}

func TestKubeProxyWithoutCurl(t *testing.T) {
	noCurl := func(root string) {
		if err := os.Remove(filepath.Join(root, "bin", "curl")); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("no http client", func(t *testing.T) {
		wantFacts(t, runProbeTweaked(t, "kubeproxy", healthy(), noCurl).Facts, map[string]string{
			"kubeproxy.healthz.code": "no-client", "kubeproxy.livez.code": "no-client", "kubeproxy.metrics.status": "no-client",
			"kubeproxy.metrics.sync_p99_seconds": "unknown", "kubeproxy.port10256.listening": "yes",
			"kubeproxy.health": "unknown", "kubeproxy.healthz.address": "none",
		})
		// The mode then comes from the manifest RKE2 wrote.
		wantFacts(t, runProbeTweaked(t, "kubeproxy_mode", healthy(), noCurl).Facts, map[string]string{
			"kubeproxy.mode": "iptables", "kubeproxy.mode.source": "manifest",
		})
	})
	t.Run("wget", func(t *testing.T) {
		s := healthy()
		s = withCommand(s, nodesim.Command{Name: "wget", Args: "-q -T 5 -O - http://127.0.0.1:10256/healthz", RC: 8,
			Out: `{"lastUpdated": "2026-12-02 09:58:01.2 +0000 UTC","currentTime": "2026-12-02 10:00:01.2 +0000 UTC", "nodeEligible": true}`})
		s = withCommand(s, nodesim.Command{Name: "wget", Args: "-q -T 5 -O - http://127.0.0.1:10256/livez", Out: "{}"})
		s = withCommand(s, nodesim.Command{Name: "wget", Args: "-q -T 3 -O - http://127.0.0.1:10249/metrics", RC: 4})
		s = withCommand(s, nodesim.Command{Name: "wget", Args: "-q -T 3 -O - http://127.0.0.1:10249/proxyMode", Out: "ipvs"})
		wantFacts(t, runProbeTweaked(t, "kubeproxy", s, noCurl).Facts, map[string]string{
			"kubeproxy.healthz.code": "http-error", "kubeproxy.livez.code": "200", "kubeproxy.healthz.stale_seconds": "120.0",
			"kubeproxy.metrics.status": "connect-failed",
		})
		wantFacts(t, runProbeTweaked(t, "kubeproxy_mode", s, noCurl).Facts, map[string]string{
			"kubeproxy.mode": "ipvs", "kubeproxy.mode.source": "proxyMode",
		})
	})
}

func TestKubeProxyModeProbe(t *testing.T) {
	ipvs := nodesim.WithIPVS(healthy())
	down := nodesim.WithoutKubeProxy
	noManifest := func(s nodesim.State) nodesim.State { return withoutFile(s, nodesim.KubeProxyManifest) }
	nftTables := func(s nodesim.State, out string) nodesim.State {
		return withCommand(s, nodesim.Command{Name: "nft", Args: "list tables", Out: out})
	}
	manifest := func(flags string) string {
		return "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - args:\n    - --cluster-cidr=10.42.0.0/16\n" + flags +
			"    - --kubeconfig=/var/lib/rancher/rke2/agent/kubeproxy.kubeconfig\n    command:\n    - kube-proxy\n"
	}
	const denied = "Can't initialize ipvs: Permission denied (you must be root)\n"
	// The agent's answer on its socket, as a test sets it.
	agentSays := func(s nodesim.State, h nodesim.HTTP) nodesim.State {
		socks := map[string]map[string]nodesim.HTTP{}
		for k, v := range s.Sockets {
			socks[k] = v
		}
		socks[nodesim.CiliumSock] = map[string]nodesim.HTTP{"/v1/healthz": h}
		s.Sockets = socks
		return s
	}
	kpr := nodesim.WithCiliumKPR(healthy())
	cases := []struct {
		name  string
		state nodesim.State
		want  map[string]string
	}{
		// /etc/environment's http_proxy must not take 127.0.0.1 to the proxy.
		{"healthy, proxied login", nodesim.WithHTTPProxyEnv(ipvs), map[string]string{"kubeproxy.mode": "ipvs", "kubeproxy.mode.source": "proxyMode"}},
		{"healthy iptables", healthy(), map[string]string{
			"kubeproxy.mode": "iptables", "kubeproxy.mode.source": "proxyMode", "kubeproxy.mode.configured": "iptables",
			"kubeproxy.mode.missing_modules": "none", "kubeproxy.module.ip_vs": "absent", "kubeproxy.module.nf_conntrack": "loaded",
			"kubeproxy.module.nf_tables": "loaded", "kubeproxy.ipvs.virtual_services": "0", "kubeproxy.ipvs.schedulers": "none",
			"kubeproxy.cilium.agent": "absent", "kubeproxy.cilium.status": "absent", "kubeproxy.cilium.kube_proxy_replacement": "absent",
			"kubeproxy.bpftool.maps": "absent", "kubeproxy.bpftool.cilium_lb_maps": "absent",
		}},
		{"ipvs", ipvs, map[string]string{
			"kubeproxy.mode": "ipvs", "kubeproxy.mode.source": "proxyMode", "kubeproxy.mode.configured": "ipvs",
			"kubeproxy.ipvs.virtual_services": strconv.Itoa(nodesim.IPVSVirtualServices), "kubeproxy.ipvs.real_servers": strconv.Itoa(nodesim.IPVSRealServers),
			"kubeproxy.ipvs.schedulers": "rr", "kubeproxy.ipvs.scheduler_module": "loaded", "kubeproxy.module.ip_vs": "loaded",
			"kubeproxy.module.ip_vs_rr": "loaded", "kubeproxy.module.ip_vs_wrr": "loaded", "kubeproxy.module.ip_vs_sh": "loaded",
			"kubeproxy.mode.missing_modules": "none",
		}},
		{"ipvs without its scheduler and conntrack modules",
			withoutSysctls(withModules(ipvs, []string{"ip_vs_rr", "nf_conntrack"}), "net.netfilter.nf_conntrack_count", "net.netfilter.nf_conntrack_max"),
			map[string]string{"kubeproxy.mode.missing_modules": "ip_vs_rr,nf_conntrack", "kubeproxy.ipvs.scheduler_module": "absent",
				"kubeproxy.module.ip_vs_rr": "absent", "kubeproxy.module.nf_conntrack": "absent"}},
		{"ipvs with a configured scheduler whose module is missing",
			withFile(ipvs, nodesim.KubeProxyManifest, manifest("    - --ipvs-scheduler=lc\n    - --proxy-mode=ipvs\n")),
			map[string]string{"kubeproxy.mode.missing_modules": "ip_vs_lc", "kubeproxy.ipvs.scheduler_module": "absent"}},
		{"ipvs table from ipvsadm", withoutFile(ipvs, "proc/net/ip_vs"), map[string]string{
			"kubeproxy.ipvs.virtual_services": strconv.Itoa(nodesim.IPVSVirtualServices), "kubeproxy.ipvs.real_servers": strconv.Itoa(nodesim.IPVSRealServers),
			"kubeproxy.ipvs.schedulers": "rr",
		}},
		{"ipvsadm without root", withCommand(withoutFile(ipvs, "proc/net/ip_vs"), nodesim.Command{Name: "ipvsadm", Args: "-Ln", Out: denied, RC: 2}),
			map[string]string{"kubeproxy.ipvs.virtual_services": "denied", "kubeproxy.ipvs.schedulers": "denied"}},
		{"ip_vs loaded, no table and no ipvsadm", func() nodesim.State {
			s := withoutFile(ipvs, "proc/net/ip_vs")
			s.RemoveCommand("ipvsadm")
			return s
		}(), map[string]string{"kubeproxy.ipvs.virtual_services": "absent", "kubeproxy.ipvs.real_servers": "absent"}},
		// ipvsadm would modprobe ip_vs: with the module absent it must not run.
		{"ipvsadm is not run without ip_vs", withCommand(healthy(), nodesim.Command{Name: "ipvsadm", Args: "*", Out: "TCP  10.43.0.1:443 rr\n"}),
			map[string]string{"kubeproxy.ipvs.virtual_services": "0", "kubeproxy.mode": "iptables"}},
		{"ip_vs built in (modules.builtin)", withFile(withModules(healthy(), []string{"nf_tables"}), "lib/modules/6.1.0-28-amd64/modules.builtin",
			"kernel/net/netfilter/ipvs/ip_vs.ko\nkernel/net/netfilter/ipvs/ip_vs_rr.ko\nkernel/net/netfilter/nf_tables.ko\n"),
			map[string]string{"kubeproxy.module.ip_vs": "builtin", "kubeproxy.module.ip_vs_rr": "builtin", "kubeproxy.module.nf_tables": "builtin", "kubeproxy.module.ip_vs_sh": "absent"}},
		{"ip_vs built in (only /proc/net/ip_vs shows it)", withModules(ipvs, []string{"ip_vs"}),
			map[string]string{"kubeproxy.module.ip_vs": "builtin", "kubeproxy.mode.missing_modules": "none"}},
		{"nf_conntrack built in (only its sysctls show it)", withModules(healthy(), []string{"nf_conntrack"}),
			map[string]string{"kubeproxy.module.nf_conntrack": "builtin", "kubeproxy.mode.missing_modules": "none"}},
		{"iptables without nf_conntrack", withoutSysctls(withModules(healthy(), []string{"nf_conntrack"}), "net.netfilter.nf_conntrack_count", "net.netfilter.nf_conntrack_max"),
			map[string]string{"kubeproxy.module.nf_conntrack": "absent", "kubeproxy.mode.missing_modules": "nf_conntrack"}},
		{"kube-proxy down, IPVS table left", down(ipvs), map[string]string{"kubeproxy.mode": "ipvs", "kubeproxy.mode.source": "ipvs"}},
		{"kube-proxy down, its nftables tables left",
			nftTables(withModules(noManifest(down(healthy())), nil, "nf_tables"), "table inet filter\ntable ip kube-proxy\ntable ip6 kube-proxy\n"),
			map[string]string{"kubeproxy.mode": "nftables", "kubeproxy.mode.source": "nft", "kubeproxy.mode.configured": "absent"}},
		// nft's netlink request autoloads nf_tables: with it absent nft must not run.
		{"nft is not run without nf_tables", nftTables(withModules(noManifest(down(healthy())), []string{"nf_tables"}), "table ip kube-proxy\n"),
			map[string]string{"kubeproxy.mode": "absent", "kubeproxy.mode.source": "none"}},
		{"nft without root", nftTables(withModules(noManifest(down(healthy())), nil, "nf_tables"), "Error: Could not process rule: Operation not permitted\n"),
			map[string]string{"kubeproxy.mode": "unknown", "kubeproxy.mode.source": "none"}},
		{"kube-proxy down, manifest says nftables", nodesim.WithNFTablesOldKernel(healthy()), map[string]string{
			"kubeproxy.mode": "nftables", "kubeproxy.mode.source": "manifest", "kubeproxy.mode.configured": "nftables",
			"kubeproxy.module.nf_tables": "loaded", "kubeproxy.mode.missing_modules": "none",
		}},
		{"kube-proxy down, mode in a config file", withFile(down(healthy()), nodesim.KubeProxyManifest, manifest("    - --config=/etc/kube-proxy/config.yaml\n")),
			map[string]string{"kubeproxy.mode.configured": "unknown", "kubeproxy.mode": "unknown", "kubeproxy.mode.source": "none"}},
		{"no kube-proxy at all", noManifest(down(healthy())), map[string]string{"kubeproxy.mode": "absent", "kubeproxy.mode.source": "none"}},
		{"cilium replaces kube-proxy", kpr, map[string]string{
			"kubeproxy.mode": "ebpf", "kubeproxy.mode.source": "cilium", "kubeproxy.mode.configured": "absent",
			"kubeproxy.cilium.agent": "socket", "kubeproxy.cilium.status": "Ok", "kubeproxy.cilium.kube_proxy_replacement": "True",
			"kubeproxy.cilium.health_port": "ok", "kubeproxy.calico.bpf_nat": "no", "cni.kube_proxy_replaced": "yes", "cni.bridge_nf_required": "no",
			"kubeproxy.bpftool.maps": "absent", "kubeproxy.bpftool.cilium_lb_maps": "absent", "kubeproxy.mode.missing_modules": "none",
		}},
		{"bpftool from the distribution lists Cilium's maps", nodesim.WithBPFTool(kpr), map[string]string{
			"kubeproxy.bpftool.maps": "8", "kubeproxy.bpftool.cilium_lb_maps": "5",
		}},
		// Before Cilium 1.14 the mode was Strict, Probe, Partial or Disabled.
		{"older cilium says Strict", agentSays(kpr, nodesim.HTTP{Code: 200, Body: nodesim.CiliumStatus("Strict")}),
			map[string]string{"kubeproxy.mode": "ebpf", "kubeproxy.cilium.kube_proxy_replacement": "Strict", "cni.kube_proxy_replaced": "yes"}},
		{"older cilium replacing only partly", agentSays(kpr, nodesim.HTTP{Code: 200, Body: nodesim.CiliumStatus("Partial")}),
			map[string]string{"kubeproxy.mode": "absent", "kubeproxy.cilium.kube_proxy_replacement": "Partial", "cni.kube_proxy_replaced": "no"}},
		{"cilium agent down, its socket left", nodesim.WithCiliumAgentDown(kpr), map[string]string{
			"kubeproxy.cilium.agent": "socket", "kubeproxy.cilium.status": "not-answering", "kubeproxy.cilium.kube_proxy_replacement": "unknown",
			"kubeproxy.cilium.health_port": "connect-failed", "kubeproxy.mode": "absent", "cni.kube_proxy_replaced": "unknown", "cni.bridge_nf_required": "yes",
		}},
		{"cilium agent failing", agentSays(kpr, nodesim.HTTP{Code: 500, Body: "{}\n"}),
			map[string]string{"kubeproxy.cilium.status": "error", "kubeproxy.cilium.kube_proxy_replacement": "unknown"}},
		{"cilium with kube-proxy", nodesim.WithCNI(healthy(), "cilium", false), map[string]string{
			"kubeproxy.mode": "iptables", "kubeproxy.cilium.status": "Ok", "kubeproxy.cilium.kube_proxy_replacement": "False",
			"cni.kube_proxy_replaced": "no", "cni.bridge_nf_required": "yes",
		}},
		{"calico eBPF dataplane", nodesim.WithCalicoEBPF(healthy()), map[string]string{
			"kubeproxy.mode": "ebpf", "kubeproxy.mode.source": "calico", "kubeproxy.mode.configured": "absent", "kubeproxy.calico.bpf_nat": "yes",
			"kubeproxy.cilium.agent": "absent", "cni.kube_proxy_replaced": "yes", "cni.bridge_nf_required": "no",
		}},
		// Calico pins programs and maps in iptables mode too (XDP for
		// untracked deny rules): only its NAT maps tell the BPF dataplane.
		// The map name here stands for any of those.
		{"calico iptables mode with a pinned map", withFile(nodesim.WithCNI(healthy(), "calico", false), "sys/fs/bpf/tc/globals/cali_v4_ip_sets", ""),
			map[string]string{"kubeproxy.mode": "iptables", "kubeproxy.calico.bpf_nat": "no", "cni.kube_proxy_replaced": "no"}},
		{"bpftool without root", withCommand(nodesim.WithBPFTool(kpr), nodesim.Command{Name: "bpftool", Args: "map list", RC: 255,
			Out: "Error: can't get next map: Operation not permitted\n"}),
			map[string]string{"kubeproxy.bpftool.maps": "denied", "kubeproxy.bpftool.cilium_lb_maps": "denied"}},
		{"kube-proxy reports a mode this audit does not know", withHTTP(healthy(), "10249/proxyMode", nodesim.HTTP{Code: 200, Body: "userspace"}),
			map[string]string{"kubeproxy.mode": "unknown", "kubeproxy.mode.source": "proxyMode"}},
		{"no /proxyMode (404)", withHTTP(healthy(), "10249/proxyMode", nodesim.HTTP{Code: 404, Body: "404 page not found\n"}),
			map[string]string{"kubeproxy.mode": "iptables", "kubeproxy.mode.source": "manifest"}},
		{"nftables answered by kube-proxy", withModules(withHTTP(healthy(), "10249/proxyMode", nodesim.HTTP{Code: 200, Body: "nftables"}), nil, "nf_tables"),
			map[string]string{"kubeproxy.mode": "nftables", "kubeproxy.mode.source": "proxyMode", "kubeproxy.mode.missing_modules": "none"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantFacts(t, runProbe(t, "kubeproxy_mode", c.state).Facts, c.want)
		})
	}
}

// healthyKubeProxyFacts is what a healthy simulated agent reports to the
// checks of this area: the facts of this area's probes in the clean-3
// fixture (the real bundle's, see TestFactsFixtures).
func healthyKubeProxyFacts(t *testing.T) map[string]string {
	t.Helper()
	s := healthy()
	// Other areas' facts these checks read, as their probes report them on
	// the same node.
	facts := map[string]string{"rke2.version": s.RKE2Version, "rke2.service": "rke2-agent", "os.kernel": s.Kernel}
	node := fixtureReport(t, "clean-3").Nodes[1]
	if node.Roles[0] != "worker" {
		t.Fatalf("clean-3's second node is %v, not an agent", node.Roles)
	}
	all, err := probe.BuiltinProbes()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range all {
		if p.ID != "kubeproxy" && p.ID != "kubeproxy_mode" {
			continue
		}
		for _, f := range p.Facts {
			if v, ok := node.Facts[f]; ok {
				facts[f] = v
			}
		}
	}
	return facts
}

func TestKubeProxyChecks(t *testing.T) {
	byID := builtinChecksByID(t)
	base := healthyKubeProxyFacts(t)
	cases := []struct {
		check   string
		planted map[string]string
		globals map[string]string
		want    result.Outcome // outcome on the planted node
	}{
		{"kubeproxy.mode-mixed", map[string]string{"kubeproxy.mode": "ipvs"}, nil, result.OutcomeFail},
		{"kubeproxy.mode-mixed", map[string]string{"kubeproxy.mode": "ebpf"}, nil, result.OutcomeFail},
		// A node without kube-proxy is not compared; one whose mode was
		// looked for and not told could not be judged, never agrees.
		{"kubeproxy.mode-mixed", map[string]string{"kubeproxy.mode": "absent"}, nil, result.OutcomePass},
		{"kubeproxy.mode-mixed", map[string]string{"kubeproxy.mode": "unknown"}, nil, result.OutcomeUnjudged},
		{"kubeproxy.ipvs-deprecated", map[string]string{"kubeproxy.mode": "unknown", "rke2.version": "v1.35.0+rke2r1"}, nil, result.OutcomeUnjudged},
		{"kubeproxy.ipvs-deprecated", map[string]string{"kubeproxy.mode": "unknown", "rke2.version": "v1.34.3+rke2r1"}, nil, result.OutcomePass},
		{"kubeproxy.ipvs-deprecated-by-target", map[string]string{"kubeproxy.mode": "unknown"}, map[string]string{"target.version": "v1.35.1+rke2r1"}, result.OutcomeUnjudged},
		{"kubeproxy.nftables-old-kernel", map[string]string{"kubeproxy.mode": "unknown", "os.kernel": "5.10.0-33-amd64"}, nil, result.OutcomeUnjudged},
		{"kubeproxy.nftables-old-kernel", map[string]string{"kubeproxy.mode": "unknown", "os.kernel": "6.1.0-28-amd64"}, nil, result.OutcomePass},
		// Metrics that should be there and were not read (a 403 in front
		// of 10249) are could-not-judge; metrics kube-proxy does not
		// export are absent and skip.
		{"kubeproxy.sync-stale", map[string]string{"kubeproxy.metrics.sync_age_seconds": "unknown", "kubeproxy.metrics.status": "http-403"}, nil, result.OutcomeUnjudged},
		{"kubeproxy.sync-loop-hung", map[string]string{"kubeproxy.metrics.queue_lag_seconds": "unknown", "kubeproxy.metrics.status": "http-403"}, nil, result.OutcomeUnjudged},
		{"kubeproxy.restore-failures", map[string]string{"kubeproxy.metrics.restore_failures": "unknown", "kubeproxy.metrics.status": "http-403"}, nil, result.OutcomeUnjudged},
		{"kubeproxy.restore-failures", map[string]string{"kubeproxy.metrics.restore_failures": "absent"}, nil, result.OutcomeSkip},
		{"kubeproxy.sync-slow", map[string]string{"kubeproxy.metrics.sync_p99_seconds": "unknown", "kubeproxy.metrics.status": "connect-failed"}, nil, result.OutcomeUnjudged},
		{"kubeproxy.sync-mean-slow", map[string]string{"kubeproxy.metrics.sync_mean_seconds": "unknown", "kubeproxy.metrics.status": "http-500"}, nil, result.OutcomeUnjudged},
		{"kubeproxy.netprog-slow", map[string]string{"kubeproxy.metrics.netprog_p99_seconds": "unknown", "kubeproxy.metrics.status": "no-client"}, nil, result.OutcomeUnjudged},
		{"kubeproxy.rules-below-peers", map[string]string{"kubeproxy.metrics.iptables_rules_nat": "unknown", "kubeproxy.metrics.status": "http-403"}, nil, result.OutcomeUnjudged},
		// No HTTP client on the node: nothing asked, so not "down".
		{"kubeproxy.down", map[string]string{"kubeproxy.healthz.code": "no-client"}, nil, result.OutcomeUnjudged},
		{"kubeproxy.missing-on-node", map[string]string{"kubeproxy.healthz.code": "no-client", "kubeproxy.mode.configured": "absent",
			"cni.kube_proxy_replaced": "no"}, map[string]string{"cluster.kubeproxy.pods": "3"}, result.OutcomeUnjudged},
		{"kubeproxy.stale-iptables-chains", map[string]string{"cni.kube_proxy_replaced": "yes", "kubeproxy.healthz.code": "no-client", "iptables.kube_proxy_chains": "14"}, nil, result.OutcomeUnjudged},
		{"kubeproxy.stale-nftables-table", map[string]string{"cni.kube_proxy_replaced": "yes", "kubeproxy.healthz.code": "no-client", "nft.kube_proxy_table": "yes"}, nil, result.OutcomeUnjudged},
		// The agent's socket is there and no curl could ask it.
		{"kubeproxy.cilium-agent-down", map[string]string{"kubeproxy.mode.configured": "absent", "kubeproxy.cilium.agent": "socket",
			"kubeproxy.cilium.status": "unknown", "kubeproxy.cilium.health_port": "unknown"}, nil, result.OutcomeUnjudged},
		{"kubeproxy.healthz-failing", map[string]string{"kubeproxy.health": "unknown", "kubeproxy.healthz.code": "no-client"}, nil, result.OutcomeUnjudged},
		{"kubeproxy.mode-modules-missing", map[string]string{"kubeproxy.mode": "ipvs", "kubeproxy.mode.missing_modules": "ip_vs,ip_vs_rr"}, nil, result.OutcomeFail},
		{"kubeproxy.mode-modules-missing", map[string]string{"kubeproxy.mode.missing_modules": "nf_conntrack"}, nil, result.OutcomeFail},
		{"kubeproxy.ipvs-deprecated", map[string]string{"kubeproxy.mode": "ipvs", "rke2.version": "v1.35.0+rke2r1"}, nil, result.OutcomeFail},
		{"kubeproxy.ipvs-deprecated", map[string]string{"kubeproxy.mode": "ipvs", "rke2.version": "v1.34.3+rke2r1"}, nil, result.OutcomePass},
		{"kubeproxy.ipvs-deprecated", map[string]string{"kubeproxy.mode": "iptables", "rke2.version": "v1.35.0+rke2r1"}, nil, result.OutcomePass},
		{"kubeproxy.ipvs-deprecated-by-target", map[string]string{"kubeproxy.mode": "ipvs"}, map[string]string{"target.version": "v1.35.1+rke2r1"}, result.OutcomeFail},
		{"kubeproxy.ipvs-deprecated-by-target", map[string]string{"kubeproxy.mode": "ipvs"}, map[string]string{"target.version": "v1.34.2+rke2r1"}, result.OutcomePass},
		{"kubeproxy.ipvs-deprecated-by-target", map[string]string{"kubeproxy.mode": "ipvs"}, nil, result.OutcomeSkip},
		// Already past 1.35: kubeproxy.ipvs-deprecated says so, not this one.
		{"kubeproxy.ipvs-deprecated-by-target", map[string]string{"kubeproxy.mode": "ipvs", "rke2.version": "v1.35.0+rke2r1"}, map[string]string{"target.version": "v1.36.0+rke2r1"}, result.OutcomePass},
		{"kubeproxy.nftables-old-kernel", map[string]string{"kubeproxy.mode": "nftables", "os.kernel": "5.10.0-33-amd64"}, nil, result.OutcomeFail},
		{"kubeproxy.nftables-old-kernel", map[string]string{"kubeproxy.mode": "nftables", "os.kernel": "5.13.0-52-generic"}, nil, result.OutcomePass},
		{"kubeproxy.nftables-old-kernel", map[string]string{"kubeproxy.mode": "iptables", "os.kernel": "4.19.0-27-amd64"}, nil, result.OutcomePass},
		{"kubeproxy.healthz-stale", map[string]string{"kubeproxy.healthz.stale_seconds": "4000.0"}, nil, result.OutcomeFail},
		{"kubeproxy.healthz-stale", map[string]string{"kubeproxy.healthz.stale_seconds": "1129.1"}, nil, result.OutcomePass},
		{"kubeproxy.healthz-stale", map[string]string{"kubeproxy.healthz.stale_seconds": "never"}, nil, result.OutcomeSkip},
		{"kubeproxy.sync-stale", map[string]string{"kubeproxy.metrics.sync_age_seconds": "3901"}, nil, result.OutcomeFail},
		{"kubeproxy.sync-stale", map[string]string{"kubeproxy.metrics.sync_age_seconds": "absent"}, nil, result.OutcomeSkip},
		{"kubeproxy.sync-loop-hung", map[string]string{"kubeproxy.metrics.queue_lag_seconds": "897"}, nil, result.OutcomeFail},
		{"kubeproxy.sync-loop-hung", map[string]string{"kubeproxy.metrics.queue_lag_seconds": "60"}, nil, result.OutcomePass},
		{"kubeproxy.restore-failures", map[string]string{"kubeproxy.metrics.restore_failures": "3"}, nil, result.OutcomeFail},
		{"kubeproxy.sync-slow", map[string]string{"kubeproxy.metrics.sync_p99_seconds": "7.782"}, nil, result.OutcomeFail},
		{"kubeproxy.sync-slow", map[string]string{"kubeproxy.metrics.sync_p99_seconds": "none"}, nil, result.OutcomeSkip},
		{"kubeproxy.sync-mean-slow", map[string]string{"kubeproxy.metrics.sync_mean_seconds": "1.5"}, nil, result.OutcomeFail},
		{"kubeproxy.netprog-slow", map[string]string{"kubeproxy.metrics.netprog_p99_seconds": "44.980"}, nil, result.OutcomeFail},
		{"kubeproxy.rules-below-peers", map[string]string{"kubeproxy.metrics.iptables_rules_nat": "20"}, nil, result.OutcomeFail},
		{"kubeproxy.rules-below-peers", map[string]string{"kubeproxy.metrics.iptables_rules_nat": "100"}, nil, result.OutcomePass},
		{"kubeproxy.ipvs-services-below-peers", map[string]string{"kubeproxy.mode": "ipvs", "kubeproxy.ipvs.virtual_services": "1"}, nil, result.OutcomeFail},
		{"kubeproxy.down", map[string]string{"kubeproxy.healthz.code": "connect-failed"}, nil, result.OutcomeFail},
		// RKE2 wrote no kube-proxy manifest (disable-kube-proxy): nothing on
		// 10256 is expected, whatever serves Services.
		{"kubeproxy.down", map[string]string{"kubeproxy.healthz.code": "connect-failed", "kubeproxy.mode": "ebpf", "kubeproxy.mode.configured": "absent"}, nil, result.OutcomePass},
		{"kubeproxy.down", map[string]string{"kubeproxy.healthz.code": "connect-failed", "kubeproxy.mode": "absent", "kubeproxy.mode.configured": "absent"}, nil, result.OutcomePass},
		// Root could not read the manifest: neither there nor gone.
		{"kubeproxy.down", map[string]string{"kubeproxy.healthz.code": "connect-failed", "kubeproxy.mode.configured": "unreadable"}, nil, result.OutcomeUnjudged},
		// The manifest is there, the mode in a config file: kube-proxy is meant to run.
		{"kubeproxy.down", map[string]string{"kubeproxy.healthz.code": "connect-failed", "kubeproxy.mode.configured": "unknown"}, nil, result.OutcomeFail},
		// No manifest while the cluster runs kube-proxy elsewhere.
		{"kubeproxy.missing-on-node", map[string]string{"kubeproxy.healthz.code": "connect-failed", "kubeproxy.mode.configured": "absent",
			"cni.kube_proxy_replaced": "no"}, map[string]string{"cluster.kubeproxy.pods": "3"}, result.OutcomeFail},
		{"kubeproxy.missing-on-node", map[string]string{"kubeproxy.healthz.code": "connect-failed", "kubeproxy.mode.configured": "absent",
			"cni.kube_proxy_replaced": "no"}, map[string]string{"cluster.kubeproxy.pods": "0"}, result.OutcomePass},
		{"kubeproxy.missing-on-node", map[string]string{"kubeproxy.healthz.code": "connect-failed", "kubeproxy.mode.configured": "absent",
			"cni.kube_proxy_replaced": "no"}, nil, result.OutcomeSkip},
		{"kubeproxy.missing-on-node", map[string]string{"kubeproxy.healthz.code": "connect-failed", "kubeproxy.mode.configured": "absent",
			"cni.kube_proxy_replaced": "yes"}, map[string]string{"cluster.kubeproxy.pods": "3"}, result.OutcomePass},
		{"kubeproxy.cilium-agent-down", map[string]string{"kubeproxy.mode.configured": "absent", "kubeproxy.cilium.agent": "socket",
			"kubeproxy.cilium.status": "not-answering", "kubeproxy.cilium.health_port": "connect-failed"}, nil, result.OutcomeFail},
		// Without root the socket is unreadable: not judged.
		{"kubeproxy.cilium-agent-down", map[string]string{"kubeproxy.mode.configured": "absent", "kubeproxy.cilium.agent": "socket",
			"kubeproxy.cilium.status": "unreadable", "kubeproxy.cilium.health_port": "connect-failed"}, nil, result.OutcomeUnjudged},
		// With kube-proxy beside it the agent is the CNI's concern, not the Service dataplane's.
		{"kubeproxy.cilium-agent-down", map[string]string{"kubeproxy.mode.configured": "iptables", "kubeproxy.cilium.agent": "socket",
			"kubeproxy.cilium.status": "not-answering", "kubeproxy.cilium.health_port": "connect-failed"}, nil, result.OutcomePass},
		{"kubeproxy.cilium-agent-down", map[string]string{"kubeproxy.mode.configured": "absent", "kubeproxy.cilium.agent": "socket",
			"kubeproxy.cilium.status": "Failure", "kubeproxy.cilium.health_port": "http-503"}, nil, result.OutcomePass},
		{"kubeproxy.stale-iptables-chains", map[string]string{"cni.kube_proxy_replaced": "yes", "kubeproxy.healthz.code": "connect-failed", "iptables.kube_proxy_chains": "14"}, nil, result.OutcomeFail},
		// kube-proxy runs here: its chains are live, not stale.
		{"kubeproxy.stale-iptables-chains", map[string]string{"cni.kube_proxy_replaced": "no", "iptables.kube_proxy_chains": "14"}, nil, result.OutcomePass},
		{"kubeproxy.stale-iptables-chains", map[string]string{"cni.kube_proxy_replaced": "yes", "kubeproxy.healthz.code": "connect-failed", "iptables.kube_proxy_chains": "0"}, nil, result.OutcomePass},
		{"kubeproxy.stale-iptables-chains", map[string]string{"cni.kube_proxy_replaced": "yes", "kubeproxy.healthz.code": "connect-failed", "iptables.kube_proxy_chains": "not-root"}, nil, result.OutcomeUnjudged},
		{"kubeproxy.stale-nftables-table", map[string]string{"cni.kube_proxy_replaced": "yes", "kubeproxy.healthz.code": "connect-failed", "nft.kube_proxy_table": "yes"}, nil, result.OutcomeFail},
		{"kubeproxy.stale-nftables-table", map[string]string{"cni.kube_proxy_replaced": "unknown", "kubeproxy.healthz.code": "connect-failed", "nft.kube_proxy_table": "yes"}, nil, result.OutcomePass},
		{"kubeproxy.stale-nftables-table", map[string]string{"cni.kube_proxy_replaced": "no", "nft.kube_proxy_table": "yes"}, nil, result.OutcomePass},
		{"kubeproxy.healthz-failing", map[string]string{"kubeproxy.health": "unhealthy"}, nil, result.OutcomeFail},
		// A /healthz 503 of a node being deleted is not a kube-proxy fault.
		{"kubeproxy.healthz-failing", map[string]string{"kubeproxy.health": "ineligible", "kubeproxy.healthz.code": "503", "kubeproxy.healthz.node_eligible": "false"}, nil, result.OutcomePass},
		{"kubeproxy.node-not-eligible", map[string]string{"kubeproxy.health": "ineligible", "kubeproxy.healthz.code": "503", "kubeproxy.healthz.node_eligible": "false"}, nil, result.OutcomeFail},
	}
	for _, c := range cases {
		name := c.check
		for _, k := range slices.Sorted(maps.Keys(c.planted)) {
			name += " " + k + "=" + c.planted[k]
		}
		t.Run(name, func(t *testing.T) {
			ck, ok := byID[c.check]
			if !ok {
				t.Fatalf("no check %s", c.check)
			}
			var nodes []result.Node
			for i := 1; i <= 4; i++ {
				f := map[string]string{}
				for k, v := range base {
					f[k] = v
				}
				// The IPVS median check compares IPVS nodes: the peers are
				// IPVS nodes too in that case.
				if c.check == "kubeproxy.ipvs-services-below-peers" {
					f["kubeproxy.mode"], f["kubeproxy.ipvs.virtual_services"] = "ipvs", "6"
				}
				if i == 4 {
					for k, v := range c.planted {
						f[k] = v
					}
				}
				nodes = append(nodes, result.Node{Name: "node-" + strconv.Itoa(i), Status: result.StatusOK, Facts: f})
			}
			for _, r := range check.Judge(nodes, nil, []check.Check{ck}, c.globals) {
				want := result.OutcomePass
				if r.Node == "node-4" {
					want = c.want
				}
				if r.Outcome != want {
					t.Errorf("%s on %s: %s (%s), want %s", c.check, r.Node, r.Outcome, r.Detail, want)
				}
			}
		})
	}
}

func kubeProxyFindings(r *result.Report) map[string][]string {
	out := map[string][]string{}
	for _, f := range r.Findings {
		if strings.Contains(f.Check, "kubeproxy.") {
			out[f.Check] = f.Nodes
		}
	}
	return out
}

func TestKubeProxyCleanFleet(t *testing.T) {
	r := judgeFixture(t, "clean-3", nil)
	if got := kubeProxyFindings(r); len(got) != 0 {
		t.Errorf("clean fleet has kube-proxy findings: %v", got)
	}
	for _, d := range r.Drift {
		if strings.HasPrefix(d.Fact, "kubeproxy.") {
			t.Errorf("clean fleet drifts on %s: %+v", d.Fact, d.Groups)
		}
	}
	for _, n := range r.Nodes {
		if n.Facts["kubeproxy.mode"] != "iptables" || n.Facts["kubeproxy.metrics.status"] != "ok" {
			t.Errorf("%s: mode %q, metrics %q", n.Name, n.Facts["kubeproxy.mode"], n.Facts["kubeproxy.metrics.status"])
		}
	}
}

// kubeProxyModesFleet is a clean fleet with kube-proxy in IPVS mode on
// node-4, its sync loop hung on node-5 and nftables mode on too old a
// kernel on node-6.
func kubeProxyModesFleet() []nodesim.Member {
	fleet := nodesim.Clean(6)
	fleet[3].State = nodesim.WithIPVS(fleet[3].State)              // node-4
	fleet[4].State = nodesim.WithHungSync(fleet[4].State)          // node-5
	fleet[5].State = nodesim.WithNFTablesOldKernel(fleet[5].State) // node-6
	return fleet
}

func TestKubeProxyScenarioFleet(t *testing.T) {
	r := judgeFixture(t, "kubeproxy-modes", nil)
	got := kubeProxyFindings(r)
	want := map[string]string{
		"kubeproxy.mode-mixed":                 "node-4,node-6",
		"kubeproxy.sync-loop-hung":             "node-5",
		"kubeproxy.healthz-failing":            "node-5",
		"kubeproxy.down":                       "node-6",
		"kubeproxy.nftables-old-kernel":        "node-6",
		"correlation.kubeproxy.sync-loop-hung": "node-5",
	}
	for id, nodes := range want {
		if g := strings.Join(got[id], ","); g != nodes {
			t.Errorf("%s on %q, want %q", id, g, nodes)
		}
	}
	for _, id := range []string{"kubeproxy.ipvs-deprecated", "kubeproxy.ipvs-deprecated-by-target", "kubeproxy.mode-modules-missing", "kubeproxy.sync-stale"} {
		if _, ok := got[id]; ok {
			t.Errorf("unexpected %s on %v", id, got[id])
		}
	}
	// Re-judged with --target-version past 1.35, the IPVS node is warned.
	r.TargetVersion = "v1.35.1+rke2r1"
	probes, _ := probe.BuiltinProbes()
	checks, _ := check.BuiltinChecks()
	Analyze(r, Rules{Probes: probes, Checks: checks, Gate: GatePolicy{FailOn: result.SeverityCritical}})
	if g := strings.Join(kubeProxyFindings(r)["kubeproxy.ipvs-deprecated-by-target"], ","); g != "node-4" {
		t.Errorf("kubeproxy.ipvs-deprecated-by-target on %q, want node-4", g)
	}
}

// kubeProxyEBPFFleet is a clean fleet where Cilium replaces kube-proxy.
func kubeProxyEBPFFleet() []nodesim.Member {
	fleet := nodesim.Clean(3)
	for i := range fleet {
		fleet[i].State = nodesim.WithCiliumKPR(fleet[i].State)
	}
	return nodesim.WithCluster(fleet)
}

func TestKubeProxyEBPFFleet(t *testing.T) {
	r := judgeFixture(t, "kubeproxy-ebpf", nil)
	if got := kubeProxyFindings(r); len(got) != 0 {
		t.Errorf("a fleet where Cilium replaces kube-proxy has kube-proxy findings: %v", got)
	}
	for _, n := range r.Nodes {
		if n.Facts["kubeproxy.mode"] != "ebpf" {
			t.Errorf("%s: mode %q, want ebpf", n.Name, n.Facts["kubeproxy.mode"])
		}
	}
}

// newerMawkEnv names the wrapper .ci/newer-mawk.sh writes: Debian 13's mawk
// 1.3.4 20250131, run on this machine with its own C library.
const newerMawkEnv = "FLEET_AUDIT_NEWER_MAWK"

// The sync age is read under every awk a node may have, the real ones:
// this machine's, busybox's, and Debian 13's mawk, whose srand() returns
// nanoseconds since the epoch (mawk bi_funct.c initial_seed), which made
// every healthy kube-proxy's last sync look decades old. Both ways of
// getting the time are held: kube-proxy's own currentTime, and the node's
// date(1) where no health body carries one.
func TestKubeProxySyncAgeUnderEachAwk(t *testing.T) {
	testtools.SkipShort(t, "runs the kube-proxy probe under each awk")
	awks := map[string]string{"this machine's awk": ""}
	if p := os.Getenv(newerMawkEnv); p != "" {
		out, err := exec.Command(p, "BEGIN { srand(); print srand() }").Output()
		if err != nil {
			t.Fatalf("%s=%s: %v", newerMawkEnv, p, err)
		}
		if n, _ := strconv.ParseFloat(strings.TrimSpace(string(out)), 64); n < 1e15 {
			t.Fatalf("%s=%s says srand() is %s: not the nanosecond mawk (.ci/newer-mawk.sh DIR writes DIR/bin/awk)", newerMawkEnv, p, out)
		}
		awks["Debian 13 mawk"] = p
	}
	if p, err := exec.LookPath("busybox"); err == nil {
		awks["busybox awk"] = p
	} else if err := testtools.Absent("busybox"); err != nil {
		t.Error(err)
	}
	noHealth := healthy()
	noHealth.HealthHTTP = nil
	for name, awk := range awks {
		for _, c := range []struct {
			name  string
			state nodesim.State
			want  string
		}{
			{"kube-proxy's clock", healthy(), "4"},
			{"the node's clock (no health answer)", noHealth, "~3..15"},
		} {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				s := c.state
				s.Awk = awk
				wantFacts(t, runProbe(t, "kubeproxy", s).Facts, map[string]string{"kubeproxy.metrics.sync_age_seconds": c.want})
			})
		}
	}
	if _, ok := awks["Debian 13 mawk"]; !ok {
		// What the other awks showed stands; the tier is named as skipped.
		testtools.Require(t, "newer-mawk")
	}
}

// kube-proxy is asked where it listens, in every address family RKE2
// runs and with or without a proxy in the login environment: RKE2 binds
// its health server to ::1 on a node whose first node-ip is IPv6 (k3s
// kubeProxyArgs), and a login's http_proxy (/etc/environment) would send
// a plain curl for 127.0.0.1 to the proxy. Where the manifest cannot be
// read, both loopbacks are asked.
func TestKubeProxyProbeAddressFamiliesAndProxy(t *testing.T) {
	hideManifest := func(root string) {
		p := filepath.Join(root, filepath.FromSlash(nodesim.KubeProxyManifest))
		if err := os.Rename(p, p+".unreadable"); err != nil {
			t.Fatal(err)
		}
	}
	shapes := []struct {
		name  string
		shape func(nodesim.State) nodesim.State
		addr  string
	}{
		{"IPv4", func(s nodesim.State) nodesim.State { return s }, "127.0.0.1:10256"},
		{"dual-stack", nodesim.WithDualStack, "127.0.0.1:10256"},
		{"IPv6-primary", nodesim.WithIPv6Primary, "[::1]:10256"},
		{"dual-stack, IPv6 first", func(s nodesim.State) nodesim.State { return nodesim.WithIPv6Primary(nodesim.WithDualStack(s)) }, "[::1]:10256"},
	}
	for _, sh := range shapes {
		for _, proxied := range []bool{false, true} {
			for _, readable := range []bool{true, false} {
				name := fmt.Sprintf("%s/proxy=%v/manifest readable=%v", sh.name, proxied, readable)
				t.Run(name, func(t *testing.T) {
					s := sh.shape(healthy())
					if proxied {
						s = nodesim.WithHTTPProxyEnv(s)
					}
					var tweak func(string)
					if !readable {
						tweak = hideManifest
					}
					wantFacts(t, runProbeTweaked(t, "kubeproxy", s, tweak).Facts, map[string]string{
						"kubeproxy.health": "healthy", "kubeproxy.healthz.code": "200", "kubeproxy.livez.code": "200",
						"kubeproxy.healthz.address": sh.addr, "kubeproxy.port10256.listening": "yes",
						"kubeproxy.metrics.status": "ok", "kubeproxy.metrics.sync_age_seconds": "4",
					})
				})
			}
		}
	}
}

// TestKubeProxyProbeKilledMidRequestSaysNothing: when the watchdog kills
// the probe while curl waits on an answer, the awk after it reads a cut-off
// input and used to print what it made of it: /livez and /metrics
// "connect-failed", kube-proxy "unhealthy" or "not-answering", enough for
// a critical kubeproxy.down on a node whose kube-proxy was merely slow (a
// flaky CI run showed it). Without the metrics answer's marker, the last
// curl writes, the probe prints no fact. Here curl answers /healthz and is
// then killed, as the watchdog's SIGKILL leaves it.
func TestKubeProxyProbeKilledMidRequestSaysNothing(t *testing.T) {
	testtools.SkipShort(t, "kills the kube-proxy probe mid-request")
	killed := func(root string) {
		stub := "#!/bin/sh\nprintf '{\"lastUpdated\": \"2026-12-02 09:58:01.2 +0000 UTC\",\"currentTime\": \"2026-12-02 10:00:01.2 +0000 UTC\"}\\n@@FA_HTTP 200 http://127.0.0.1:10256/healthz\\n'\nkill -9 $$\n"
		p := filepath.Join(root, "bin", "curl")
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(stub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	facts := runProbeTweaked(t, "kubeproxy", healthy(), killed).Facts
	for k, v := range facts {
		if strings.HasPrefix(k, "kubeproxy.") {
			t.Errorf("%s=%s printed from a cut-off answer", k, v)
		}
	}
}
