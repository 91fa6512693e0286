package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

// TestTerminalGoldenVerbose compares --verbose with
// testdata/<scenario>.<exit>.verbose.txt; -update rewrites them, like
// TestGolden does for the compact view.
func TestTerminalGoldenVerbose(t *testing.T) {
	for _, sc := range []struct {
		name  string
		build func() *result.Report
	}{{"incident", incidentReport}, {"unreachable", unreachableReport}} {
		r := sc.build()
		path := filepath.Join("testdata", sc.name+"."+strconv.Itoa(r.Gate.ExitCode)+".verbose.txt")
		got := render(t, "terminal", Options{Verbose: true}, r)
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./report -run TestTerminalGoldenVerbose -update to create it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the golden file\n%s", path, testtools.FirstDiff(want, got))
		}
	}
}

// wideReport is the incident with titles, node names and fact values in
// scripts whose characters are two columns wide, so that a fitter that
// counts bytes or runes instead of columns overflows.
func wideReport() *result.Report {
	r := incidentReport()
	for i := range r.Findings {
		r.Findings[i].Title = "节点上的防火墙 UFW 处于活动状态，会破坏 kube-proxy 的服务规则"
		r.Findings[i].Summary = strings.Repeat("防火墙规则与 kube-proxy 冲突。", 6)
		r.Findings[i].Nodes = append(r.Findings[i].Nodes, "ノード-東京-01", "ノード-東京-02")
	}
	r.Drift[0].Groups[1].Value = "五〇三エラー応答"
	r.Drift[0].Groups[1].Nodes = append(r.Drift[0].Groups[1].Nodes, "ノード-東京-01", "ノード-東京-02")
	r.Nodes[3].Status, r.Nodes[3].Message = result.StatusUnreachable, strings.Repeat("到達できません 接続がタイムアウトしました ", 4)
	return r
}

// TestTerminalFitsWidth: every line of the terminal report fits the
// width, the lists, the header, the cluster line, the cause blocks with
// their evidence, the rollouts and the decision alike.
func TestTerminalFitsWidth(t *testing.T) {
	reports := map[string]func() *result.Report{"incident": incidentReport, "wide": wideReport, "unreachable": unreachableReport, "hostile": hostileReport}
	for name, build := range reports {
		for _, width := range []int{40, 60, 80, 100, 140} {
			for _, verbose := range []bool{false, true} {
				out := string(render(t, "terminal", Options{Width: width, Verbose: verbose}, build()))
				for _, l := range strings.Split(out, "\n") {
					if w := DisplayWidth(l); w > width {
						t.Errorf("%s width %d verbose %v: line is %d wide: %q", name, width, verbose, w, l)
					}
				}
			}
		}
	}
	// The negative control: unfitted, the fixtures have wider lines, so
	// the check above has something to hold.
	for name, build := range reports {
		out := string(render(t, "terminal", Options{Width: 4000}, build()))
		widest := 0
		for _, l := range strings.Split(out, "\n") {
			widest = max(widest, DisplayWidth(l))
		}
		if widest <= 140 {
			t.Errorf("%s: the widest line is %d columns unfitted; the fixture no longer proves anything", name, widest)
		}
	}
}

// TestTerminalCompact: on a terminal of 100 columns each finding of the
// incident is one line (severity, check, title) under its node set, the
// summaries are left to --verbose, and the whole report is about 60 lines.
func TestTerminalCompact(t *testing.T) {
	r := incidentReport()
	out := string(render(t, "terminal", Options{Width: 100}, r))
	for _, f := range r.Findings {
		sev := f.Severity.String()
		if f.Waived != nil {
			sev = "waived"
		}
		// A title longer than its column wraps under itself; the entry is
		// still the finding's only lines.
		words := strings.Fields(f.Title)
		for i, w := range words {
			words[i] = regexp.QuoteMeta(w)
		}
		re := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(sev) + ` +` + regexp.QuoteMeta(f.Check) + ` +` + strings.Join(words, `\s+`) + `$`)
		if !re.MatchString(out) {
			t.Errorf("no one-line entry for %s (%s)", f.Check, re)
		}
		if strings.Contains(out, f.Summary) && f.Summary != f.Title {
			t.Errorf("compact view prints the summary of %s", f.Check)
		}
	}
	for _, want := range []string{
		"Findings (6, 1 waived)\ncluster-a-etcd-[1-2],cluster-a-worker-[2,4] (4)\n  critical  correlation.kubeproxy.healthz-failing",
		"\nfleet\n  warning   cluster.nodes-not-in-inventory",
		"  os.kernel               6.8.0-49-generic (8)  6.8.0-51-generic: cluster-a-worker-3\n",
		"15 role rows of facts that drift fleet-wide folded into their fleet row (-v shows every scope)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("compact view lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "os.kernel (role:worker)  ") {
		t.Error("the role row that repeats the fleet row is still a row")
	}
	// 70: audit's incident has six findings, the upgrade order among them,
	// and eight facts that split the fleet (UFW's four among them); the
	// decision block above the gate adds five, its readiness by area five
	// (a row per area with something to say, one line for the ready and
	// one for those not checked), and the cause block, wrapped to the
	// width, ten.
	if n := strings.Count(out, "\n"); n > 70 {
		t.Errorf("compact incident is %d lines, want at most 70:\n%s", n, out)
	}
	if !strings.Contains(out, "\n  ? not checked: etcd, certificates, removed APIs, drain, node health\n  ✔ ready: versions\n  blockers (3), in the order to fix them: correlation.kubeproxy.healthz-failing;") {
		t.Errorf("compact view lacks the decision with its blockers, the cause first:\n%s", out)
	}
	if last := strings.TrimSuffix(out, "\n"); !strings.HasPrefix(last[strings.LastIndex(last, "\n")+1:], "gate: ") {
		t.Error("the verdict is not the last line")
	}
}

func TestTerminalVerbose(t *testing.T) {
	r := incidentReport()
	out := string(render(t, "terminal", Options{Verbose: true, Width: 200}, r))
	for _, want := range []string{
		"kube-proxy's own health check fails: an update to Services or endpoints has waited longer",
		"            - cluster-a-etcd-1: ufw.active=active, ufw.status=active, ufw.config_enabled=yes\n",
		"            fix: Find what differs on these nodes",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("verbose view lacks %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`(?m)^  os\.kernel \(role:worker\) +6\.8\.0-49-generic \(3\) `).MatchString(out) {
		t.Errorf("verbose view lacks the os.kernel role:worker row:\n%s", out)
	}
	if strings.Contains(out, "folded") {
		t.Error("verbose view folds drift rows")
	}
	// The cause block carries the correlation's evidence; it is not repeated.
	if n := strings.Count(out, "the same split: ufw.config_enabled=yes, ufw.status=active, ufw.enabled=enabled"); n != 1 {
		t.Errorf("correlation evidence printed %d times, want once", n)
	}
	// Verbose must not weaken the escaping: the same checks as the compact view.
	own := strings.NewReplacer(sgrReset, "", sgrBold, "", sgrRed, "", sgrYellow, "", sgrCyan, "", sgrGreen, "", sgrDim, "")
	for name, r := range allReports() {
		plain := render(t, "terminal", Options{Verbose: true}, r)
		if i := bytes.IndexByte(plain, 0x1b); i >= 0 {
			t.Errorf("%s: ESC without colour: %q", name, context(plain, i))
		}
		checkTerminalControls(t, name, plain)
		rest := own.Replace(string(render(t, "terminal", Options{Verbose: true, Color: true}, r)))
		if i := strings.IndexByte(rest, 0x1b); i >= 0 {
			t.Errorf("%s: an escape sequence that is not ours: %q", name, context([]byte(rest), i))
		}
	}
}

func TestTerminalMaxDriftRows(t *testing.T) {
	out := string(render(t, "terminal", Options{MaxDriftRows: 2}, incidentReport()))
	// Two rows cover six of the 23 drift entries (kubeproxy.health and
	// kubeproxy.healthz.code, each with its etcd and worker rows folded),
	// so 17 entries are hidden.
	if !strings.Contains(out, "… 17 more not shown") {
		t.Errorf("capped drift list does not say how many entries it hid:\n%s", out)
	}
	if strings.Contains(out, "ufw.enabled  ") {
		t.Error("drift row beyond the cap was printed")
	}
}

func TestTerminalNewSections(t *testing.T) {
	out := string(render(t, "terminal", Options{Width: 400}, incidentReport()))
	for _, want := range []string{
		"inventory inventories/cluster-a.yaml · target v1.32.1+rke2r1 ·",
		"Cluster: ok on cluster-a-etcd-1 · cluster.api=ok · cluster.server_version=v1.31.4+rke2r1 · 1 Kubernetes node not in the inventory: cluster-a-worker-5",
		"Findings (6, 1 waived)",
		"  rollout: " + incidentRollout,
		"rollout of firewall.ufw-active: " + incidentRollout,
		"\n  waived    conntrack.pressure ",
		"waived warning until 2026-12-31 (waivers.yaml:4): worker-3 carries",
		"gate: FAILED (exit 1): 3 critical findings; 1 finding waived",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("terminal lacks %q\n%s", want, out)
		}
	}
	// Short on purpose: warnings (waived or not) keep their rollout to the
	// other formats, and the cluster facts beyond the two key ones too.
	if n := strings.Count(out, "rollout"); n != 2 {
		t.Errorf("%d rollout lines, want 2 (the cause and the critical check)", n)
	}
	// The ranked candidates are a table of the long formats; the terminal
	// has the cause's evidence only.
	for _, absent := range []string{"cluster-a-worker-3 (failing first)", "cluster.rbac.ok", "Failing nodes with it", "Score", "1.00"} {
		if strings.Contains(out, absent) {
			t.Errorf("terminal shows %q, which belongs to the long formats", absent)
		}
	}
	// The waived entry comes after every unwaived one.
	if strings.Index(out, "  waived ") < strings.Index(out, "cluster.nodes-not-in-") {
		t.Error("waived finding is not listed after the others")
	}

	col := string(render(t, "terminal", Options{Color: true, Width: 100}, incidentReport()))
	if !strings.Contains(col, sgrDim+"waived") {
		t.Error("the waived severity is not dimmed")
	}
}

func TestGroupFindings(t *testing.T) {
	crit := func(check string, nodes ...string) result.Finding {
		return result.Finding{Check: check, Severity: result.SeverityCritical, Nodes: nodes}
	}
	warn := func(check string, nodes ...string) result.Finding {
		return result.Finding{Check: check, Severity: result.SeverityWarning, Nodes: nodes}
	}
	waived := func(f result.Finding) result.Finding { f.Waived = &result.Waiver{}; return f }
	for _, tc := range []struct {
		name string
		in   []result.Finding
		want string
	}{
		{"same nodes in any order", []result.Finding{crit("a", "n1", "n2"), crit("b", "n2", "n1")}, "n[1-2] (2): a b"},
		{"later finding joins its node set", []result.Finding{crit("a", "n1"), crit("b", "n2"), crit("c", "n1")}, "n1 (1): a c | n2 (1): b"},
		{"a warning never joins a critical", []result.Finding{crit("a", "n1"), crit("b", "n2"), warn("c", "n1")}, "n1 (1): a | n2 (1): b | n1 (1): c"},
		{"a waived finding never joins one that counts", []result.Finding{warn("a", "n1"), waived(warn("b", "n1"))}, "n1 (1): a | n1 (1): b"},
		{"no nodes is the fleet", []result.Finding{warn("a"), warn("b")}, "fleet: a b"},
		{"a name is not split at a comma", []result.Finding{crit("a", "x,y"), crit("b", "x", "y")}, "x,y (1): a | x,y (2): b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var parts []string
			for _, g := range groupFindings(tc.in) {
				s := nodesHead(g.nodes) + ":"
				for _, f := range g.findings {
					s += " " + f.Check
				}
				parts = append(parts, s)
			}
			if got := strings.Join(parts, " | "); got != tc.want {
				t.Errorf("groups = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestFoldDrift(t *testing.T) {
	d := func(fact, scope, majority string, groups ...result.DriftGroup) result.Drift {
		return result.Drift{Fact: fact, Scope: result.DriftScope(scope), Majority: majority, Groups: groups}
	}
	g := func(v string, nodes ...string) result.DriftGroup { return result.DriftGroup{Value: v, Nodes: nodes} }
	for _, tc := range []struct {
		name string
		in   []result.Drift
		want string
	}{
		{"same outliers fold", []result.Drift{
			d("k", "fleet", "a", g("a", "n1", "n2", "n3"), g("b", "n4")),
			d("k", "role:worker", "a", g("a", "n3"), g("b", "n4")),
		}, "k[fleet role:worker]"},
		{"outliers listed in another order still fold", []result.Drift{
			d("k", "fleet", "a", g("a", "n1", "n2", "n3"), g("b", "n4", "n5")),
			d("k", "role:worker", "a", g("a", "n3"), g("b", "n5", "n4")),
		}, "k[fleet role:worker]"},
		{"some of the fleet's outliers fold", []result.Drift{
			d("k", "fleet", "a", g("a", "n1", "n2", "n3"), g("b", "n4"), g("c", "n5")),
			d("k", "role:worker", "a", g("a", "n3"), g("b", "n4")),
		}, "k[fleet role:worker]"},
		// Not from one run (n3 has two values), but a saved report can be
		// edited: a row that disagrees with the fleet row is kept.
		{"an outlier the fleet row does not flag stays a row", []result.Drift{
			d("k", "fleet", "a", g("a", "n1", "n2", "n3"), g("b", "n4")),
			d("k", "role:worker", "a", g("a", "n1", "n2"), g("c", "n3")),
		}, "k[fleet] k[role:worker]"},
		{"another outlier value stays a row", []result.Drift{
			d("k", "fleet", "a", g("a", "n1", "n2", "n3"), g("b", "n4")),
			d("k", "role:worker", "a", g("a", "n3"), g("c", "n4")),
		}, "k[fleet] k[role:worker]"},
		{"a node missing from the fleet row stays a row", []result.Drift{
			d("k", "fleet", "a", g("a", "n1", "n2", "n3"), g("b", "n4")),
			d("k", "role:worker", "a", g("a", "n3"), g("b", "n9")),
		}, "k[fleet] k[role:worker]"},
		// The seed incident: the role's majority is the fleet's outlier.
		{"a majority the fleet does not share folds", []result.Drift{
			d("k", "fleet", "a", g("a", "n1", "n2", "n3"), g("b", "n4", "n5"), g("c", "n6")),
			d("k", "role:worker", "b", g("b", "n4", "n5"), g("c", "n6")),
		}, "k[fleet role:worker]"},
		{"a value normal in the fleet but odd in the role folds", []result.Drift{
			d("k", "fleet", "a", g("a", "n1", "n2", "n3"), g("b", "n4", "n5")),
			d("k", "role:etcd", "b", g("b", "n4", "n5"), g("a", "n1")),
		}, "k[fleet role:etcd]"},
		{"a role drift without a fleet drift stays", []result.Drift{
			d("j", "fleet", "a", g("a", "n1"), g("b", "n2")),
			d("k", "role:worker", "a", g("a", "n3"), g("b", "n4")),
		}, "j[fleet] k[role:worker]"},
		{"two roles fold into one fleet row", []result.Drift{
			d("k", "fleet", "a", g("a", "n1", "n2", "n3"), g("b", "n4")),
			d("k", "role:etcd", "a", g("a", "n1"), g("b", "n4")),
			d("k", "role:worker", "a", g("a", "n3"), g("b", "n4")),
		}, "k[fleet role:etcd role:worker]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var parts []string
			for _, r := range foldDrift(tc.in) {
				parts = append(parts, r.d.Fact+"["+strings.Join(r.scopes, " ")+"]")
			}
			if got := strings.Join(parts, " "); got != tc.want {
				t.Errorf("foldDrift = %s, want %s", got, tc.want)
			}
		})
	}
}

// TestProbeFailuresAreVisible renders a node whose user probe failed (exit
// 126: the node could not run it) in every format: the node's status and
// the probe with its exit code are shown in each; the terminal counts the
// probes that did not finish ok in its header without -v, and lists them
// one a line with -v.
func TestProbeFailuresAreVisible(t *testing.T) {
	r := incidentReport()
	for i := range r.Nodes {
		if r.Nodes[i].Name == "cluster-a-worker-1" {
			r.Nodes[i].Status = result.StatusProbeFailed
			r.Nodes[i].Message = "probe site (exit 126) failed"
			r.Nodes[i].Probes = append(okProbes(), result.ProbeRun{ID: "site", Status: result.ProbeFailed, ExitCode: 126})
		}
	}
	tests := []struct {
		format string
		opts   Options
		want   []string
		absent []string
	}{
		{"terminal", Options{Width: 120}, []string{"9 nodes: 8 audited, 1 partly audited, 0 not audited · 1 probe not ok on 1 node (-v lists them)", "cluster-a-worker-1  probe_failed  probe site (exit 126) failed"},
			[]string{"Probes not ok"}},
		{"terminal", Options{Width: 120, Verbose: true}, []string{"1 probe not ok on 1 node\n", "Probes not ok (1)", "cluster-a-worker-1  site  failed  126"}, nil},
		{"markdown", Options{}, []string{"`probe_failed`", "probe `site`: failed (exit 126)"}, nil},
		{"html", Options{}, []string{"probe_failed", `<code>site</code></th><td>failed</td><td>126</td>`}, nil},
		{"junit", Options{}, []string{`type="probe_failed"`, "# probe site failed (exit 126)"}, nil},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s verbose=%v", tc.format, tc.opts.Verbose), func(t *testing.T) {
			out := string(render(t, tc.format, tc.opts, r))
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("lacks %q:\n%s", w, out)
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(out, a) {
					t.Errorf("shows %q without -v", a)
				}
			}
		})
	}
}

// unknownKeysReport is 40 nodes whose host keys known_hosts lacks, their
// messages and errors as the transport writes them: the status's meaning,
// then each node's own address, fingerprint and ssh-keyscan line.
func unknownKeysReport() *result.Report {
	r := newReport("inventories/big.yaml")
	for i := 1; i <= 40; i++ {
		name, addr := fmt.Sprintf("node-%d", i), fmt.Sprintf("10.0.0.%d", i)
		r.Nodes = append(r.Nodes, result.Node{
			Name: name, Address: addr, Roles: []string{"worker"}, Status: result.StatusHostKeyUnknown,
			Message: result.StatusHostKeyUnknown.Meaning(),
			Error: fmt.Sprintf("ssh %s (root@%s:22): host key unknown: host key for %s:22 is not in known_hosts (/home/ops/.ssh/known_hosts); "+
				"verify the fingerprint ssh-ed25519 SHA256:%043d and add it with: ssh-keyscan %s >> /home/ops/.ssh/known_hosts", name, addr, addr, i, addr),
			Facts: map[string]string{}, Probes: []result.ProbeRun{},
		})
	}
	analyze(r, fixtureChecks, "")
	return r
}

// TestNodesNotOKGroupedByCause: the nodes not ok are listed by cause, so
// that forty unknown host keys are one row with one instruction over the
// folded node set, in the terminal (the decision names the status alone)
// and in Markdown; each node's fingerprint is left to -v and the JSON.
func TestNodesNotOKGroupedByCause(t *testing.T) {
	r := unknownKeysReport()
	for _, tc := range []struct {
		format   string
		o        Options
		maxLines int
		want     map[string]int // how many times each string appears
	}{
		{"terminal", Options{Width: 80}, 25, map[string]int{"--host-key-policy": 1, "node-[1-40] (40)": 2, "SHA256:": 0, "node-17": 0, "not audited (40)": 1}},
		{"terminal", Options{Width: 80, Verbose: true}, 400, map[string]int{"--host-key-policy": 1, "SHA256:": 40, "node-17 ": 1}},
		{"markdown", Options{}, 0, map[string]int{"--host-key-policy": 2, "| `node-[1-40]` | 40 | `host_key_unknown` |": 1, "**Not audited (40)**": 1}},
		// The folded lines still count the nodes, not the lines.
		{"html", Options{}, 0, map[string]int{"<strong>Not audited (40)</strong>": 1}},
	} {
		out := string(render(t, tc.format, tc.o, r))
		flat := strings.Join(strings.Fields(out), " ")
		if n := strings.Count(out, "\n"); tc.maxLines > 0 && n > tc.maxLines {
			t.Errorf("%s verbose %v: %d lines, want at most %d:\n%s", tc.format, tc.o.Verbose, n, tc.maxLines, out)
		}
		for s, n := range tc.want {
			if got := strings.Count(flat, s); got != n {
				t.Errorf("%s verbose %v: %q appears %d times, want %d:\n%s", tc.format, tc.o.Verbose, s, got, n, out)
			}
		}
	}
}
