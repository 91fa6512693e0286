package report

import (
	stdctx "context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/internal/browser"
	"github.com/fleet-audit/fleet-audit/result"
)

// pwn are payloads that leave a mark if a browser ever runs them: each sets
// its own data-pwned-* attribute on <html>, or the page title to pwned-*.
// The hostile fixture's payloads only alert(), which a headless browser
// swallows without a trace.
var pwn = []struct{ name, payload string }{
	{"script", `<script>document.documentElement.setAttribute('data-pwned-script','1')</script>`},
	{"img", `"><img src=x onerror="document.documentElement.setAttribute('data-pwned-img','1')">`},
	{"img-single", `'><img src=x onerror=document.documentElement.setAttribute('data-pwned-img1','1')>`},
	{"svg", `"><svg onload="document.documentElement.setAttribute('data-pwned-svg','1')">`},
	{"title", `</title><script>document.title='pwned-title'</script>`},
	{"details", `<details open ontoggle="document.documentElement.setAttribute('data-pwned-toggle','1')">`},
	{"href", `<a href="javascript:document.documentElement.setAttribute('data-pwned-href','1')">x</a>`},
	{"javascript", `javascript:document.documentElement.setAttribute('data-pwned-js','1')`},
}

// pwnReport is hostileReport with the marking payloads in the places a node
// or an inventory reaches: <title>, the verdict, a finding, its cause and
// rollout, drift, the matrix (with its title attributes) and node details.
func pwnReport() *result.Report {
	r := hostileReport()
	all := make([]string, len(pwn))
	for i, p := range pwn {
		all[i] = p.payload
	}
	at := func(i int) string { return pwn[i%len(pwn)].payload }
	r.Inventory = at(4) + at(0)
	r.TargetVersion = at(1)
	r.Gate.Reasons = append(r.Gate.Reasons, all...)
	var names []string
	for i := range 3 {
		name := fmt.Sprintf("pwn-%d-%s", i, at(i+1))
		names = append(names, name)
		f := map[string]string{"x.pwn": "same", "x.pwn.odd": "majority", "ufw.active": "inactive"}
		for j, p := range all {
			f[fmt.Sprintf("x.pwn%02d", j)] = p
		}
		r.Nodes = append(r.Nodes, result.Node{
			Name: name, Address: at(i + 2), Roles: []string{"pwn-role" + at(i+3)}, Status: result.StatusProbeTimeout,
			Message: at(i + 4), Error: at(i + 5), Facts: f,
			Probes: []result.ProbeRun{{ID: at(i + 6), Status: "failed", ExitCode: 1, Stderr: strings.Join(all, "\n")}},
		})
		r.Checks = append(r.Checks, result.CheckResult{Check: "pwn." + at(i), Node: name, Severity: result.SeverityCritical, Outcome: result.OutcomeFail, Detail: at(i + 7)})
	}
	r.Nodes[len(r.Nodes)-1].Facts["x.pwn.odd"] = at(3)
	r.Findings = append([]result.Finding{{
		Check: "correlation.pwn" + at(0), Kind: result.KindCorrelation, Title: at(1), Severity: result.SeverityCritical,
		Nodes: names, Summary: at(2), Evidence: all, Remediation: at(3),
		Cause: &result.Cause{
			Fact: at(4), Value: at(5), Symptom: at(6), Matched: 3, Exact: true,
			Ranked: []result.Candidate{{Fact: at(7), Value: at(0), Matched: 3, Score: 1}},
		},
		Rollout: []result.RolloutStep{{Class: result.RolloutClass(at(1)), Nodes: names, OneAtATime: true}},
	}}, r.Findings...)
	r.Drift = append(r.Drift, result.Drift{Fact: "x.pwn.odd", Scope: result.DriftScope("fleet" + at(2)), Majority: "majority", Groups: []result.DriftGroup{
		{Value: "majority", Nodes: names[:2]}, {Value: at(3), Nodes: names[2:]},
	}})
	return r
}

// inertProblems lists every sign in a dumped DOM that node data ran or
// became markup: a pwn mark, a changed title, an element the template never
// writes, an event handler, a javascript: URL, or a script or extra style.
func inertProblems(d *browser.DOM) []string {
	var out []string
	for _, e := range d.Elements {
		if !htmlAllowedTags[e.Tag] {
			out = append(out, fmt.Sprintf("element <%s> %v", e.Tag, e.Attrs))
		}
		for a, v := range e.Attrs {
			switch {
			case strings.HasPrefix(a, "data-pwned"):
				out = append(out, fmt.Sprintf("payload ran: <%s %s>", e.Tag, a))
			case strings.HasPrefix(a, "on"):
				out = append(out, fmt.Sprintf("event handler <%s %s=%q>", e.Tag, a, v))
			case (a == "href" || a == "src" || a == "action" || a == "formaction") && strings.Contains(strings.ToLower(v), "javascript:"):
				out = append(out, fmt.Sprintf("javascript: URL <%s %s=%q>", e.Tag, a, v))
			}
		}
	}
	for _, e := range d.Find("title") {
		if strings.HasPrefix(strings.TrimSpace(e.Text), "pwned") {
			out = append(out, "payload set the title: "+e.Text)
		}
	}
	if n := len(d.Find("script")); n > 0 {
		out = append(out, fmt.Sprintf("%d <script> elements; the report has none of its own", n))
	}
	if n := len(d.Find("style")); n != 1 {
		out = append(out, fmt.Sprintf("%d <style> elements, want the report's one", n))
	}
	return out
}

// pageFile writes page, an HTML document, to a file named for name for
// the browser to load.
func pageFile(t *testing.T, name, page string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), name+".html")
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

func loadInChromium(t *testing.T, b *browser.Browser, name, page string) *browser.DOM {
	t.Helper()
	file := pageFile(t, name, page)
	ctx, cancel := stdctx.WithTimeout(stdctx.Background(), 2*time.Minute)
	defer cancel()
	d, err := b.LoadDOM(ctx, file)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return d
}

// TestHTMLHostileInChromium loads the hostile reports in a real browser:
// nothing from node data may run or become an element, and every payload
// must still be there for the reader, as text.
func TestHTMLHostileInChromium(t *testing.T) {
	b := browser.Find(t)
	for name, r := range map[string]*result.Report{"hostile": hostileReport(), "hostile-fleet": hostileFleet(), "pwn": pwnReport()} {
		t.Run(name, func(t *testing.T) {
			d := loadInChromium(t, b, name, string(render(t, "html", Options{}, r)))
			for _, p := range inertProblems(d) {
				t.Error(p)
			}
			want := []string{"<script>alert('inv')</script>", "<script>alert(1)</script>", `"><img src=x onerror=alert(1)>`, "javascript:alert(1)"}
			if name == "pwn" {
				want = nil
				for _, p := range pwn {
					want = append(want, p.payload)
				}
			}
			for _, w := range want {
				if !strings.Contains(d.Text, w) {
					t.Errorf("payload %q is not shown as text", w)
				}
			}
		})
	}
}

// TestHTMLInertCheckFails is the negative control: the same payloads
// spliced raw into a page without a CSP run in the same browser, and
// inertProblems sees every one of them.
func TestHTMLInertCheckFails(t *testing.T) {
	b := browser.Find(t)
	var page strings.Builder
	page.WriteString("<!DOCTYPE html><html><head><title>unsafe</title><style>p{}</style></head><body>\n")
	for _, p := range pwn {
		// Text and attribute context, as the report has both.
		fmt.Fprintf(&page, "<p>%s</p><p title=\"%s\">t</p><a href=\"%s\">a</a>\n", p.payload, p.payload, p.payload)
	}
	page.WriteString("</body></html>\n")
	problems := strings.Join(inertProblems(loadInChromium(t, b, "unsafe", page.String())), "\n")
	for _, want := range []struct{ payload, sign string }{
		{"script", "payload ran: <html data-pwned-script>"},
		{"img", "payload ran: <html data-pwned-img>"},
		{"img-single", "payload ran: <html data-pwned-img1>"},
		{"svg", "payload ran: <html data-pwned-svg>"},
		{"title", "payload set the title: pwned-title"},
		{"details", "payload ran: <html data-pwned-toggle>"},
		{"href", `javascript: URL <a href="javascript:document.documentElement.setAttribute('data-pwned-href','1')">`},
		{"javascript", `javascript: URL <a href="javascript:document.documentElement.setAttribute('data-pwned-js','1')">`},
		{"script", "<script> elements"},
		{"img", "element <img>"},
		{"svg", "element <svg>"},
		{"img", "event handler <img onerror="},
	} {
		if !strings.Contains(problems, want.sign) {
			t.Errorf("%s payload spliced raw: no %q among the problems found:\n%s", want.payload, want.sign, problems)
		}
	}
}

// TestHTMLIncidentInChromium checks, in the DOM a browser built, what a
// reader of the incident report must find: the verdict with the probable
// cause, every finding with the cause first, the matrix with exactly the
// outliers marked, and the details of every node.
func TestHTMLIncidentInChromium(t *testing.T) {
	b := browser.Find(t)
	r := incidentReport()
	d := loadInChromium(t, b, "incident", string(render(t, "html", Options{}, r)))
	for _, p := range inertProblems(d) {
		t.Error(p)
	}
	for _, p := range reportDOMProblems(d, r) {
		t.Error(p)
	}
}

// TestHTMLStructureCheckFails is the negative control of
// reportDOMProblems: a report with an unmarked drift cell, a missing
// finding, a wrong verdict and a missing node must fail it on each.
func TestHTMLStructureCheckFails(t *testing.T) {
	b := browser.Find(t)
	r := incidentReport()
	doc := string(render(t, "html", Options{}, r))
	cut := func(from, to string) {
		i := strings.Index(doc, from)
		j := strings.Index(doc[i+len(from):], to)
		if i < 0 || j < 0 {
			t.Fatalf("the report has no %q ... %q to cut", from, to)
		}
		doc = doc[:i] + doc[i+len(from)+j+len(to):]
	}
	// The first drift cell of the matrix (kubeproxy.healthz.code on
	// etcd-1) loses its mark.
	m := strings.Index(doc, `<table class="matrix">`)
	k := m + strings.Index(doc[m:], `<td class="drift"`)
	doc = doc[:k] + `<td class="plain"` + doc[k+len(`<td class="drift"`):]
	cut(`<article class="finding sev-warning">`, `</article>`)
	doc = strings.Replace(doc, "FAILED (exit 1)", "FAILED (exit 3)", 1)
	cut(`<details class="node" id="node-9">`, `</details>`)
	cut(`<li><strong>UFW is active on a Kubernetes node</strong>`, `</li>`)

	problems := strings.Join(reportDOMProblems(loadInChromium(t, b, "broken", doc), r), "\n")
	for _, want := range []string{
		"drift marked in the matrix",
		"findings shown, want 6",
		`want "Gate FAILED (exit 1)`,
		"8 node details, want 9",
		"2 blockers in the verdict, want 3",
	} {
		if !strings.Contains(problems, want) {
			t.Errorf("broken report: no %q among the problems found:\n%s", want, problems)
		}
	}
}

// reportDOMProblems checks the structure of the DOM of r's report; r's
// first finding must be the probable cause.
func reportDOMProblems(d *browser.DOM, r *result.Report) []string {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	text := func(e *browser.Element) string { return strings.Join(strings.Fields(e.Text), " ") }

	// The verdict comes first in <main>, with the gate and the probable cause.
	verdicts := d.WithClass("section", "verdict")
	if len(verdicts) != 1 {
		add("%d verdict sections, want 1", len(verdicts))
		return out
	}
	v := verdicts[0]
	dec := Decide(r)
	// Red only when blocked, green only when every node was audited: an
	// allowed upgrade with nodes not audited is amber.
	wantClass, wantHead := "allowed", dec.Headline
	switch {
	case dec.Blocked():
		wantClass = "blocked"
	case len(dec.NotAudited) > 0:
		wantClass = "partial"
	}
	if h := d.Find("h2"); len(h) == 0 || !h[0].Within("section", "verdict") || !strings.Contains(text(h[0]), wantHead) {
		add("the first heading is not the decision %q", wantHead)
	}
	if gate := "Gate " + Verdict(r.Gate); !v.HasClass(wantClass) || !strings.Contains(text(v), gate) {
		add("verdict %q (class %q), want %q (class %q)", text(v), v.Attrs["class"], gate, wantClass)
	}
	for _, e := range d.Find("section") {
		if e == v {
			break
		}
		add("section %q comes before the verdict", e.Attrs["aria-labelledby"])
	}
	// Every blocker, in the order to fix them; a probable cause is its
	// blocker's title and is said once in the verdict.
	var blockers []*browser.Element
	for _, li := range d.Find("li") {
		if li.Within("ol", "blockers") && li.Within("section", "verdict") {
			blockers = append(blockers, li)
		}
	}
	if len(blockers) != len(dec.Blockers) {
		add("%d blockers in the verdict, want %d", len(blockers), len(dec.Blockers))
	}
	for i := range min(len(blockers), len(dec.Blockers)) {
		if !strings.Contains(text(blockers[i]), dec.Blockers[i].Title) {
			add("blocker %d = %q, want %q", i+1, text(blockers[i]), dec.Blockers[i].Title)
		}
	}
	for _, f := range r.Findings {
		if f.Cause != nil && f.Waived == nil {
			if n := strings.Count(text(v), f.Cause.Headline()); n != 1 {
				add("the verdict says %q %d times, want once", f.Cause.Headline(), n)
			}
		}
	}
	na := d.WithClass("div", "not-audited")
	if len(dec.NotAudited) > 0 && (len(na) != 1 || !na[0].Within("section", "verdict")) {
		add("%d not audited lists in the verdict, want 1", len(na))
	}
	for _, u := range dec.NotAudited {
		if len(na) == 0 || !strings.Contains(text(na[0]), u.Node) {
			add("node %s is not in the verdict's not audited list", u.Node)
		}
	}

	// Every finding, the correlation first.
	articles := d.WithClass("article", "finding")
	if len(articles) != len(r.Findings) {
		add("%d findings shown, want %d", len(articles), len(r.Findings))
	}
	ids := map[string]bool{}
	for _, a := range articles {
		for _, c := range d.Find("code") {
			if c.Parent != nil && c.Parent.Parent == a {
				ids[text(c)] = true
			}
		}
	}
	for _, f := range r.Findings {
		if !ids[f.Check] {
			add("finding %s is not shown (shown: %v)", f.Check, ids)
		}
	}
	if len(articles) > 0 && (!articles[0].HasClass("correlation") || !strings.Contains(text(articles[0]), r.Findings[0].Title)) {
		add("first finding is %q, want the probable cause %q", text(articles[0])[:min(80, len(text(articles[0])))], r.Findings[0].Title)
	}

	// The matrix: a column per node under its role, and a drift mark on
	// exactly the outliers of the drift list.
	tables := d.WithClass("table", "matrix")
	if len(tables) != 1 {
		add("%d matrix tables, want 1", len(tables))
		return out
	}
	var colNames []string // in page order
	for _, th := range d.Find("th") {
		if th.Attrs["scope"] == "col" && th.Within("table", "matrix") && th.Within("thead", "") && text(th) != "Fact" {
			colNames = append(colNames, strings.Fields(text(th))[0])
		}
	}
	cols := append([]string(nil), colNames...)
	sort.Strings(cols)
	var nodes []string
	for _, n := range r.Nodes {
		nodes = append(nodes, n.Name)
	}
	sort.Strings(nodes)
	if strings.Join(cols, " ") != strings.Join(nodes, " ") {
		add("matrix columns %v, want the nodes %v", cols, nodes)
	}
	got := map[string]bool{}
	rows := 0
	for _, tr := range d.Find("tr") {
		if !tr.Within("table", "matrix") || !tr.Within("tbody", "") {
			continue
		}
		rows++
		var fact string
		col := 0
		for _, c := range d.Elements {
			if c.Parent != tr {
				continue
			}
			switch c.Tag {
			case "th":
				fact = text(c)
			case "td":
				if c.HasClass("drift") && col < len(colNames) {
					if c.Attrs["title"] == "" {
						add("drift cell %s on %s has no explanation", fact, colNames[col])
					}
					got[fact+"@"+colNames[col]] = true
				}
				col++
			}
		}
		if col != len(colNames) {
			add("matrix row %s has %d cells, want %d", fact, col, len(colNames))
		}
	}
	if rows == 0 {
		add("matrix has no rows")
	}
	// A role row folded into its fleet row marks nothing (foldDrift): the
	// marks are the outliers of the rows the drift table shows.
	want := map[string]bool{}
	for _, row := range foldDrift(r.Drift) {
		dr := row.d
		for _, g := range dr.Groups {
			if g.Value != dr.Majority {
				for _, n := range g.Nodes {
					want[dr.Fact+"@"+n] = true
				}
			}
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		add("drift marked in the matrix:\n %v\nwant\n %v", got, want)
	}
	if len(want) == 0 {
		add("the fixture has no drift: the matrix check proves nothing")
	}

	// Node details: one per node, with its status and its drifted facts.
	details := d.WithClass("details", "node")
	states := nodeStates(r, Decide(r))
	if len(details) != len(r.Nodes) {
		add("%d node details, want %d", len(details), len(r.Nodes))
	}
	for i, n := range r.Nodes {
		if i >= len(details) {
			break
		}
		s := text(details[i])
		if details[i].Attrs["id"] != fmt.Sprintf("node-%d", i+1) || !strings.HasPrefix(s, n.Name+" — "+states[n.Name].Word) {
			add("node details %d: id %q, %q; want %s — %s", i, details[i].Attrs["id"], s[:min(60, len(s))], n.Name, states[n.Name].Word)
		}
		for k, val := range n.Facts {
			if !strings.Contains(s, k) || !strings.Contains(s, val) {
				add("node %s details lack %s=%s", n.Name, k, val)
			}
		}
		var marked, drifted []string
		for _, td := range d.WithClass("td", "drift") {
			if inside(td, details[i]) {
				marked = append(marked, strings.Fields(text(td.Parent))[0])
			}
		}
		for k := range n.Facts {
			if want[k+"@"+n.Name] {
				drifted = append(drifted, k)
			}
		}
		sort.Strings(marked)
		sort.Strings(drifted)
		if fmt.Sprint(marked) != fmt.Sprint(drifted) {
			add("node %s details mark %v as differing, want %v", n.Name, marked, drifted)
		}
	}
	return out
}

// inside reports whether anc is an ancestor of e.
func inside(e, anc *browser.Element) bool {
	for p := e.Parent; p != nil; p = p.Parent {
		if p == anc {
			return true
		}
	}
	return false
}

// firstScreen is the laptop window a change board opens the report in.
const firstScreenW, firstScreenH = 1280, 800

// firstScreenProblems lists what of the decision is not on the first
// screen of page, the HTML of d's report: the decision itself, every
// blocker and the not audited list, each when d has it.
func firstScreenProblems(t *testing.T, b *browser.Browser, name, page string, d Decision) []string {
	t.Helper()
	file := pageFile(t, name, page)
	ctx, cancel := stdctx.WithTimeout(stdctx.Background(), 2*time.Minute)
	defer cancel()
	parts := []struct {
		what, sel string
		want      bool
	}{
		{"the decision", "section.verdict h2#verdict", true},
		{"the blockers", "section.verdict ol.blockers > li", len(d.Blockers) > 0},
		{"the not audited list", "section.verdict .not-audited li", len(d.NotAudited) > 0},
	}
	var sels []string
	for _, p := range parts {
		sels = append(sels, p.sel)
	}
	bottoms, err := b.Bottoms(ctx, file, firstScreenW, firstScreenH, sels)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Logf("%s: bottoms at %dx%d: %v", name, firstScreenW, firstScreenH, bottoms)
	var out []string
	for i, p := range parts {
		switch {
		case bottoms[i] < 0 && p.want:
			out = append(out, fmt.Sprintf("%s: %s is not on the page", name, p.what))
		case bottoms[i] > firstScreenH:
			out = append(out, fmt.Sprintf("%s: %s ends at %d px, below the first screen (%d px)", name, p.what, bottoms[i], firstScreenH))
		}
	}
	return out
}

// TestDecisionOnFirstPage prints the reports of TestDecisionOnFirstScreen
// on A4 and on Letter: the decision block (the decision, every blocker,
// every node not audited, and the ticket's fields that end it) is on the
// first sheet. The block prints in one piece, so its first line and its
// last (the tool's version) on page one mean all of it is there.
func TestDecisionOnFirstPage(t *testing.T) {
	b := browser.Find(t)
	papers := []browser.Paper{browser.A4, browser.Letter}
	for _, tt := range []struct {
		name string
		r    *result.Report
	}{
		{"incident", incidentReport()},
		{"unreachable", unreachableReport()},
		{"incident-unreachable", withUnreachable()},
	} {
		dir := t.TempDir()
		page := pageFile(t, tt.name, string(render(t, "html", Options{}, tt.r)))
		pdfs := []string{filepath.Join(dir, "a4.pdf"), filepath.Join(dir, "letter.pdf")}
		ctx, cancel := stdctx.WithTimeout(stdctx.Background(), 2*time.Minute)
		err := b.PrintOn(ctx, page, papers, pdfs)
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		d := Decide(tt.r)
		for i, pdf := range pdfs {
			pages := browser.PDFPages(t, pdf)
			for _, p := range firstPageProblems(pages[0], d, tt.r) {
				t.Errorf("%s on %s: %s", tt.name, papers[i].Name, p)
			}
			if len(pages) > 1 && len(firstPageProblems(pages[1], d, tt.r)) == 0 {
				t.Errorf("%s on %s: the second page passes the first-page check too: it cannot fail", tt.name, papers[i].Name)
			}
		}
	}
}

// firstPageProblems lists what of decision d is missing from a printed
// page's text.
func firstPageProblems(page string, d Decision, r *result.Report) []string {
	flat := strings.Join(strings.Fields(page), " ")
	wants := []string{d.Headline, "Tool " + strings.TrimSpace(r.Tool.Name+" "+r.Tool.Version)}
	if len(d.Blockers) > 0 {
		wants = append(wants, fmt.Sprintf("Blockers (%d)", len(d.Blockers)), fmt.Sprintf("%d. ", len(d.Blockers)))
	}
	if len(d.NotAudited) > 0 {
		wants = append(wants, fmt.Sprintf("Not audited (%d)", len(d.NotAudited)))
	}
	var out []string
	for _, w := range wants {
		if !strings.Contains(flat, w) {
			out = append(out, fmt.Sprintf("no %q on the page", w))
		}
	}
	return out
}

// withUnreachable is the incident with two more workers that never
// answered: blockers and a not audited list on one first screen.
func withUnreachable() *result.Report {
	r := incidentReport()
	for _, n := range []string{"cluster-a-worker-5", "cluster-a-worker-6"} {
		r.Nodes = append(r.Nodes, result.Node{
			Name: n, Address: "10.0.1.99", Roles: []string{"worker"}, Status: result.StatusUnreachable,
			Message: "cannot reach 10.0.1.99:22 within 10s; check the address, the port and any firewall or security group in between",
			Facts:   map[string]string{}, Probes: []result.ProbeRun{},
		})
	}
	analyze(r, append([]string{"conntrack.pressure", "cluster.api-unavailable"}, fixtureChecks...), incidentWaivers)
	return r
}

// TestDecisionOnFirstScreen: at 1280×800 the first screen shows the
// decision, every blocker and the nodes not audited.
func TestDecisionOnFirstScreen(t *testing.T) {
	b := browser.Find(t)
	for _, tt := range []struct {
		name                 string
		r                    *result.Report
		blockers, notAudited int
	}{
		{"incident", incidentReport(), 3, 0},
		{"unreachable", unreachableReport(), 0, 1},
		{"incident-unreachable", withUnreachable(), 3, 2},
	} {
		d := Decide(tt.r)
		if len(d.Blockers) != tt.blockers || len(d.NotAudited) != tt.notAudited {
			t.Fatalf("%s: fixture has %d blockers and %d nodes not audited, want %d and %d", tt.name, len(d.Blockers), len(d.NotAudited), tt.blockers, tt.notAudited)
		}
		for _, p := range firstScreenProblems(t, b, tt.name, string(render(t, "html", Options{}, tt.r)), d) {
			t.Error(p)
		}
	}
}

// TestFirstScreenCheckFails is the negative control: the same report with
// a screen's height of text pushed above the verdict, and one without its
// not audited list.
func TestFirstScreenCheckFails(t *testing.T) {
	b := browser.Find(t)
	r := withUnreachable()
	doc := string(render(t, "html", Options{}, r))
	pushed := strings.Replace(doc, "<main>", "<main>"+strings.Repeat("<p>filler</p>", 40), 1)
	problems := strings.Join(firstScreenProblems(t, b, "pushed", pushed, Decide(r)), "\n")
	for _, want := range []string{"the blockers ends at", "the not audited list ends at"} {
		if !strings.Contains(problems, want) {
			t.Errorf("pushed report: no %q among the problems found:\n%s", want, problems)
		}
	}
	i := strings.Index(doc, `<div class="not-audited"`)
	j := strings.Index(doc[i:], "</div>")
	cut := doc[:i] + doc[i+j+len("</div>"):]
	if problems := strings.Join(firstScreenProblems(t, b, "cut", cut, Decide(r)), "\n"); !strings.Contains(problems, "the not audited list is not on the page") {
		t.Errorf("report without its not audited list: no such problem among:\n%s", problems)
	}
}
