package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

// allReports is every fixture, hostile one included.
func allReports() map[string]*result.Report {
	return map[string]*result.Report{
		"incident": incidentReport(), "clean": cleanReport(), "unreachable": unreachableReport(), "hostile": hostileReport(),
	}
}

// --- terminal ---

func TestTerminalNoEscapesWithoutColor(t *testing.T) {
	for name, r := range allReports() {
		for _, width := range []int{0, 40, 60, 200} {
			out := render(t, "terminal", Options{Width: width}, r)
			if i := bytes.IndexByte(out, 0x1b); i >= 0 {
				t.Errorf("%s width %d: ESC at byte %d: %q", name, width, i, context(out, i))
			}
			checkTerminalControls(t, name, out)
		}
	}
}

func TestTerminalOnlyOwnSGR(t *testing.T) {
	own := strings.NewReplacer(sgrReset, "", sgrBold, "", sgrRed, "", sgrYellow, "", sgrCyan, "", sgrGreen, "", sgrDim, "")
	for name, r := range allReports() {
		out := render(t, "terminal", Options{Color: true}, r)
		if !bytes.Contains(out, []byte(sgrRed)) && !r.Gate.Passed {
			t.Errorf("%s: Color=true printed no colour", name)
		}
		rest := own.Replace(string(out))
		if i := strings.IndexByte(rest, 0x1b); i >= 0 {
			t.Errorf("%s: an escape sequence that is not ours: %q", name, context([]byte(rest), i))
		}
		checkTerminalControls(t, name, []byte(rest))
	}
}

// checkTerminalControls: apart from newlines nothing may move the cursor,
// ring, or be a C1 control or a bidi override.
func checkTerminalControls(t *testing.T, name string, out []byte) {
	t.Helper()
	if !utf8.Valid(out) {
		t.Errorf("%s: terminal output is not UTF-8", name)
	}
	for i, r := range string(out) {
		if r != '\n' && needsEscape(r) && r != 0x1b {
			t.Errorf("%s: raw control %U at %d: %q", name, r, i, context(out, i))
			return
		}
	}
}

func context(b []byte, i int) []byte {
	lo, hi := max(0, i-30), min(len(b), i+30)
	return b[lo:hi]
}

func TestTerminalIncident(t *testing.T) {
	out := string(render(t, "terminal", Options{Width: 400}, incidentReport()))
	for _, want := range []string{
		"9 nodes: 9 audited, 0 not audited",
		"probable cause of kubeproxy.healthz-failing: ufw.active=active",
		"on the same 4 and on none of the 5 healthy ones",
		"cluster-a-etcd-[1-2],cluster-a-worker-[2,4]",
		"gate: FAILED (exit 1): 3 critical findings",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("terminal output lacks %q", want)
		}
	}
	if strings.Contains(out, "Nodes not ok") {
		t.Error("node table shown although every node is ok")
	}
	if strings.Index(out, "Findings") > strings.Index(out, "Drift") {
		t.Error("findings must come before drift")
	}
	if !strings.Contains(string(render(t, "terminal", Options{}, cleanReport())), "gate: passed") {
		t.Error("clean run lacks gate: passed")
	}
}

func TestWrapUnits(t *testing.T) {
	for _, tc := range []struct {
		in     string
		width  int
		indent int
		mode   int
		want   []string
	}{
		{"active: etcd-[1-2],worker-[2,4]", 26, 2, modeList, []string{"active: etcd-[1-2],", "  worker-[2,4]"}},
		{"n1,n2,n3", 100, 0, modeList, []string{"n1,n2,n3"}},
		{"correlation.kubeproxy.healthz-failing", 24, 0, modeIdent, []string{"correlation.kubeproxy.", "healthz-failing"}},
		{"a long sentence of words", 10, 0, modeWords, []string{"a long", "sentence", "of words"}},
		{"abcdefghijklmnop", 5, 0, modeWords, []string{"abcde", "fghij", "klmno", "p"}},
		{"x", 1, 4, modeList, []string{"x"}},
	} {
		got := wrapUnits(tc.in, tc.width, tc.indent, wrapTiers[tc.mode])
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("wrapUnits(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
		for _, l := range got {
			if DisplayWidth(l) > tc.width {
				t.Errorf("wrapUnits(%q, %d): line %q too wide", tc.in, tc.width, l)
			}
		}
	}
}

// --- markdown ---

var mdTagRe = regexp.MustCompile(`<(/?)([a-zA-Z][a-zA-Z0-9]*)`)

// markdownFormats are the formats written as Markdown, held to the same
// escaping.
var markdownFormats = []string{"markdown", "markdown-summary"}

func TestMarkdownHostile(t *testing.T) {
	for _, format := range markdownFormats {
		for _, r := range []*result.Report{hostileReport(), hostileFleet()} {
			markdownHostile(t, format, r)
		}
	}
}

// markdownHostile holds one hostile report's Markdown to inert text.
func markdownHostile(t *testing.T, format string, r *result.Report) {
	t.Helper()
	out := string(render(t, format, Options{FullReport: "<script>alert(1)</script>`x`.html"}, r))
	lower := strings.ToLower(out)
	for _, bad := range []string{"<script", "<img", "<textarea", "</textarea", "\x1b", "\x00", "\r", "\b"} {
		if strings.Contains(lower, bad) {
			t.Errorf("%s contains raw %q", format, bad)
		}
	}
	// The only raw HTML is our own.
	allowed := map[string]bool{"details": true, "summary": true, "br": true, "code": true}
	for _, m := range mdTagRe.FindAllStringSubmatch(out, -1) {
		if !allowed[strings.ToLower(m[2])] {
			t.Errorf("%s contains raw tag %q", format, m[0])
		}
	}
	checkMarkdownTables(t, out)
}

func TestMarkdownTablesGolden(t *testing.T) {
	for _, r := range allReports() {
		for _, format := range markdownFormats {
			checkMarkdownTables(t, string(render(t, format, Options{}, r)))
		}
	}
}

// checkMarkdownTables: every row of a table has as many cells as its
// header; GFM splits a row at each pipe not preceded by a backslash.
func checkMarkdownTables(t *testing.T, md string) {
	t.Helper()
	want := -1
	for i, l := range strings.Split(md, "\n") {
		// A table inside a blockquote is a table too.
		l = strings.TrimPrefix(l, "> ")
		if !strings.HasPrefix(l, "|") {
			want = -1
			continue
		}
		n := 0
		for j := 0; j < len(l); j++ {
			if l[j] == '|' && (j == 0 || l[j-1] != '\\') {
				n++
			}
		}
		if want < 0 {
			want = n
		} else if n != want {
			t.Errorf("markdown line %d has %d cell separators, its table %d: %q", i+1, n, want, l)
		}
	}
}

func TestMarkdownEscapers(t *testing.T) {
	for _, h := range hostile {
		// Our own markup is allowed; anything else must be escaped.
		s := strings.NewReplacer("<br>", "", "&lt;", "", "&gt;", "").Replace(mdText(h))
		for j := 0; j < len(s); j++ {
			c := s[j]
			if c == '\\' {
				j++ // an escape: the next byte is literal
				continue
			}
			if strings.IndexByte("|`*_[]~$<>\n\r", c) >= 0 || c == '&' && j+1 < len(s) && (s[j+1] == '#' || isLetter(s[j+1])) {
				t.Errorf("mdText(%q) = %q: unescaped %q", h, s, c)
			}
		}
		for _, inTable := range []bool{false, true} {
			code := mdCode(h, inTable)
			if inner, ok := strings.CutPrefix(code, "<code>"); ok {
				inner = strings.TrimSuffix(inner, "</code>")
				if strings.ContainsAny(inner, "<>") || inner != mdText(h) {
					t.Errorf("mdCode(%q) = %q: not escaped text", h, code)
				}
				continue
			}
			n := 0
			for n < len(code) && code[n] == '`' {
				n++
			}
			fence := strings.Repeat("`", n)
			inner := strings.TrimSuffix(code[n:], fence)
			if n == 0 || !strings.HasSuffix(code, fence) || strings.Contains(inner, fence) || strings.ContainsAny(inner, "\n\r") {
				t.Errorf("mdCode(%q) = %q: the content can close or break the span", h, code)
			}
			if inTable && strings.Contains(strings.ReplaceAll(inner, `\|`, ""), "|") {
				t.Errorf("mdCode(%q, table) = %q: raw pipe", h, code)
			}
		}
	}
	if got := mdLine("1. not a list"); !strings.HasPrefix(got, "&#49;") {
		t.Errorf("mdLine must neutralise a leading list marker: %q", got)
	}
}

// --- html ---

type htmlTag struct {
	name  string
	attrs map[string]string
}

// scanTags is a small tokenizer for the tags of our own output: it honours
// quoted attribute values, so text inside an attribute (where escaped
// markup legitimately shows up) is never mistaken for a tag.
func scanTags(t *testing.T, s string) []htmlTag {
	t.Helper()
	var tags []htmlTag
	for i := 0; i < len(s); i++ {
		if s[i] != '<' || i+1 >= len(s) {
			continue
		}
		j := i + 1
		if s[j] == '/' {
			j++
		}
		if j >= len(s) || !isLetter(s[j]) {
			continue
		}
		k := j
		for k < len(s) && (isLetter(s[k]) || s[k] >= '0' && s[k] <= '9') {
			k++
		}
		tag := htmlTag{name: strings.ToLower(s[j:k]), attrs: map[string]string{}}
		for k < len(s) && s[k] != '>' {
			if s[k] == ' ' || s[k] == '\n' || s[k] == '/' {
				k++
				continue
			}
			a := k
			for k < len(s) && !strings.ContainsRune(" \n=>/", rune(s[k])) {
				k++
			}
			name := strings.ToLower(s[a:k])
			val := ""
			if k < len(s) && s[k] == '=' {
				k++
				if k < len(s) && (s[k] == '"' || s[k] == '\'') {
					q := s[k]
					end := strings.IndexByte(s[k+1:], q)
					if end < 0 {
						t.Fatalf("unterminated attribute value at %d", k)
					}
					val = s[k+1 : k+1+end]
					k += end + 2
				} else {
					a := k
					for k < len(s) && s[k] != ' ' && s[k] != '>' {
						k++
					}
					val = s[a:k]
				}
			}
			tag.attrs[name] = val
		}
		tags = append(tags, tag)
		i = k
		if tag.name == "style" {
			// Skip the stylesheet; it is checked on its own.
			if end := strings.Index(s[i:], "</style>"); end >= 0 {
				i += end
			}
		}
	}
	return tags
}

var htmlAllowedTags = map[string]bool{
	"html": true, "head": true, "meta": true, "title": true, "style": true, "body": true, "header": true,
	"h1": true, "h2": true, "h3": true, "h4": true, "nav": true, "a": true, "main": true, "section": true,
	"ul": true, "ol": true, "li": true, "p": true, "strong": true, "br": true, "dl": true, "dt": true, "dd": true,
	"time": true, "div": true, "table": true, "colgroup": true, "col": true, "thead": true, "tbody": true, "tr": true, "th": true, "td": true,
	"span": true, "code": true, "article": true, "input": true, "label": true, "details": true,
	"summary": true, "pre": true, "footer": true,
}

func checkHTML(t *testing.T, name, doc string) {
	t.Helper()
	lower := strings.ToLower(doc)
	for _, bad := range []string{"<script", "<img", "<textarea", "</textarea", "<iframe", "<object", "<link", "@import", "url(", "expression(", `href="javascript:`, "onerror=\""} {
		if strings.Contains(lower, bad) {
			t.Errorf("%s: html contains %q", name, bad)
		}
	}
	for _, tag := range scanTags(t, doc) {
		if !htmlAllowedTags[tag.name] {
			t.Errorf("%s: unexpected tag <%s>", name, tag.name)
		}
		for a, v := range tag.attrs {
			if strings.HasPrefix(a, "on") {
				t.Errorf("%s: event handler attribute %s=%q on <%s>", name, a, v, tag.name)
			}
			switch a {
			case "src", "srcset", "action", "formaction", "poster", "background", "style":
				t.Errorf("%s: attribute %s=%q on <%s>", name, a, v, tag.name)
			case "href":
				// In-page anchors only: no scheme, no //host.
				if !strings.HasPrefix(v, "#") {
					t.Errorf("%s: href %q is not an in-page anchor", name, v)
				}
			}
			if strings.Contains(v, "http://") || strings.Contains(v, "https://") || strings.HasPrefix(strings.TrimSpace(v), "//") {
				if a != "title" && a != "content" {
					t.Errorf("%s: external reference in %s=%q", name, a, v)
				}
			}
		}
	}
}

func TestHTMLHostile(t *testing.T) {
	for name, r := range map[string]*result.Report{"hostile": hostileReport(), "hostile-fleet": hostileFleet()} {
		doc := string(render(t, "html", Options{}, r))
		checkHTML(t, name, doc)
		for _, bad := range []string{"\x1b", "\x00", "\x07", "\b", "\u202e"} {
			if strings.Contains(doc, bad) {
				t.Errorf("%s: html contains raw %q", name, bad)
			}
		}
		if !strings.Contains(doc, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("%s: hostile node text was not shown escaped (was it dropped?)", name)
		}
	}
	// The fleet's matrix is folded, headed by hostile node sets.
	if v := buildHTMLView(hostileFleet(), nil); !v.Matrix.Folded || len(v.Matrix.Cols) >= foldNodesAbove {
		t.Errorf("hostile-fleet matrix: folded %v, %d columns", v.Matrix.Folded, len(v.Matrix.Cols))
	}
}

// TestMatrixFoldsLargeFleets holds the fact matrix of a large fleet to one
// column per set of alike nodes: every node in exactly one column, the UFW
// nodes apart from the healthy workers and marked, a volatile fact that
// differs inside a column counted rather than shown, and a fleet at the
// threshold still a column per node; and the node details to what the
// matrix does not show.
func TestMatrixFoldsLargeFleets(t *testing.T) {
	for _, tc := range []struct {
		nodes, cols int
	}{
		{foldNodesAbove, foldNodesAbove},
		// etcd, control-plane; workers: healthy, UFW, UFW and the newer
		// kernel (node 100).
		{250, 5},
	} {
		t.Run(fmt.Sprintf("nodes=%d", tc.nodes), func(t *testing.T) {
			r := largeReport(tc.nodes)
			m := buildMatrix(r, outliers(r.Drift), nodeStates(r, Decide(r)))
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
			// A healthy worker's details: only what its column does not
			// show; the etcd node, alone in its column, keeps every fact.
			nodes := htmlNodes(r, outliers(r.Drift), m, nodeStates(r, Decide(r)))
			w, e := nodes[5], nodes[0]
			if len(w.Facts) != 1 || w.Facts[0].Key != "conntrack.count" || w.InMatrix != len(r.Nodes[5].Facts)-1 {
				t.Errorf("worker details: facts %v, %d in the matrix", w.Facts, w.InMatrix)
			}
			if len(w.Probes) != 0 || w.ProbesOK != len(r.Nodes[5].Probes) {
				t.Errorf("worker details: probes %v, %d ok", w.Probes, w.ProbesOK)
			}
			if len(e.Facts) != len(r.Nodes[0].Facts) || e.InMatrix != 0 || len(e.Probes) != len(r.Nodes[0].Probes) {
				t.Errorf("etcd details: %d facts (%d in the matrix), %d probes", len(e.Facts), e.InMatrix, len(e.Probes))
			}
		})
	}
}

// TestMarkdownFoldsLargeFleets holds the Markdown node list of a large
// fleet to alikeNodes' groups: a table of the groups with what sets each
// apart, every node's block still there, and a block holding only the
// facts that differ inside the node's group.
func TestMarkdownFoldsLargeFleets(t *testing.T) {
	out := string(render(t, "markdown", Options{}, largeReport(250)))
	checkMarkdownTables(t, out)
	nodes := out[strings.Index(out, "\n## Nodes\n"):]
	if !strings.Contains(nodes, "250 nodes in 5 groups") {
		t.Errorf("no group count in:\n%s", nodes[:min(len(nodes), 600)])
	}
	if n := strings.Count(nodes, "<details><summary>node-"); n != 250+3 {
		t.Errorf("%d node and group blocks, want 250 nodes and 3 groups of more than one", n)
	}
	if !strings.Contains(nodes, "| `node-[00010,00020,") || !strings.Contains(nodes, "`ufw.active` `active` ≠ fleet majority: inactive") {
		t.Errorf("the UFW group and what sets it apart are not listed:\n%s", nodes[:min(len(nodes), 1500)])
	}
	block := nodes[strings.Index(nodes, "<summary>node-00005 "):]
	block = block[:strings.Index(block, "</details>")]
	if !strings.Contains(block, "`conntrack.count` | `705`") || strings.Contains(block, "ufw.active") {
		t.Errorf("node-00005's block is not its group's differences:\n%s", block)
	}
}

// TestNodesNotOKFoldInLargeFleets holds the nodes-not-ok tables of a large
// fleet to a row per status and message, naming the node set and counting.
func TestNodesNotOKFoldInLargeFleets(t *testing.T) {
	r := largeReport(100)
	for i := 50; i < 90; i++ {
		n := &r.Nodes[i]
		n.Status, n.Message, n.Facts = result.StatusUnreachable, "connection refused", map[string]string{}
	}
	r.Nodes[95].Status, r.Nodes[95].Message = result.StatusAuthFailed, "no key accepted"
	v := buildHTMLView(r, nil)
	var got []string
	for _, g := range v.DownGroups {
		got = append(got, fmt.Sprintf("%s %d %s %s", g.NodeSet, g.Count, g.Status, g.Message))
	}
	want := []string{"node-[00050-00089] 40 unreachable connection refused", "node-00095 1 auth_failed no key accepted"}
	if strings.Join(got, "|") != strings.Join(want, "|") || len(v.Down) != 0 || v.DownCount != 41 {
		t.Errorf("html: %d not ok in groups %q (and %d rows), want 41 in %q", v.DownCount, got, len(v.Down), want)
	}
	md := string(render(t, "markdown", Options{}, r))
	if !strings.Contains(md, "| `node-[00050-00089]` | 40 | `unreachable` | connection refused |") {
		t.Errorf("markdown: no folded row for the unreachable nodes in:\n%s", md[strings.Index(md, "## Nodes not ok"):][:400])
	}
}

func TestHTMLSelfContained(t *testing.T) {
	for name, r := range allReports() {
		doc := string(render(t, "html", Options{}, r))
		checkHTML(t, name, doc)
		for _, ext := range []string{"http://", "https://"} {
			if strings.Contains(htmlCSS, ext) || strings.Contains(htmlTemplate, ext) {
				t.Errorf("the template itself references %s", ext)
			}
		}
	}
}

// TestHTMLCSP: the page's policy pins the stylesheet by hash; if the
// template reshaped the stylesheet the page would render unstyled.
func TestHTMLCSP(t *testing.T) {
	doc := string(render(t, "html", Options{}, incidentReport()))
	start := strings.Index(doc, "<style>") + len("<style>")
	end := strings.Index(doc, "</style>")
	sum := sha256.Sum256([]byte(doc[start:end]))
	want := "&#39;sha256-" + base64.StdEncoding.EncodeToString(sum[:])
	want = strings.ReplaceAll(want, "+", "&#43;")
	if !strings.Contains(doc, want) {
		t.Errorf("CSP does not carry the stylesheet's hash %s", want)
	}
	if !strings.Contains(doc, "default-src &#39;none&#39;") {
		t.Error("CSP lacks default-src 'none'")
	}
}

func TestHTMLIncident(t *testing.T) {
	doc := string(render(t, "html", Options{}, incidentReport()))
	for _, want := range []string{
		"upgrade BLOCKED", "Gate FAILED (exit 1): 3 critical findings", "9 nodes: 9 audited, 0 not audited", "12.4s",
		"2026-12-02 10:00:00 UTC", "fleet-audit v0.1.0", "inventories/cluster-a.yaml",
		"probable cause of kubeproxy.healthz-failing: ufw.active=active",
		`<th scope="colgroup" colspan="3">etcd</th>`, `<th scope="colgroup" colspan="4">worker</th>`,
		`<td class="drift" title="fleet majority: inactive">`, "@media print", "overflow-x: auto",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("html lacks %q", want)
		}
	}
	// The probable cause is said once in the decision (its blocker) and
	// once as its finding's title, not again in the verdict or the finding.
	if n := strings.Count(doc, "probable cause of kubeproxy.healthz-failing: ufw.active=active"); n != 2 {
		t.Errorf("the probable cause's headline is on the page %d times, want 2 (blocker, finding)", n)
	}
	// Probable cause first: the correlation comes before the checks it explains.
	if strings.Index(doc, "correlation.kubeproxy.healthz-failing") > strings.Index(doc, "<code>firewall.ufw-active</code>") {
		t.Error("correlation finding is not first")
	}
	if n := strings.Count(doc, `<td class="drift"`); n < 4+4+1 {
		t.Errorf("only %d drifted cells marked in the matrix and node tables", n)
	}
}

// --- junit ---

func TestJUnitParses(t *testing.T) {
	for name, r := range allReports() {
		out := render(t, "junit", Options{}, r)
		var doc junitSuites
		if err := xml.Unmarshal(out, &doc); err != nil {
			t.Fatalf("%s: junit does not parse: %v", name, err)
		}
		for i, c := range string(out) {
			if c < 0x20 && c != '\n' && c != '\t' || c == 0xfffd {
				t.Errorf("%s: character %U at %d in junit", name, c, i)
				break
			}
		}
		// junit-10.xsd has no skipped total on <testsuites>, so skips
		// are checked per suite.
		tests, failures, errors := 0, 0, 0
		for _, s := range doc.Suites {
			if s.Tests != len(s.Cases) {
				t.Errorf("%s: suite %s says %d tests, has %d", name, s.Name, s.Tests, len(s.Cases))
			}
			skipped := 0
			for _, c := range s.Cases {
				if c.Skipped != nil {
					skipped++
				}
			}
			if s.Skipped != skipped {
				t.Errorf("%s: suite %s says %d skipped, has %d", name, s.Name, s.Skipped, skipped)
			}
			tests, failures, errors = tests+s.Tests, failures+s.Failures, errors+s.Errors
		}
		if doc.Tests != tests || doc.Failures != failures || doc.Errors != errors {
			t.Errorf("%s: totals %d/%d/%d do not add up to %d/%d/%d", name, doc.Tests, doc.Failures, doc.Errors, tests, failures, errors)
		}
	}
}

// TestJUnitAgreesWithGate: the failures are exactly the findings the gate
// counts (not one per node × check), whatever --fail-on is; a finding below
// it passes with its text as output, a waived one is skipped; an unaudited
// node is an error.
func TestJUnitAgreesWithGate(t *testing.T) {
	for _, tc := range []struct {
		failOn   result.Severity
		failures []string // the failing cases, in order
	}{
		{result.SeverityCritical, []string{"correlation.kubeproxy.healthz-failing", "firewall.ufw-active", "kubeproxy.healthz-failing"}},
		{result.SeverityWarning, []string{"correlation.kubeproxy.healthz-failing", "firewall.ufw-active", "kubeproxy.healthz-failing", "cluster.nodes-not-in-inventory"}},
		{result.SeverityInfo, []string{"correlation.kubeproxy.healthz-failing", "firewall.ufw-active", "kubeproxy.healthz-failing", "cluster.nodes-not-in-inventory", "skew.upgrade-order"}},
	} {
		t.Run(tc.failOn.String(), func(t *testing.T) {
			r := incidentReport()
			r.Gate.FailOn = tc.failOn
			gateCount := 0
			for _, f := range r.Findings {
				if r.Gate.Fails(f) {
					gateCount++
				}
			}
			doc := junitDoc(t, r)
			if doc.Failures != gateCount || doc.Failures != len(tc.failures) {
				t.Errorf("failures = %d, gate counts %d, want %d", doc.Failures, gateCount, len(tc.failures))
			}
			findings := suiteNamed(doc, "findings")
			var failing []string
			for _, c := range findings.Cases {
				switch {
				case c.Failure != nil:
					failing = append(failing, c.Name)
					if sev, err := result.ParseSeverity(c.Failure.Type); err != nil || sev < tc.failOn {
						t.Errorf("%s: failure type %q under --fail-on %s", c.Name, c.Failure.Type, tc.failOn)
					}
				case c.Skipped != nil:
					if c.Name != "conntrack.pressure" || !strings.HasPrefix(c.Skipped.Message, "waived: ") {
						t.Errorf("skipped case %s: %+v, want only the waived finding", c.Name, c.Skipped)
					}
				default:
					if c.SystemOut == nil || !strings.Contains(c.SystemOut.Text, "below --fail-on "+tc.failOn.String()) {
						t.Errorf("passed finding %s does not say why it passed: %+v", c.Name, c.SystemOut)
					}
				}
				if c.Classname != "findings" {
					t.Errorf("%s: classname %q", c.Name, c.Classname)
				}
			}
			if !slices.Equal(failing, tc.failures) {
				t.Errorf("failing cases %q, want %q", failing, tc.failures)
			}
		})
	}

	hz := caseNamed(suiteNamed(junitDoc(t, incidentReport()), "findings"), "kubeproxy.healthz-failing")
	for _, want := range []string{"probable cause of kubeproxy.healthz-failing: ufw.active=active", "remediation:", "cluster-a-etcd-1: kubeproxy.health=unhealthy", "cluster-a-worker-4: kubeproxy.health=unhealthy"} {
		if !strings.Contains(hz.Failure.Text, want) {
			t.Errorf("failure text lacks %q:\n%s", want, hz.Failure.Text)
		}
	}
	if want := "kube-proxy reports its dataplane unhealthy (/healthz and /livez 503) (4 nodes: cluster-a-etcd-[1-2],cluster-a-worker-[2,4])"; hz.Failure.Message != want {
		t.Errorf("failure message %q, want %q", hz.Failure.Message, want)
	}

	// An unaudited node is an error, one per node the gate calls not
	// fully audited.
	doc := junitDoc(t, unreachableReport())
	nodes := suiteNamed(doc, "nodes")
	down := caseNamed(nodes, "edge-worker-2")
	if down == nil || down.Error == nil || !strings.HasPrefix(down.Error.Message, "unreachable: cannot reach") || nodes.Errors != 1 || doc.Errors != 1 {
		t.Errorf("unreachable node case = %+v (errors %d)", down, doc.Errors)
	}
}

// TestJSONIsMarshalIndent holds the JSON format, which encodes the nodes
// and check results one at a time, to the bytes json.MarshalIndent gives
// for the whole report, also with hostile text, no nodes and nil slices.
func TestJSONIsMarshalIndent(t *testing.T) {
	reports := allReports()
	reports["large"] = largeReport(40)
	empty := newReport("empty")
	empty.Nodes, empty.Checks = []result.Node{}, nil
	reports["empty"] = empty
	for name, r := range reports {
		want, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if got := render(t, "json", Options{}, r); string(got) != string(want)+"\n" {
			t.Errorf("%s: %s", name, testtools.FirstDiff(append(want, '\n'), got))
		}
	}
}

// --- json ---

func TestJSONRoundTrip(t *testing.T) {
	for name, r := range allReports() {
		out := render(t, "json", Options{}, r)
		back, err := result.ReadJSON(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		again := render(t, "json", Options{}, back)
		if name == "hostile" {
			// encoding/json writes invalid UTF-8 as \ufffd and reads it back as
			// U+FFFD, so only the second generation is stable.
			back2, err := result.ReadJSON(bytes.NewReader(again))
			if err != nil {
				t.Fatal(err)
			}
			out = again
			again = render(t, "json", Options{}, back2)
		} else if !reflect.DeepEqual(r, back) {
			t.Errorf("%s: result.ReadJSON(Format(r)) != r", name)
		}
		if !bytes.Equal(out, again) {
			t.Errorf("%s: JSON does not round-trip: %s", name, testtools.FirstDiff(out, again))
		}
	}
}

// TestJUnitNodeCases: each node is a case named exactly as in the
// inventory (an FQDN too: classnames are the fixed suite names, so Jenkins
// has no dot to split), with its findings and facts as its output.
func TestJUnitNodeCases(t *testing.T) {
	r := incidentReport()
	fqdn := "cluster-a-etcd-1.prod.example.com"
	r.Nodes[0].Name = fqdn
	for i := range r.Findings {
		for j, n := range r.Findings[i].Nodes {
			if n == "cluster-a-etcd-1" {
				r.Findings[i].Nodes[j] = fqdn
			}
		}
	}
	nodes := suiteNamed(junitDoc(t, r), "nodes")
	c := caseNamed(nodes, fqdn)
	if c == nil || c.Classname != "nodes" || c.Error != nil || c.Failure != nil {
		t.Fatalf("node case = %+v", c)
	}
	for _, want := range []string{"status: ok\n", "  firewall.ufw-active (critical): UFW is active on a Kubernetes node\n", "  ufw.active=active\n"} {
		if !strings.Contains(c.SystemOut.Text, want) {
			t.Errorf("node output lacks %q:\n%s", want, c.SystemOut.Text)
		}
	}
	if w3 := caseNamed(nodes, "cluster-a-worker-3"); w3 == nil || !strings.Contains(w3.SystemOut.Text, "conntrack.pressure (warning, waived)") {
		t.Errorf("worker-3 does not list its waived finding: %+v", w3)
	}
}

// --- markdown summary ---

// TestMarkdownSummaryBudget: whatever the fleet's size the summary fits a
// comment, keeps what a reviewer needs first (verdict, cause, findings,
// drift), says how much it left out and where the full report is.
func TestMarkdownSummaryBudget(t *testing.T) {
	for _, n := range []int{9, 200, 2000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			r := largeReport(n)
			out := string(render(t, "markdown-summary", Options{FullReport: "report.html"}, r))
			if got := utf8.RuneCountInString(out); got > SummaryBudget {
				t.Errorf("%d nodes: summary is %d characters, over %d", n, got, SummaryBudget)
			}
			for _, want := range []string{"**Gate: FAILED (exit 1)**", "## Findings\n\n| Severity | Check | Nodes | Title |", "## Drift\n", "**Full report** (every node, fact and fix): `report.html`"} {
				if !strings.Contains(out, want) {
					t.Errorf("%d nodes: summary lacks %q", n, want)
				}
			}
			full := string(render(t, "markdown", Options{}, r))
			t.Logf("%d nodes: summary %d characters, full Markdown %d", n, utf8.RuneCountInString(out), utf8.RuneCountInString(full))
		})
	}

	// Past the budget rows are dropped, counted, never cut in half.
	r := largeReport(200)
	for i := range 3000 {
		r.Drift = append(r.Drift, result.Drift{Fact: fmt.Sprintf("x.fact%04d", i), Scope: result.ScopeFleet, Majority: "a",
			Groups: []result.DriftGroup{{Value: "a", Nodes: []string{"node-00001", "node-00002"}}, {Value: strings.Repeat("b", 500), Nodes: []string{"node-00003"}}}})
	}
	out := string(render(t, "markdown-summary", Options{}, r))
	if got := utf8.RuneCountInString(out); got > SummaryBudget {
		t.Errorf("summary is %d characters, over %d", got, SummaryBudget)
	}
	if !regexp.MustCompile(`\n… and [0-9]+ more drifting facts, in the full report\.\n`).MatchString(out) {
		t.Errorf("summary does not say how many drift rows it left out:\n%s", out[len(out)-600:])
	}
	if !strings.Contains(out, "write it with `--html FILE` in the same run") {
		t.Error("summary without an HTML report does not say how to get one")
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "| ") && !strings.HasSuffix(line, " |") {
			t.Errorf("a table row was cut: %q", line)
		}
	}
}
