package audit

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
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
	probes, err := probe.BuiltinProbes()
	if err != nil {
		b.Fatal(err)
	}
	nodeProbes, _ := probe.SplitScope(probes)
	root := filepath.Join(b.TempDir(), "node")
	if err := nodesim.Build(root, nodesim.Healthy("bench-1", true)); err != nil {
		b.Fatal(err)
	}
	sess := &shSession{root: root}
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
