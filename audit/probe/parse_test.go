package probe

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fleet-audit/fleet-audit/result"
)

func TestParseOutput(t *testing.T) {
	const n = "abc"
	tests := []struct {
		name      string
		out       string
		wantFacts map[string]string
		wantRuns  string // status of a, b
	}{
		{"both ok", "@@FA:abc:begin:a\na.x=1\na.y=two words\n\n@@FA:abc:end:a:0\n@@FA:abc:begin:b\nb.z=3\n@@FA:abc:end:b:0\n",
			map[string]string{"a.x": "1", "a.y": "two words", "b.z": "3"}, "ok ok"},
		{"undeclared key dropped, other probe's key not forged", "@@FA:abc:begin:a\na.x=1\nb.z=forged\nnoise line\n@@FA:abc:end:a:0\n",
			map[string]string{"a.x": "1"}, "ok missing"},
		{"wrong nonce ignored", "@@FA:zzz:begin:a\na.x=1\n@@FA:zzz:end:a:0\n", map[string]string{}, "missing missing"},
		{"unterminated section", "@@FA:abc:begin:a\na.x=1\n", map[string]string{"a.x": "1"}, "truncated missing"},
		{"timeout exit code", "@@FA:abc:begin:a\na.x=1\n@@FA:abc:end:a:124\n", map[string]string{"a.x": "1"}, "timeout missing"},
		{"failed exit code", "@@FA:abc:begin:a\n@@FA:abc:end:a:2\n", map[string]string{}, "failed missing"},
		{"secret redacted by key", "@@FA:abc:begin:a\na.token=abc\n@@FA:abc:end:a:0\n", map[string]string{"a.token": result.Redacted}, "ok missing"},
		{"secret redacted by value", "@@FA:abc:begin:a\na.x=token: K10abcdef0123456789abcdef::server:x\na.y=Bearer abcdefghijkl\n@@FA:abc:end:a:0\n",
			map[string]string{"a.x": result.Redacted, "a.y": result.Redacted}, "ok missing"},
		{"empty value", "@@FA:abc:begin:a\na.x=\n@@FA:abc:end:a:0\n", map[string]string{"a.x": "empty"}, "ok missing"},
		{"invalid UTF-8 escaped, valid kept", "@@FA:abc:begin:a\na.x=bad \xff\xe6\x97 \xc0\xaf end\na.y=日本 ✓\n@@FA:abc:end:a:0\n",
			map[string]string{"a.x": `bad \xff\xe6\x97 \xc0\xaf end`, "a.y": "日本 ✓"}, "ok missing"},
		{"a cut value ends on a rune boundary", "@@FA:abc:begin:a\na.x=" + strings.Repeat("v", maxValueLen-1) + "日本\n@@FA:abc:end:a:0\n",
			map[string]string{"a.x": strings.Repeat("v", maxValueLen-1) + "…"}, "ok missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := ParseOutput([]byte(tt.out), n, testProbes)
			if len(p.Facts) != len(tt.wantFacts) {
				t.Errorf("facts = %v, want %v", p.Facts, tt.wantFacts)
			}
			for k, v := range tt.wantFacts {
				if p.Facts[k] != v {
					t.Errorf("fact %s = %q, want %q", k, p.Facts[k], v)
				}
			}
			got := string(p.Runs[0].Status) + " " + string(p.Runs[1].Status)
			if got != tt.wantRuns {
				t.Errorf("runs = %s, want %s", got, tt.wantRuns)
			}
		})
	}
}

func TestParseOutputBoundsLongLines(t *testing.T) {
	out := "@@FA:n:begin:a\na.x=" + strings.Repeat("v", 10<<20) + "\na.y=ok\n@@FA:n:end:a:0\n"
	p := ParseOutput([]byte(out), "n", testProbes)
	if len(p.Facts["a.x"]) > maxValueLen+len("…") {
		t.Errorf("value kept %d bytes", len(p.Facts["a.x"]))
	}
	if p.Facts["a.y"] != "ok" {
		t.Errorf("fact after a long line lost: %v", p.Facts)
	}
}

var testProbes = []Probe{
	{ID: "a", Timeout: time.Second, Facts: []string{"a.x", "a.y", "a.token"}},
	{ID: "b", Timeout: time.Second, Facts: []string{"b.z"}},
}

func FuzzParseOutput(f *testing.F) {
	f.Add([]byte("@@FA:n:begin:a\na.x=1\n@@FA:n:end:a:0\n"))
	f.Add([]byte("@@FA:n:begin:b\nb.z=\x00\xff\n@@FA:n:end:b:x\n@@FA:n:begin:a"))
	f.Add([]byte("a.x=1\n\n\n@@FA:n:end:a:0"))
	f.Fuzz(func(t *testing.T, out []byte) {
		p := ParseOutput(out, "n", testProbes)
		if len(p.Runs) != len(testProbes) {
			t.Fatalf("runs = %d", len(p.Runs))
		}
		for k, v := range p.Facts {
			if strings.ContainsAny(v, "\n") || len(v) > maxValueLen+len("…") || !utf8.ValidString(v) {
				t.Fatalf("fact %s=%q escapes its line or bound", k, v)
			}
		}
	})
}

// TestLargestClusterViewFits: the cluster probe's view of the largest
// cluster Kubernetes supports, every node with every node fact, is kept
// whole by the probe's budget and by the transport cap its bundle asks for
// (OutputCap); 2 MiB once cut it after about 1,150 nodes.
func TestLargestClusterViewFits(t *testing.T) {
	probes, err := BuiltinProbes()
	if err != nil {
		t.Fatal(err)
	}
	var cluster Probe
	for _, p := range probes {
		if p.ID == "cluster" {
			cluster = p
		}
	}
	if len(cluster.NodeFacts) == 0 {
		t.Fatal("no cluster probe with node facts")
	}
	var b bytes.Buffer
	b.WriteString("@@FA:n:begin:cluster\n")
	for i := range MaxClusterNodes {
		// Names and values as long as a real cluster's usually are.
		node := fmt.Sprintf("rke2-prod-worker-pool-b-%05d.example.internal", i)
		for _, f := range cluster.NodeFacts {
			fmt.Fprintf(&b, "@%s %s=%s\n", node, f, "kube-proxy-rke2-prod-worker-pool-b-00000,CrashLoopBackOff")
		}
	}
	b.WriteString("@@FA:n:end:cluster:0\n")
	if int64(b.Len()) > OutputCap([]Probe{cluster}) {
		t.Fatalf("the view is %d bytes, more than OutputCap's %d", b.Len(), OutputCap([]Probe{cluster}))
	}
	p := ParseOutput(b.Bytes(), "n", []Probe{cluster})
	if p.Runs[0].Status != result.ProbeOK || len(p.NodeFacts) != MaxClusterNodes {
		t.Fatalf("status %s, %d nodes of %d kept", p.Runs[0].Status, len(p.NodeFacts), MaxClusterNodes)
	}
	last := fmt.Sprintf("rke2-prod-worker-pool-b-%05d.example.internal", MaxClusterNodes-1)
	if len(p.NodeFacts[last]) != len(cluster.NodeFacts) {
		t.Errorf("the last node kept %d of %d facts", len(p.NodeFacts[last]), len(cluster.NodeFacts))
	}
	if OutputCap(probes[:0]) != 0 || OutputCap([]Probe{{ID: "n", Scope: ScopeNode}}) != 0 {
		t.Error("a bundle of node probes asks for more than the transport's own cap")
	}
}
