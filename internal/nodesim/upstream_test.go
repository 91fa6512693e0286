package nodesim

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/internal/testtools"
)

// runStub runs a command of a built node as a probe does: the node's bin/
// first on PATH, FLEET_AUDIT_ROOT set. uid, when set, is what `id -u`
// answers (ufw refuses non-root callers).
func runStub(t *testing.T, root, uid string, name string, args ...string) (stdout, stderr string, rc int) {
	t.Helper()
	path := filepath.Join(root, "bin") + ":/usr/bin:/bin"
	if uid != "" {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "id"), []byte("#!/bin/sh\necho "+uid+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		path = dir + ":" + path
	}
	cmd := exec.Command(filepath.Join(root, "bin", name), args...)
	cmd.Env = []string{"PATH=" + path, "FLEET_AUDIT_ROOT=" + root}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		rc = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), rc
}

func buildNode(t *testing.T, s State) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "node")
	if err := Build(root, s); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestStubsAnswerAsUpstream pins what each stub command prints and how it
// exits to the tool it stands in for: curl(1) (docs/cmdline-opts
// _EXITCODES.md, write-out.md, max-time.md), systemctl(1) as systemd v252
// implements it (src/systemctl/systemctl-is-active.c,
// systemctl-is-enabled.c, systemctl-show.c), iptables -V (program name, "v", version and the
// variant in parentheses), ufw's src/backend_iptables.py get_status and
// rke2's pkg/cli/cmds/root.go version printer.
func TestStubsAnswerAsUpstream(t *testing.T) {
	base := Healthy("node-1", false)
	base.Units = map[string]Unit{
		"active": {Active: "active", Enabled: "enabled"}, "inactive": {Active: "inactive", Enabled: "disabled"},
		"failed": {Active: "failed", Enabled: "enabled"}, "reloading": {Active: "reloading", Enabled: "static"},
		"masked": {Active: "inactive", Enabled: "masked"}, "indirect": {Active: "inactive", Enabled: "indirect"},
	}
	base.HTTP = map[string]HTTP{"10249/metrics": {Code: 503, Body: "sync failed\n"}, "10249/slow": {Hang: true}, "10256/healthz": {Code: 200, Body: "ok"}}
	legacy := WithIPTablesLegacy(base)
	ufwOn := WithUFWActive(base)
	const fmtCode = "\n%{http_code}"
	cases := []struct {
		name       string
		state      State
		uid        string
		cmd        []string
		out, err   string
		rc         int
		errIsRegex bool
	}{
		// curl: without -f an HTTP error is a transfer like any other.
		{"curl 503 prints the body, exit 0", base, "", []string{"curl", "-s", "-m", "3", "-w", fmtCode, "http://127.0.0.1:10249/metrics"}, "sync failed\n\n503", "", 0, false},
		{"curl prints a body byte for byte, no newline added", base, "", []string{"curl", "-s", "-m", "3", "-w", fmtCode, "http://127.0.0.1:10256/healthz"}, "ok\n200", "", 0, false},
		// curl: several URLs are done in turn, -w after each, and the
		// last one's result is the exit code.
		{"curl with two URLs: the last one failed, exit 7", base, "", []string{"curl", "-s", "-m", "3", "-w", fmtCode, "http://127.0.0.1:10249/metrics", "http://127.0.0.1:10250/healthz"}, "sync failed\n\n503\n000", "", 7, false},
		{"curl with two URLs: the last one answered, exit 0", base, "", []string{"curl", "-s", "-m", "3", "-w", fmtCode, "http://127.0.0.1:10250/healthz", "http://127.0.0.1:10249/metrics"}, "\n000sync failed\n\n503", "", 0, false},
		{"curl with nothing listening: 000, exit 7", base, "", []string{"curl", "-s", "-m", "3", "-w", fmtCode, "http://127.0.0.1:10250/healthz"}, "\n000", "", 7, false},
		{"curl runs into --max-time: 000, exit 28", base, "", []string{"curl", "-s", "-m", "0.2", "-w", fmtCode, "http://127.0.0.1:10249/slow"}, "\n000", "", 28, false},
		// systemctl is-active: 0 for active/reloading, 3 otherwise.
		{"is-active active", base, "", []string{"systemctl", "is-active", "active"}, "active\n", "", 0, false},
		{"is-active reloading counts as active", base, "", []string{"systemctl", "is-active", "reloading.service"}, "reloading\n", "", 0, false},
		{"is-active inactive exits 3", base, "", []string{"systemctl", "is-active", "inactive"}, "inactive\n", "", 3, false},
		{"is-active failed exits 3", base, "", []string{"systemctl", "is-active", "failed"}, "failed\n", "", 3, false},
		{"is-active unknown unit: inactive, exit 3", base, "", []string{"systemctl", "is-active", "nosuch"}, "inactive\n", "", 3, false},
		// check_unit_generic: a line per unit, in order; 0 when any is active.
		{"is-active of two units, one active: exit 0", base, "", []string{"systemctl", "is-active", "inactive", "active.service"}, "inactive\nactive\n", "", 0, false},
		{"is-active of two units, none active: exit 3", base, "", []string{"systemctl", "is-active", "nosuch", "failed"}, "inactive\nfailed\n", "", 3, false},
		// systemctl is-enabled: 0 for the states that count as enabled.
		{"is-enabled enabled", base, "", []string{"systemctl", "is-enabled", "active"}, "enabled\n", "", 0, false},
		{"is-enabled disabled exits 1", base, "", []string{"systemctl", "is-enabled", "inactive"}, "disabled\n", "", 1, false},
		{"is-enabled static exits 0", base, "", []string{"systemctl", "is-enabled", "reloading"}, "static\n", "", 0, false},
		{"is-enabled indirect exits 0", base, "", []string{"systemctl", "is-enabled", "indirect"}, "indirect\n", "", 0, false},
		{"is-enabled masked exits 1", base, "", []string{"systemctl", "is-enabled", "masked"}, "masked\n", "", 1, false},
		{"is-enabled without unit file: stderr only, exit 1", base, "", []string{"systemctl", "is-enabled", "nosuch.service"}, "",
			"Failed to get unit file state for nosuch.service: No such file or directory\n", 1, false},
		// systemctl show -p: the asked properties of each unit in the
		// Unit interface's order, empty ones too, a block per unit in the
		// order asked with an empty line between, exit 0 even for a unit
		// systemd does not know.
		{"show three properties of three units", base, "", []string{"systemctl", "show", "-p", "UnitFileState", "-p", "LoadState", "-p", "ActiveState", "active", "masked.service", "nosuch"},
			"LoadState=loaded\nActiveState=active\nUnitFileState=enabled\n\n" +
				"LoadState=masked\nActiveState=inactive\nUnitFileState=masked\n\n" +
				"LoadState=not-found\nActiveState=inactive\nUnitFileState=\n", "", 0, false},
		// Without systemd running only is-enabled answers.
		{"show without systemd running", WithSystemdNotRunning(base), "", []string{"systemctl", "show", "-p", "ActiveState", "active"}, "",
			"System has not been booted with systemd as init system (PID 1). Can't operate.\nFailed to connect to bus: Host is down\n", 1, false},
		{"is-active without systemd running", WithSystemdNotRunning(base), "", []string{"systemctl", "is-active", "active"}, "",
			"System has not been booted with systemd as init system (PID 1). Can't operate.\nFailed to connect to bus: Host is down\n", 1, false},
		{"is-enabled without systemd running reads the unit file", WithSystemdNotRunning(base), "", []string{"systemctl", "is-enabled", "active"}, "enabled\n", "", 0, false},
		// A booted node whose manager does not answer: every verb fails.
		{"is-active with the manager down", WithSystemdManagerDown(base), "", []string{"systemctl", "is-active", "active"}, "", "Failed to connect to bus: Connection refused\n", 1, false},
		{"is-enabled with the manager down", WithSystemdManagerDown(base), "", []string{"systemctl", "is-enabled", "active"}, "", "Failed to connect to bus: Connection refused\n", 1, false},
		{"show with the manager down", WithSystemdManagerDown(base), "", []string{"systemctl", "show", "-p", "ActiveState", "active"}, "", "Failed to connect to bus: Connection refused\n", 1, false},
		{"show one property", base, "", []string{"systemctl", "show", "--property=ActiveState", "failed", "reloading"}, "ActiveState=failed\n\nActiveState=reloading\n", "", 0, false},
		// iptables -V names its backend.
		{"iptables --version on nf_tables", base, "", []string{"iptables", "--version"}, "iptables v1.8.10 (nf_tables)\n", "", 0, false},
		{"iptables --version on legacy", legacy, "", []string{"iptables", "-V"}, "iptables v1.8.9 (legacy)\n", "", 0, false},
		// ufw status: root only; the action column says IN only when verbose.
		{"ufw refuses non-root", ufwOn, "1000", []string{"ufw", "status"}, "", "ERROR: You need to be root to run this script\n", 1, false},
		{"ufw status inactive", base, "0", []string{"ufw", "status"}, "Status: inactive\n", "", 0, false},
		{"ufw status verbose inactive", base, "0", []string{"ufw", "status", "verbose"}, "Status: inactive\n", "", 0, false},
		{"ufw status active", ufwOn, "0", []string{"ufw", "status"}, "Status: active\n\n" +
			"To                         Action      From\n" +
			"--                         ------      ----\n" +
			"22/tcp                     ALLOW       Anywhere                  \n" +
			"22/tcp (v6)                ALLOW       Anywhere (v6)             \n", "", 0, false},
		{"ufw status verbose active", ufwOn, "0", []string{"ufw", "status", "verbose"}, "Status: active\n" +
			"Logging: on (low)\n" +
			"Default: deny (incoming), allow (outgoing), deny (routed)\n" +
			"New profiles: skip\n\n" +
			"To                         Action      From\n" +
			"--                         ------      ----\n" +
			"22/tcp                     ALLOW IN    Anywhere                  \n" +
			"22/tcp (v6)                ALLOW IN    Anywhere (v6)             \n", "", 0, false},
		// rke2 --version: version (commit), then the Go runtime.
		{"rke2 --version", base, "", []string{"rke2", "--version"},
			"rke2 version v1.31.4+rke2r1 (5142beec71f7a61804840df5b434c2fd7137ce82)\ngo version go1.22.9 X:boringcrypto\n", "", 0, false},
		{"rke2 --version of an older release", WithRKE2Version(base, "v1.30.8+rke2r1"), "", []string{"rke2", "--version"},
			"rke2 version v1.30.8+rke2r1 (3e6fb8634f164d623f53f7b61d07b27726565d4e)\ngo version go1.22.9 X:boringcrypto\n", "", 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := buildNode(t, c.state)
			out, errOut, rc := runStub(t, root, c.uid, c.cmd[0], c.cmd[1:]...)
			if out != c.out || errOut != c.err || rc != c.rc {
				t.Errorf("%v:\n stdout %q\n stderr %q\n exit %d\nwant\n stdout %q\n stderr %q\n exit %d", c.cmd, out, errOut, rc, c.out, c.err, c.rc)
			}
		})
	}
}

// TestCurlTimestampsAsPrometheusFormatsThem: a @NOW-age@ placeholder is
// served as the Prometheus text format writes a float (Go's
// strconv.FormatFloat(v, 'g', -1, 64): shortest form, no trailing zeros).
func TestCurlTimestampsAsPrometheusFormatsThem(t *testing.T) {
	for _, age := range []string{"900", "4.2", "86400"} {
		t.Run(age, func(t *testing.T) {
			s := Healthy("node-1", false)
			s.HTTP = map[string]HTTP{"10249/metrics": {Code: 200, Body: "x @NOW-" + age + "@\n"}}
			out, _, rc := runStub(t, buildNode(t, s), "", "curl", "-s", "http://127.0.0.1:10249/metrics")
			got := strings.TrimSuffix(strings.TrimPrefix(out, "x "), "\n")
			v, err := strconv.ParseFloat(got, 64)
			if rc != 0 || err != nil {
				t.Fatalf("curl = %q exit %d (%v)", out, rc, err)
			}
			if want := strconv.FormatFloat(v, 'g', -1, 64); got != want {
				t.Errorf("timestamp printed %q, Prometheus prints %q", got, want)
			}
		})
	}
}

// kubeProxyFamilies are the metric families kube-proxy registers, with help
// text and type, as the Kubernetes Metrics Reference (v1.34) lists them
// from pkg/proxy/metrics/metrics.go; all are ALPHA, so component-base
// prefixes the help with "[ALPHA] ".
var kubeProxyFamilies = map[string][2]string{
	"kubeproxy_network_programming_duration_seconds":                     {"histogram", "In Cluster Network Programming Latency in seconds"},
	"kubeproxy_sync_full_proxy_rules_duration_seconds":                   {"histogram", "SyncProxyRules latency in seconds for full resyncs"},
	"kubeproxy_sync_proxy_rules_duration_seconds":                        {"histogram", "SyncProxyRules latency in seconds"},
	"kubeproxy_sync_proxy_rules_endpoint_changes_pending":                {"gauge", "Pending proxy rules Endpoint changes"},
	"kubeproxy_sync_proxy_rules_endpoint_changes_total":                  {"counter", "Cumulative proxy rules Endpoint changes"},
	"kubeproxy_sync_proxy_rules_iptables_last":                           {"gauge", "Number of iptables rules written by kube-proxy in last sync"},
	"kubeproxy_sync_proxy_rules_iptables_partial_restore_failures_total": {"counter", "Cumulative proxy iptables partial restore failures"},
	"kubeproxy_sync_proxy_rules_iptables_restore_failures_total":         {"counter", "Cumulative proxy iptables restore failures"},
	"kubeproxy_sync_proxy_rules_iptables_total":                          {"gauge", "Total number of iptables rules owned by kube-proxy"},
	"kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds":           {"gauge", "The last time a sync of proxy rules was queued"},
	"kubeproxy_sync_proxy_rules_last_timestamp_seconds":                  {"gauge", "The last time proxy rules were successfully synced"},
	"kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total":         {"counter", "Cumulative proxy nftables cleanup failures"},
	"kubeproxy_sync_proxy_rules_nftables_sync_failures_total":            {"counter", "Cumulative proxy nftables sync failures"},
	"kubeproxy_sync_proxy_rules_no_local_endpoints_total":                {"gauge", "Number of services with a Local traffic policy and no endpoints"},
	"kubeproxy_sync_proxy_rules_service_changes_pending":                 {"gauge", "Pending proxy rules Service changes"},
	"kubeproxy_sync_proxy_rules_service_changes_total":                   {"counter", "Cumulative proxy rules Service changes"},
}

// TestProxyMetricsAsKubeProxyServesThem pins /metrics to kube-proxy's
// registry: the families each proxy mode registers under their exact names,
// help and type, in the name order the Prometheus registry gathers them;
// histogram buckets cumulative with +Inf equal to _count; the sync buckets
// ExponentialBuckets(0.001, 2, 15) and the network programming ones
// merge(...) with its leading 0 bucket (metrics.go merge starts from
// make([]float64, 1)).
func TestProxyMetricsAsKubeProxyServesThem(t *testing.T) {
	modeOnly := map[string]string{
		"kubeproxy_sync_proxy_rules_iptables_last": "iptables", "kubeproxy_sync_proxy_rules_iptables_partial_restore_failures_total": "iptables",
		"kubeproxy_sync_proxy_rules_iptables_restore_failures_total": "iptables", "kubeproxy_sync_proxy_rules_iptables_total": "iptables",
		"kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total": "nftables", "kubeproxy_sync_proxy_rules_nftables_sync_failures_total": "nftables",
	}
	sample := regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$`)
	for _, mode := range []string{"iptables", "nftables", "ipvs"} {
		for _, fams := range [][]string{nil, {"IPv4", "IPv6"}} {
			t.Run(fmt.Sprintf("%s %v", mode, fams), func(t *testing.T) {
				m := HealthyProxyMetrics()
				m.Mode, m.Families = mode, fams
				body := m.Render()
				var order []string
				typ := map[string]string{}
				help := map[string]string{}
				buckets := map[string][]string{} // series (name+labels without le) → le values
				lastBucket := map[string]string{}
				counts := map[string]string{}
				for _, l := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
					switch {
					case strings.HasPrefix(l, "# HELP "):
						name, h, _ := strings.Cut(strings.TrimPrefix(l, "# HELP "), " ")
						help[name] = h
						order = append(order, name)
					case strings.HasPrefix(l, "# TYPE "):
						name, ty, _ := strings.Cut(strings.TrimPrefix(l, "# TYPE "), " ")
						typ[name] = ty
					default:
						g := sample.FindStringSubmatch(l)
						if g == nil {
							t.Fatalf("not a sample line: %q", l)
						}
						if _, err := strconv.ParseFloat(g[3], 64); err != nil && !strings.HasPrefix(g[3], "@NOW-") {
							t.Errorf("value of %q", l)
						}
						name, labels := g[1], g[2]
						fam := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")
						if typ[name] == "" && typ[fam] != "histogram" {
							t.Errorf("sample %q before its # TYPE", l)
						}
						le := regexp.MustCompile(`,?le="([^"]*)"`)
						key := fam + strings.TrimSuffix(strings.Replace(le.ReplaceAllString(labels, ""), "{,", "{", 1), "{}")
						if strings.HasSuffix(name, "_bucket") {
							buckets[key] = append(buckets[key], le.FindStringSubmatch(labels)[1])
							lastBucket[key] = g[3]
						}
						if strings.HasSuffix(name, "_count") && typ[fam] == "histogram" {
							counts[key] = g[3]
						}
					}
				}
				if !sort.StringsAreSorted(order) {
					t.Errorf("families not in name order: %v", order)
				}
				for name, want := range kubeProxyFamilies {
					has := help[name] != ""
					if only, ok := modeOnly[name]; ok && only != mode {
						if has {
							t.Errorf("%s mode serves %s", mode, name)
						}
						continue
					}
					if !has {
						t.Errorf("%s mode lacks %s", mode, name)
						continue
					}
					if typ[name] != want[0] || help[name] != "[ALPHA] "+want[1] {
						t.Errorf("%s: # TYPE %s, # HELP %q; kube-proxy registers %s, %q", name, typ[name], help[name], want[0], "[ALPHA] "+want[1])
					}
				}
				for name := range help {
					if strings.HasPrefix(name, "kubeproxy_") {
						if _, ok := kubeProxyFamilies[name]; !ok {
							t.Errorf("%s is no metric kube-proxy registers", name)
						}
					}
				}
				for key, les := range buckets {
					if lastBucket[key] != counts[key] {
						t.Errorf("%s: +Inf bucket %s, _count %s", key, lastBucket[key], counts[key])
					}
					switch {
					case strings.HasPrefix(key, "kubeproxy_network_programming_duration_seconds"):
						if len(les) != 1+2+59+12+7+1 || les[0] != "0" || les[1] != "0.25" || les[2] != "0.5" || les[3] != "1" || les[len(les)-2] != "300" {
							t.Errorf("%s buckets %v", key, les)
						}
					default:
						if len(les) != 16 || les[0] != "0.001" || les[14] != "16.384" || les[15] != "+Inf" {
							t.Errorf("%s buckets %v", key, les)
						}
					}
				}
			})
		}
	}
}

// TestProcFilesAsTheKernelWritesThem pins the simulated procfs text files to
// the kernel's seq_file output: /proc/net/tcp lines padded to TMPSZ-1 = 149
// columns (net/ipv4/tcp_ipv4.c tcp4_seq_show), the socket fields of
// get_tcp4_sock, /proc/net/tcp6's full unpadded header, /proc/modules as
// kernel/module/procfs.c m_show prints a module nobody uses.
func TestProcFilesAsTheKernelWritesThem(t *testing.T) {
	root := buildNode(t, Healthy("node-1", true))
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	tcp := strings.Split(strings.TrimSuffix(read("proc/net/tcp"), "\n"), "\n")
	if f := strings.Fields(tcp[0]); strings.Join(f, " ") != "sl local_address rem_address st tx_queue rx_queue tr tm->when retrnsmt uid timeout inode" {
		t.Errorf("tcp header %q", tcp[0])
	}
	ports := map[string]bool{}
	for _, l := range tcp {
		if len(l) != 149 {
			t.Errorf("line of %d columns, the kernel pads to 149: %q", len(l), l)
		}
		if l == tcp[0] {
			continue
		}
		f := strings.Fields(l)
		if len(f) != 17 || f[3] != "0A" || !strings.HasPrefix(f[1], "0100007F:") || f[4] != "00000000:00000000" || f[5] != "00:00000000" ||
			f[6] != "00000000" || f[11] != "0000000000000000" || f[15] != "10" || f[16] != "0" {
			t.Errorf("not a listening socket as get_tcp4_sock prints it: %q", l)
		}
		ports[f[1][9:]] = true
	}
	for port, hex := range map[int]string{10256: "2810", 6443: "192B", 2379: "094B", 10250: "280A"} {
		if !ports[hex] {
			t.Errorf("port %d (%s) not listening in %q", port, hex, tcp)
		}
	}
	if got, want := read("proc/net/tcp6"), "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"; got != want {
		t.Errorf("tcp6 = %q, want %q", got, want)
	}
	if got := strings.SplitN(read("proc/modules"), "\n", 2)[0]; got != "br_netfilter 32768 0 - Live 0x0000000000000000" {
		t.Errorf("proc/modules line %q", got)
	}

	// /proc/net/ip_vs (net/netfilter/ipvs/ip_vs_ctl.c ip_vs_info_seq_show).
	ipvs := strings.Split(ipvsProc, "\n")
	want := map[int]string{
		1: "Prot LocalAddress:Port Scheduler Flags",
		2: "  -> RemoteAddress:Port Forward Weight ActiveConn InActConn",
		3: "TCP  0A2B0001:01BB rr  ",
		4: "  -> C0A80A0B:192B      Masq    1      4          0         ",
		// 10800 s persistence, in jiffies at HZ=250.
		12: "TCP  0A2B580E:01BB rr  persistent 2700000 FFFFFFFF",
		17: "TCP  [fd00:0043:0000:0000:0000:0000:0000:0001]:01BB rr ",
	}
	for i, w := range want {
		if i >= len(ipvs) || ipvs[i] != w {
			t.Errorf("ip_vs line %d = %q, want %q", i, ipvs[min(i, len(ipvs)-1)], w)
		}
	}
	vs, rs := 0, 0
	for _, l := range ipvs[3:] {
		switch {
		case strings.HasPrefix(l, "  -> "):
			rs++
		case l != "":
			vs++
		}
	}
	if vs != IPVSVirtualServices || rs != IPVSRealServers {
		t.Errorf("ip_vs lists %d services, %d real servers; IPVSVirtualServices %d, IPVSRealServers %d", vs, rs, IPVSVirtualServices, IPVSRealServers)
	}
}

// TestIPTablesSaveAsIptablesWritesIt pins the iptables-save variants: the
// header's version as each prints it, and iptables-nft-save's warning about
// legacy tables after the last table (xtables-save.c do_output calls
// nft_check_xt_legacy once every table is out).
func TestIPTablesSaveAsIptablesWritesIt(t *testing.T) {
	cases := []struct {
		name       string
		state      State
		cmd        string
		header     string
		lastLine   string
		wantLegacy bool
	}{
		{"nf_tables 1.8.10", Healthy("n", false), "iptables-save", "# Generated by iptables-nft-save v1.8.10 (nf_tables) on Wed Dec  2 10:00:00 2026", "# Completed on Wed Dec  2 10:00:00 2026", false},
		{"legacy 1.8.9", WithIPTablesLegacy(Healthy("n", false)), "iptables-save", "# Generated by iptables-save v1.8.9 on Wed Dec  2 10:00:00 2026", "# Completed on Wed Dec  2 10:00:00 2026", false},
		{"nf_tables 1.8.4 names no backend", WithIPTablesOld(Healthy("n", false)), "iptables-save", "# Generated by iptables-save v1.8.4 on Wed Dec  2 10:00:00 2026", "# Completed on Wed Dec  2 10:00:00 2026", false},
		{"legacy tables too: the warning comes last", WithKubeRulesInBothBackends(Healthy("n", false)), "iptables-nft-save",
			"# Generated by iptables-nft-save v1.8.10 (nf_tables) on Wed Dec  2 10:00:00 2026", "# Warning: iptables-legacy tables present, use iptables-legacy-save to see them", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, _, rc := runStub(t, buildNode(t, c.state), "", c.cmd)
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if rc != 0 || lines[0] != c.header || lines[len(lines)-1] != c.lastLine {
				t.Errorf("%s exit %d: first line %q, last %q; want %q, %q", c.cmd, rc, lines[0], lines[len(lines)-1], c.header, c.lastLine)
			}
			if got := strings.Count(out, "# Warning:"); got != map[bool]int{true: 1, false: 0}[c.wantLegacy] {
				t.Errorf("%d warnings", got)
			}
		})
	}
}

// TestUFWConfAsUFWShipsIt: ufw.conf is the file ufw installs (ufw
// conf/ufw.conf), ENABLED= as `ufw enable`/`ufw disable` leave it.
func TestUFWConfAsUFWShipsIt(t *testing.T) {
	conf := func(enabled string) string {
		return "# /etc/ufw/ufw.conf\n#\n\n" +
			"# Set to yes to start on boot. If setting this remotely, be sure to add a rule\n" +
			"# to allow your remote connection before starting ufw. Eg: 'ufw allow 22/tcp'\n" +
			"ENABLED=" + enabled + "\n\n" +
			"# Please use the 'ufw' command to set the loglevel. Eg: 'ufw logging medium'.\n" +
			"# See 'man ufw' for details.\n" +
			"LOGLEVEL=low\n"
	}
	for _, c := range []struct {
		name  string
		state State
		want  string
	}{
		{"stock, disabled", Healthy("n", false), conf("no")},
		{"ufw enable", WithUFWActive(Healthy("n", false)), conf("yes")},
		{"stopped but enabled", WithUFWEnabledInactive(Healthy("n", false)), conf("yes")},
	} {
		b, err := os.ReadFile(filepath.Join(buildNode(t, c.state), "etc/ufw/ufw.conf"))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("%s: ufw.conf = %q, want %q", c.name, b, c.want)
		}
	}
}

// TestCurlStubAgreesWithRealCurl runs the real curl(1) and the stub on the
// same answers (a body without a last newline, an HTTP error with its body,
// a port nothing listens on, in every order) and wants the same bytes and
// exit code: the stub is held to the tool, not to what the probe expects.
// Port 1 of loopback refuses: no test listens there.
func TestCurlStubAgreesWithRealCurl(t *testing.T) {
	curl := testtools.Find(t, "curl")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/healthz":
			fmt.Fprint(w, `{"lastUpdated": "x","currentTime": "y", "nodeEligible": true}`)
		case "/metrics":
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, "sync failed\n")
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	port := strings.TrimPrefix(srv.URL, "http://127.0.0.1:")
	s := Healthy("node-1", false)
	s.HTTP = map[string]HTTP{
		port + "/healthz": {Code: 200, Body: `{"lastUpdated": "x","currentTime": "y", "nodeEligible": true}`},
		port + "/metrics": {Code: 503, Body: "sync failed\n"},
		port + "/none":    {Code: 404, Body: "404 page not found\n"},
	}
	root := buildNode(t, s)
	urls := map[string]string{"healthz": srv.URL + "/healthz", "metrics": srv.URL + "/metrics", "none": srv.URL + "/none", "refused": "http://127.0.0.1:1/healthz"}
	for _, order := range [][]string{{"healthz"}, {"refused"}, {"healthz", "metrics", "none"}, {"metrics", "refused"}, {"refused", "healthz"}, {"healthz", "refused", "metrics"}} {
		t.Run(strings.Join(order, ","), func(t *testing.T) {
			args := []string{"-s", "-m", "3", "-w", "\n@@%{http_code}\n"}
			for _, o := range order {
				args = append(args, urls[o])
			}
			cmd := exec.Command(curl, args...)
			cmd.Env = []string{"PATH=/usr/bin:/bin"}
			want, err := cmd.Output()
			wantRC := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				wantRC = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			got, _, rc := runStub(t, root, "", "curl", args...)
			if got != string(want) || rc != wantRC {
				t.Errorf("stub: %q exit %d\ncurl: %q exit %d", got, rc, want, wantRC)
			}
		})
	}
}
