package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/internal/browser"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

var screenshot = flag.Bool("screenshot", false, "TestDemoReportInBrowser writes its screenshots of the demo report to docs/ (for the README)")

// Screenshot sizes: a laptop window, and a phone (390 CSS pixels wide, as
// current iPhones). The height crops the page: the top of the report
// (verdict, probable cause, first findings) is what the README shows, and it
// keeps the PNG small.
const (
	desktopW, desktopH = 1280, 2200
	phoneW, phoneH     = 390, 2200
)

var demoNodes = []string{"etcd-1", "etcd-2", "etcd-3", "cp-1", "cp-2", "worker-1", "worker-2", "worker-3", "worker-4"}

// TestDemoReportInBrowser runs the real demo and opens its report.html in
// headless Chromium: the DOM the browser built must show the failed gate,
// the UFW probable cause first, the matrix with the UFW nodes marked and
// every node; screenshots at desktop and phone width and a print to PDF
// must come out. With -screenshot the screenshots go to docs/.
func TestDemoReportInBrowser(t *testing.T) {
	testtools.SkipShort(t, "loads the demo report in a real headless browser")
	b := browser.Find(t)
	out := t.TempDir()
	isolateClient(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	if code := run(ctx, []string{"fleet-audit", "demo", "--out", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("demo exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	page := filepath.Join(out, "report.html")

	d, err := b.LoadDOM(ctx, page)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range demoReportProblems(d) {
		t.Error(p)
	}

	dir := t.TempDir()
	if *screenshot {
		dir = filepath.Join("..", "..", "docs")
	}
	for _, s := range []struct {
		file string
		w, h int
	}{
		{"demo-report.png", desktopW, desktopH},
		{"demo-report-phone.png", phoneW, phoneH},
	} {
		file := filepath.Join(dir, s.file)
		if err := b.Screenshot(ctx, page, file, s.w, s.h); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkScreenshot(data, s.w, s.h); err != nil {
			t.Errorf("%s: %v", s.file, err)
		}
		t.Logf("%s: %dx%d, %d bytes", file, s.w, s.h, len(data))
	}

	// The first screen of a laptop shows the decision and every blocker
	// (the demo audits every node, so it has no not audited list).
	bottoms, err := b.Bottoms(ctx, page, 1280, 800, []string{"section.verdict h2#verdict", "section.verdict ol.blockers > li"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("first screen at 1280x800: decision ends at %d px, blockers at %d px", bottoms[0], bottoms[1])
	for i, what := range []string{"the decision", "the last blocker"} {
		if bottoms[i] < 0 || bottoms[i] > 800 {
			t.Errorf("%s ends at %d px, not on the first screen (800 px)", what, bottoms[i])
		}
	}

	for _, p := range phoneLayoutProblems(ctx, t, b, page) {
		t.Errorf("at phone width: %s", p)
	}

	// On both sheets a board prints on: the decision on the first page,
	// the whole report on the pages after it.
	papers := []browser.Paper{browser.A4, browser.Letter}
	pdfs := []string{filepath.Join(t.TempDir(), "report-a4.pdf"), filepath.Join(t.TempDir(), "report-letter.pdf")}
	if err := b.PrintOn(ctx, page, papers, pdfs); err != nil {
		t.Fatal(err)
	}
	for i, pdf := range pdfs {
		paper := papers[i].Name
		data, err := os.ReadFile(pdf)
		if err != nil {
			t.Fatal(err)
		}
		pages, err := checkPDF(data)
		if err != nil {
			t.Errorf("%s: %v", paper, err)
		}
		if err := browser.OnPaper(data, papers[i]); err != nil {
			t.Errorf("%s: %v", paper, err)
		}
		// Nine nodes' details, a 150-row matrix and the findings do not fit on
		// one sheet; one page would mean the print stylesheet hid the report.
		if pages < 5 {
			t.Errorf("%s: the report prints on %d pages, want the whole report on several", paper, pages)
		}
		t.Logf("report on %s: %d pages, %d bytes", paper, pages, len(data))
		text := browser.PDFPages(t, pdf)
		for _, p := range printProblems(strings.Join(text, "\f")) {
			t.Errorf("on %s paper: %s", paper, p)
		}
		for _, p := range firstPageProblems(text[0]) {
			t.Errorf("on %s paper, first page: %s", paper, p)
		}
		// The check can fail: the second page does not hold the decision.
		if len(text) < 2 || len(firstPageProblems(text[1])) == 0 {
			t.Errorf("on %s paper: the first-page check passes the second page too", paper)
		}
	}
}

// firstPageProblems lists what of the demo's decision block is not on the
// printed report's first page: its first line (the decision), the
// blockers, what does not block, and its last line (the tool's version);
// the block is printed in one piece, so with its first and last lines the
// page holds all of it.
func firstPageProblems(page string) []string {
	var problems []string
	flat := strings.Join(strings.Fields(page), " ")
	for _, want := range []string{
		"✘ upgrade BLOCKED", "Gate FAILED (exit 1): 4 critical findings", "Blockers (4), in the order to fix them",
		"1. probable cause of", "4. kube-proxy reports its dataplane unhealthy", "Not blocking (6):",
		"Fleet 9 nodes: 9 audited, 0 not audited", "Tool fleet-audit ",
	} {
		if !strings.Contains(flat, want) {
			problems = append(problems, fmt.Sprintf("no %q", want))
		}
	}
	return problems
}

// printProblems reads the printed report's text back (pdftotext, from
// poppler) and lists what a change board's paper copy would lack: the
// verdict, the findings, the matrix with its differing rows, the node
// details; and what it should not carry: the rows where every node agrees
// and every node's raw facts, which took the print to 56 pages.
func printProblems(text string) []string {
	var problems []string
	for _, want := range []string{
		"Gate FAILED", "probable cause of", "Findings (10)", "Fact matrix", "Readiness by area", "etcd.snapshot-old",
		"ufw.active", "kubeproxy.healthz.code", "Nodes (9)", "worker-4 — 4 findings", "etcd-3 — 1 finding", "cp-1 — ok", "Checks not passed",
	} {
		if !strings.Contains(text, want) {
			problems = append(problems, fmt.Sprintf("no %q", want))
		}
	}
	// The matrix fits the sheet: all nine node columns side by side, and
	// the healthz row with its marks in them.
	for _, row := range []*regexp.Regexp{
		regexp.MustCompile(`etcd-1\s+etcd-2\s+etcd-3\s+cp-1\s+cp-2\s+worker-1\s+worker-2\s+worker-3\s+worker-4`),
		regexp.MustCompile(`kubeproxy\.healthz\.code ◆\s+≠ 503\s+≠ 503\s+200\s+200\s+200\s+200\s+≠ 503\s+200\s+≠ 503`),
	} {
		if !row.MatchString(text) {
			problems = append(problems, fmt.Sprintf("the matrix is not printed whole: no line matching %s", row))
		}
	}
	// Equal on every node: listed in the file's matrix and in each node's
	// raw facts, neither of which is printed.
	if strings.Contains(text, "iptables.version") {
		problems = append(problems, "a fact every node agrees on (iptables.version) is printed")
	}
	return problems
}

// demoReportProblems lists what a reader of the demo's report would miss.
func demoReportProblems(d *browser.DOM) []string {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	text := func(e *browser.Element) string { return strings.Join(strings.Fields(e.Text), " ") }

	if titles := d.Find("title"); len(titles) != 1 || !strings.HasSuffix(text(titles[0]), "upgrade BLOCKED") {
		add("page title is not the failed verdict: %q", texts(titles, text))
	}
	verdicts := d.WithClass("section", "verdict")
	if len(verdicts) != 1 || !verdicts[0].HasClass("blocked") || !strings.Contains(text(verdicts[0]), "upgrade BLOCKED") ||
		!strings.Contains(text(verdicts[0]), "Gate FAILED (exit 1)") {
		add("no failed verdict section (%d verdict sections)", len(verdicts))
	}
	// The blockers, the probable cause first: it is what to fix first.
	var blockers []*browser.Element
	for _, li := range d.Find("li") {
		if li.Within("ol", "blockers") && li.Within("section", "verdict") {
			blockers = append(blockers, li)
		}
	}
	if len(blockers) != 4 {
		add("%d blockers in the verdict, want the 4 critical findings", len(blockers))
	}
	if len(blockers) == 0 || !strings.Contains(text(blockers[0]), "probable cause of") || !strings.Contains(text(blockers[0]), ": ufw.active=active") {
		add("the verdict does not name ufw.active=active as the probable cause first: %v", texts(blockers, text))
	}

	articles := d.WithClass("article", "finding")
	if len(articles) == 0 {
		add("no findings")
	} else {
		first := articles[0]
		var id string
		for _, c := range d.Find("code") {
			if c.Parent != nil && c.Parent.Parent == first {
				id = text(c)
				break
			}
		}
		if !first.HasClass("correlation") || !strings.HasPrefix(id, "correlation.") || !strings.Contains(text(first), "probable cause of") || !strings.Contains(text(first), "ufw.active=active") {
			add("first finding %q is not the correlation with probable cause ufw.active=active", id)
		}
	}

	// The readiness by area: the seed's network blocks, the demo's etcd
	// and drain plants warn, the rest is judged ready.
	readiness := map[string]string{}
	for _, tr := range d.Find("tr") {
		if tr.Within("table", "readiness") && tr.Within("tbody", "") {
			for _, v := range result.Verdicts {
				if tr.HasClass("rd-" + string(v)) {
					readiness[strings.Join(strings.Fields(text(tr)), " ")] = string(v)
				}
			}
		}
	}
	for row, v := range map[string]string{
		"✘ network and kube-proxy BLOCKED": "blocked", "⚠ etcd warnings etcd.snapshot-old": "warnings",
		"⚠ drain warnings k8s.drain-pdb-blocked": "warnings", "✔ removed APIs ready": "ready", "✔ certificates ready": "ready",
	} {
		found := false
		for got, gv := range readiness {
			found = found || (strings.HasPrefix(got, row) && gv == v)
		}
		if !found {
			add("no readiness row %q (%s) in %v", row, v, readiness)
		}
	}

	// The matrix: the nine nodes as columns, and ufw.active marked on the
	// four UFW nodes.
	if n := len(d.WithClass("table", "matrix")); n != 1 {
		add("%d matrix tables, want 1", n)
	}
	// Each column head is the node and its state: ok, N findings.
	var cols []string
	state := map[string]string{}
	for _, th := range d.Find("th") {
		if th.Attrs["scope"] == "col" && th.Within("table", "matrix") && th.Within("thead", "") && text(th) != "Fact" {
			name, st, _ := strings.Cut(text(th), " ")
			cols = append(cols, name)
			state[name] = st
		}
	}
	if strings.Join(cols, " ") != strings.Join(demoNodes, " ") {
		add("matrix columns %v, want %v", cols, demoNodes)
	}
	for _, n := range demoNodes {
		want := "ok"
		switch n {
		case "etcd-1", "etcd-2", "worker-2", "worker-4":
			want = "4 findings"
		case "etcd-3", "worker-1": // the old snapshot, the drain blocked by a PDB
			want = "1 finding"
		}
		if state[n] != want {
			add("matrix column %s reads %q, want %q", n, state[n], want)
		}
	}
	ufw := map[string]string{}
	for _, tr := range d.Find("tr") {
		if !tr.Within("table", "matrix") {
			continue
		}
		var cells []*browser.Element
		fact := ""
		for _, e := range d.Elements {
			if e.Parent == tr && e.Tag == "th" {
				fact = text(e)
			}
			if e.Parent == tr && e.Tag == "td" {
				cells = append(cells, e)
			}
		}
		if fact != "ufw.active" || len(cells) != len(cols) {
			continue
		}
		for i, c := range cells {
			state := "plain"
			if c.HasClass("drift") {
				state = "drift"
			}
			// The value without the mark and the screen-reader note.
			value := text(c)
			for _, e := range d.Elements {
				if e.Parent == c && e.Tag == "span" {
					value = strings.Replace(value, text(e), "", 1)
				}
			}
			ufw[cols[i]] = state + " " + strings.Join(strings.Fields(value), " ")
		}
	}
	for _, n := range demoNodes {
		// etcd-3 differs from the other two etcd nodes, but it is the
		// fleet's healthy majority: marking it would point at the wrong node.
		want := "plain inactive"
		if n == "etcd-1" || n == "etcd-2" || n == "worker-2" || n == "worker-4" {
			want = "drift active"
		}
		if ufw[n] != want {
			add("matrix ufw.active on %s = %q, want %q", n, ufw[n], want)
		}
	}

	details := d.WithClass("details", "node")
	var names []string
	for _, e := range details {
		names = append(names, strings.Fields(text(e))[0])
	}
	if strings.Join(names, " ") != strings.Join(demoNodes, " ") {
		add("node details for %v, want %v", names, demoNodes)
	}
	if n := len(d.Find("script")); n > 0 {
		add("%d <script> elements in a report that has none", n)
	}
	return out
}

// layoutProbe measures the report's layout from inside the page and posts
// the numbers to the page that frames it. The report itself runs no script
// (its CSP forbids it), so the probe goes into a copy without the CSP.
const layoutProbe = `<script>
(function () {
  var vw = window.innerWidth;
  var m = document.querySelector("table.matrix");
  var cell = m.querySelector("tbody td"), box = m.parentNode;
  var widest = 0, spill = 0;
  m.querySelectorAll("tbody th[scope=row]").forEach(function (th) {
    widest = Math.max(widest, th.getBoundingClientRect().width);
    if (th.scrollWidth > th.clientWidth + 1) spill++;
  });
  parent.postMessage({
    vw: vw, page: document.documentElement.scrollWidth, fact: Math.round(widest),
    "overflowing-facts": spill, "first-cell": Math.round(cell.getBoundingClientRect().left),
    "matrix-scrolls": box.scrollWidth > box.clientWidth ? "yes" : "no"
  }, "*");
})();
</script>`

// phoneFrame shows the probed report in a phone-sized frame and copies
// what the probe posts onto its own <body>, for the DOM dump. A frame,
// because headless Chromium lays a page out at least 500 px wide whatever
// --window-size asks for (screenshots are re-laid at the asked width).
const phoneFrame = `<!DOCTYPE html><html><body style="margin:0">
<iframe src="layout.html" style="border:0; width:%dpx; height:%dpx"></iframe>
<script>window.addEventListener("message", function (e) {
  for (var k in e.data) document.body.setAttribute("data-" + k, e.data[k]);
});</script></body></html>`

// phoneLayoutProblems loads page at phone width and lists what would make
// the matrix unreadable there: the page itself scrolling sideways, the
// sticky fact column taking most of the screen, fact names spilling out of
// their cells, or no node column in view.
func phoneLayoutProblems(ctx context.Context, t *testing.T, b *browser.Browser, page string) []string {
	t.Helper()
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	csp := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy"[^>]*>`)
	probed := csp.ReplaceAll(html, nil)
	probed = bytes.Replace(probed, []byte("</body>"), []byte(layoutProbe+"</body>"), 1)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "layout.html"), probed, 0o644); err != nil {
		t.Fatal(err)
	}
	frame := filepath.Join(dir, "phone.html")
	if err := os.WriteFile(frame, fmt.Appendf(nil, phoneFrame, phoneW, phoneH), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := b.LoadDOM(ctx, frame)
	if err != nil {
		t.Fatal(err)
	}
	body := d.Find("body")[0].Attrs
	num := func(k string) int {
		n, err := strconv.Atoi(body["data-"+k])
		if err != nil {
			t.Fatalf("layout probe did not run: data-%s = %q", k, body["data-"+k])
		}
		return n
	}
	t.Logf("phone layout: %v", body)
	var out []string
	vw := num("vw")
	if vw != phoneW {
		out = append(out, fmt.Sprintf("viewport %d CSS px wide, want %d", vw, phoneW))
	}
	if page := num("page"); page > vw {
		out = append(out, fmt.Sprintf("the page is %d px wide in a %d px viewport: it scrolls sideways, not just the matrix", page, vw))
	}
	if fact := num("fact"); fact*100 > vw*45 {
		out = append(out, fmt.Sprintf("the sticky fact column is %d of %d px", fact, vw))
	}
	if n := num("overflowing-facts"); n > 0 {
		out = append(out, fmt.Sprintf("%d fact names overflow their cell", n))
	}
	if left := num("first-cell"); left*3 > vw*2 {
		out = append(out, fmt.Sprintf("the first node column starts at %d px: under a third of the screen is left for values", left))
	}
	if body["data-matrix-scrolls"] != "yes" {
		// Nine columns cannot fit 390 px; if the box does not scroll, the
		// probe measured something other than the matrix.
		out = append(out, "the matrix does not scroll inside its box")
	}
	return out
}

func texts(es []*browser.Element, text func(*browser.Element) string) []string {
	var out []string
	for _, e := range es {
		out = append(out, text(e))
	}
	return out
}

// checkScreenshot: a PNG of the given size in which the failed verdict's
// pink box is drawn, which proves the page was styled (the CSP admits the
// stylesheet by hash) and not blank.
func checkScreenshot(data []byte, w, h int) error {
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("not a PNG: %w", err)
	}
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		return fmt.Errorf("%dx%d, want %dx%d", b.Dx(), b.Dy(), w, h)
	}
	// --failbg in report/html.go.
	pink := color.RGBA{0xfb, 0xe4, 0xe7, 0xff}
	n := 0
	for y := 0; y < min(h, 800); y++ {
		for x := 0; x < w; x++ {
			if near(img.At(x, y), pink) {
				n++
			}
		}
	}
	if n < w*20 {
		return fmt.Errorf("only %d pixels of the failed verdict's background in the top 800 rows: unstyled or blank page", n)
	}
	return nil
}

func near(c color.Color, want color.RGBA) bool {
	r, g, b, _ := c.RGBA()
	d := func(a uint32, b uint8) bool { x := int(a>>8) - int(b); return x >= -3 && x <= 3 }
	return d(r, want.R) && d(g, want.G) && d(b, want.B)
}

var pdfPage = regexp.MustCompile(`/Type\s*/Page[^s]`)

// checkPDF returns the number of pages of a PDF.
func checkPDF(data []byte) (int, error) {
	if !bytes.HasPrefix(data, []byte("%PDF-")) {
		return 0, errors.New("not a PDF: no %PDF- header")
	}
	if !bytes.Contains(data[max(0, len(data)-1024):], []byte("%%EOF")) {
		return 0, errors.New("PDF without %%EOF: truncated")
	}
	return len(pdfPage.FindAll(data, -1)), nil
}

// TestDemoReportChecksFail is the negative control of the checks above,
// without a browser for the image and PDF checks and with one for the DOM.
func TestDemoReportChecksFail(t *testing.T) {
	testtools.SkipShort(t, "runs the checks in a real headless browser")
	blank := image.NewRGBA(image.Rect(0, 0, 100, 100))
	for i := range blank.Pix {
		blank.Pix[i] = 0xff
	}
	var bb bytes.Buffer
	if err := png.Encode(&bb, blank); err != nil {
		t.Fatal(err)
	}
	if err := checkScreenshot(bb.Bytes(), 100, 100); err == nil {
		t.Error("a blank white screenshot passed")
	}
	if err := checkScreenshot(bb.Bytes(), 100, 200); err == nil {
		t.Error("a screenshot of the wrong size passed")
	}
	if err := checkScreenshot(bb.Bytes()[:bb.Len()/2], 100, 100); err == nil {
		t.Error("a truncated PNG passed")
	}
	if _, err := checkPDF(bb.Bytes()); err == nil {
		t.Error("a PNG passed as a PDF")
	}
	if _, err := checkPDF([]byte("%PDF-1.4\n1 0 obj")); err == nil {
		t.Error("a truncated PDF passed")
	}

	b := browser.Find(t)
	page := filepath.Join(t.TempDir(), "wrong.html")
	// A passing verdict, the probable cause on the wrong fact, no drift
	// marks, two nodes missing.
	wrong := `<!DOCTYPE html><html><head><title>fleet-audit — passed</title></head><body>
<section class="verdict allowed"><h2>upgrade allowed</h2><p class="gate">Gate passed</p><ol class="blockers"><li>probable cause of x: os.kernel=6.1</li></ol></section>
<article class="finding"><div><code>firewall.ufw-active</code></div></article>
<table class="matrix"><thead><tr><th scope="col">Fact</th>` + cols(demoNodes[:7]) + `</tr></thead>
<tbody><tr><th scope="row">ufw.active</th>` + strings.Repeat("<td>active</td>", 7) + `</tr></tbody></table>
<details class="node"><summary>etcd-1 — ok</summary></details>
</body></html>`
	if err := os.WriteFile(page, []byte(wrong), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d, err := b.LoadDOM(ctx, page)
	if err != nil {
		t.Fatal(err)
	}
	problems := strings.Join(demoReportProblems(d), "\n")
	for _, want := range []string{
		"page title is not the failed verdict", "no failed verdict section", "probable cause first",
		"is not the correlation", "matrix columns", `matrix ufw.active on etcd-1 = "plain active", want "drift active"`, "node details for [etcd-1]",
	} {
		if !strings.Contains(problems, want) {
			t.Errorf("wrong report: no %q among the problems found:\n%s", want, problems)
		}
	}
}

// TestPhoneLayoutChecksFail: a matrix page laid out the way the report once
// was on a phone (an absolutely placed note escaping the scroll box, a fact
// column that never wraps) must trip the phone checks.
func TestPhoneLayoutChecksFail(t *testing.T) {
	testtools.SkipShort(t, "runs the checks in a real headless browser")
	b := browser.Find(t)
	page := filepath.Join(t.TempDir(), "wide.html")
	wide := `<!DOCTYPE html><html><head><style>
.scroll { overflow-x: auto; } th { white-space: nowrap; } td { white-space: nowrap; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; }
</style></head><body><div class="scroll"><table class="matrix"><tbody>
<tr><th scope="row">k8s.kubeproxy.pod.reason.with.a.very.long.fact.name</th>` +
		strings.Repeat(`<td>CrashLoopBackOff<span class="sr">differs</span></td>`, 9) + `</tr></tbody></table></div></body></html>`
	if err := os.WriteFile(page, []byte(wide), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	problems := strings.Join(phoneLayoutProblems(ctx, t, b, page), "\n")
	for _, want := range []string{"it scrolls sideways", "the sticky fact column is", "under a third of the screen"} {
		if !strings.Contains(problems, want) {
			t.Errorf("wide page: no %q among the problems found:\n%s", want, problems)
		}
	}
}

func cols(names []string) string {
	var b strings.Builder
	for _, n := range names {
		b.WriteString(`<th scope="col">` + n + `</th>`)
	}
	return b.String()
}
