package audit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/result"
)

// BenchmarkAnalyze measures judging, correlating and drift over a large
// fleet (500 nodes, UFW on every 7th), the part of a run that grows with
// fleet size × facts.
func BenchmarkAnalyze(b *testing.B) {
	probes, err := probe.BuiltinProbes()
	if err != nil {
		b.Fatal(err)
	}
	checks, err := check.BuiltinChecks()
	if err != nil {
		b.Fatal(err)
	}
	var nodes []result.Node
	for i := 0; i < 500; i++ {
		facts := map[string]string{}
		for _, p := range probes {
			for _, f := range p.Facts {
				facts[f] = "v"
			}
		}
		facts["ufw.active"], facts["kubeproxy.healthz.code"], facts["kubeproxy.livez.code"] = "inactive", "200", "200"
		if i%7 == 0 {
			facts["ufw.active"], facts["kubeproxy.healthz.code"] = "active", "503"
		}
		facts["os.kernel"] = fmt.Sprintf("6.1.0-%d", i%3)
		nodes = append(nodes, result.Node{Name: fmt.Sprintf("node-%03d", i), Roles: []string{[]string{"etcd", "worker"}[i%2]}, Status: result.StatusOK, Facts: facts})
	}
	b.ReportAllocs()
	for b.Loop() {
		r := &result.Report{Nodes: nodes}
		Analyze(r, Rules{Probes: probes, Checks: checks, Gate: GatePolicy{FailOn: result.SeverityCritical}})
	}
}

// BenchmarkParseOutput measures parsing one node's bundle output that
// carries a 4 MiB flood inside one probe section.
func BenchmarkParseOutput(b *testing.B) {
	probes, _ := probe.BuiltinProbes()
	var sb strings.Builder
	sb.WriteString("@@FA:n:begin:os\nos.kernel=6.1\n")
	for sb.Len() < 4<<20 {
		sb.WriteString("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n")
	}
	sb.WriteString("@@FA:n:end:os:0\n")
	out := []byte(sb.String())
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	for b.Loop() {
		probe.ParseOutput(out, "n", probes)
	}
}

// BenchmarkBundleOnHealthyNode runs the whole probe bundle (node probes)
// against one simulated healthy node with /bin/sh: the cost every audited
// node pays, dominated by the processes the probes fork.
func BenchmarkBundleOnHealthyNode(b *testing.B) {
	nodeProbes, sess := healthyNode(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		nonce := probe.NewNonce()
		res, err := sess.Exec(context.Background(), bundleFor(b, nodeProbes, probe.Become{}, nonce), 5*time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		if p := probe.ParseOutput(res.Stdout, nonce, nodeProbes); len(p.Facts) == 0 {
			b.Fatal("no facts")
		}
	}
}

// BenchmarkProbeCost measures what each probe costs a healthy simulated
// node, as issue 17 asks: the processes forked (the kernel's count of
// forks since boot, "processes" in /proc/stat, read around the run; so
// other work on the machine adds to it: run it on an idle machine) and the
// CPU of the shell and everything it started (RUSAGE_CHILDREN). "prelude"
// is a bundle of no probes, the fixed cost; each "probe=ID" is a bundle of
// that probe alone, so its framework share (the per-probe timeout, shell
// and reader) is counted with it; "all" is the real bundle. bench/forks.sh
// prints the table.
func BenchmarkProbeCost(b *testing.B) {
	nodeProbes, sess := healthyNode(b)
	type bundleCase struct {
		name   string
		probes []probe.Probe
	}
	cases := []bundleCase{{"prelude", nil}}
	for _, p := range nodeProbes {
		cases = append(cases, bundleCase{"probe=" + p.ID, []probe.Probe{p}})
	}
	cases = append(cases, bundleCase{"all", nodeProbes})
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			var forks int64
			var cpu time.Duration
			for b.Loop() {
				nonce := probe.NewNonce()
				bundle := bundleFor(b, tc.probes, probe.Become{}, nonce)
				before, beforeCPU := forkCount(b), childCPU()
				res, err := sess.Exec(context.Background(), bundle, 5*time.Minute)
				forks += forkCount(b) - before
				cpu += childCPU() - beforeCPU
				if err != nil {
					b.Fatal(err)
				}
				for _, r := range probe.ParseOutput(res.Stdout, nonce, tc.probes).Runs {
					if r.Status != result.ProbeOK {
						b.Fatalf("probe %s: %s (exit %d) %s", r.ID, r.Status, r.ExitCode, r.Stderr)
					}
				}
			}
			b.ReportMetric(float64(forks)/float64(b.N), "forks/op")
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}

// healthyNode is the built-in node probes and a shell session on one
// simulated healthy node, which the bundle benchmarks run against.
func healthyNode(b *testing.B) ([]probe.Probe, *shSession) {
	b.Helper()
	probes, err := probe.BuiltinProbes()
	if err != nil {
		b.Fatal(err)
	}
	nodeProbes, _ := probe.SplitScope(probes)
	root := filepath.Join(b.TempDir(), "node")
	if err := nodesim.Build(root, nodesim.Healthy("bench-1", true)); err != nil {
		b.Fatal(err)
	}
	return nodeProbes, &shSession{root: root}
}

// forkCount is the number of forks since boot ("processes" in /proc/stat,
// proc(5)).
func forkCount(b *testing.B) int64 {
	b.Helper()
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		b.Skipf("no /proc/stat: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "processes "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatal("/proc/stat has no processes line")
	return 0
}

// childCPU is the user and system CPU of this process's waited-for
// children and their descendants.
func childCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
