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
	"strings"
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
	Hostname  string
	Kernel    string
	OSRelease string // /etc/os-release content
	// IPTables is what `iptables --version` prints; "" = not installed.
	IPTables string
	// UFW installed with this `ufw status` answer ("active"/"inactive"); "" = not installed.
	UFW     string
	Units   map[string]Unit
	Sysctls map[string]string // dotted name → value; absent key = file missing
	Modules []string          // loaded modules
	// Listening ports shown in /proc/net/tcp (LISTEN on 127.0.0.1).
	Listening []int
	// HealthHTTP maps a path on 127.0.0.1:10256 ("/healthz") to its answer.
	HealthHTTP map[string]HTTP
	// HTTP maps "port/path" on 127.0.0.1 (e.g. "10249/metrics") to its answer.
	HTTP map[string]HTTP
	// Commands are the answers of simulated commands other than the
	// built-in stubs (see Command). Use SetCommand to change them.
	Commands    []Command
	RKE2Version string // "" = rke2 not installed
	// Extra files, relative path → content, for tests (e.g. a config.yaml
	// holding a token that must never reach a report).
	Files map[string]string
}

// Build writes the simulated node into dir, which must be empty or absent.
func Build(dir string, s State) error {
	w := writer{root: dir}
	w.file("proc/sys/kernel/osrelease", s.Kernel+"\n")
	w.file("proc/sys/kernel/hostname", s.Hostname+"\n")
	w.file("etc/os-release", s.OSRelease)
	for k, v := range s.Sysctls {
		w.file("proc/sys/"+strings.ReplaceAll(k, ".", "/"), v+"\n")
	}
	var mods strings.Builder
	for _, m := range s.Modules {
		fmt.Fprintf(&mods, "%s 32768 0 - Live 0x0000000000000000\n", m)
	}
	w.file("proc/modules", mods.String())
	tcp := "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	for i, p := range s.Listening {
		tcp += fmt.Sprintf("%4d: 0100007F:%04X 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 %d 1 0000000000000000 100 0 0 10 0\n", i, p, 10000+i)
	}
	w.file("proc/net/tcp", tcp)
	w.file("proc/net/tcp6", "  sl  local_address                         remote_address                        st\n")
	for name, u := range s.Units {
		w.file("state/systemd/"+name+".active", u.Active+"\n")
		if u.Enabled != "" {
			w.file("state/systemd/"+name+".enabled", u.Enabled+"\n")
		}
	}
	w.stub("systemctl")
	w.stub("curl")
	for path, h := range s.HealthHTTP {
		w.http("10256"+path, h)
	}
	for portPath, h := range s.HTTP {
		w.http(portPath, h)
	}
	w.commands(s.Commands)
	w.hostTools()
	w.procfsShim()
	if s.IPTables != "" {
		w.file("state/iptables.version", s.IPTables+"\n")
		w.stub("iptables")
	}
	if s.UFW != "" {
		w.file("etc/ufw/ufw.conf", fmt.Sprintf("ENABLED=%s\nLOGLEVEL=low\n", map[bool]string{true: "yes", false: "no"}[s.UFW == "active"]))
		w.file("state/ufw.status", s.UFW+"\n")
		w.stub("ufw")
	}
	if s.RKE2Version != "" {
		w.file("state/rke2.version", s.RKE2Version+"\n")
		w.stub("rke2")
	}
	for p, c := range s.Files {
		w.file(p, c)
	}
	return w.err
}

func (w *writer) http(portPath string, h HTTP) {
	base := "state/http/" + strings.ReplaceAll(portPath, "/", "_")
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

func (w *writer) stub(name string) {
	b, err := stubs.ReadFile("stubs/" + name)
	if err != nil {
		w.err = fmt.Errorf("embedded stub %s: %w", name, err)
		return
	}
	w.write("bin/"+name, b, 0o755)
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
