package report

import (
	"bytes"
	stdcontext "context"
	"fmt"
	"html"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

// The Markdown report is proven by rendering it with cmark-gfm, the GFM
// reference implementation GitHub's renderer is built on, and reading the
// HTML it produces: checking the Markdown source alone would test our idea of
// GFM, not GFM.

// cmarkArgs are the extensions github.com enables.
var cmarkArgs = []string{
	"--extension", "table", "--extension", "autolink", "--extension", "strikethrough",
	"--extension", "tagfilter", "--to", "html",
}

// cmark renders md. unsafe passes raw HTML through, as GitHub and GitLab do
// for a sanitised subset; it is the strict test of our own escaping, since
// any tag from node data then reaches the output. Without it cmark replaces
// every raw tag, ours included, with a comment.
func cmark(t *testing.T, md string, unsafe bool) string {
	t.Helper()
	bin := testtools.Find(t, "cmark-gfm")
	ctx, cancel := stdcontext.WithTimeout(stdcontext.Background(), time.Minute)
	defer cancel()
	args := cmarkArgs
	if unsafe {
		args = append(slices.Clone(args), "--unsafe")
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdin = strings.NewReader(md)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("cmark-gfm %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// hnode is an element or a text node of cmark's HTML output.
type hnode struct {
	tag   string // "" for text, "!--" for a comment
	attrs map[string]string
	text  string // text nodes: decoded; comments: the body
	kids  []*hnode
}

var voidTags = map[string]bool{"br": true, "hr": true, "img": true, "input": true, "meta": true, "wbr": true, "source": true, "embed": true}

// parseRendered builds the tree of cmark's output. cmark writes < > & and "
// in text as entities and its own tags balanced, so anything else is a
// problem: an unbalanced tag, or a bare < or > in text, which is what
// tagfilter leaves of a raw <script> or <iframe> ("&lt;script>").
func parseRendered(s string) (*hnode, []string) {
	root := &hnode{tag: "#root"}
	stack := []*hnode{root}
	var problems []string
	top := func() *hnode { return stack[len(stack)-1] }
	addText := func(raw string) {
		if raw == "" {
			return
		}
		if i := strings.IndexAny(raw, "<>"); i >= 0 {
			problems = append(problems, fmt.Sprintf("bare %q in text %q", raw[i], around(raw, i)))
		}
		top().kids = append(top().kids, &hnode{text: html.UnescapeString(raw)})
	}
	for i := 0; i < len(s); {
		lt := strings.IndexByte(s[i:], '<')
		if lt < 0 {
			addText(s[i:])
			break
		}
		lt += i
		if strings.HasPrefix(s[lt:], "<!--") {
			addText(s[i:lt])
			end := strings.Index(s[lt:], "-->")
			if end < 0 {
				problems = append(problems, "unterminated comment")
				break
			}
			top().kids = append(top().kids, &hnode{tag: "!--", text: s[lt+4 : lt+end]})
			i = lt + end + 3
			continue
		}
		j := lt + 1
		closing := j < len(s) && s[j] == '/'
		if closing {
			j++
		}
		k := j
		for k < len(s) && (isLetter(s[k]) || k > j && s[k] >= '0' && s[k] <= '9') {
			k++
		}
		if k == j {
			// Not a tag: addText reports the bare <.
			addText(s[i : lt+1])
			i = lt + 1
			continue
		}
		addText(s[i:lt])
		n := &hnode{tag: strings.ToLower(s[j:k]), attrs: map[string]string{}}
		selfClosing := false
		for k < len(s) && s[k] != '>' {
			switch c := s[k]; {
			case c == '/':
				selfClosing = true
				k++
				continue
			case c == ' ' || c == '\n' || c == '\t':
				k++
				continue
			}
			selfClosing = false
			a := k
			for k < len(s) && !strings.ContainsRune(" \n\t=>/", rune(s[k])) {
				k++
			}
			name, val := strings.ToLower(s[a:k]), ""
			if k < len(s) && s[k] == '=' {
				k++
				if k < len(s) && (s[k] == '"' || s[k] == '\'') {
					end := strings.IndexByte(s[k+1:], s[k])
					if end < 0 {
						return root, append(problems, "unterminated attribute value")
					}
					val = s[k+1 : k+1+end]
					k += end + 2
				} else {
					a := k
					for k < len(s) && !strings.ContainsRune(" \n\t>", rune(s[k])) {
						k++
					}
					val = s[a:k]
				}
			}
			n.attrs[name] = html.UnescapeString(val)
		}
		i = k + 1
		switch {
		case closing:
			at := -1
			for d := len(stack) - 1; d > 0; d-- {
				if stack[d].tag == n.tag {
					at = d
					break
				}
			}
			if at < 0 {
				problems = append(problems, fmt.Sprintf("</%s> closes nothing", n.tag))
				continue
			}
			for _, open := range stack[at+1:] {
				problems = append(problems, fmt.Sprintf("<%s> not closed before </%s>", open.tag, n.tag))
			}
			stack = stack[:at]
		default:
			top().kids = append(top().kids, n)
			if !voidTags[n.tag] && !selfClosing {
				stack = append(stack, n)
			}
		}
	}
	for _, open := range stack[1:] {
		problems = append(problems, fmt.Sprintf("<%s> never closed", open.tag))
	}
	return root, problems
}

func around(s string, i int) string { return s[max(0, i-30):min(len(s), i+30)] }

// textContent is what a reader sees of n: its text with <br> as a line break.
func (n *hnode) textContent() string {
	var b strings.Builder
	var walk func(*hnode)
	walk = func(n *hnode) {
		switch n.tag {
		case "":
			b.WriteString(n.text)
		case "br":
			b.WriteString("\n")
		case "!--":
		default:
			for _, k := range n.kids {
				walk(k)
			}
		}
	}
	walk(n)
	return b.String()
}

func (n *hnode) elements() []*hnode {
	var out []*hnode
	for _, k := range n.kids {
		if k.tag != "" && k.tag != "!--" {
			out = append(out, k)
		}
	}
	return out
}

// find is every descendant of n with tag, in document order, not looking
// inside a match.
func (n *hnode) find(tag string) []*hnode {
	var out []*hnode
	for _, k := range n.kids {
		if k.tag == tag {
			out = append(out, k)
		} else {
			out = append(out, k.find(tag)...)
		}
	}
	return out
}

func (n *hnode) walk(f func(*hnode)) {
	f(n)
	for _, k := range n.kids {
		k.walk(f)
	}
}

// renderedTable is a <table> as cell texts.
type renderedTable struct {
	header []string
	rows   [][]string
}

func tableOf(n *hnode) renderedTable {
	var t renderedTable
	cells := func(tr *hnode, tag string) []string {
		var out []string
		for _, c := range tr.elements() {
			if c.tag == tag {
				out = append(out, strings.TrimSpace(c.textContent()))
			}
		}
		return out
	}
	for _, part := range n.elements() {
		for _, tr := range part.find("tr") {
			if part.tag == "thead" {
				t.header = cells(tr, "th")
			} else {
				t.rows = append(t.rows, cells(tr, "td"))
			}
		}
	}
	return t
}

// cellWant is what one cell must show: exactly text, or (prefix/suffix)
// text where our renderer adds words around the node data.
type cellWant struct {
	text           string
	prefix, suffix bool
}

func exact(s string) cellWant  { return cellWant{text: s} }
func starts(s string) cellWant { return cellWant{text: s, prefix: true} }
func ends(s string) cellWant   { return cellWant{text: s, suffix: true} }
func anyCell() cellWant        { return cellWant{prefix: true} }

// tableWant is a table the model says the report has.
type tableWant struct {
	where  string
	header []string
	rows   [][]cellWant
}

// checkTable compares a rendered table with the model, cell by cell. cmark
// pads a short row with empty cells and drops a long row's extra cells, so
// counting cells in its output alone could never fail: a stray | from node
// data shows as a cell whose text is cut, a stray newline as an extra row.
func checkTable(got renderedTable, want tableWant) []string {
	var problems []string
	if !slices.Equal(got.header, want.header) {
		problems = append(problems, fmt.Sprintf("%s: header %q, want %q", want.where, got.header, want.header))
	}
	if len(got.rows) != len(want.rows) {
		problems = append(problems, fmt.Sprintf("%s: %d rows, want %d: %q", want.where, len(got.rows), len(want.rows), got.rows))
	}
	for i := range min(len(got.rows), len(want.rows)) {
		row := got.rows[i]
		if len(row) != len(got.header) {
			problems = append(problems, fmt.Sprintf("%s row %d: %d cells, header %d", want.where, i+1, len(row), len(got.header)))
		}
		for j, w := range want.rows[i] {
			if j >= len(row) {
				break
			}
			// A zero-width space before an e-mail's @ keeps GFM from
			// linking it (mdText); the reader sees the value unchanged.
			c, ok := strings.TrimSpace(strings.ReplaceAll(row[j], "\u200b", "")), false
			wt := strings.TrimSpace(w.text)
			switch {
			case w.prefix:
				ok = strings.HasPrefix(c, wt)
			case w.suffix:
				ok = strings.HasSuffix(c, wt)
			default:
				ok = c == wt
			}
			if !ok {
				problems = append(problems, fmt.Sprintf("%s row %d cell %d = %q, want %q (prefix %v, suffix %v)", want.where, i+1, j+1, c, wt, w.prefix, w.suffix))
			}
		}
	}
	return problems
}

// codeText is what mdCode shows of s.
func codeText(s string) string {
	if s = visible(s, ""); s == "" {
		return "(empty)"
	}
	return s
}

// mdTextShown is what mdText shows of s.
func mdTextShown(s string) string { return visible(s, "\n") }

// expectedTables is every table the report must render, in document order,
// with what the model says each cell shows.
func expectedTables(r *result.Report) []tableWant {
	var out []tableWant
	if len(r.Readiness) > 0 {
		tw := tableWant{where: "readiness", header: readinessHead}
		for _, a := range r.Readiness {
			tw.rows = append(tw.rows, []cellWant{exact(a.Verdict.Mark() + " " + a.Area.Title()), exact(a.Verdict.Words()), exact(mdTextShown(a.Summary()))})
		}
		out = append(out, tw)
	}
	fs := orderFindings(r.Findings)
	for _, f := range fs {
		if f.Kind != result.KindCorrelation || f.Waived != nil || f.Cause == nil || len(f.Cause.Ranked) == 0 {
			continue
		}
		tw := tableWant{where: "candidates of " + f.Check, header: []string{"Candidate", "Failing nodes with it", "Healthy nodes with it", "Score"}}
		for _, c := range candidateRows(f.Cause) {
			tw.rows = append(tw.rows, []cellWant{exact(codeText(c.Pair)), exact(c.Failing), exact(c.Healthy), exact(c.Score)})
		}
		out = append(out, tw)
	}
	if len(fs) > 0 {
		tw := tableWant{where: "findings", header: []string{"Severity", "Check", "Nodes", "Summary"}}
		for _, f := range fs {
			nodes := "fleet"
			if len(f.Nodes) > 0 {
				nodes = codeText(compressNodes(f.Nodes))
			}
			tw.rows = append(tw.rows, []cellWant{anyCell(), exact(codeText(f.Check)), exact(nodes), ends(mdTextShown(f.Summary))})
		}
		out = append(out, tw)
	}
	down := tableWant{where: "nodes not ok", header: []string{"Node", "Status", "Message"}}
	for _, n := range r.Nodes {
		if n.Status != result.StatusOK {
			// The message, then the node's own error, each said once.
			msg := result.ErrorText(n.Message, n.Error)
			down.rows = append(down.rows, []cellWant{exact(mdTextShown(n.Name)), exact(n.Status.String()), exact(mdTextShown(msg))})
		}
	}
	if len(down.rows) > 0 {
		out = append(out, down)
	}
	if c := r.Cluster; c != nil && len(c.Facts) > 0 {
		tw := tableWant{where: "cluster facts", header: []string{"Fact", "Value"}}
		for _, k := range clusterFacts(c) {
			tw.rows = append(tw.rows, []cellWant{exact(codeText(k)), exact(codeText(c.Facts[k]))})
		}
		out = append(out, tw)
	}
	if len(r.Drift) > 0 {
		tw := tableWant{where: "drift", header: []string{"Fact", "Majority value", "Outliers"}}
		// A fact that drifts fleet-wide gets its fleet row only: its role
		// rows name the healthy minority of a role as the odd ones.
		fleetWide := map[string]bool{}
		for _, d := range r.Drift {
			fleetWide[d.Fact] = fleetWide[d.Fact] || d.Scope == "fleet"
		}
		for _, d := range r.Drift {
			if d.Scope != "fleet" && fleetWide[d.Fact] {
				continue
			}
			fact := codeText(d.Fact)
			if d.Scope != "" && d.Scope != "fleet" {
				fact += " (" + mdTextShown(string(d.Scope)) + ")"
			}
			var outl []string
			for _, g := range d.Groups {
				if g.Value != d.Majority {
					outl = append(outl, codeText(g.Value)+": "+codeText(compressNodes(g.Nodes)))
				}
			}
			tw.rows = append(tw.rows, []cellWant{
				exact(fact), exact(codeText(d.Majority) + " (" + result.Count(majorityCount(d), "node") + ")"), exact(strings.Join(outl, "\n")),
			})
		}
		out = append(out, tw)
	}
	for _, n := range r.Nodes {
		if len(n.Facts) == 0 {
			continue
		}
		tw := tableWant{where: "facts of " + oneLine(n.Name), header: []string{"Fact", "Value"}}
		for _, k := range slices.Sorted(maps.Keys(n.Facts)) {
			// An outlier's value is followed by why it is one.
			tw.rows = append(tw.rows, []cellWant{exact(codeText(k)), starts(codeText(n.Facts[k]))})
		}
		out = append(out, tw)
	}
	return out
}

// checkTables: the document renders exactly the tables the model says, in
// order, each cell showing its data whole.
func checkTables(doc *hnode, want []tableWant) []string {
	tables := doc.find("table")
	if len(tables) != len(want) {
		var got []string
		for _, t := range tables {
			got = append(got, fmt.Sprint(tableOf(t).header))
		}
		// Comparing cells of misaligned tables would only bury this.
		return []string{fmt.Sprintf("%d tables rendered, want %d; headers: %s", len(tables), len(want), strings.Join(got, " "))}
	}
	var problems []string
	for i := range tables {
		problems = append(problems, checkTable(tableOf(tables[i]), want[i])...)
	}
	return problems
}

// ownTags are the tags our Markdown makes cmark write (headings,
// paragraphs, blockquote, lists, emphasis, code spans, tables) and the raw
// HTML we write on purpose (details, summary, br, code). Anything else
// came from node data. There is no <a>: we make no links, and GFM's
// autolinks only fire on http(s)://, www. or an e-mail address.
var ownTags = map[string]bool{
	"h1": true, "h2": true, "p": true, "blockquote": true, "ul": true, "ol": true, "li": true,
	"strong": true, "em": true, "code": true, "br": true,
	"table": true, "thead": true, "tbody": true, "tr": true, "th": true, "td": true,
	"details": true, "summary": true,
}

// checkOwnMarkup: every tag and attribute in the --unsafe render is one our
// renderer asks for. The only attribute cmark writes for our Markdown is an
// ordered list's start.
func checkOwnMarkup(doc *hnode) []string {
	var problems []string
	doc.walk(func(n *hnode) {
		switch {
		case n.tag == "" || n.tag == "#root":
			return
		case n.tag == "!--":
			problems = append(problems, fmt.Sprintf("comment <!--%s--> (raw HTML cmark dropped)", n.text))
			return
		case !ownTags[n.tag]:
			problems = append(problems, fmt.Sprintf("tag <%s> %v is not ours", n.tag, n.attrs))
		}
		for a, v := range n.attrs {
			lv := strings.ToLower(v)
			switch {
			case strings.HasPrefix(a, "on"):
				problems = append(problems, fmt.Sprintf("event handler %s=%q on <%s>", a, v, n.tag))
			case strings.Contains(lv, "javascript:"):
				problems = append(problems, fmt.Sprintf("javascript: in %s=%q on <%s>", a, v, n.tag))
			case n.tag == "ol" && a == "start":
			default:
				problems = append(problems, fmt.Sprintf("attribute %s=%q on <%s> is not ours", a, v, n.tag))
			}
		}
	})
	return problems
}

// checkSummaryLine: the first thing under the title is the one-line
// summary, and it begins with the gate's verdict.
func checkSummaryLine(doc *hnode, r *result.Report) []string {
	d := Decide(r)
	verdict := "✔ " + d.Headline + " · Gate: passed"
	if d.Blocked() {
		verdict = "✘ " + d.Headline + " · Gate: passed"
	}
	if !r.Gate.Passed {
		verdict = fmt.Sprintf("✘ %s · Gate: FAILED (exit %d)", d.Headline, r.Gate.ExitCode)
	}
	els := doc.elements()
	if len(els) < 2 || els[0].tag != "h1" || els[1].tag != "p" {
		return []string{"the document does not open with a title and a summary paragraph"}
	}
	var problems []string
	if s := els[1].textContent(); !strings.HasPrefix(s, verdict) || !strings.Contains(s, result.Count(len(r.Nodes), "node")+":") {
		problems = append(problems, fmt.Sprintf("summary line %q does not start with %q and count the nodes", s, verdict))
	}
	return problems
}

// checkDetails (--unsafe render): one collapsed block per node, each with a
// <summary> naming the node and Markdown rendered inside it (a paragraph,
// and the facts as a table), which GitHub does only after a blank line
// below </summary>. Findings' details blocks have the same shape.
func checkDetails(doc *hnode, r *result.Report) []string {
	type block struct {
		summary string
		d       *hnode
	}
	var problems []string
	var blocks []block
	for _, d := range doc.find("details") {
		els := d.elements()
		if len(els) == 0 || els[0].tag != "summary" {
			problems = append(problems, "<details> without a leading <summary>")
			continue
		}
		s := els[0].textContent()
		blocks = append(blocks, block{s, d})
		if len(els) < 2 || els[1].tag != "p" {
			problems = append(problems, fmt.Sprintf("details %q: no Markdown rendered inside", s))
		}
	}
	// The findings' blocks come first, then one per node, in node order.
	split := max(0, len(blocks)-len(r.Nodes))
	for _, b := range blocks[:split] {
		if !strings.HasSuffix(b.summary, ": rollout") && !strings.HasSuffix(b.summary, ": waived") {
			problems = append(problems, fmt.Sprintf("unexpected details block %q", b.summary))
		}
	}
	nodes := blocks[split:]
	if len(nodes) != len(r.Nodes) {
		return append(problems, fmt.Sprintf("%d details blocks, want one per node (%d)", len(blocks), len(r.Nodes)))
	}
	for i, n := range r.Nodes {
		if want := oneLine(n.Name) + " (" + nodeStates(r, Decide(r))[n.Name].Word + ")"; nodes[i].summary != want {
			problems = append(problems, fmt.Sprintf("details %d summary %q, want %q", i+1, nodes[i].summary, want))
		}
		if got := len(nodes[i].d.find("table")); len(n.Facts) > 0 && got != 1 {
			problems = append(problems, fmt.Sprintf("details %q: %d tables, want the facts table", nodes[i].summary, got))
		}
	}
	return problems
}

// checkBlankLines: GitLab renders a table, and Markdown inside <details>,
// only when set off by blank lines; cmark is more lenient, so this one is
// checked on the source. Inside a blockquote a line of just ">" is blank.
func checkBlankLines(md string) []string {
	lines := strings.Split(md, "\n")
	blank := func(i int) bool {
		return i < 0 || i >= len(lines) || strings.TrimSpace(strings.TrimPrefix(lines[i], ">")) == ""
	}
	isRow := func(i int) bool {
		return i >= 0 && i < len(lines) && strings.HasPrefix(strings.TrimPrefix(lines[i], "> "), "|")
	}
	var problems []string
	for i, l := range lines {
		switch {
		case isRow(i) && !isRow(i-1) && !blank(i-1):
			problems = append(problems, fmt.Sprintf("line %d: table without a blank line before: %q", i+1, around(lines[i-1]+"⏎"+l, len(lines[i-1]))))
		case isRow(i) && !isRow(i+1) && !blank(i+1):
			problems = append(problems, fmt.Sprintf("line %d: table without a blank line after", i+1))
		case strings.HasPrefix(l, "<details>") && (!blank(i-1) || !blank(i+1)):
			problems = append(problems, fmt.Sprintf("line %d: <details> not set off by blank lines", i+1))
		case strings.HasPrefix(l, "</details>") && (!blank(i-1) || !blank(i+1)):
			problems = append(problems, fmt.Sprintf("line %d: </details> not set off by blank lines", i+1))
		}
	}
	return problems
}

func reportProblems(t *testing.T, name string, problems []string) {
	t.Helper()
	for _, p := range problems {
		t.Errorf("%s: %s", name, p)
	}
}

func TestMarkdownRendersOnGitHub(t *testing.T) {
	for name, r := range allReports() {
		t.Run(name, func(t *testing.T) {
			md := string(render(t, "markdown", Options{}, r))
			reportProblems(t, "source", checkBlankLines(md))

			out := cmark(t, md, true)
			doc, problems := parseRendered(out)
			reportProblems(t, "--unsafe", problems)
			reportProblems(t, "--unsafe", checkOwnMarkup(doc))
			reportProblems(t, "--unsafe", checkSummaryLine(doc, r))
			reportProblems(t, "--unsafe", checkTables(doc, expectedTables(r)))
			reportProblems(t, "--unsafe", checkDetails(doc, r))

			// Without --unsafe our own <details>, <br> and <code> are
			// dropped too; the report must still read: summary and tables.
			safe := cmark(t, md, false)
			sdoc, problems := parseRendered(safe)
			reportProblems(t, "safe", problems)
			reportProblems(t, "safe", checkSummaryLine(sdoc, r))
			var headers []string
			for _, tb := range sdoc.find("table") {
				headers = append(headers, strings.Join(tableOf(tb).header, ","))
			}
			want := expectedTables(r)
			if len(headers) != len(want) {
				t.Errorf("safe: %d tables rendered, want %d", len(headers), len(want))
			}
			for i := range min(len(headers), len(want)) {
				if headers[i] != strings.Join(want[i].header, ",") {
					t.Errorf("safe: table %d header %q, want %q", i+1, headers[i], want[i].header)
				}
			}
		})
	}
}

// TestMarkdownHostileRendersInert: the hostile payloads reach the reader as
// text, and none as markup, even with raw HTML allowed.
func TestMarkdownHostileRendersInert(t *testing.T) {
	r := hostileReport()
	// The summary is held to the same: no markup from node data.
	summary := cmark(t, string(render(t, "markdown-summary", Options{FullReport: "<img src=x>.html"}, r)), true)
	sdoc, problems := parseRendered(summary)
	reportProblems(t, "hostile summary", problems)
	reportProblems(t, "hostile summary", checkOwnMarkup(sdoc))
	for _, bad := range []string{"<script", "<img", "<svg", "<iframe", "<textarea", "<b>", "<a ", `href="javascript:`} {
		if strings.Contains(strings.ToLower(summary), bad) {
			t.Errorf("cmark output of the summary contains %q", bad)
		}
	}
	out := cmark(t, string(render(t, "markdown", Options{}, r)), true)
	doc, problems := parseRendered(out)
	reportProblems(t, "hostile", problems)
	reportProblems(t, "hostile", checkOwnMarkup(doc))
	lower := strings.ToLower(out)
	for _, bad := range []string{"<script", "<img", "<svg", "<iframe", "<textarea", "<b>", "<a ", `href="javascript:`} {
		if strings.Contains(lower, bad) {
			t.Errorf("cmark output contains %q: %q", bad, around(out, strings.Index(lower, bad)))
		}
	}
	text := doc.textContent()
	for _, want := range []string{
		"<script>alert('inv')</script>", "<script>alert(1)</script>", `"><img src=x onerror=alert(1)>`,
		"javascript:alert(1)", "[link](javascript:alert(1)) ![img](x) *em* _u_", "a|b|c", "`code` ``x``",
		"]]><x>&amp;</x><![CDATA[", `\x1b[31mred\x1b[0m`, "# heading",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("hostile payload %q is not shown as text", want)
		}
	}
}

// TestMarkdownRenderChecksFail is the negative control: each check above
// must catch the defect it exists for, in a hand-written document.
func TestMarkdownRenderChecksFail(t *testing.T) {
	facts := tableWant{where: "t", header: []string{"Fact", "Value"}, rows: [][]cellWant{{exact("a"), exact("b|c")}}}
	for _, tc := range []struct {
		name, md string
		check    func(doc *hnode, md string) []string
		want     string
	}{
		{
			name:  "unescaped pipe in a cell",
			md:    "| Fact | Value |\n| --- | --- |\n| `a` | b|c |\n",
			check: func(doc *hnode, _ string) []string { return checkTables(doc, []tableWant{facts}) },
			want:  `cell 2 = "b"`,
		},
		{
			name:  "unescaped pipe in a code span",
			md:    "| Fact | Value |\n| --- | --- |\n| `a` | `b|c` |\n",
			check: func(doc *hnode, _ string) []string { return checkTables(doc, []tableWant{facts}) },
			want:  "cell 2",
		},
		{
			name:  "newline in a cell",
			md:    "| Fact | Value |\n| --- | --- |\n| `a` | b\nc |\n",
			check: func(doc *hnode, _ string) []string { return checkTables(doc, []tableWant{facts}) },
			want:  "2 rows, want 1",
		},
		{
			name:  "table under a list item",
			md:    "- probe\n| Fact | Value |\n| --- | --- |\n| `a` | b\\|c |\n",
			check: func(doc *hnode, _ string) []string { return checkTables(doc, []tableWant{facts}) },
			want:  "0 tables rendered, want 1",
		},
		{
			name:  "table under a list item (source)",
			md:    "- probe\n| Fact | Value |\n| --- | --- |\n",
			check: func(_ *hnode, md string) []string { return checkBlankLines(md) },
			want:  "without a blank line before",
		},
		{
			name:  "raw img",
			md:    "x <img src=x onerror=alert(1)> y\n",
			check: func(doc *hnode, _ string) []string { return checkOwnMarkup(doc) },
			want:  "event handler onerror",
		},
		{
			name:  "raw script, defused by tagfilter only",
			md:    "x <script>alert(1)</script> y\n",
			check: func(doc *hnode, _ string) []string { return nil },
			want:  "bare '>' in text",
		},
		{
			name:  "raw link",
			md:    `<a href="javascript:alert(1)">x</a>` + "\n",
			check: func(doc *hnode, _ string) []string { return checkOwnMarkup(doc) },
			want:  "javascript: in href",
		},
		{
			name: "details without a blank line after summary",
			md:   "# t\n\n**Gate: passed** · 1 node: 1 audited\n\n<details><summary>n1 (ok)</summary>\n| Fact | Value |\n| --- | --- |\n\n</details>\n",
			check: func(doc *hnode, _ string) []string {
				return checkDetails(doc, &result.Report{Nodes: []result.Node{{Name: "n1", Status: result.StatusOK}}})
			},
			want: "no Markdown rendered inside",
		},
		{
			name: "summary line without the verdict",
			md:   "# t\n\n1 node: 1 audited · **Gate: passed**\n",
			check: func(doc *hnode, _ string) []string {
				return checkSummaryLine(doc, &result.Report{Nodes: []result.Node{{}}, Gate: result.Gate{Passed: true}})
			},
			want: "does not start with",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, problems := parseRendered(cmark(t, tc.md, true))
			problems = append(problems, tc.check(doc, tc.md)...)
			if !strings.Contains(strings.Join(problems, "\n"), tc.want) {
				t.Errorf("the checks missed it: want a problem with %q, got %q", tc.want, problems)
			}
		})
	}
}
