package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/result"
)

// Tests for the parts of the model added with issue 3: rollout plans,
// waivers, the cluster section, ranked causes, the target version and
// cluster-scoped check results.

const (
	incidentRollout = "1. etcd, one at a time: cluster-a-etcd-1, cluster-a-etcd-2 → 2. worker: cluster-a-worker-2, cluster-a-worker-4 (failing first)"
	incidentReason  = "worker-3 carries the ingress load test until the upgrade window; accepted by j.doe (CHG-4711)"
)

func TestRolloutSteps(t *testing.T) {
	failing := map[string]bool{"w2": true, "e1": true}
	for _, tc := range []struct {
		name  string
		steps []result.RolloutStep
		want  string
	}{
		{"none", nil, ""},
		{"etcd one at a time, never marked failing-first",
			[]result.RolloutStep{{Class: "etcd", Nodes: []string{"e1", "e2"}, OneAtATime: true}},
			"1. etcd, one at a time: e1, e2"},
		{"workers led by a failing node",
			[]result.RolloutStep{{Class: "control-plane", Nodes: []string{"c1"}, OneAtATime: true}, {Class: "worker", Nodes: []string{"w2", "w1"}}},
			"1. control-plane, one at a time: c1 → 2. worker: w2, w1 (failing first)"},
		{"workers none failing: order is the inventory's, no mark",
			[]result.RolloutStep{{Class: "worker", Nodes: []string{"w1", "w3"}}},
			"1. worker: w1, w3"},
		{"plan order kept, not sorted",
			[]result.RolloutStep{{Class: "infra", Nodes: []string{"i9", "i1"}}},
			"1. infra: i9, i1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := rolloutLine(rolloutSteps(tc.steps, failing)); got != tc.want {
				t.Errorf("rolloutLine = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCauseHeadSymptoms(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    result.Cause
		want string
	}{
		{"old report without Symptoms", result.Cause{Fact: "ufw.active", Value: "active", Symptom: "a", Exact: true}, "probable cause of a: ufw.active=active"},
		{"merged symptoms", result.Cause{Fact: "ufw.active", Value: "active", Symptom: "a", Symptoms: []string{"a", "b"}, Exact: true}, "probable cause of a and b: ufw.active=active"},
		{"near match", result.Cause{Fact: "f", Value: "v", Symptom: "a", Symptoms: []string{"a"}}, "likely cause of a: f=v (near match)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.c.Headline(); got != tc.want {
				t.Errorf("Headline = %q, want %q", got, tc.want)
			}
		})
	}
	c := result.Cause{Symptom: "a", Symptoms: []string{"a", "b"}}
	if !explains(&c, "b") || explains(&c, "x") {
		t.Error("explains must accept every merged symptom and nothing else")
	}
}

func TestOrderFindingsWaivedLast(t *testing.T) {
	w := &result.Waiver{Reason: "r"}
	in := []result.Finding{
		{Check: "c1", Kind: result.KindCheck},
		{Check: "corr-waived", Kind: result.KindCorrelation, Waived: w},
		{Check: "corr", Kind: result.KindCorrelation},
		{Check: "c2-waived", Kind: result.KindCheck, Waived: w},
		{Check: "c3", Kind: result.KindDrift},
	}
	var got []string
	for _, f := range orderFindings(in) {
		got = append(got, f.Check)
	}
	if want := "corr c1 c3 corr-waived c2-waived"; strings.Join(got, " ") != want {
		t.Errorf("order = %v, want %s", got, want)
	}
}

// TestFindingsInResultOrder: every format shows findings in result's one
// order, also when a saved report read back from JSON is not in it (an older
// run, an edited file). The report used to keep an order of its own that put
// any correlation first and kept the file's order otherwise, so an unsorted
// file listed an info finding above a critical one, and a correlation that
// explains nothing ("no fact explains ...", info) headed the table.
func TestFindingsInResultOrder(t *testing.T) {
	w := &result.Waiver{Reason: "r", Expires: "2026-12-31"}
	for _, tc := range []struct {
		name string
		in   []result.Finding
		want string
	}{
		{"unsorted saved report: severity first", []result.Finding{
			{Check: "a.info", Kind: result.KindCheck, Severity: result.SeverityInfo},
			{Check: "b.warn", Kind: result.KindCheck, Severity: result.SeverityWarning},
			{Check: "c.crit", Kind: result.KindCheck, Severity: result.SeverityCritical},
		}, "c.crit b.warn a.info"},
		{"a correlation that explains nothing is not the headline", []result.Finding{
			{Check: "correlation.x", Kind: result.KindCorrelation, Severity: result.SeverityInfo},
			{Check: "x", Kind: result.KindCheck, Severity: result.SeverityCritical},
		}, "x correlation.x"},
		{"a cause before the checks it explains", []result.Finding{
			{Check: "k", Kind: result.KindCheck, Severity: result.SeverityCritical},
			{Check: "correlation.k", Kind: result.KindCorrelation, Severity: result.SeverityCritical},
		}, "correlation.k k"},
		{"same severity: check id", []result.Finding{
			{Check: "z", Kind: result.KindCheck, Severity: result.SeverityWarning},
			{Check: "m", Kind: result.KindCheck, Severity: result.SeverityWarning},
		}, "m z"},
		{"waived last whatever its severity", []result.Finding{
			{Check: "crit-waived", Kind: result.KindCheck, Severity: result.SeverityCritical, Waived: w},
			{Check: "info", Kind: result.KindCheck, Severity: result.SeverityInfo},
		}, "info crit-waived"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &result.Report{SchemaVersion: result.SchemaVersion, Findings: tc.in, Gate: result.Gate{Passed: true}}
			saved, err := result.ReadJSON(bytes.NewReader(render(t, "json", Options{}, r)))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range orderFindings(saved.Findings) {
				got = append(got, f.Check)
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("orderFindings = %v, want %s", got, tc.want)
			}
			if got := markdownFindingChecks(string(render(t, "markdown", Options{}, saved))); got != tc.want {
				t.Errorf("markdown findings table = %s, want %s", got, tc.want)
			}
			if got := strings.Join(terminalFindingChecks(string(render(t, "terminal", Options{Width: 200}, saved)), tc.in), " "); got != tc.want {
				t.Errorf("terminal findings = %s, want %s", got, tc.want)
			}
		})
	}
}

// markdownFindingChecks is the Check column of the Markdown findings table.
func markdownFindingChecks(md string) string {
	_, table, _ := strings.Cut(md, "| Severity | Check | Nodes | Summary |\n| --- | --- | --- | --- |\n")
	var checks []string
	for _, row := range strings.Split(table, "\n") {
		if !strings.HasPrefix(row, "| ") {
			break
		}
		checks = append(checks, strings.Trim(strings.Split(row, " | ")[1], "`"))
	}
	return strings.Join(checks, " ")
}

// terminalFindingChecks are the checks of the terminal's findings list, one
// per line: "  critical  c.crit  title".
func terminalFindingChecks(out string, fs []result.Finding) []string {
	_, list, _ := strings.Cut(out, "Findings (")
	list, _, _ = strings.Cut(list, "Drift")
	var checks []string
	for _, l := range strings.Split(list, "\n") {
		if w := strings.Fields(l); len(w) >= 2 && slices.ContainsFunc(fs, func(f result.Finding) bool { return f.Check == w[1] }) {
			checks = append(checks, w[1])
		}
	}
	return checks
}

func TestCandidateRows(t *testing.T) {
	c := &result.Cause{Healthy: 5, Ranked: []result.Candidate{
		{Fact: "ufw.active", Value: "active", Matched: 4, Score: 1},
		{Fact: "os.kernel", Value: "6.8", Matched: 3, Extra: 2, Missed: 1, Score: 3.0 / 6},
	}}
	got := candidateRows(c)
	want := []candidateRow{{"ufw.active=active", "4 of 4", "0 of 5", "1.00"}, {"os.kernel=6.8", "3 of 4", "2 of 5", "0.50"}}
	if len(got) != len(want) {
		t.Fatalf("rows = %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestTerminalClusterStatuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    *result.Cluster
		want string
	}{
		{"none", nil, ""},
		{"no server", &result.Cluster{Status: result.ClusterNoServer, Message: "no reachable RKE2 server node"}, "Cluster: no_server: no reachable RKE2 server node\n"},
		{"failed", &result.Cluster{Status: result.ClusterFailed, Node: "cp-1", Message: "cluster probes on cp-1: timeout"}, "Cluster: failed on cp-1: cluster probes on cp-1: timeout\n"},
		{"ok without key facts", &result.Cluster{Status: result.ClusterOK, Node: "cp-1", Facts: map[string]string{"cluster.rbac.ok": "yes"}}, "Cluster: ok on cp-1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := cleanReport()
			r.Cluster = tc.c
			out := string(render(t, "terminal", Options{}, r))
			if tc.want == "" {
				if strings.Contains(out, "Cluster:") {
					t.Errorf("cluster line without a cluster:\n%s", out)
				}
				return
			}
			if !strings.Contains(out, "\n"+tc.want) {
				t.Errorf("terminal lacks %q:\n%s", tc.want, out)
			}
		})
	}
}

func TestMarkdownNewSections(t *testing.T) {
	out := string(render(t, "markdown", Options{}, incidentReport()))
	for _, want := range []string{
		"· target `v1.32.1+rke2r1` ·",
		"> | Candidate | Failing nodes with it | Healthy nodes with it | Score |",
		"> | `ufw.status=active` | 4 of 4 | 0 of 5 | 1.00 |",
		"> 1. etcd, one at a time: `cluster-a-etcd-1`, `cluster-a-etcd-2`\n> 2. worker: `cluster-a-worker-2`, `cluster-a-worker-4` (failing first)\n",
		"<details><summary>firewall.ufw-active: rollout</summary>",
		"| *waived* (warning) | `conntrack.pressure` | `cluster-a-worker-3` | **Waived** until 2026-12-31 (waivers.yaml:4): " + incidentReason,
		"<details><summary>conntrack.pressure: waived</summary>\n\n**Waived** until `2026-12-31` by `waivers.yaml:4`: " + incidentReason,
		"## Cluster\n\nCluster-scoped probes: `ok` on `cluster-a-etcd-1`",
		"| `cluster.rbac.ok` | `yes` |",
		"Kubernetes nodes not in the inventory (not audited): `cluster-a-worker-5`",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	// Symptom checks get no rollout (audit plans none), so no details block.
	if strings.Contains(out, "<summary>kubeproxy.healthz-failing") {
		t.Error("details block for a finding without rollout or waiver")
	}
	checkMarkdownTables(t, out)
}

func TestHTMLNewSections(t *testing.T) {
	doc := string(render(t, "html", Options{}, incidentReport()))
	for _, want := range []string{
		`<dt>Target</dt><dd class="mono">v1.32.1&#43;rke2r1</dd>`,
		`<a href="#cluster">Cluster</a>`,
		`<h2 id="cluster">Cluster</h2>`,
		`<dt>Ran on</dt><dd class="mono">cluster-a-etcd-1</dd>`,
		`1 Kubernetes node, not audited: <code>cluster-a-worker-5</code>`,
		`<tr><th scope="row"><code>cluster.server_version</code></th><td><code>v1.31.4&#43;rke2r1</code></td></tr>`,
		`<tr><th scope="row"><code>ufw.status=active</code></th><td>4 of 4</td><td>0 of 5</td><td>1.00</td></tr>`,
		`<ol class="rollout"><li>etcd, <strong>one at a time</strong>: <span class="mono">cluster-a-etcd-1, cluster-a-etcd-2</span></li><li>worker: <span class="mono">cluster-a-worker-2, cluster-a-worker-4</span> (failing first)</li></ol>`,
		`<h2 id="findings">Findings (6, 1 waived)</h2>`,
		`<article class="finding sev-warning waived">`,
		`<strong>Waived</strong> until <code>2026-12-31</code> by <code>waivers.yaml:4</code> (covers nodes cluster-a-worker-3)`,
		"<pre>" + incidentReason + "</pre>",
		"0 failing, 1 waived, 6 passing checks",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("html lacks %q", want)
		}
	}
	// The waived group comes after every severity group and is its own.
	waived := strings.Index(doc, `<h3><span class="badge sev-waived">waived</span> 1</h3>`)
	if waived < 0 || waived < strings.Index(doc, `<h3><span class="badge sev-warning">warning</span> 2</h3>`) {
		t.Error("waived findings are not a group after the warnings")
	}
	if strings.Count(doc, `<ol class="rollout">`) != 4 {
		t.Errorf("want 4 rollouts (cause, ufw check, upgrade order, waived conntrack), got %d", strings.Count(doc, `<ol class="rollout">`))
	}
}

// TestWaivedCauseNotHeadline: a waived correlation is accepted risk; it
// must not be printed as the probable cause in the verdict or the blocks.
func TestWaivedCauseNotHeadline(t *testing.T) {
	r := incidentReport()
	r.Findings[0].Waived = &result.Waiver{Check: r.Findings[0].Check, Reason: "accepted", Expires: "2026-12-31", Source: "w.yaml:1"}
	doc := string(render(t, "html", Options{}, r))
	verdict := doc[:strings.Index(doc, `<h2 id="findings">`)]
	if strings.Contains(verdict, "probable cause of") {
		t.Error("html verdict shows a waived cause")
	}
	if !strings.Contains(doc[strings.Index(doc, `sev-waived">waived</span> 2`):], "probable cause of kubeproxy.healthz-failing") {
		t.Error("waived cause is not in the waived group")
	}
	md := string(render(t, "markdown", Options{}, r))
	if strings.Contains(md, "> **Probable cause") {
		t.Error("markdown headlines a waived cause")
	}
	if !strings.Contains(md, "<details><summary>correlation.kubeproxy.healthz-failing: waived</summary>") {
		t.Error("markdown has no details for the waived cause")
	}
	term := string(render(t, "terminal", Options{}, r))
	if strings.Contains(term, "\nprobable cause of") {
		t.Error("terminal prints a cause block for a waived cause")
	}
}

func junitDoc(t *testing.T, r *result.Report) junitSuites {
	t.Helper()
	var doc junitSuites
	if err := xml.Unmarshal(render(t, "junit", Options{}, r), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func suiteNamed(doc junitSuites, name string) *junitSuite {
	for i := range doc.Suites {
		if doc.Suites[i].Name == name {
			return &doc.Suites[i]
		}
	}
	return nil
}

func caseNamed(s *junitSuite, name string) *junitCase {
	for i := range s.Cases {
		if s.Cases[i].Name == name {
			return &s.Cases[i]
		}
	}
	return nil
}

func TestJUnitWaived(t *testing.T) {
	doc := junitDoc(t, incidentReport())
	c := caseNamed(suiteNamed(doc, "findings"), "conntrack.pressure")
	if c == nil || c.Skipped == nil || c.Failure != nil {
		t.Fatalf("waived case = %+v, want skipped", c)
	}
	if want := "waived: " + incidentReason + " (until 2026-12-31)"; c.Skipped.Message != want {
		t.Errorf("skipped message = %q, want %q", c.Skipped.Message, want)
	}
	for _, s := range doc.Suites {
		found := false
		for _, p := range s.Properties {
			found = found || p.Name == "target_version" && p.Value == "v1.32.1+rke2r1"
		}
		if !found {
			t.Errorf("suite %s lacks the target_version property", s.Name)
		}
	}
	// A check whose failures were all waived is not listed as passed.
	if p := caseNamed(suiteNamed(doc, "checks"), "conntrack.pressure"); p != nil {
		t.Errorf("waived check also listed as quiet: %+v", p)
	}
}

// TestJUnitChecksSuite: the checks that raised no finding are listed,
// passed, or skipped with the reason when no node could be judged.
func TestJUnitChecksSuite(t *testing.T) {
	r := cleanReport()
	for i := range r.Checks {
		if r.Checks[i].Check == "module.br-netfilter" {
			r.Checks[i].Outcome, r.Checks[i].Detail = result.OutcomeSkip, "module.br_netfilter not collected"
		}
	}
	checks := suiteNamed(junitDoc(t, r), "checks")
	if c := caseNamed(checks, "module.br-netfilter"); c == nil || c.Skipped == nil || c.Skipped.Message != "skipped on 3 nodes (lab-[1-3]): module.br_netfilter not collected" {
		t.Errorf("unjudged check = %+v", c)
	}
	if c := caseNamed(checks, "firewall.ufw-active"); c == nil || c.Skipped != nil || c.Failure != nil {
		t.Errorf("passed check = %+v", c)
	}
}

func TestJUnitClusterCase(t *testing.T) {
	doc := junitDoc(t, incidentReport())
	cl := caseNamed(suiteNamed(doc, "nodes"), result.ClusterNode)
	if cl == nil || cl.Skipped != nil || cl.SystemOut == nil || !strings.Contains(cl.SystemOut.Text, "cluster.api=ok\n") ||
		!strings.Contains(cl.SystemOut.Text, "not in the inventory: cluster-a-worker-5") ||
		!strings.Contains(cl.SystemOut.Text, "cluster.nodes-not-in-inventory (warning)") {
		t.Errorf("cluster case = %+v", cl)
	}

	r := cleanReport()
	if caseNamed(suiteNamed(junitDoc(t, r), "nodes"), result.ClusterNode) != nil {
		t.Error("a cluster case without a cluster view")
	}
	r.Cluster = &result.Cluster{Status: result.ClusterNoServer, Message: "no reachable RKE2 server node"}
	c := caseNamed(suiteNamed(junitDoc(t, r), "nodes"), result.ClusterNode)
	if c == nil || c.Skipped == nil || c.Skipped.Message != "no_server: no reachable RKE2 server node" {
		t.Errorf("cluster probes not run: case = %+v", c)
	}
}

// TestJUnitMergedSymptoms: a check that is the second symptom of a merged
// correlation still gets the probable cause in its failure text.
func TestJUnitMergedSymptoms(t *testing.T) {
	r := incidentReport()
	r.Findings[0].Cause.Symptom = "kubeproxy.pod-crashloop"
	r.Findings[0].Cause.Symptoms = []string{"kubeproxy.pod-crashloop", "kubeproxy.healthz-failing"}
	c := caseNamed(suiteNamed(junitDoc(t, r), "findings"), "kubeproxy.healthz-failing")
	if c == nil || c.Failure == nil || !strings.Contains(c.Failure.Text, "probable cause of kubeproxy.pod-crashloop and kubeproxy.healthz-failing: ufw.active=active") {
		t.Errorf("failure = %+v", c)
	}
}

// TestHostileNewFields: every new field of the hostile fixture is rendered
// (its marker is there) and inert (shown escaped right after its marker);
// the whole-document checks of the older tests run on the same output.
func TestHostileNewFields(t *testing.T) {
	r := hostileReport()
	want := map[string][]string{
		"terminal": {
			markTarget + "<script>alert(1)</script>" + `\x1b[31mred\x1b[0m`,
			markWaiver + `\x1b[31mred\x1b[0m`,
			"cluster.api=" + markClusterV + "<script>",
			markK8sNode + `06-\x1b]0;title\x07`,
			markRollout + `"><img src=x onerror=alert(1)>line1\nline2\r\nline3`,
			markSymptom + `a|b|c`,
			markLimit + "<script>alert(1)</script>" + `\x1b]0;title\x07: 3 of 9 inventory hosts`,
		},
		"markdown": {
			"<code>" + markTarget + "&lt;script&gt;alert(1)&lt;/script&gt;",
			markWaiver + `\\x1b\[31mred\\x1b\[0m back\\x08space`,
			"<code>" + markClusterV + "&lt;script&gt;alert(1)&lt;/script&gt;</code>",
			"`" + markClusterV + `a\|b\|c` + "`",
			"<code>" + markK8sNode + "00-&lt;script&gt;alert(1)&lt;/script&gt;</code>",
			"<code>" + markCandidate + "\\`code\\`",
			"<code>" + markRollout + `"&gt;&lt;img src=x onerror=alert(1)&gt;line1\\nline2`,
			"2. &#35; heading: ",
			"<code>" + markSymptom + `"&gt;&lt;img`,
			markLimit + "&lt;script&gt;alert(1)&lt;/script&gt;" + `\\x1b\]0;title\\x07: 3 of 9 inventory hosts`,
		},
		"html": {
			markTarget + "&lt;script&gt;alert(1)&lt;/script&gt;",
			"<pre>" + markWaiver + `\x1b[31mred\x1b[0m back\x08space\x00nul`,
			"<code>" + markClusterV + "&lt;script&gt;alert(1)&lt;/script&gt;</code>",
			"<code>" + markK8sNode + "01-&#34;&gt;&lt;img src=x onerror=alert(1)&gt;</code>",
			"<code>" + markCandidate + "`code`",
			markRollout + "&#34;&gt;&lt;img src=x onerror=alert(1)&gt;",
			markSymptom + "&#34;&gt;&lt;img",
			"<dt>Limit</dt><dd>limited to " + markLimit + "&lt;script&gt;alert(1)&lt;/script&gt;" + `\x1b]0;title\x07: 3 of 9 inventory hosts</dd>`,
		},
		"junit": {
			markTarget,
			`message="waived: ` + markWaiver + `\x1b[31mred\x1b[0m`,
			// system-out is CDATA, where markup is text; TestJUnitParses
			// proves nothing closes the section.
			"cluster.api=" + markClusterV + "<script>alert(1)</script>",
			result.UnjoinedLabel(true) + ": " + markK8sNode + "00-<script>",
			`<property name="limit" value="limited to ` + markLimit + "&lt;script&gt;alert(1)&lt;/script&gt;",
		},
	}
	for format, wants := range want {
		// Wide enough that no table cell wraps a marked value.
		out := string(render(t, format, Options{Width: 4000}, r))
		for _, w := range wants {
			if !strings.Contains(out, w) {
				t.Errorf("%s lacks %q (dropped, or escaped differently)", format, w)
			}
		}
	}
	html := string(render(t, "html", Options{}, r))
	checkHTML(t, "hostile", html)
	for _, bad := range []string{"\x1b", "\x00", "\x07", "\b", "\u202e"} {
		if strings.Contains(html, bad) {
			t.Errorf("html contains raw %q", bad)
		}
	}
	checkTerminalControls(t, "hostile", render(t, "terminal", Options{}, r))
	md := string(render(t, "markdown", Options{}, r))
	for _, m := range mdTagRe.FindAllStringSubmatch(md, -1) {
		if tag := strings.ToLower(m[2]); tag != "details" && tag != "summary" && tag != "br" && tag != "code" {
			t.Errorf("markdown contains raw tag %q", m[0])
		}
	}
	// No new line may start a block from node data: a heading or a
	// thematic break in a list item or paragraph.
	for _, l := range strings.Split(md, "\n") {
		l = strings.TrimPrefix(l, "> ")
		if strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "# fleet-audit report") && !strings.HasPrefix(l, "## ") {
			t.Errorf("markdown line starts a heading from node data: %q", l)
		}
	}
	checkMarkdownTables(t, md)
}

// Every format names the servers asked for the cluster view when one of
// them did not answer: which answered, which did not and why; node text
// in them is escaped like any other.
func TestClusterAttempts(t *testing.T) {
	failedThenOK := &result.Cluster{Status: result.ClusterOK, Node: "etcd-2", Facts: map[string]string{"cluster.api": "ok"},
		Message: "cluster view from etcd-2; etcd-1: API unreachable (connection refused)",
		Attempts: []result.ClusterAttempt{
			{Node: "etcd-1", Outcome: result.ClusterFailed, Reason: "API unreachable (connection refused)"},
			{Node: "etcd-2", Outcome: result.ClusterOK},
		}}
	allFailed := &result.Cluster{Status: result.ClusterFailed, Node: "etcd-1", Facts: map[string]string{"cluster.api": "unreachable"},
		Message: "no server answered: etcd-1: API unreachable (connection refused); etcd-2: no kubeconfig (/etc/rancher/rke2/rke2.yaml)",
		Attempts: []result.ClusterAttempt{
			{Node: "etcd-1", Outcome: result.ClusterFailed, Reason: "API unreachable (connection refused)"},
			{Node: "etcd-2", Outcome: result.ClusterFailed, Reason: "no kubeconfig (/etc/rancher/rke2/rke2.yaml)"},
		}}
	firstOK := &result.Cluster{Status: result.ClusterOK, Node: "etcd-1", Facts: map[string]string{"cluster.api": "ok"},
		Attempts: []result.ClusterAttempt{{Node: "etcd-1", Outcome: result.ClusterOK}}}
	hostile := &result.Cluster{Status: result.ClusterFailed, Message: "no server answered",
		Attempts: []result.ClusterAttempt{{Node: "e|1<b>", Outcome: result.ClusterFailed, Reason: "<img src=x onerror=alert(1)> *x* \x1b[2J"}}}
	tests := []struct {
		name    string
		c       *result.Cluster
		format  string
		want    []string
		notWant []string
	}{
		{"terminal: who answered, who did not and why", failedThenOK, "terminal",
			[]string{"Cluster: ok on etcd-2: cluster view from etcd-2; etcd-1: API unreachable (connection refused)"}, nil},
		{"terminal: nobody answered, every attempt", allFailed, "terminal",
			[]string{"Cluster: failed on etcd-1: no server answered: etcd-1: API unreachable (connection refused); etcd-2: no kubeconfig (/etc/rancher/rke2/rke2.yaml)"}, nil},
		{"markdown: a row per server asked", failedThenOK, "markdown",
			[]string{"| Server asked | Outcome | Why no cluster view |\n| --- | --- | --- |\n| `etcd-1` | `failed` | API unreachable (connection refused) |\n| `etcd-2` | `ok` |  |\n"}, nil},
		{"markdown: nobody answered", allFailed, "markdown",
			[]string{"| `etcd-1` | `failed` | API unreachable (connection refused) |\n| `etcd-2` | `failed` | no kubeconfig (/etc/rancher/rke2/rke2.yaml) |\n"}, nil},
		{"markdown: first server answered, no list", firstOK, "markdown", []string{"Cluster-scoped probes: `ok` on `etcd-1`"}, []string{"Server asked"}},
		{"markdown: node text escaped", hostile, "markdown",
			[]string{"| <code>e\\|1&lt;b&gt;</code> | `failed` | &lt;img src=x onerror=alert(1)&gt; \\*x\\* \\\\x1b\\[2J |"}, []string{"<img", "<b>", "\x1b"}},
		{"html: a list item per server asked", failedThenOK, "html",
			[]string{`<dt>Servers asked</dt><dd><ol><li><code>etcd-1</code>: <span class="status bad">failed</span> — API unreachable (connection refused)</li><li><code>etcd-2</code>: <span class="status good">ok</span></li></ol></dd>`}, nil},
		{"html: first server answered, no list", firstOK, "html", []string{`<h2 id="cluster">Cluster</h2>`}, []string{"Servers asked"}},
		{"html: node text escaped", hostile, "html",
			[]string{"<li><code>e|1&lt;b&gt;</code>: <span class=\"status bad\">failed</span> — &lt;img src=x onerror=alert(1)&gt; *x* \\x1b[2J</li>"}, []string{"<img", "<b>", "\x1b"}},
		{"json: attempts", failedThenOK, "json",
			[]string{`"attempts": [
      {
        "node": "etcd-1",
        "outcome": "failed",
        "reason": "API unreachable (connection refused)"
      },
      {
        "node": "etcd-2",
        "outcome": "ok"
      }
    ]`}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := cleanReport()
			r.Cluster = tc.c
			out := string(render(t, tc.format, Options{Width: 400}, r))
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("%s output lacks %q:\n%s", tc.format, w, out)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(out, w) {
					t.Errorf("%s output holds %q", tc.format, w)
				}
			}
			if tc.format == "json" {
				back, err := result.ReadJSON(strings.NewReader(out))
				if err != nil {
					t.Fatal(err)
				}
				if got, want := fmt.Sprint(back.Cluster.Attempts), fmt.Sprint(tc.c.Attempts); got != want {
					t.Errorf("attempts read back = %s, want %s", got, want)
				}
			}
		})
	}
}
