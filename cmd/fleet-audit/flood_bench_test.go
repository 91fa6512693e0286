//go:build linux

// Linux only: bench/maxrss reads /proc, and ru_maxrss is KiB here but bytes
// on some other systems.

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/sshfleet"
	"github.com/fleet-audit/fleet-audit/result"
)

const (
	// floodRunTimeout bounds one audit subprocess; a cap that failed could
	// otherwise keep reading 500 MiB at whatever pace the machine manages.
	floodRunTimeout = 5 * time.Minute
	flood50         = "flood-50mib"
	flood500        = "flood-500mib"
)

// BenchmarkFloodRSS runs the built fleet-audit binary, as a user would, against
// a fleet of two healthy simulated nodes and nodes that print 50 MiB and
// 500 MiB. It reports the subprocess's peak RSS (the worst of b.N runs, taken
// by bench/maxrss, whose doc says why not from here) and wall time per audit; a bounded client keeps peak RSS about the same whatever
// the flood size. Each run's results.json must show the flood nodes as
// output_truncated and the healthy ones as ok, so a broken run cannot pass
// for a cheap one.
func BenchmarkFloodRSS(b *testing.B) {
	bins := buildBinaries(b)
	fleet := startFloodFleet(b)
	healthy := []string{"node-1", "node-2"}
	for _, v := range []struct {
		name  string
		flood []string
	}{
		{"flood=none", nil},
		{"flood=50MiB", []string{flood50}},
		{"flood=500MiB", []string{flood500}},
		{"flood=50MiB+500MiB", []string{flood50, flood500}},
	} {
		b.Run(v.name, func(b *testing.B) {
			dir := b.TempDir()
			inv := fleet.writeInventory(b, dir, append(slices.Clone(healthy), v.flood...))
			want := map[string]result.NodeStatus{}
			for _, n := range healthy {
				want[n] = result.StatusOK
			}
			for _, n := range v.flood {
				want[n] = result.StatusOutputTruncated
			}
			var peakKiB, floorKiB int64
			for b.Loop() {
				kib, floor, err := auditSubprocess(b.Context(), bins, inv, dir)
				if err != nil {
					b.Fatal(err)
				}
				if err := checkStatuses(filepath.Join(dir, "results.json"), want); err != nil {
					b.Fatal(err)
				}
				peakKiB, floorKiB = max(peakKiB, kib), max(floorKiB, floor)
			}
			b.ReportMetric(float64(peakKiB)/1024, "peak-RSS-MiB")
			// What peak-RSS-MiB can be no lower than: maxrss's own.
			b.ReportMetric(float64(floorKiB)/1024, "floor-RSS-MiB")
		})
	}
}

// binaries are the programs a run executes.
type binaries struct{ fleetAudit, maxrss string }

// buildBinaries builds fleet-audit the way `make build` does, once for all
// variants, so what is measured is the shipped program and not the test
// binary; and bench/maxrss, which measures it.
func buildBinaries(b *testing.B) binaries {
	b.Helper()
	dir := b.TempDir()
	bins := binaries{fleetAudit: filepath.Join(dir, "fleet-audit"), maxrss: filepath.Join(dir, "maxrss")}
	ctx, cancel := context.WithTimeout(b.Context(), 5*time.Minute)
	defer cancel()
	for bin, pkg := range map[string]string{bins.fleetAudit: ".", bins.maxrss: "github.com/fleet-audit/fleet-audit/bench/maxrss"} {
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	return bins
}

// floodFleet is the in-process fleet every variant audits a subset of.
type floodFleet struct {
	servers *sshfleet.Fleet
	members map[string]nodesim.Member
	keyFile string
	known   string
	empty   string
}

func startFloodFleet(b *testing.B) *floodFleet {
	b.Helper()
	dir := b.TempDir()
	signer, keyPEM, err := sshfleet.NewClientKey()
	if err != nil {
		b.Fatal(err)
	}
	auth := []ssh.PublicKey{signer.PublicKey()}
	f := &floodFleet{
		members: map[string]nodesim.Member{},
		keyFile: filepath.Join(dir, "id_ed25519"),
		known:   filepath.Join(dir, "known_hosts"),
		empty:   filepath.Join(dir, "ssh_config"),
	}
	var cfgs []sshfleet.NodeConfig
	for _, m := range nodesim.Clean(2) {
		root := filepath.Join(dir, "nodes", m.Name)
		if err := nodesim.Build(root, m.State); err != nil {
			b.Fatal(err)
		}
		f.members[m.Name] = m
		cfgs = append(cfgs, sshfleet.NodeConfig{
			Name: m.Name, AuthorizedKeys: auth,
			Env: nodesim.SessionEnv(root), Dir: root,
		})
	}
	for name, size := range map[string]int64{flood50: 50 << 20, flood500: 500 << 20} {
		f.members[name] = nodesim.Member{Name: name, Roles: []string{"worker"}}
		cfgs = append(cfgs, sshfleet.NodeConfig{
			Name: name, AuthorizedKeys: auth, Fault: sshfleet.FaultFlood, FloodBytes: size,
		})
	}
	if f.servers, err = sshfleet.Start(b.Context(), cfgs); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := f.servers.Close(); err != nil {
			b.Error(err)
		}
	})
	for path, data := range map[string][]byte{f.keyFile: keyPEM, f.known: f.servers.KnownHosts(), f.empty: nil} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	return f
}

// writeInventory writes dir/inventory.yaml listing the named nodes.
func (f *floodFleet) writeInventory(b *testing.B, dir string, names []string) string {
	b.Helper()
	var hosts strings.Builder
	for _, n := range f.servers.Nodes() {
		if !slices.Contains(names, n.Config.Name) {
			continue
		}
		m := f.members[n.Config.Name]
		fmt.Fprintf(&hosts, "  %s: {address: %s, port: %d, roles: [%s]}\n", m.Name, n.Host, n.Port, strings.Join(m.Roles, ", "))
	}
	inv := fmt.Sprintf("name: flood-bench\ndefaults:\n  identity_files: [%q]\n  known_hosts: [%q]\n  ssh_config: %q\nhosts:\n%s",
		f.keyFile, f.known, f.empty, hosts.String())
	path := filepath.Join(dir, "inventory.yaml")
	if err := os.WriteFile(path, []byte(inv), 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

// auditSubprocess runs one `fleet-audit run` writing dir/results.json, under
// bench/maxrss, and returns fleet-audit's peak RSS and maxrss's floor in KiB.
// Exit 2 (usage) or death by a signal is an error; 0, 1 and 3 are gate
// outcomes the statuses then judge.
func auditSubprocess(ctx context.Context, bins binaries, inv, dir string) (peakKiB, floorKiB int64, err error) {
	// Left over from the previous run, either would vouch for this one.
	report, results := filepath.Join(dir, "rusage"), filepath.Join(dir, "results.json")
	for _, p := range []string{report, results} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return 0, 0, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, floodRunTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bins.maxrss, report, bins.fleetAudit, "run", "-i", inv, "--json", results, "-q")
	// No agent, no user ssh_config or known_hosts: only the inventory's.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "NO_COLOR=1"}
	// Its own process group, so a timeout kills fleet-audit along with
	// maxrss instead of orphaning it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	data, err := os.ReadFile(report)
	if err != nil {
		return 0, 0, fmt.Errorf("fleet-audit: %w, %w\n%s", runErr, err, out.Bytes())
	}
	peakKiB, floorKiB, code, err := parseRusage(data)
	if err != nil {
		return 0, 0, err
	}
	if !slices.Contains([]int{0, 1, 3}, code) {
		return 0, 0, fmt.Errorf("fleet-audit exited %d (-1: killed by a signal):\n%s", code, out.Bytes())
	}
	return peakKiB, floorKiB, nil
}

// parseRusage reads bench/maxrss's report. A peak not above the floor is an
// error: it may be maxrss's own size rather than fleet-audit's.
func parseRusage(data []byte) (peakKiB, floorKiB int64, code int, err error) {
	if _, err := fmt.Sscanf(string(data), "%d %d %d\n", &peakKiB, &floorKiB, &code); err != nil {
		return 0, 0, 0, fmt.Errorf("maxrss report %q: %w", data, err)
	}
	if peakKiB <= floorKiB {
		return 0, 0, 0, fmt.Errorf("peak RSS %d KiB is not above maxrss's own %d KiB, so it says nothing about fleet-audit", peakKiB, floorKiB)
	}
	return peakKiB, floorKiB, code, nil
}

// checkStatuses fails unless results.json lists exactly the nodes of want,
// each with its wanted status.
func checkStatuses(path string, want map[string]result.NodeStatus) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	var r result.Report
	if err := json.Unmarshal(data, &r); err != nil {
		return fmt.Errorf("results %s: %w", path, err)
	}
	var errs []error
	seen := map[string]bool{}
	for _, n := range r.Nodes {
		seen[n.Name] = true
		w, ok := want[n.Name]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("node %s was not in the inventory", n.Name))
		case n.Status != w:
			errs = append(errs, fmt.Errorf("node %s: status %s, want %s: %s", n.Name, n.Status, w, n.Message))
		}
	}
	for name := range want {
		if !seen[name] {
			errs = append(errs, fmt.Errorf("node %s missing from the results", name))
		}
	}
	return errors.Join(errs...)
}

// TestCheckStatuses is the negative control of the benchmark's guard: a
// results.json with a flood node that was read whole, a healthy node that
// failed, or a node missing must be refused.
func TestCheckStatuses(t *testing.T) {
	want := map[string]result.NodeStatus{"node-1": result.StatusOK, flood50: result.StatusOutputTruncated}
	tests := []struct {
		name  string
		nodes []result.Node
		ok    bool
	}{
		{"as wanted", []result.Node{{Name: "node-1", Status: result.StatusOK}, {Name: flood50, Status: result.StatusOutputTruncated}}, true},
		{"flood not truncated", []result.Node{{Name: "node-1", Status: result.StatusOK}, {Name: flood50, Status: result.StatusOK}}, false},
		{"healthy node failed", []result.Node{{Name: "node-1", Status: result.StatusConnectionLost}, {Name: flood50, Status: result.StatusOutputTruncated}}, false},
		{"flood node missing", []result.Node{{Name: "node-1", Status: result.StatusOK}}, false},
		{"no nodes", nil, false},
		{"unexpected node", []result.Node{{Name: "node-1", Status: result.StatusOK}, {Name: flood50, Status: result.StatusOutputTruncated}, {Name: "x", Status: result.StatusOK}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := json.Marshal(result.Report{SchemaVersion: 1, Nodes: tt.nodes})
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "results.json")
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := checkStatuses(path, want); (err == nil) != tt.ok {
				t.Errorf("checkStatuses error %v, want ok %v", err, tt.ok)
			}
		})
	}
}

// TestParseRusage is the negative control of the RSS guard: a peak at or
// below maxrss's own size, as measuring /bin/true gives, must be refused.
func TestParseRusage(t *testing.T) {
	tests := []struct {
		report string
		ok     bool
	}{
		{"40960 2544 3\n", true},
		{"2460 2544 0\n", false},
		{"2544 2544 0\n", false},
		{"40960 2544\n", false},
		{"", false},
	}
	for _, tt := range tests {
		peak, _, _, err := parseRusage([]byte(tt.report))
		if (err == nil) != tt.ok {
			t.Errorf("parseRusage(%q) = %d, %v; want ok %v", tt.report, peak, err, tt.ok)
		}
	}
}
