package browser

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseDOM(t *testing.T) {
	dump := `<!DOCTYPE html>
<html lang="en"><head><style>td>p{content:"<b>"}</style></head><body>` +
		`<p class="a drift" title="x &quot;&gt;&lt;img src=x&gt; &amp;">one &lt;script&gt;alert(1)&lt;/script&gt;<br>two</p>` +
		`<!-- <img> --><table class="matrix"><tbody><tr><td class="drift">≠ 503</td></tr></tbody></table></body></html>`
	d, err := ParseDOM(dump)
	if err != nil {
		t.Fatal(err)
	}
	var tags []string
	for _, e := range d.Elements {
		tags = append(tags, e.Tag)
	}
	if got, want := strings.Join(tags, " "), "html head style body p br table tbody tr td"; got != want {
		t.Errorf("tags = %q, want %q", got, want)
	}
	p := d.Find("p")[0]
	if got, want := p.Attrs["title"], `x "><img src=x> &`; got != want {
		t.Errorf("title = %q, want %q", got, want)
	}
	if !p.HasClass("drift") || p.HasClass("dri") {
		t.Errorf("class list of %q read wrong", p.Attrs["class"])
	}
	if !strings.Contains(p.Text, "one <script>alert(1)</script>") || !strings.Contains(p.Text, "two") {
		t.Errorf("p text = %q", p.Text)
	}
	if strings.Contains(d.Text, "content:") || strings.Contains(d.Text, "<img>") {
		t.Errorf("style or comment counted as text: %q", d.Text)
	}
	cells := d.WithClass("td", "drift")
	if len(cells) != 1 || !cells[0].Within("table", "matrix") || cells[0].Within("table", "ranked") || strings.TrimSpace(cells[0].Text) != "≠ 503" {
		t.Errorf("drift cells = %+v", cells)
	}

	for _, bad := range []string{
		`<p title=x>`,
		`<p title="x>`,
		`<p>open`,
		`<p></div>`,
		`<style>never closed`,
		`<!-- never closed`,
	} {
		if _, err := ParseDOM(bad); err == nil {
			t.Errorf("ParseDOM(%q) accepted malformed input", bad)
		}
	}
}

// TestChromium proves the things the report tests rely on: the page's
// scripts, including an onerror on a broken image, have run before the DOM
// is dumped, a screenshot comes out, and a print comes out on the paper
// asked for, holding the page's text.
func TestChromium(t *testing.T) {
	b := Find(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "page.html")
	html := `<!DOCTYPE html><html><head><title>before</title></head><body><p id="p">static</p>` +
		`<img src="missing.png" onerror="document.documentElement.setAttribute('data-img','ran')">` +
		`<script>document.title='after'; setTimeout(function(){document.getElementById('p').textContent='timer ran'}, 500)</script></body></html>`
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	dump, err := b.DumpDOM(ctx, page)
	if err != nil {
		t.Fatal(err)
	}
	d, err := ParseDOM(dump)
	if err != nil {
		t.Fatalf("%v\n%s", err, dump)
	}
	if got := d.Find("html")[0].Attrs["data-img"]; got != "ran" {
		t.Errorf("img onerror did not run before the dump: %s", dump)
	}
	if got := strings.TrimSpace(d.Find("title")[0].Text); got != "after" {
		t.Errorf("title = %q: inline script did not run", got)
	}
	if !strings.Contains(d.Text, "timer ran") {
		t.Errorf("a 500ms timer did not run within the virtual time budget: %s", dump)
	}

	png := filepath.Join(dir, "shot.png")
	if err := b.Screenshot(ctx, page, png, 400, 300); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(png); err != nil || !strings.HasPrefix(string(data), "\x89PNG") {
		t.Errorf("screenshot: %v, starts %q", err, data[:min(8, len(data))])
	}
	papers := []Paper{A4, Letter}
	pdfs := []string{filepath.Join(dir, "a4.pdf"), filepath.Join(dir, "letter.pdf")}
	if err := b.PrintOn(ctx, page, papers, pdfs); err != nil {
		t.Fatal(err)
	}
	for i, pdf := range pdfs {
		data, err := os.ReadFile(pdf)
		if err != nil || !strings.HasPrefix(string(data), "%PDF") {
			t.Fatalf("pdf: %v, starts %q", err, data[:min(8, len(data))])
		}
		if err := OnPaper(data, papers[i]); err != nil {
			t.Errorf("%s: %v", pdf, err)
		}
		// The other paper is told apart: the size check can fail.
		if err := OnPaper(data, papers[1-i]); err == nil {
			t.Errorf("%s passes for %s as well as %s", pdf, papers[1-i].Name, papers[i].Name)
		}
		// Printed after load: the scripts' text, not the static one.
		if text := strings.Join(PDFPages(t, pdf), ""); !strings.Contains(text, "timer ran") && !strings.Contains(text, "static") {
			t.Errorf("%s: the page's text is not on paper: %q", pdf, text)
		}
	}
	if err := b.PrintOn(ctx, filepath.Join(dir, "absent.html"), papers[:1], pdfs[:1]); err == nil {
		t.Error("printing a missing file succeeded")
	}

	if _, err := b.DumpDOM(ctx, filepath.Join(dir, "absent.html")); err == nil {
		t.Error("DumpDOM of a missing file succeeded")
	}
}

// TestFailures runs fake browsers: each way a run can go wrong must be an
// error, and a hung browser must be killed with everything it started.
func TestFailures(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "page.html")
	if err := os.WriteFile(page, []byte("<p>x</p>"), 0o644); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(dir, "child.pid")
	fake := func(name, script string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, script string
		timeout      time.Duration
		want         string
	}{
		{"exit status", `echo '<html></html>'; echo 'fatal' >&2; exit 3`, time.Minute, "exit status 3"},
		{"empty output", `echo 'noise only' >&2`, time.Minute, "empty output"},
		{"hang", `sleep 300 & echo $! >` + pidFile + `; wait`, 2 * time.Second, "deadline"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := &Browser{Path: fake(strings.ReplaceAll(tc.name, " ", "-"), tc.script), TempDir: t.TempDir}
			ctx, cancel := context.WithTimeout(context.Background(), tc.timeout)
			defer cancel()
			_, err := b.DumpDOM(ctx, page)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
	// The hung fake's child was in the browser's process group.
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	if alive(pid) {
		t.Errorf("the hung browser's child %d still runs", pid)
	}
}

// alive reports whether pid runs; a zombie (killed, not yet reaped by its
// new parent) does not.
func alive(pid int) bool {
	for range 50 {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return false
		}
		// The state follows the parenthesised command name.
		if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(f) > 0 && (f[0] == "Z" || f[0] == "X") {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}
