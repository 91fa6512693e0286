package report

import (
	"fmt"
	"io"
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
