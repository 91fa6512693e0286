//go:build linux

// Linux only: peak RSS is read from /proc/self/status.

package audit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/audit/catalog"
	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/report"
	"github.com/fleet-audit/fleet-audit/result"
)

// BenchmarkScale measures the client alone over a fleet of 100, 1,000 and
// 10,000 nodes (issue 17, "linear to 10,000 nodes"): audit.Run with every
// built-in probe and check, then every file format of the report written,
// as `fleet-audit run --json --markdown --markdown-summary --html --junit
// --prom` does, terminal summary included. The nodes cost nothing: each distinct node state ran the
// real bundle once on a simulated node (nodesim) before the timer, and
// every node replays that recorded output with this run's nonce and its
// own name (replayTransport). SSH's cost is not in it.
//
// The fleet is the seed incident at scale: 3 etcd, 2 control-plane and the
// rest workers; UFW active (kube-proxy answering 503, its pod in
// CrashLoopBackOff) on every tenth node, a newer kernel on every
// hundredth, UFW accepted by a waiver on 20 of them, so drift,
// correlation, rollout, waivers and the cluster join have real work. The
// cluster view lists every node up to 5,000, the most one Kubernetes
// cluster holds.
//
// Peak RSS (VmHWM) is the whole process's, so run one size per process:
// bench/scale.sh does, and prints the table. Numbers are measured, never
// asserted; the benchmark fails only when the run is not what it claims to
// be (a node not ok, no probable cause, a cluster that did not join).
func BenchmarkScale(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) { benchScale(b, n) })
	}
}

func benchScale(b *testing.B, n int) {
	cat, err := catalog.Builtin()
	if err != nil {
		b.Fatal(err)
	}
	probes, checks := cat.Probes, cat.Checks
	members := nodesim.ScaleIncident(n)
	waivers, err := cat.ParseWaivers("waivers.yaml", scaleWaivers(members))
	if err != nil {
		b.Fatal(err)
	}
	tr := recordScaleFleet(b, members, probes, checks)
	fleet := &Fleet{Name: fmt.Sprintf("scale-%d", n)}
	for _, m := range members {
		fleet.Targets = append(fleet.Targets, Target{Name: m.Name, Address: "127.0.0.1", Roles: m.Roles})
	}
	// SCALE_OUT keeps the reports there, to read what the fleet looks like.
	dir := os.Getenv("SCALE_OUT")
	if dir == "" {
		dir = b.TempDir()
	}
	// The files, and the terminal summary a run prints.
	formats := append(report.FileFormats(), report.FileFormat{Name: "terminal", DemoFile: "terminal.txt"})
	sizes := make([]int64, len(formats))
	renders := make([]time.Duration, len(formats))
	var wall, cpu time.Duration
	runtime.GC()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start, startCPU := time.Now(), testtools.SelfCPU()
		r, err := Run(context.Background(), RunOptions{Fleet: fleet, Transport: tr, Forks: 10, NodeTimeout: time.Minute,
			Rules: Rules{Probes: probes, Checks: checks, Waivers: waivers, Gate: GatePolicy{FailOn: result.SeverityCritical}}})
		if err != nil {
			b.Fatal(err)
		}
		for j, f := range formats {
			t0 := time.Now()
			sizes[j] = writeReport(b, filepath.Join(dir, f.DemoFile), f.Name, r)
			renders[j] += time.Since(t0)
		}
		wall += time.Since(start)
		cpu += testtools.SelfCPU() - startCPU
		b.StopTimer()
		checkScaleReport(b, r, n)
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(wall.Seconds()/float64(b.N), "wall-s")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s")
	b.ReportMetric(cpu.Seconds()*1e3/float64(b.N)/float64(n), "cpu-ms/node")
	b.ReportMetric(float64(testtools.PeakRSSKiB(b))/1024, "peak-RSS-MiB")
	for j, f := range formats {
		b.ReportMetric(float64(sizes[j]), f.Name+"-bytes")
		b.ReportMetric(renders[j].Seconds()/float64(b.N), f.Name+"-s")
	}
}

// scaleWaivers accepts UFW on the first 20 UFW nodes: above 200 nodes it
// splits the finding, as a partial waiver does.
func scaleWaivers(members []nodesim.Member) []byte {
	var names []string
	for _, m := range members {
		if m.State.UFW == "active" && len(names) < 20 {
			names = append(names, m.Name)
		}
	}
	return fmt.Appendf(nil, "- check: firewall.ufw-active\n  nodes: [%s]\n  reason: BENCH-1, accepted for the benchmark\n  expires: 2099-12-31\n", strings.Join(names, ", "))
}

// recordScaleFleet runs the real bundles once on one simulated node of each
// class (node probes, and the cluster probes on the first server, whose
// kubectl lists the whole fleet) and returns a transport that replays them
// for every member.
func recordScaleFleet(b *testing.B, members []nodesim.Member, probes []probe.Probe, checks []check.Check) *replayTransport {
	b.Helper()
	dir := b.TempDir()
	tr := &replayTransport{classOf: map[string]string{}, rep: map[string]string{}, runs: map[replayKey]recordedRun{}}
	live := &shTransport{roots: map[string]string{}, calls: map[string]int{}}
	sample := &Fleet{Name: "record"}
	for _, m := range members {
		c := nodesim.ScaleClass(m)
		tr.classOf[m.Name] = c
		if _, ok := tr.rep[c]; ok {
			continue
		}
		tr.rep[c] = m.Name
		root := filepath.Join(dir, m.Name)
		if err := nodesim.Build(root, m.State); err != nil {
			b.Fatal(err)
		}
		live.roots[m.Name] = root
		sample.Targets = append(sample.Targets, Target{Name: m.Name, Address: "127.0.0.1", Roles: m.Roles})
	}
	tr.live = live
	if _, err := Run(context.Background(), RunOptions{Fleet: sample, Transport: tr, Forks: 4, NodeTimeout: 5 * time.Minute,
		Rules: Rules{Probes: probes, Checks: checks, Gate: GatePolicy{FailOn: result.SeverityCritical}}}); err != nil {
		b.Fatal(err)
	}
	tr.live = nil
	return tr
}

// replayTransport answers every node's bundle with the output its class's
// representative gave for the same bundle, with this run's nonce and the
// node's name put in. While live is set, it runs bundles there and records
// them.
//
// A replay must cost the client nothing, so it tells bundles apart by
// length: the nonce is always 16 digits, so a bundle's length is the same
// on every node, while the node bundle and the cluster bundle differ. The
// recording checks that no two different bundles have one length.
type replayTransport struct {
	classOf map[string]string // node → class
	rep     map[string]string // class → the node that was recorded
	live    *shTransport
	mu      sync.Mutex
	runs    map[replayKey]recordedRun
}

type replayKey struct {
	class string
	size  int
}

type recordedRun struct {
	bundle [sha256.Size]byte // the bundle without its nonce
	stdout []byte            // with the nonce as nonceHole
}

type replaySession struct {
	t    *replayTransport
	node string
}

func (t *replayTransport) Open(ctx context.Context, h Target) (Session, error) {
	return &replaySession{t: t, node: h.Name}, nil
}

// nonceHole stands for the nonce in recorded output.
const nonceHole = "\x00nonce\x00"

func (s *replaySession) Exec(ctx context.Context, script Script) (ExecResult, error) {
	m := bundleNonce.FindSubmatch(script.Head)
	if m == nil {
		return ExecResult{}, fmt.Errorf("replay: %s was sent a script that is not a bundle", s.node)
	}
	nonce := m[1]
	class := s.t.classOf[s.node]
	k := replayKey{class: class, size: len(script.Bundle)}
	if s.t.live != nil {
		return s.record(ctx, k, nonce, script)
	}
	s.t.mu.Lock()
	run, ok := s.t.runs[k]
	s.t.mu.Unlock()
	if !ok {
		return ExecResult{}, fmt.Errorf("replay: no recorded run of a %d-byte bundle for class %q", len(script.Bundle), class)
	}
	out := bytes.ReplaceAll(run.stdout, []byte(nonceHole), nonce)
	if rep := s.t.rep[class]; s.node != rep {
		out = bytes.ReplaceAll(out, []byte(rep), []byte(s.node))
	}
	return ExecResult{Stdout: out}, nil
}

// record runs script on the node's simulated root and keeps its output.
func (s *replaySession) record(ctx context.Context, k replayKey, nonce []byte, script Script) (ExecResult, error) {
	sess, err := s.t.live.Open(ctx, Target{Name: s.node})
	if err != nil {
		return ExecResult{}, err
	}
	res, err := sess.Exec(ctx, script)
	if err != nil || res.ExitCode != 0 {
		return res, fmt.Errorf("record %s: exit %d: %v: %s", s.node, res.ExitCode, err, res.Stderr)
	}
	run := recordedRun{bundle: sha256.Sum256(bytes.ReplaceAll(script.Text(), nonce, []byte(nonceHole))), stdout: bytes.ReplaceAll(res.Stdout, nonce, []byte(nonceHole))}
	s.t.mu.Lock()
	defer s.t.mu.Unlock()
	if old, ok := s.t.runs[k]; ok && old.bundle != run.bundle {
		return res, fmt.Errorf("record %s: two different %d-byte bundles: the replay cannot tell them apart", s.node, k.size)
	}
	s.t.runs[k] = run
	return res, nil
}

func (s *replaySession) Close() error { return nil }

// writeReport writes r in format to path and returns the file's size.
func writeReport(b *testing.B, path, format string, r *result.Report) int64 {
	f, err := report.New(format, report.Options{FullReport: "report.html", Plan: BuildPlan(r, builtinChecksB(b))})
	if err != nil {
		b.Fatal(err)
	}
	out, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := f.Format(out, r); err != nil {
		b.Fatal(err)
	}
	st, err := out.Stat()
	if err != nil {
		b.Fatal(err)
	}
	if err := out.Close(); err != nil {
		b.Fatal(err)
	}
	return st.Size()
}

// checkScaleReport fails a run that measured something other than the
// incident at scale: every node audited, UFW named as the probable cause,
// the cluster view joined to every node it lists.
func checkScaleReport(b *testing.B, r *result.Report, n int) {
	b.Helper()
	for _, node := range r.Nodes {
		if node.Status != result.StatusOK {
			b.Fatalf("node %s: %s: %s %s", node.Name, node.Status, node.Message, node.Error)
		}
	}
	if len(r.Findings) == 0 || r.Findings[0].Cause == nil || r.Findings[0].Cause.Fact != "ufw.active" {
		b.Fatalf("the first finding is not UFW as the probable cause: %+v", r.Findings[:min(1, len(r.Findings))])
	}
	waived := 0
	for _, f := range r.Findings {
		if f.Waived != nil {
			waived++
		}
	}
	if waived != 1 {
		b.Fatalf("%d waived findings, want the one UFW finding split by the waiver", waived)
	}
	if r.Cluster == nil || r.Cluster.Status != result.ClusterOK || len(r.Cluster.Joined) != min(n, probe.MaxClusterNodes) {
		b.Fatalf("cluster view from %s: %s, %s; joined %d of %d nodes", r.Cluster.Node, r.Cluster.Status, fmt.Sprint(r.Cluster.Probes), len(r.Cluster.Joined), n)
	}
}

func builtinChecksB(b *testing.B) []check.Check {
	cs, err := check.BuiltinChecks()
	if err != nil {
		b.Fatal(err)
	}
	return cs
}
