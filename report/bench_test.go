package report

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/result"
)

// largeReport is the seed incident at fleet scale: n nodes in three roles,
// UFW active (and kube-proxy failing) on every tenth, a newer kernel on
// every hundredth, judged by audit with every built-in check: the findings,
// evidence lines and drift rows each name their nodes, so a renderer that
// looks nodes up by scanning them is quadratic here.
func largeReport(n int) *result.Report {
	r := newReport("inventories/large.yaml")
	roles := []string{"etcd", "control-plane", "worker"}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("node-%05d", i)
		role := roles[2]
		if i < 3 {
			role = roles[i]
		}
		f := baseFacts("rke2-agent")
		f["conntrack.count"] = fmt.Sprint(700 + i%1000)
		if i%10 == 0 {
			ufwActive(f)
		}
		if i%100 == 0 {
			f["os.kernel"] = "6.8.0-51-generic"
		}
		r.Nodes = append(r.Nodes, node(name, fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255), []string{role}, f, 1.5))
	}
	analyze(r, nil, "")
	return r
}

// BenchmarkFormat renders each format of largeReport at 1,000 and 10,000
// nodes: the time per node must not grow with the fleet.
func BenchmarkFormat(b *testing.B) {
	for _, format := range []string{"html", "junit", "markdown", "terminal", "json"} {
		for _, n := range []int{1000, 10000} {
			r := largeReport(n)
			b.Run(fmt.Sprintf("%s/nodes=%d", format, n), func(b *testing.B) {
				f, err := New(format, Options{})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if err := f.Format(io.Discard, r); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestMatrixFoldsLargeFleets holds the fact matrix of a large fleet to one
// column per set of alike nodes: every node in exactly one column, the UFW
// nodes apart from the healthy workers and marked, a volatile fact that
// differs inside a column counted rather than shown, and a fleet at the
// threshold still a column per node.
func TestMatrixFoldsLargeFleets(t *testing.T) {
	for _, tc := range []struct {
		nodes, cols int
	}{
		{matrixFoldAbove, matrixFoldAbove},
		// etcd, control-plane; workers: healthy, UFW, UFW and the newer
		// kernel (node 100).
		{250, 5},
	} {
		t.Run(fmt.Sprintf("nodes=%d", tc.nodes), func(t *testing.T) {
			r := largeReport(tc.nodes)
			m := buildMatrix(r, outliers(r.Drift))
			if len(m.Cols) != tc.cols {
				t.Fatalf("%d columns, want %d", len(m.Cols), tc.cols)
			}
			total := 0
			for _, c := range m.Cols {
				total += c.Count
				if (c.Count == 1) != (c.Index > 0) {
					t.Errorf("column %s of %d nodes links to node %d", c.Name, c.Count, c.Index)
				}
			}
			if total != tc.nodes {
				t.Errorf("the columns hold %d nodes, want %d", total, tc.nodes)
			}
			if !m.Folded {
				return
			}
			// The healthy workers: node-00002 on, but every tenth.
			states, healthy := map[string]string{}, 0
			for _, row := range m.Rows {
				for i, c := range row.Cells {
					if strings.HasPrefix(m.Cols[i].Name, "node-[00002-00009,00011-") {
						states[row.Fact], healthy = c.State+" "+c.Value, m.Cols[i].Count
					}
				}
			}
			if got, want := states["ufw.active"], " inactive"; got != want {
				t.Errorf("healthy workers' ufw.active = %q, want %q", got, want)
			}
			if got, want := states["conntrack.count"], "varies "+result.Count(healthy, "value"); got != want {
				t.Errorf("healthy workers' conntrack.count = %q, want %q", got, want)
			}
			drift := 0
			for _, row := range m.Rows {
				if row.Fact != "ufw.active" {
					continue
				}
				for i, c := range row.Cells {
					if c.State == "drift" {
						drift += m.Cols[i].Count
					}
				}
			}
			if drift != tc.nodes/10 {
				t.Errorf("ufw.active marked on %d nodes, want %d", drift, tc.nodes/10)
			}
		})
	}
}
