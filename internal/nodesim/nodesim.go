// Package nodesim builds the file tree a simulated node's probes read. A
// probe reads files under ${FLEET_AUDIT_ROOT:-} and finds commands on PATH;
// the bundle puts $FLEET_AUDIT_ROOT/bin first on PATH. So a simulated node is
// a directory: proc/, sys/ and etc/ files as the kernel and the distribution
// would show them, state/ files that the stub commands in bin/ answer from,
// and bin/ holding those stubs (systemctl, curl, iptables, ufw, rke2). The
// real probe scripts run against it unchanged, with /bin/sh.
//
// It owns node state only; it starts no server and knows nothing of SSH.
package nodesim

import (
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

//go:embed stubs/*
var stubs embed.FS

// HTTP is a simulated response of kube-proxy's health server.
type HTTP struct {
	Code int
	Body string
	// Hang makes the request never answer, to test probe timeouts.
	Hang bool
}

// Unit is a simulated systemd unit state.
type Unit struct {
	Active  string // active, inactive, failed
	Enabled string // enabled, disabled, "" = no unit file
}

// State is everything a simulated node shows to the probes.
type State struct {
	Hostname string
	// Pods are pods scheduled to this node besides those nodesim derives
	// (workloads.go); PDBs and Workloads are cluster objects, the union
	// over the fleet; DeprecatedRequests are the deprecated APIs this
	// server's API server was asked for, and APIServerFailing the health
	// checks it fails ("etcd", "etcd-readiness": see healthBody).
	Pods               []Pod
	PDBs               []PDB
	Workloads          []Workload
	DeprecatedRequests []DeprecatedAPI
	APIServerFailing   []string
	Kernel             string
	OSRelease          string // /etc/os-release content
	// IPTables is what `iptables --version` prints ("iptables v1.8.10
	// (nf_tables)", see stubs/iptables); "" = not installed.
	IPTables string
	// UFW installed with this `ufw status` answer ("active"/"inactive"); "" = not installed.
	// ufw.conf then says ENABLED=yes for an active ufw, as `ufw enable` writes it.
	UFW     string
	Units   map[string]Unit
	Sysctls map[string]string // dotted name → value; absent key = file missing
	Modules []string          // loaded modules, listed in /proc/modules (procModules)
	// Listening ports shown in /proc/net/tcp (LISTEN on 127.0.0.1,
	// procNetTCP), but for kube-proxy's, which listen where its manifest's
	// bind addresses say (kubeProxyBinds).
	Listening []int
	// Listening6 are ports listening on ::1, shown in /proc/net/tcp6.
	Listening6 []int
	// HealthHTTP maps a path on kube-proxy's health server ("/healthz") to
	// its answer; it answers on the address its manifest's
	// --healthz-bind-address says (127.0.0.1:10256 without a manifest).
	HealthHTTP map[string]HTTP
	// HTTP maps "port/path" on 127.0.0.1 (e.g. "10250/healthz") or
	// "[::1]:port/path" on ::1 to its answer; kube-proxy's metrics port
	// 10249 answers where --metrics-bind-address says.
	HTTP map[string]HTTP
	// LoginEnv is the node's /etc/environment, which pam_env puts into
	// every login session (SessionEnv applies it), e.g. a corporate
	// http_proxy.
	LoginEnv map[string]string
	// Commands are the answers of simulated commands other than the
	// built-in stubs (see Command). Use SetCommand to change them.
	Commands    []Command
	RKE2Version string // "" = rke2 not installed
	// RKE2Path is where the rke2 binary is, relative to the node root:
	// "usr/local/bin/rke2" (install.sh's tarball layout) or "usr/bin/rke2"
	// (the RPMs); "" = bin/rke2, found on the node's PATH only.
	RKE2Path string
	// KubeletOS is the node's operating system as its kubelet reports it
	// (runtime.GOOS): "" is linux, "windows" a Windows agent (WindowsAgent).
	// The distribution of a Linux node is WithOS's.
	KubeletOS string
	// Awk is the awk the node runs, a path on this machine (e.g. Debian
	// 13's mawk through .ci/newer-mawk.sh's wrapper, or busybox, which
	// runs its awk applet when called as awk); "" = this machine's awk.
	Awk string
	// SystemdNotRunning is a node whose PID 1 is not systemd (a
	// container): it has no run/systemd/system, by which systemd's
	// sd_booted tells (src/libsystemd/sd-daemon/sd-daemon.c), and its
	// systemctl reaches no manager (see the systemctl stub).
	SystemdNotRunning bool
	// Extra files, relative path → content, for tests (e.g. a config.yaml
	// holding a token that must never reach a report).
	Files map[string]string
	// FileAges are the ages of files of Files (relative path → age), as
	// their mtimes read by the node's clock when Build writes them (e.g.
	// etcd snapshots); a file not listed is as new as Build.
	FileAges map[string]time.Duration
	// Sockets are Unix domain sockets, relative path → what the server
	// behind it answers, keyed by URL path ("/v1/healthz"). The socket file
	// is a real one (mode 0660, as the Cilium agent leaves its API socket:
	// cilium pkg/api/socket.go SetDefaultPermissions); a nil map is a
	// socket whose server is gone, which a crashed agent leaves behind:
	// connecting to it is refused. The curl stub answers --unix-socket
	// requests from them.
	Sockets map[string]map[string]HTTP
	// Kernels are kernel releases installed besides the running one
	// (Kernel): each has its modules tree under /lib/modules/<release>,
	// where every kernel package installs it (Debian linux-image-*, RHEL
	// kernel-modules-core), the running one's included.
	Kernels []string
	// ConntrackStats are the per-CPU rows of /proc/net/stat/nf_conntrack,
	// one per possible CPU (see conntrack.go); written only where the
	// nf_conntrack module is (its nf_conntrack_max sysctl is in Sysctls).
	ConntrackStats []ConntrackCPU
	// KernelLog is the kernel's log of this boot, one message a line
	// without prefix, which the journalctl (-k) and dmesg stubs print as
	// the real ones do.
	KernelLog []string
	// DirModes are directory permissions, relative path → mode, set once
	// everything is written (e.g. RKE2's 0700 agent directories).
	DirModes map[string]os.FileMode
	// EtcdCluster names the etcd cluster this server's etcd data belongs
	// to: "" is the fleet's; a server reset alone (WithEtcdClusterReset)
	// runs one of its own. WithCluster makes each etcd server's member
	// list from it (etcd.go etcdMemberLists).
	EtcdCluster string
	// EtcdLearner is a member added and not yet promoted to voter.
	EtcdLearner bool
	// EtcdStaleMembers are member names the server's cluster lists beyond
	// the fleet's etcd servers: servers gone without their member removed.
	EtcdStaleMembers []string
	// EtcdS3Ages are the ages of the snapshots this server uploaded to S3
	// (WithEtcdS3), which the cluster lists as ETCDSnapshotFiles.
	EtcdS3Ages []time.Duration
}

// Build writes the simulated node into dir, which must be empty or absent.
func Build(dir string, s State) error {
	w := writer{root: dir}
	w.file("proc/sys/kernel/osrelease", s.Kernel+"\n")
	w.file("proc/sys/kernel/hostname", s.Hostname+"\n")
	for _, k := range append([]string{s.Kernel}, s.Kernels...) {
		if k != "" {
			// modules.order lists the modules a kernel build made, one
			// path a line (kbuild scripts/Makefile.modfinal, depmod).
			w.file("lib/modules/"+k+"/modules.order", "kernel/net/bridge/br_netfilter.ko\n")
		}
	}
	w.file("etc/os-release", s.OSRelease)
	for k, v := range s.Sysctls {
		w.file("proc/sys/"+strings.ReplaceAll(k, ".", "/"), v+"\n")
	}
	w.file("proc/modules", procModules(s.Modules))
	health, metrics := kubeProxyBinds(s)
	var v4, v6 []int
	for _, p := range s.Listening {
		bind := loopbackBind{hosts: []string{"127.0.0.1"}, port: p}
		switch p {
		case 10256:
			bind = health
		case 10249:
			bind = metrics
		}
		for _, h := range bind.hosts {
			if h == "::1" {
				v6 = append(v6, bind.port)
			} else {
				v4 = append(v4, bind.port)
			}
		}
	}
	w.file("proc/net/tcp", procNetTCP(v4))
	w.file("proc/net/tcp6", procNetTCP6(append(v6, s.Listening6...)))
	for name, u := range s.Units {
		w.file("state/systemd/"+name+".active", u.Active+"\n")
		if u.Enabled != "" {
			w.file("state/systemd/"+name+".enabled", u.Enabled+"\n")
		}
	}
	w.stub("systemctl")
	if !s.SystemdNotRunning {
		w.dir("run/systemd/system")
	}
	w.stub("curl")
	for path, h := range s.HealthHTTP {
		for _, host := range health.hosts {
			w.http(host, health.port, path, h)
		}
	}
	for key, h := range s.HTTP {
		host, portPath := "127.0.0.1", key
		if rest, ok := strings.CutPrefix(key, "[::1]:"); ok {
			host, portPath = "::1", rest
		}
		port, path, _ := strings.Cut(portPath, "/")
		if port == "10249" && host == "127.0.0.1" {
			if path == "metrics" && h.Code == 200 {
				h.Body = withHealthCounters(h.Body, s.HealthHTTP)
			}
			for _, mh := range metrics.hosts {
				w.http(mh, metrics.port, "/"+path, h)
			}
			continue
		}
		p, err := strconv.Atoi(port)
		if err != nil {
			w.err = fmt.Errorf("simulated node: HTTP key %q: %w", key, err)
			continue
		}
		w.http(host, p, "/"+path, h)
	}
	if len(s.LoginEnv) > 0 {
		w.file(loginEnvFile, environmentFile(s.LoginEnv))
	}
	// Before the commands: a Command of the same name replaces a stub.
	w.writeConntrack(s)
	w.commands(s.Commands)
	if s.Awk != "" {
		w.link("bin/awk", s.Awk)
	}
	w.hostTools()
	w.procfsShim()
	if s.IPTables != "" {
		w.file("state/iptables.version", s.IPTables+"\n")
		w.stub("iptables")
	}
	if s.UFW != "" {
		w.file("etc/ufw/ufw.conf", UFWConf(s.UFW == "active"))
		w.file("state/ufw.status", s.UFW+"\n")
		w.stub("ufw")
	}
	if s.RKE2Version != "" {
		w.file("state/rke2.version-output", RKE2VersionOutput(s.RKE2Version))
		if s.RKE2Path == "" {
			w.stub("rke2")
		} else {
			w.stubAt("rke2", s.RKE2Path)
		}
	}
	for p, c := range s.Files {
		w.file(p, c)
	}
	now := time.Now()
	for p, age := range s.FileAges {
		w.age(p, now.Add(-age))
	}
	for p, answers := range s.Sockets {
		w.socket(p)
		for path, h := range answers {
			w.unixHTTP(p, path, h)
		}
	}
	for p, m := range s.DirModes {
		w.dir(p)
		w.chmod(p, m)
	}
	return w.err
}

// unixHTTP writes one answer of the server behind socket sock, where the
// curl stub looks for it: state/unix/<socket path>/<URL path>, '/' as '_'.
func (w *writer) unixHTTP(sock, path string, h HTTP) {
	base := "state/unix/" + strings.ReplaceAll(sock, "/", "_") + "/" + strings.ReplaceAll(path, "/", "_")
	if h.Hang {
		w.file(base+".hang", "")
	}
	w.file(base+".code", fmt.Sprintf("%d\n", h.Code))
	w.file(base+".body", h.Body)
}

// socket creates a Unix domain socket file with nothing listening on it:
// mknod(2) makes the inode without bind(2), so the path may be longer than
// sun_path allows, and a connect(2) to it is refused, as it is to the
// socket a dead server left behind.
func (w *writer) socket(rel string) {
	if w.err != nil {
		return
	}
	p := filepath.Join(w.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		w.err = fmt.Errorf("simulated node %s: %w", w.root, err)
		return
	}
	if err := mksock(p); err != nil {
		w.err = fmt.Errorf("simulated node %s: socket %s: %w", w.root, rel, err)
		return
	}
	w.chmod(rel, 0o660)
}

// age sets the mtime (and atime) of rel.
func (w *writer) age(rel string, t time.Time) {
	if w.err != nil {
		return
	}
	if err := os.Chtimes(filepath.Join(w.root, filepath.FromSlash(rel)), t, t); err != nil {
		w.err = fmt.Errorf("simulated node %s: %w", w.root, err)
	}
}

func (w *writer) chmod(rel string, m os.FileMode) {
	if w.err != nil {
		return
	}
	if err := os.Chmod(filepath.Join(w.root, filepath.FromSlash(rel)), m); err != nil {
		w.err = fmt.Errorf("simulated node %s: %w", w.root, err)
	}
}

// http writes the answer of a server listening on host:port for path, as
// the curl stub looks it up.
func (w *writer) http(host string, port int, path string, h HTTP) {
	base := fmt.Sprintf("state/http/%s_%d%s", host, port, strings.ReplaceAll(path, "/", "_"))
	if h.Hang {
		w.file(base+".hang", "")
	}
	w.file(base+".code", fmt.Sprintf("%d\n", h.Code))
	w.file(base+".body", h.Body)
}

type writer struct {
	root string
	err  error
}

func (w *writer) file(rel, content string) {
	w.write(rel, []byte(content), 0o644)
}

func (w *writer) stub(name string) { w.stubAt(name, "bin/"+name) }

// stubAt installs stub name at rel, relative to the node root.
func (w *writer) stubAt(name, rel string) {
	b, err := stubs.ReadFile("stubs/" + name)
	if err != nil {
		w.err = fmt.Errorf("embedded stub %s: %w", name, err)
		return
	}
	w.write(rel, b, 0o755)
}

// link makes rel a symbolic link to target, a path on this machine.
func (w *writer) link(rel, target string) {
	w.dir(filepath.Dir(filepath.FromSlash(rel)))
	if w.err != nil {
		return
	}
	if err := os.Symlink(target, filepath.Join(w.root, filepath.FromSlash(rel))); err != nil {
		w.err = fmt.Errorf("simulated node %s: %w", w.root, err)
	}
}

func (w *writer) dir(rel string) {
	if w.err != nil {
		return
	}
	if err := os.MkdirAll(filepath.Join(w.root, filepath.FromSlash(rel)), 0o755); err != nil {
		w.err = fmt.Errorf("simulated node %s: %w", w.root, err)
	}
}

func (w *writer) write(rel string, b []byte, mode os.FileMode) {
	if w.err != nil {
		return
	}
	p := filepath.Join(w.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		w.err = fmt.Errorf("simulated node %s: %w", w.root, err)
		return
	}
	if err := os.WriteFile(p, b, mode); err != nil {
		w.err = fmt.Errorf("simulated node %s: %w", w.root, err)
	}
}

// procModules is /proc/modules as the kernel's m_show prints it
// (kernel/module/procfs.c): name, size, refcount, the users ("-" for none),
// state, and the load address, which reads 0x0000000000000000 for anyone
// kptr_restrict hides it from.
func procModules(mods []string) string {
	var b strings.Builder
	for _, m := range mods {
		fmt.Fprintf(&b, "%s 32768 0 - Live 0x0000000000000000\n", m)
	}
	return b.String()
}

// procNetTCPWidth is the width tcp4_seq_show pads every line of
// /proc/net/tcp to with seq_setwidth/seq_pad: TMPSZ - 1 (linux
// net/ipv4/tcp_ipv4.c, TMPSZ 150).
const procNetTCPWidth = 149

// procNetTCP is /proc/net/tcp with a socket listening on 127.0.0.1 for each
// port, every line laid out as net/ipv4/tcp_ipv4.c tcp4_seq_show and
// get_tcp4_sock print it: addresses in hex in network byte order as a
// little-endian CPU reads them (0100007F is 127.0.0.1), state 0A for
// TCP_LISTEN, the listener's 10-segment cwnd and a 0 fastopen queue last,
// padded with blanks to 149 columns.
func procNetTCP(ports []int) string {
	pad := func(l string) string {
		return fmt.Sprintf("%-*s\n", procNetTCPWidth, l)
	}
	out := pad("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode")
	for i, p := range ports {
		out += pad(fmt.Sprintf("%4d: %08X:%04X %08X:%04X %02X %08X:%08X %02X:%08X %08X %5d %8d %d %d %016x %d %d %d %d %d",
			i, 0x0100007F, p, 0, 0, 0x0A, 0, 0, 0, 0, 0, 0, 0, 10000+i, 1, 0, 100, 0, 0, 10, 0))
	}
	return out
}

// procNetTCP6Header is /proc/net/tcp6's header line: tcp6_seq_show's,
// which, unlike IPv4's, is not padded (net/ipv6/tcp_ipv6.c).
const procNetTCP6Header = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"

// procNetTCP6 is /proc/net/tcp6 with a socket listening on ::1 for each
// port, as net/ipv6/tcp_ipv6.c get_tcp6_sock prints it: the address as
// four 32-bit words in hex, each as a little-endian CPU reads it (::1 is
// 00000000000000000000000001000000), state 0A for TCP_LISTEN, unpadded.
func procNetTCP6(ports []int) string {
	out := procNetTCP6Header
	for i, p := range ports {
		out += fmt.Sprintf("%4d: %08X%08X%08X%08X:%04X %08X%08X%08X%08X:%04X %02X %08X:%08X %02X:%08X %08X %5d %8d %d %d %016x %d %d %d %d %d\n",
			i, 0, 0, 0, 0x01000000, p, 0, 0, 0, 0, 0, 0x0A, 0, 0, 0, 0, 0, 0, 0, 20000+i, 1, 0, 100, 0, 0, 10, 0)
	}
	return out
}

// UFWConf is /etc/ufw/ufw.conf as ufw ships it (ufw conf/ufw.conf), with
// ENABLED= as `ufw enable` / `ufw disable` leave it.
func UFWConf(enabled bool) string {
	v := "no"
	if enabled {
		v = "yes"
	}
	return "# /etc/ufw/ufw.conf\n#\n\n# Set to yes to start on boot. If setting this remotely, be sure to add a rule\n# to allow your remote connection before starting ufw. Eg: 'ufw allow 22/tcp'\nENABLED=" + v + "\n\n# Please use the 'ufw' command to set the loglevel. Eg: 'ufw logging medium'.\n# See 'man ufw' for details.\nLOGLEVEL=low\n"
}
