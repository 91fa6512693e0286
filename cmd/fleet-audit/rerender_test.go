package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fleet-audit/fleet-audit/cmd/fleet-audit/internal/demo"
	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/report"
)

// TestInvalidUTF8RerendersIdentically: a node that prints bytes which are
// not UTF-8 in a fact value must not make results.json lossy (encoding/json
// stores each bad byte as U+FFFD), so `report results.json` renders every
// format byte for byte as the run did.
func TestInvalidUTF8RerendersIdentically(t *testing.T) {
	testtools.SkipShort(t, "audits a fleet end to end")
	cases := []struct {
		name, pretty, want string
	}{
		{"a lone 0xff", "Debian \xff 12", `Debian \xff 12`},
		{"a cut multi-byte sequence", "Debian \xe6\x97 12", `Debian \xe6\x97 12`},
		{"an overlong slash and a surrogate", "Debian \xc0\xaf\xed\xa0\x80 12", `Debian \xc0\xaf\xed\xa0\x80 12`},
	}
	members := nodesim.Clean(len(cases))
	for i, tc := range cases {
		members[i].State.OSRelease = "PRETTY_NAME=\"" + tc.pretty + "\"\nID=debian\nVERSION_ID=\"12\"\n"
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	fl, err := demo.Start(ctx, dir, members, demo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Close()
	isolateClient(t, dir)

	var files []string
	for _, f := range report.FileFormats() {
		files = append(files, f.DemoFile)
	}
	// Every format, written in a directory of its own by name alone, so
	// that what one report says of another (the summary names the HTML
	// file) is the same text for the run and the re-render.
	outputs := func(sub string) []string {
		d := filepath.Join(dir, sub)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Chdir(d)
		return everyReport(".")
	}
	var runOut, runErr bytes.Buffer
	runCode := run(ctx, append([]string{"fleet-audit", "run", "-i", fl.InventoryPath}, outputs("run")...), &runOut, &runErr)
	results := filepath.Join(dir, "run", "results.json")
	r := readResults(t, results)
	for i, tc := range cases {
		got := r.Nodes[i].Facts["os.pretty_name"]
		if got != tc.want {
			t.Errorf("%s: %s os.pretty_name = %q, want %q", tc.name, r.Nodes[i].Name, got, tc.want)
		}
	}
	var repOut, repErr bytes.Buffer
	repCode := run(ctx, append([]string{"fleet-audit", "report", results}, outputs("report")...), &repOut, &repErr)
	if repCode != runCode {
		t.Errorf("report exit %d, run exit %d\n%s", repCode, runCode, repErr.String())
	}
	if runOut.String() != repOut.String() {
		t.Errorf("the terminal report differs from the run's:\nrun:\n%s\nreport:\n%s", runOut.String(), repOut.String())
	}
	for _, f := range files {
		a, err := os.ReadFile(filepath.Join(dir, "run", f))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "report", f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s re-rendered differs from the run's", f)
		}
		if !utf8.Valid(a) || strings.ContainsRune(string(a), utf8.RuneError) {
			t.Errorf("%s holds invalid UTF-8 or U+FFFD", f)
		}
	}
}
