package audit

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

// The ground-truth test runs the real node bundle on this very machine, with
// no simulated root, and compares every fact Go can read here on its own,
// through other interfaces than the probe's (syscalls, Go's own file reads,
// binding the ports). It exists because the simulated nodes shared the
// probes' assumptions: plain files stood in for procfs, and a probe reading
// /proc/sys with dash's one-byte read(2) passed every test while it
// reported nf_conntrack_max 262144 as "2" on every Debian and Ubuntu node.
//
// It runs under the system /bin/sh and under each shell a node may have as
// /bin/sh: dash (Debian, Ubuntu), bash in POSIX mode (RHEL: bash invoked as
// sh), and busybox sh with only busybox's applets on PATH (minimal images).
// The shell is bind-mounted over /bin/sh in a private mount namespace, so
// that it is the session's shell, in whose subshells the probes run, and
// every /bin/sh a probe's tools start (awk's pipes) as it would be on a node.

// groundShell is one /bin/sh a node may have.
type groundShell struct {
	name string
	// path is bind-mounted over /bin/sh; "" runs the system's /bin/sh as is.
	path string
	// busyboxApplets makes PATH hold only busybox's applets, as on an image
	// whose whole userland is busybox.
	busyboxApplets bool
	// bind is false where a private mount namespace cannot be had; the
	// shell is then the session's shell itself, with flags (busybox's
	// applet, bash's POSIX mode, which bind gets from being called sh).
	bind  bool
	flags []string
}

var bindOverBinSh = sync.OnceValue(func() bool {
	if os.Geteuid() != 0 {
		return false
	}
	return exec.Command("unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", "mount --bind /bin/sh /bin/sh").Run() == nil
})

// canBindOverBinSh tells whether this process may bind-mount a file over
// /bin/sh in a private mount namespace (root with CAP_SYS_ADMIN).
func canBindOverBinSh() bool { return bindOverBinSh() }

func TestGroundTruthLocal(t *testing.T) {
	testtools.SkipShort(t, "runs the whole bundle once per shell")
	shells := []groundShell{{name: "system-sh"}, {name: "dash", path: "dash", bind: true},
		{name: "bash-posix", path: "bash", bind: true, flags: []string{"--posix"}},
		{name: "busybox-sh", path: "busybox", busyboxApplets: true, bind: true, flags: []string{"sh"}}}
	probes, err := probe.BuiltinProbes()
	if err != nil {
		t.Fatal(err)
	}
	var node []probe.Probe
	for _, p := range probes {
		if p.Scope == probe.ScopeNode {
			node = append(node, p)
		}
	}
	for _, sh := range shells {
		t.Run(sh.name, func(t *testing.T) {
			nonce := probe.NewNonce()
			bundle := bundleFor(t, node, probe.Become{}, nonce)
			if sh.path != "" {
				sh.path = testtools.Find(t, sh.path)
				if !canBindOverBinSh() {
					// No private mount namespace here (not root, or a
					// container without CAP_SYS_ADMIN): the shell runs the
					// bundle itself instead.
					t.Logf("cannot bind-mount over /bin/sh here: the bundle runs in %s -s", strings.Join(append([]string{sh.path}, sh.flags...), " "))
					sh.bind = false
				}
			}
			ports := holdPorts(t)
			out := runBundleLocally(t, sh, bundle)
			parsed := probe.ParseOutput(out, nonce, node)
			for _, r := range parsed.Runs {
				if r.Status != result.ProbeOK {
					t.Errorf("probe %s under %s: %s (exit %d) %s", r.ID, sh.name, r.Status, r.ExitCode, r.Stderr)
				}
			}
			compareGroundTruth(t, parsed.Facts, ports)
		})
	}
}

// runBundleLocally feeds the bundle to /bin/sh -s as a node's sshd would,
// with sh bind-mounted over /bin/sh when it is not the system's.
func runBundleLocally(t *testing.T, sh groundShell, bundle []byte) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var cmd *exec.Cmd
	switch {
	case sh.path == "":
		cmd = exec.CommandContext(ctx, "/bin/sh", "-s")
	case !sh.bind:
		cmd = exec.CommandContext(ctx, sh.path, append(slices.Clip(sh.flags), "-s")...)
	default:
		unshare := testtools.Find(t, "unshare")
		// /bin/sh is a symlink on Debian: the bind follows it and covers
		// its target, which is what every later /bin/sh resolves to.
		cmd = exec.CommandContext(ctx, unshare, "--mount", "--propagation", "private", "/bin/sh", "-c",
			`mount --bind "$1" /bin/sh && exec /bin/sh -s`, "ground-truth", sh.path)
	}
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C"}
	if sh.busyboxApplets {
		env[0] = "PATH=" + busyboxPath(t, sh.path)
	}
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(bundle)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("bundle under %s: %v\nstderr:\n%s", sh.name, err, stderr.String())
	}
	return stdout.Bytes()
}

// busyboxPath is a directory holding a link to busybox for each of its
// applets, and nothing else.
func busyboxPath(t *testing.T, busybox string) string {
	t.Helper()
	list, err := exec.Command(busybox, "--list").Output()
	if err != nil {
		t.Fatalf("busybox --list: %v", err)
	}
	dir := t.TempDir()
	for _, a := range strings.Fields(string(list)) {
		if err := os.Symlink(busybox, filepath.Join(dir, a)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// heldPorts is what the test knows of the RKE2 ports the network probe
// looks at: held ones have a listener of the test's own; free ones were
// bindable on every address a moment before the bundle ran.
type heldPorts struct {
	listening, free []int
}

func holdPorts(t *testing.T) heldPorts {
	t.Helper()
	var h heldPorts
	held := false
	for _, p := range []int{10250, 6443, 9345, 2379, 2380} {
		ln, err := net.Listen("tcp", fmt.Sprintf(":%d", p))
		if err != nil {
			// Someone listens already (EADDRINUSE): it must read "yes".
			h.listening = append(h.listening, p)
			continue
		}
		if !held {
			held = true
			h.listening = append(h.listening, p)
			t.Cleanup(func() { ln.Close() })
			continue
		}
		ln.Close()
		h.free = append(h.free, p)
	}
	if !held {
		t.Log("every RKE2 port is taken on this machine: no listener of the test's own")
	}
	return h
}

func compareGroundTruth(t *testing.T, got map[string]string, ports heldPorts) {
	t.Helper()
	want := map[string]string{}
	for _, k := range []string{"net.ipv4.ip_forward", "net.bridge.bridge-nf-call-iptables", "net.bridge.bridge-nf-call-ip6tables"} {
		want["sysctl."+k] = procValue(t, "/proc/sys/"+strings.ReplaceAll(k, ".", "/"))
	}
	want["conntrack.max"] = procValue(t, "/proc/sys/net/netfilter/nf_conntrack_max")
	// No RKE2 on the test machine: no kube-proxy flags to read.
	if _, err := os.Stat("/var/lib/rancher/rke2"); errors.Is(err, os.ErrNotExist) {
		want["conntrack.kube_proxy_max"] = "unknown"
	}
	want["host.cpus"] = strconv.Itoa(runtime.NumCPU())

	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		t.Fatal(err)
	}
	want["os.kernel"] = utsString(u.Release[:])
	want["os.hostname"] = utsString(u.Nodename[:])
	for k, v := range osRelease(t) {
		want[k] = v
	}

	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		t.Fatal(err)
	}
	swapKB := uint64(si.Totalswap) * uint64(si.Unit) / 1024
	want["host.swap_kb"] = strconv.FormatUint(swapKB, 10)
	want["host.swap"] = map[bool]string{true: "on", false: "off"}[swapKB > 0]

	for m, st := range moduleStates(t, "br_netfilter", "nf_conntrack", "ip_tables", "iptable_nat", "x_tables", "ip_vs") {
		want["module."+m] = st
	}
	for m, st := range moduleStates(t, "nf_conntrack", "nf_tables", "ip_vs") {
		want["kubeproxy.module."+m] = st
	}

	for _, d := range []struct{ who, path string }{{"rancher", "/var/lib/rancher"}, {"kubelet", "/var/lib/kubelet"}} {
		p := d.path
		if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
			p = "/var"
		}
		want["disk."+d.who+".path"] = p
		want["disk."+d.who+".mount"] = mountPointOf(t, p)
	}
	for _, p := range ports.listening {
		want[fmt.Sprintf("port.%d.listening", p)] = "yes"
	}
	for _, p := range ports.free {
		want[fmt.Sprintf("port.%d.listening", p)] = "no"
	}

	for _, k := range slices.Sorted(maps.Keys(want)) {
		w := want[k]
		if g, ok := got[k]; !ok {
			t.Errorf("%s: not reported, ground truth %q", k, w)
		} else if g != w {
			t.Errorf("%s = %q, ground truth %q", k, g, w)
		}
	}

	// Counters and use change between the two reads: the same order of
	// magnitude is what a one-byte read would break ("187" read as "1").
	near := func(k string, truth int64, slack int64) {
		g, err := strconv.ParseInt(got[k], 10, 64)
		if err != nil {
			t.Errorf("%s = %q, not a number (ground truth %d)", k, got[k], truth)
			return
		}
		if d := g - truth; d > slack || -d > slack {
			t.Errorf("%s = %d, ground truth %d (±%d)", k, g, truth, slack)
		}
	}
	if v := procValue(t, "/proc/sys/net/netfilter/nf_conntrack_count"); v != "absent" {
		n, _ := strconv.ParseInt(v, 10, 64)
		near("conntrack.count", n, 20+n/10)
	}
	for _, d := range []string{"rancher", "kubelet"} {
		var st syscall.Statfs_t
		if err := syscall.Statfs(want["disk."+d+".path"], &st); err != nil {
			t.Fatal(err)
		}
		// df's Capacity: used / (used + available), rounded up.
		used := st.Blocks - st.Bfree
		if used+st.Bavail > 0 {
			near("disk."+d+".used_pct", int64((used*100+used+st.Bavail-1)/(used+st.Bavail)), 1)
		}
	}
}

func utsString(b []int8) string {
	var s strings.Builder
	for _, c := range b {
		if c == 0 {
			break
		}
		s.WriteByte(byte(c))
	}
	return s.String()
}

// procValue is the whole first line of a procfs file, read by Go in one
// read(2) of a large buffer, or "absent".
func procValue(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "absent"
	}
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return line
}

// osRelease parses /etc/os-release the way os-release(5) describes it.
func osRelease(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{"os.id": "absent", "os.version_id": "absent", "os.pretty_name": "absent"}
	f, err := os.Open("/etc/os-release")
	if errors.Is(err, os.ErrNotExist) {
		return out
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok || seen[k] {
			continue
		}
		if uq, err := strconv.Unquote(v); err == nil {
			v = uq
		} else {
			v = strings.Trim(v, `'`)
		}
		switch k {
		case "ID", "VERSION_ID", "PRETTY_NAME":
			seen[k] = true
			out["os."+strings.ToLower(k)] = v
		}
	}
	return out
}

// moduleStates tells loaded, built-in and absent from what the kernel
// exposes, read by Go: /proc/modules, modules.builtin, the kernel config
// (/boot or /proc/config.gz, gunzipped here) and /sys/module.
func moduleStates(t *testing.T, mods ...string) map[string]string {
	t.Helper()
	loaded := map[string]bool{}
	if b, err := os.ReadFile("/proc/modules"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) > 0 {
				loaded[f[0]] = true
			}
		}
	}
	release := procValue(t, "/proc/sys/kernel/osrelease")
	builtin := map[string]bool{}
	if b, err := os.ReadFile("/lib/modules/" + release + "/modules.builtin"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			name := strings.ReplaceAll(strings.TrimSuffix(filepath.Base(l), ".ko"), "-", "_")
			builtin[name] = true
		}
	}
	config := kernelConfig(t, release)
	symbol := map[string]string{"br_netfilter": "BRIDGE_NETFILTER", "nf_conntrack": "NF_CONNTRACK", "ip_tables": "IP_NF_IPTABLES",
		"iptable_nat": "IP_NF_NAT", "x_tables": "NETFILTER_XTABLES", "nf_tables": "NF_TABLES", "ip_vs": "IP_VS"}
	out := map[string]string{}
	for _, m := range mods {
		_, sysErr := os.Stat("/sys/module/" + m)
		switch {
		case loaded[m]:
			out[m] = "loaded"
		case builtin[m] || config["CONFIG_"+symbol[m]] == "y" || sysErr == nil:
			out[m] = "builtin"
		default:
			out[m] = "absent"
		}
	}
	return out
}

func kernelConfig(t *testing.T, release string) map[string]string {
	t.Helper()
	var r io.Reader
	if f, err := os.Open("/boot/config-" + release); err == nil {
		defer f.Close()
		r = f
	} else if f, err := os.Open("/proc/config.gz"); err == nil {
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatalf("/proc/config.gz: %v", err)
		}
		r = zr
	} else {
		return nil
	}
	cfg := map[string]string{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok && strings.HasPrefix(k, "CONFIG_") {
			cfg[k] = v
		}
	}
	return cfg
}

// mountPointOf walks up from path until the device changes: the last
// directory on path's device is its mount point, as df prints it.
func mountPointOf(t *testing.T, path string) string {
	t.Helper()
	dev := func(p string) uint64 {
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err != nil {
			t.Fatal(err)
		}
		return st.Dev
	}
	d := dev(path)
	for path != "/" {
		parent := filepath.Dir(path)
		if dev(parent) != d {
			return path
		}
		path = parent
	}
	return "/"
}
