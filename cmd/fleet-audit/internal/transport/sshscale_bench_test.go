//go:build linux

// Linux only: peak RSS is read from /proc/self/status.

package transport

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/sync/errgroup"

	"github.com/fleet-audit/fleet-audit/audit"
	"github.com/fleet-audit/fleet-audit/audit/catalog"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/sshfleet"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/inventory"
	"github.com/fleet-audit/fleet-audit/remote"
	"github.com/fleet-audit/fleet-audit/result"
)

// The fleet process: this test binary, started again by BenchmarkSSHScale
// with benchFleetEnv naming a directory, serves the fleet instead of
// running tests (serveBenchFleet).
const (
	benchFleetEnv  = "FLEET_AUDIT_BENCH_FLEET"
	benchNodesEnv  = "FLEET_AUDIT_BENCH_NODES"
	benchSimKeyEnv = "FLEET_AUDIT_BENCH_SIM_KEY"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(benchFleetEnv); dir != "" {
		if err := serveBenchFleet(dir); err != nil {
			fmt.Fprintln(os.Stderr, "bench fleet:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// BenchmarkSSHScale measures what the client pays per node over the real
// SSH protocol (issue 31): the transport and audit.Run of `fleet-audit run`
// (remote.SSHDialer: TCP, a full SSH handshake, host key checked against a
// known_hosts file that lists the whole fleet, public key auth, one
// session running the whole probe bundle) against 100, 1,000 and 10,000
// nodes on 127.0.0.1, ten at a time (--forks' default).
//
// The nodes run in another process, this test binary started again
// (serveBenchFleet), so the CPU measured (getrusage of this process) is the
// client's alone. Each node is an sshfleet server of its own, on a port of
// its own, with a host key of its own; the probe bundle ran for real once
// on one simulated node (nodesim) of each kind before the timer, and every
// node of that kind replays that output with its own name
// (sshfleet.NodeConfig.ReplayAs), so the node side costs little and the
// same on both sides of a change.
//
// Two modes, each its own sub-benchmark, so that one process measures one
// (peak RSS is the process's): connect dials, runs one empty script and
// closes, the floor any client pays for a node; audit is audit.Run with
// every built-in probe and check, the cluster probe included. Reports are
// not written (BenchmarkScale in audit measures them). Besides CPU and
// memory it counts, per node, the process's context switches and the
// goroutines started: the wake-ups of a client that mostly waits.
//
// Numbers are measured, never asserted: bench/sshscale.sh runs one size and
// mode per process and prints the table. The benchmark fails only when the
// run is not what it claims (a node not ok, no cluster view).
func BenchmarkSSHScale(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		for _, mode := range []string{"connect", "audit"} {
			b.Run(fmt.Sprintf("nodes=%d/mode=%s", n, mode), func(b *testing.B) { benchSSHScale(b, n, mode) })
		}
	}
}

func benchSSHScale(b *testing.B, n int, mode string) {
	key := probe.NewNonce()
	probe.UseSimulatedNodeKey(key)
	fl := startBenchFleet(b, n, key)
	inv := fl.inventory()
	cat, err := catalog.Builtin()
	if err != nil {
		b.Fatal(err)
	}
	const forks = 10
	for i := 0; i < b.N; i++ {
		dialer := remote.NewSSHDialer(remote.SSHOptions{DefaultIdentityFiles: []string{}})
		tr := &Transport{Inventory: inv, SSH: dialer, Local: remote.LocalDialer{}}
		run := func(fleet *audit.Fleet) *result.Report {
			r, err := audit.Run(context.Background(), audit.RunOptions{Fleet: fleet, Transport: tr, Forks: forks, NodeTimeout: 5 * time.Minute,
				Rules: audit.Rules{Probes: cat.Probes, Checks: cat.Checks, Gate: audit.GatePolicy{FailOn: result.SeverityCritical}}})
			if err != nil {
				b.Fatal(err)
			}
			return r
		}
		if mode == "audit" && i == 0 {
			// The nodes that run the bundle for real, once, before the
			// timer: every other node replays them.
			b.StopTimer()
			checkSSHScale(b, run(fl.fleetOf(fl.reps)), len(fl.reps), -1)
			b.StartTimer()
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		startCPU, start, startWake := testtools.SelfCPU(), time.Now(), wakeups()
		b.ResetTimer()
		var r *result.Report
		switch mode {
		case "audit":
			r = run(fl.fleetOf(nil))
		case "connect":
			connectAll(b, dialer, inv, forks)
		}
		b.StopTimer()
		cpu, wall, wake := testtools.SelfCPU()-startCPU, time.Since(start), wakeups().minus(startWake)
		runtime.ReadMemStats(&after)
		runtime.GC()
		var kept runtime.MemStats
		runtime.ReadMemStats(&kept)
		if r != nil {
			checkSSHScale(b, r, n, min(n, probe.MaxClusterNodes))
			b.ReportMetric(float64(factBytes(r))/float64(n)/1024, "facts-KiB/node")
		}
		// Held while the report is alive: what the run keeps per node.
		// FLEET_AUDIT_BENCH_HEAP names a file for a heap profile of it.
		if path := os.Getenv("FLEET_AUDIT_BENCH_HEAP"); path != "" {
			writeHeapProfile(b, path)
		}
		b.ReportMetric((float64(kept.HeapAlloc)-float64(before.HeapAlloc))/float64(n)/1024, "kept-KiB/node")
		if r != nil {
			// What the facts themselves hold (their maps and strings):
			// what is freed once the report lets go of them.
			for i := range r.Nodes {
				r.Nodes[i].Facts = nil
			}
			runtime.GC()
			var noFacts runtime.MemStats
			runtime.ReadMemStats(&noFacts)
			b.ReportMetric((float64(kept.HeapAlloc)-float64(noFacts.HeapAlloc))/float64(n)/1024, "facts-heap-KiB/node")
		}
		runtime.KeepAlive(r)
		if err := dialer.Close(); err != nil {
			b.Error(err)
		}
		b.ReportMetric(wall.Seconds(), "wall-s")
		b.ReportMetric(cpu.Seconds()*1e3/float64(n), "cpu-ms/node")
		b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(n), "allocs/node")
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(n)/1024, "alloc-KiB/node")
		b.ReportMetric(float64(wake.switches)/float64(n), "ctxsw/node")
		b.ReportMetric(float64(wake.goroutines)/float64(n), "goroutines/node")
		b.ReportMetric(float64(after.NumGC-before.NumGC), "gc-cycles")
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(float64(testtools.PeakRSSKiB(b))/1024, "peak-RSS-MiB")
}

// connectAll dials every host, runs an empty script and closes, forks at
// a time.
func connectAll(b *testing.B, d remote.Dialer, inv *inventory.Inventory, forks int) {
	var g errgroup.Group
	g.SetLimit(forks)
	for _, h := range inv.Hosts {
		g.Go(func() error {
			c, err := d.Dial(context.Background(), targetOf(h, remote.HostKeyDefault))
			if err != nil {
				return err
			}
			defer c.Close()
			out, err := c.Run(context.Background(), remote.Script{Stdin: []byte(":\n"), Timeout: time.Minute})
			if err == nil && out.ExitCode != 0 {
				err = fmt.Errorf("%s: exit %d: %s", h.Name, out.ExitCode, out.Stderr)
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
}

// checkSSHScale fails a run in which a node was not audited, or the
// cluster view did not join the nodes it lists (joined < 0: not checked).
func checkSSHScale(b *testing.B, r *result.Report, n, joined int) {
	b.Helper()
	if len(r.Nodes) != n {
		b.Fatalf("%d nodes in the report, want %d", len(r.Nodes), n)
	}
	for _, node := range r.Nodes {
		if node.Status != result.StatusOK {
			b.Fatalf("node %s: %s: %s %s", node.Name, node.Status, node.Message, node.Error)
		}
	}
	if r.Cluster == nil || r.Cluster.Status != result.ClusterOK || joined >= 0 && len(r.Cluster.Joined) != joined {
		b.Fatalf("cluster view: %+v", r.Cluster)
	}
}

// factBytes is the size of every node's facts, keys and values.
func factBytes(r *result.Report) int {
	total := 0
	for _, node := range r.Nodes {
		for k, v := range node.Facts {
			total += len(k) + len(v)
		}
	}
	return total
}

// benchFleet is the client's view of the fleet process.
type benchFleet struct {
	dir   string
	hosts []inventory.Host
	reps  map[string]bool // the nodes that run bundles for real
}

func (f *benchFleet) inventory() *inventory.Inventory {
	return &inventory.Inventory{Name: "bench", Hosts: f.hosts, Format: "native"}
}

// fleetOf is the audit fleet of the hosts in only, or of all when only is
// nil.
func (f *benchFleet) fleetOf(only map[string]bool) *audit.Fleet {
	fleet := &audit.Fleet{Name: "bench"}
	for _, h := range f.hosts {
		if only == nil || only[h.Name] {
			fleet.Targets = append(fleet.Targets, audit.Target{Name: h.Name, Address: h.Address, Roles: h.Roles})
		}
	}
	return fleet
}

// startBenchFleet starts the fleet process for n nodes and reads what it
// wrote: the nodes (name, port, roles, whether it runs bundles for real),
// the client key and known_hosts. The process ends when the benchmark
// does.
func startBenchFleet(b *testing.B, n int, simKey string) *benchFleet {
	b.Helper()
	dir := b.TempDir()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), benchFleetEnv+"="+dir, benchNodesEnv+"="+strconv.Itoa(n), benchSimKeyEnv+"="+simKey)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		// Closing its stdin tells the fleet to close; a fleet that does
		// not is killed, by its pid alone.
		_ = stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	ready, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || ready != "ready\n" {
		b.Fatalf("the fleet process said %q: %v", ready, err)
	}
	nodes, err := os.ReadFile(filepath.Join(dir, "nodes.txt"))
	if err != nil {
		b.Fatal(err)
	}
	f := &benchFleet{dir: dir, reps: map[string]bool{}}
	for line := range strings.Lines(string(nodes)) {
		fields := strings.Fields(line)
		port, err := strconv.Atoi(fields[1])
		if err != nil || len(fields) != 4 {
			b.Fatalf("nodes line %q", line)
		}
		f.hosts = append(f.hosts, inventory.Host{Name: fields[0], Address: "127.0.0.1", Port: port, User: "audit",
			IdentityFiles: []string{filepath.Join(dir, "id_ed25519")}, KnownHostsFiles: []string{filepath.Join(dir, "known_hosts")},
			Connection: "ssh", Roles: strings.Split(fields[2], ",")})
		if fields[3] == "rep" {
			f.reps[fields[0]] = true
		}
	}
	if len(f.hosts) != n {
		b.Fatalf("the fleet process lists %d nodes, want %d", len(f.hosts), n)
	}
	return f
}

// serveBenchFleet is the fleet process: it starts one sshfleet node per
// member, each replaying the first node of its kind, writes dir/nodes.txt,
// dir/id_ed25519 and dir/known_hosts, says "ready" on stdout and serves
// until its stdin closes.
func serveBenchFleet(dir string) error {
	n, err := strconv.Atoi(os.Getenv(benchNodesEnv))
	if err != nil {
		return err
	}
	probe.UseSimulatedNodeKey(os.Getenv(benchSimKeyEnv))
	signer, keyPEM, err := sshfleet.NewClientKey()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "id_ed25519"), keyPEM, 0o600); err != nil {
		return err
	}
	members := nodesim.ScaleIncident(n)
	var replay sshfleet.Replay
	repOf, rootOf := map[string]string{}, map[string]string{}
	var cfgs []sshfleet.NodeConfig
	var list strings.Builder
	for _, m := range members {
		c := nodesim.ScaleClass(m)
		rep, ok := repOf[c]
		if !ok {
			rep = m.Name
			repOf[c] = rep
			rootOf[rep] = filepath.Join(dir, "roots", m.Name)
			if err := nodesim.Build(rootOf[rep], m.State); err != nil {
				return err
			}
		}
		cfgs = append(cfgs, sshfleet.NodeConfig{Name: m.Name, AuthorizedKeys: []ssh.PublicKey{signer.PublicKey()},
			Env: nodesim.SessionEnv(rootOf[rep]), Dir: rootOf[rep], Replay: &replay, ReplayAs: rep})
		kind := "standin"
		if rep == m.Name {
			kind = "rep"
		}
		fmt.Fprintf(&list, "%s %%d %s %s\n", m.Name, strings.Join(m.Roles, ","), kind)
	}
	fleet, err := sshfleet.Start(context.Background(), cfgs)
	if err != nil {
		return err
	}
	defer fleet.Close()
	lines := strings.SplitAfter(list.String(), "\n")
	var nodes strings.Builder
	for i, node := range fleet.Nodes() {
		fmt.Fprintf(&nodes, lines[i], node.Port)
	}
	if err := os.WriteFile(filepath.Join(dir, "nodes.txt"), []byte(nodes.String()), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "known_hosts"), fleet.KnownHosts(), 0o600); err != nil {
		return err
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}

// wake counts what wakes the client: its threads' context switches
// (getrusage, voluntary and not), each a thread put to sleep or woken,
// and the goroutines it started.
type wake struct{ switches, goroutines int64 }

func wakeups() wake {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	var created int64
	if s[0].Value.Kind() == metrics.KindUint64 {
		created = int64(s[0].Value.Uint64())
	}
	return wake{switches: ru.Nvcsw + ru.Nivcsw, goroutines: created}
}

func (w wake) minus(o wake) wake { return wake{w.switches - o.switches, w.goroutines - o.goroutines} }

func writeHeapProfile(b *testing.B, path string) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
}
