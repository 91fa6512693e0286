package report

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

func TestPromLabelValue(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"etcd-1", "etcd-1"},
		{`a\b`, `a\\b`},
		{`a"b`, `a\"b`},
		{"a\nb", `a\nb`},
		// A literal backslash-n is two characters, not a line feed.
		{`a\nb`, `a\\nb`},
		{`"} 1` + "\n" + `evil_metric{x="`, `\"} 1\nevil_metric{x=\"`},
		{"bad \xff utf8", "bad \uFFFD utf8"},
		// Only the three the format names are escaped; a carriage return
		// is an ordinary character of a label value.
		{"a\rb\tc", "a\rb\tc"},
		{"ünïcödé ✓", "ünïcödé ✓"},
	} {
		if got := promLabelValue(tc.in); got != tc.want {
			t.Errorf("promLabelValue(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// promSample is one sample line of a text exposition, its label values
// unescaped.
type promSample struct {
	name   string
	labels map[string]string
	value  float64
}

var (
	promName      = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*`)
	promLabelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*`)
)

// parseProm reads a text exposition as strictly as the format is written
// (prometheus.io/docs/instrumenting/exposition_formats): HELP then TYPE
// gauge then the family's samples, families contiguous and each once, no
// series twice, label values with only \\, \" and \n escaped, no
// timestamps, a final newline. It is a second reader beside promtool, so
// that the test holds on a machine without it.
func parseProm(text string) ([]promSample, error) {
	if !strings.HasSuffix(text, "\n") {
		return nil, fmt.Errorf("no final newline")
	}
	var out []promSample
	done := map[string]bool{}
	series := map[string]bool{}
	current, state := "", ""
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		fail := func(format string, args ...any) error {
			return fmt.Errorf("line %d %q: %s", i+1, line, fmt.Sprintf(format, args...))
		}
		if rest, ok := strings.CutPrefix(line, "# HELP "); ok {
			name := promName.FindString(rest)
			if name == "" || done[name] {
				return nil, fail("HELP of no metric or of one seen before")
			}
			if current != "" {
				done[current] = true
			}
			current, state = name, "help"
			continue
		}
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			if state != "help" || rest != current+" gauge" {
				return nil, fail("want TYPE %s gauge right after its HELP", current)
			}
			state = "type"
			continue
		}
		name := promName.FindString(line)
		if name == "" || name != current || state == "help" {
			return nil, fail("a sample outside its family %q", current)
		}
		s := promSample{name: name, labels: map[string]string{}}
		rest := line[len(name):]
		if strings.HasPrefix(rest, "{") {
			rest = rest[1:]
			for !strings.HasPrefix(rest, "}") {
				ln := promLabelName.FindString(rest)
				if ln == "" || !strings.HasPrefix(rest[len(ln):], `="`) {
					return nil, fail("bad label name at %q", rest)
				}
				rest = rest[len(ln)+2:]
				var v strings.Builder
				for {
					if rest == "" {
						return nil, fail("unterminated label value")
					}
					c := rest[0]
					rest = rest[1:]
					if c == '"' {
						break
					}
					if c == '\\' {
						if rest == "" {
							return nil, fail("a backslash ends the line")
						}
						switch rest[0] {
						case '\\':
							v.WriteByte('\\')
						case '"':
							v.WriteByte('"')
						case 'n':
							v.WriteByte('\n')
						default:
							return nil, fail("escape \\%c is not in the format", rest[0])
						}
						rest = rest[1:]
						continue
					}
					v.WriteByte(c)
				}
				if _, dup := s.labels[ln]; dup {
					return nil, fail("label %s twice", ln)
				}
				s.labels[ln] = v.String()
				rest = strings.TrimPrefix(rest, ",")
			}
			rest = rest[1:]
		}
		value, ok := strings.CutPrefix(rest, " ")
		if !ok || strings.Contains(value, " ") {
			return nil, fail("want one space and a value (and no timestamp)")
		}
		var err error
		if s.value, err = strconv.ParseFloat(value, 64); err != nil {
			return nil, fail("value: %v", err)
		}
		key := name + fmt.Sprint(s.labels)
		if series[key] {
			return nil, fail("the same series twice")
		}
		series[key] = true
		out = append(out, s)
	}
	return out, nil
}

// labelsOf are the values of label of the samples of metric, in order.
func labelsOf(samples []promSample, metric, label string) []string {
	var out []string
	for _, s := range samples {
		if s.name == metric {
			out = append(out, s.labels[label])
		}
	}
	return out
}

// TestPromHostileRoundTrip: node names, roles, check ids, scopes and the
// inventory's name are untrusted; each must come back out of the file as
// exactly one label value, equal to what went in (invalid UTF-8 aside),
// never as a line or a series of its own.
func TestPromHostileRoundTrip(t *testing.T) {
	for name, r := range allReports() {
		t.Run(name, func(t *testing.T) {
			samples, err := parseProm(string(render(t, "prom", Options{}, r)))
			if err != nil {
				t.Fatal(err)
			}
			valid := func(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }
			var nodes, roles, statuses []string
			for _, n := range r.Nodes {
				nodes = append(nodes, valid(n.Name))
				roles = append(roles, valid(strings.Join(n.Roles, ",")))
				statuses = append(statuses, n.Status.String())
			}
			var checks []string
			for _, f := range orderFindings(r.Findings) {
				for range max(1, len(f.Nodes)) {
					checks = append(checks, valid(f.Check))
				}
			}
			var scopes []string
			for _, d := range r.Drift {
				if !slices.Contains(scopes, valid(string(d.Scope))) {
					scopes = append(scopes, valid(string(d.Scope)))
				}
			}
			if !slices.Contains(scopes, "fleet") {
				scopes = append([]string{"fleet"}, scopes...)
			}
			for _, sm := range samples {
				if got := sm.labels["inventory"]; got != valid(r.Inventory) {
					t.Fatalf("%s has inventory %q, want %q", sm.name, got, valid(r.Inventory))
				}
			}
			for _, tc := range []struct {
				metric, label string
				want          []string
			}{
				{"fleet_audit_node_up", "node", nodes},
				{"fleet_audit_node_up", "roles", roles},
				{"fleet_audit_node_status", "node", nodes},
				{"fleet_audit_node_status", "status", statuses},
				{"fleet_audit_finding", "check", checks},
				{"fleet_audit_drift_facts_by_scope", "scope", scopes},
				{"fleet_audit_info", "inventory", []string{valid(r.Inventory)}},
				{"fleet_audit_info", "target_version", []string{valid(r.TargetVersion)}},
				{"fleet_audit_info", "change_id", []string{valid(func() string {
					if r.Change == nil {
						return ""
					}
					return r.Change.ID
				}())}},
			} {
				if got := labelsOf(samples, tc.metric, tc.label); !slices.Equal(got, tc.want) {
					t.Errorf("%s %s labels:\n got  %q\n want %q", tc.metric, tc.label, got, tc.want)
				}
			}
		})
	}
}

// TestPromtoolCheckMetrics holds every fixture, hostile one included, to
// promtool's own parser and linter (`promtool check metrics` reads the
// exposition on stdin; prometheus/cmd/promtool/main.go).
func TestPromtoolCheckMetrics(t *testing.T) {
	promtool := testtools.Find(t, "promtool")
	for name, r := range allReports() {
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = bytes.NewReader(render(t, "prom", Options{}, r))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: promtool check metrics: %v\n%s", name, err, out)
		}
	}
}

// TestPromSeries pins what the file says about each scenario: the gate,
// the nodes not audited, waived findings kept as waived, zeros written.
func TestPromSeries(t *testing.T) {
	untimed := cleanReport()
	untimed.StartedAt, untimed.FinishedAt = time.Time{}, time.Time{}
	for _, tc := range []struct {
		name          string
		r             *result.Report
		want, notWant []string
	}{
		{"incident", incidentReport(), []string{
			`fleet_audit_gate_passed{inventory="inventories/cluster-a.yaml",fail_on="critical"} 0`,
			`fleet_audit_gate_exit_code{inventory="inventories/cluster-a.yaml"} 1`,
			`fleet_audit_info{inventory="inventories/cluster-a.yaml",version="v0.1.0",target_version="v1.32.1+rke2r1",change_id="CHG-4711"} 1`,
			`fleet_audit_finding{inventory="inventories/cluster-a.yaml",check="firewall.ufw-active",severity="critical",node="cluster-a-etcd-1",waived="false"} 1`,
			`fleet_audit_finding{inventory="inventories/cluster-a.yaml",check="conntrack.pressure",severity="warning",node="cluster-a-worker-3",waived="true"} 1`,
			`fleet_audit_findings{inventory="inventories/cluster-a.yaml",severity="warning",waived="true"} 1`,
			`fleet_audit_run_timestamp_seconds{inventory="inventories/cluster-a.yaml"} 1796205612.4`,
			`fleet_audit_run_duration_seconds{inventory="inventories/cluster-a.yaml"} 12.4`,
		}, []string{`check="firewall.ufw-active",severity="critical",node="cluster-a-etcd-3"`}},
		{"unreachable", unreachableReport(), []string{
			`fleet_audit_node_up{inventory="inventories/edge.yaml",node="edge-worker-2",roles="worker"} 0`,
			`fleet_audit_node_status{inventory="inventories/edge.yaml",node="edge-worker-2",status="unreachable"} 1`,
			`fleet_audit_node_up{inventory="inventories/edge.yaml",node="edge-cp-1",roles="etcd,control-plane"} 1`,
			`fleet_audit_gate_exit_code{inventory="inventories/edge.yaml"} 3`,
			`fleet_audit_run_warnings{inventory="inventories/edge.yaml"} 1`,
		}, nil},
		{"clean", cleanReport(), []string{
			`fleet_audit_gate_passed{inventory="inventories/lab.yaml",fail_on="critical"} 1`,
			`fleet_audit_findings{inventory="inventories/lab.yaml",severity="critical",waived="false"} 0`,
			`fleet_audit_drift_facts{inventory="inventories/lab.yaml"} 0`,
			`fleet_audit_drift_facts_by_scope{inventory="inventories/lab.yaml",scope="fleet"} 0`,
		}, []string{`fleet_audit_finding{`, `severity="unknown"`}},
		{"no times in a saved report", untimed, []string{`fleet_audit_gate_passed{inventory="inventories/lab.yaml",fail_on="critical"} 1`},
			[]string{"fleet_audit_run_timestamp_seconds", "fleet_audit_run_duration_seconds"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := string(render(t, "prom", Options{}, tc.r))
			lines := strings.Split(out, "\n")
			for _, w := range tc.want {
				if !slices.Contains(lines, w) {
					t.Errorf("no line %s in\n%s", w, out)
				}
			}
			for _, nw := range tc.notWant {
				if strings.Contains(out, nw) {
					t.Errorf("%s should not be in\n%s", nw, out)
				}
			}
		})
	}
}

// TestPromNoDuplicateSeries: a saved report edited by hand may repeat a
// node, and two names that differ only in invalid UTF-8 become the same
// label value; node_exporter refuses a series collected twice, so each
// series is written once.
func TestPromNoDuplicateSeries(t *testing.T) {
	r := cleanReport()
	r.Nodes = append(r.Nodes, r.Nodes[0], result.Node{Name: "lab-\xff"}, result.Node{Name: "lab-\xfe"})
	r.Findings = append(r.Findings, result.Finding{Check: "x.twice", Severity: result.SeverityWarning, Nodes: []string{"lab-1", "lab-1", "lab-\xff", "lab-\xfe"}})
	if _, err := parseProm(string(render(t, "prom", Options{}, r))); err != nil {
		t.Fatal(err)
	}
}

// exampleRules is the sample alerting rules file the README points to.
var exampleRules = filepath.Join("..", "examples", "prometheus", "fleet-audit.rules.yml")

// TestPromExampleRules: the sample alert rules are valid for promtool
// (`promtool check rules`), their unit tests pass (`promtool test rules`,
// prometheus.io/docs/prometheus/latest/configuration/unit_testing_rules),
// and every fleet_audit_* metric they name is one this format writes, so a
// renamed metric cannot leave the example alerting on nothing.
func TestPromExampleRules(t *testing.T) {
	rules, err := os.ReadFile(exampleRules)
	if err != nil {
		t.Fatal(err)
	}
	written := map[string]bool{}
	for _, f := range promFamilies(incidentReport()) {
		written[f.name] = true
	}
	used := regexp.MustCompile(`\bfleet_audit_[a-z_]+`).FindAllString(string(rules), -1)
	if len(used) == 0 {
		t.Fatalf("%s names no fleet_audit_ metric", exampleRules)
	}
	for _, m := range used {
		if !written[m] {
			t.Errorf("%s uses %s, which the prom format does not write", exampleRules, m)
		}
	}
	promtool := testtools.Find(t, "promtool")
	for _, args := range [][]string{
		{"check", "rules", exampleRules},
		{"test", "rules", strings.TrimSuffix(exampleRules, ".yml") + ".test.yml"},
	} {
		if out, err := exec.Command(promtool, args...).CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
