package report

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/audit"
	"github.com/fleet-audit/fleet-audit/audit/catalog"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

var scenarios = []struct {
	name  string
	build func() *result.Report
}{
	{"incident", incidentReport},
	{"clean", cleanReport},
	{"unreachable", unreachableReport},
}

// goldenExt is the file extension of each format's golden file.
var goldenExt = map[string]string{"html": "html", "json": "json", "junit": "xml", "markdown": "md", "markdown-summary": "summary.md",
	"plan": "plan.md", "plan-ansible": "plan.yml", "prom": "prom", "terminal": "txt"}

// withPlan is o with the plan of r built as the CLI builds it, from the
// built-in checks (audit.PlanFindings), for the plan formats.
func withPlan(o Options, r *result.Report) Options {
	rules, err := catalog.Builtin()
	if err != nil {
		panic(err)
	}
	o.Plan = audit.BuildPlan(r, rules.Checks)
	return o
}

func render(t *testing.T, format string, o Options, r *result.Report) []byte {
	t.Helper()
	f, err := New(format, o)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := f.Format(&b, r); err != nil {
		t.Fatalf("%s: %v", format, err)
	}
	return b.Bytes()
}

// TestGolden compares every format of every scenario with
// testdata/<scenario>.<exit>.<ext>; go test ./report -update rewrites them.
func TestGolden(t *testing.T) {
	for _, sc := range scenarios {
		for _, format := range Names() {
			r := sc.build()
			name := fmt.Sprintf("%s.%d.%s", sc.name, r.Gate.ExitCode, goldenExt[format])
			t.Run(name, func(t *testing.T) {
				got := render(t, format, withPlan(Options{}, r), r)
				path := filepath.Join("testdata", name)
				if *update {
					if err := os.MkdirAll("testdata", 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, got, 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test ./report -update to create it)", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs from the golden file; if the change is intended run go test ./report -update and review the diff\n%s", path, testtools.FirstDiff(want, got))
				}
			})
		}
	}
}

// TestFormatDoesNotMutate: one Report is written to several formats in a
// run, so no formatter may reorder or edit it.
func TestFormatDoesNotMutate(t *testing.T) {
	builds := append([]func() *result.Report{hostileReport}, incidentReport, cleanReport, unreachableReport)
	for _, build := range builds {
		r, pristine := build(), build()
		for _, format := range Names() {
			render(t, format, withPlan(Options{Color: true, Width: 60, MaxDriftRows: 1}, r), r)
			if !reflect.DeepEqual(r, pristine) {
				t.Fatalf("%s formatter modified the report", format)
			}
		}
	}
}

func TestRegistry(t *testing.T) {
	want := []string{"html", "json", "junit", "markdown", "markdown-summary", "plan", "plan-ansible", "prom", "terminal"}
	if got := Names(); !reflect.DeepEqual(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	for _, n := range want {
		if f, err := New(n, Options{}); err != nil || f == nil {
			t.Errorf("New(%q) = %v, %v", n, f, err)
		}
	}
	_, err := New("pdf", Options{})
	if err == nil || !strings.Contains(err.Error(), `"pdf"`) || !strings.Contains(err.Error(), "html, json, junit, markdown, markdown-summary, plan, plan-ansible, prom, terminal") {
		t.Errorf("New(pdf) error = %v, want it to name the format and list the valid ones", err)
	}
}

func TestCompressNodes(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"cluster-a-etcd-1"}, "cluster-a-etcd-1"},
		{[]string{"cluster-a-worker-4", "cluster-a-etcd-2", "cluster-a-worker-2", "cluster-a-etcd-1"}, "cluster-a-etcd-[1-2],cluster-a-worker-[2,4]"},
		{[]string{"n1", "n2", "n3", "n5", "n7", "n8"}, "n[1-3,5,7-8]"},
		{[]string{"node-01", "node-02", "node-03"}, "node-[01-03]"},
		{[]string{"rack1-n1", "rack1-n2", "rack2-n1"}, "rack1-n[1-2],rack2-n1"},
		{[]string{"db", "api", "web-1", "web-1"}, "api,db,web-1"},
		{[]string{"n1.example", "n2.example"}, "n[1-2].example"},
		{[]string{"a,1", "b[2]"}, "a,1,b[2]"},
	} {
		if got := compressNodes(tc.in); got != tc.want {
			t.Errorf("compressNodes(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestVisible(t *testing.T) {
	for _, tc := range []struct{ in, keep, want string }{
		{"plain value", "", "plain value"},
		{"\x1b[31mred", "", `\x1b[31mred`},
		{"\x1b]0;title\x07", "", `\x1b]0;title\x07`},
		{"a\nb\r\nc\td", "", `a\nb\r\nc\td`},
		{"a\nb\tc", "\n\t", "a\nb\tc"},
		{"\x00\x7f\u009b", "", `\x00\x7f\u009b`},
		{"\u202eevil", "", `\u202eevil`},
		{"bad \xff utf8", "", `bad \xff utf8`},
		{"ünïcödé ✓ 日本", "", "ünïcödé ✓ 日本"},
	} {
		if got := visible(tc.in, tc.keep); got != tc.want {
			t.Errorf("visible(%q, %q) = %q, want %q", tc.in, tc.keep, got, tc.want)
		}
	}
}

func TestTruncate(t *testing.T) {
	if got := truncate("abcdef", 4); got != "abc…" {
		t.Errorf("truncate = %q", got)
	}
	if got := truncate("日本語のテキスト", 3); got != "日本…" {
		t.Errorf("truncate must cut runes, not bytes: %q", got)
	}
	if got := truncate("abc", 3); got != "abc" {
		t.Errorf("truncate = %q", got)
	}
}

// TestOutliers: the nodes a report marks as differing. A role row folded
// into its fleet row marks nothing of its own, so the healthy etcd node the
// other etcd nodes disagree with is not marked; a role-scoped fact, which
// has no fleet row, marks its role's outliers.
func TestOutliers(t *testing.T) {
	g := func(v string, nodes ...string) result.DriftGroup { return result.DriftGroup{Value: v, Nodes: nodes} }
	d := func(fact, scope, majority string, gs ...result.DriftGroup) result.Drift {
		return result.Drift{Fact: fact, Scope: result.DriftScope(scope), Majority: majority, Groups: gs}
	}
	for _, tc := range []struct {
		name string
		in   []result.Drift
		want string
	}{
		{"the seed incident", []result.Drift{
			d("ufw.active", "fleet", "inactive", g("inactive", "etcd-3", "worker-1", "worker-3"), g("active", "etcd-1", "etcd-2", "worker-2")),
			d("ufw.active", "role:etcd", "active", g("active", "etcd-1", "etcd-2"), g("inactive", "etcd-3")),
		}, "ufw.active: etcd-1 (fleet majority: inactive) etcd-2 (fleet majority: inactive) worker-2 (fleet majority: inactive)"},
		{"a role-scoped fact", []result.Drift{
			d("rke2.service", "role:worker", "rke2-agent", g("rke2-agent", "worker-1", "worker-2"), g("rke2-server", "worker-3")),
		}, "rke2.service: worker-3 (role:worker majority: rke2-agent)"},
		{"a role row that disagrees with the fleet row stays", []result.Drift{
			d("k", "fleet", "a", g("a", "n1", "n2", "n3"), g("b", "n4")),
			d("k", "role:worker", "a", g("a", "n1", "n2"), g("c", "n3")),
		}, "k: n3 (role:worker majority: a) n4 (fleet majority: a)"},
		{"no drift", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			odd := outliers(tc.in)
			var parts []string
			facts := make([]string, 0, len(odd))
			for f := range odd {
				facts = append(facts, f)
			}
			sort.Strings(facts)
			for _, f := range facts {
				nodes := make([]string, 0, len(odd[f]))
				for n := range odd[f] {
					nodes = append(nodes, n)
				}
				sort.Strings(nodes)
				part := f + ":"
				for _, n := range nodes {
					part += " " + n + " (" + strings.Join(odd[f][n], "; ") + ")"
				}
				parts = append(parts, part)
			}
			if got := strings.Join(parts, " | "); got != tc.want {
				t.Errorf("outliers = %q\nwant       %q", got, tc.want)
			}
		})
	}
}

// TestInvisibleFormatCharacters: a character that renders as nothing (a
// Unicode format character, category Cf, or a line or paragraph separator)
// in a node's text is shown escaped in every human format, so that
// "in\u200bactive" can never read as "inactive".
func TestInvisibleFormatCharacters(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    rune
	}{
		{"zero width space", 0x200b},
		{"zero width non-joiner", 0x200c},
		{"zero width joiner", 0x200d},
		{"word joiner", 0x2060},
		{"invisible separator", 0x2063},
		{"byte order mark", 0xfeff},
		{"soft hyphen", 0x00ad},
		{"mongolian vowel separator", 0x180e},
		{"arabic number sign", 0x0600},
		{"interlinear annotation anchor", 0xfff9},
		{"tag latin small a", 0xe0061},
		{"line separator", 0x2028},
		{"paragraph separator", 0x2029},
		{"bidi override, as before", 0x202e},
	} {
		t.Run(tc.name, func(t *testing.T) {
			esc := fmt.Sprintf(`\u%04x`, tc.r)
			if tc.r > 0xffff {
				esc = fmt.Sprintf(`\U%08x`, tc.r)
			}
			if got, want := visible("in"+string(tc.r)+"active", ""), "in"+esc+"active"; got != want {
				t.Errorf("visible = %q, want %q", got, want)
			}
			r := incidentReport()
			const mark = "mark-invisible "
			found := false
			for i := range r.Checks {
				if r.Checks[i].Outcome == result.OutcomeFail {
					r.Checks[i].Detail = mark + "in" + string(tc.r) + "active"
					found = true
				}
			}
			if !found || len(r.Findings) == 0 {
				t.Fatal("the incident fixture has no failing check or no finding")
			}
			// Not every format shows every field: the warnings and the
			// finding reach the terminal and Markdown, the check details
			// HTML and JUnit.
			r.Warnings = append(r.Warnings, mark+"in"+string(tc.r)+"active")
			r.Findings[0].Summary = mark + "in" + string(tc.r) + "active"
			for _, format := range []string{"terminal", "markdown", "html", "junit"} {
				out := string(render(t, format, Options{Width: 4000}, r))
				if !strings.Contains(out, mark) {
					t.Errorf("%s: the marked detail was not rendered", format)
					continue
				}
				if strings.ContainsRune(out, tc.r) {
					t.Errorf("%s: contains U+%04X raw", format, tc.r)
				}
				// Markdown doubles the backslash outside code spans.
				if !strings.Contains(out, "in"+esc+"active") && !strings.Contains(out, `in\`+esc+"active") {
					t.Errorf("%s: lacks in%sactive", format, esc)
				}
			}
		})
	}
}
