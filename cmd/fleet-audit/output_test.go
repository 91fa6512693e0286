//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/audit"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/report"
	"github.com/fleet-audit/fleet-audit/result"
)

// writeSavedRun writes a small results file as `run --json` would: two
// nodes, one critical finding on one of them, the gate EvaluateGate gives
// for it. It is what the report command reads in the output tests, so
// they need no fleet.
//
// forge, when not nil, changes the report after the gate was evaluated:
// what a hostile or hand-edited file would hold.
func writeSavedRun(t *testing.T, dir string, policy audit.GatePolicy, edit func(*result.Report), forge ...func(*result.Report)) string {
	t.Helper()
	r := &result.Report{
		SchemaVersion: result.SchemaVersion,
		Tool:          result.Tool{Name: "fleet-audit", Version: "test"},
		Inventory:     "inventory.yaml",
		StartedAt:     time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		FinishedAt:    time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC),
		Nodes: []result.Node{
			{Name: "node-1", Address: "10.0.0.1", Roles: []string{"worker"}, Status: result.StatusOK, Facts: map[string]string{}, Probes: []result.ProbeRun{}},
			{Name: "node-2", Address: "10.0.0.2", Roles: []string{"worker"}, Status: result.StatusOK, Facts: map[string]string{}, Probes: []result.ProbeRun{}},
		},
		Findings: []result.Finding{{Check: "ufw.active", Kind: result.KindCheck, Title: "UFW is active", Severity: result.SeverityCritical,
			Nodes: []string{"node-2"}, Evidence: []string{"node-2: ufw.active=active"}, Remediation: "ufw disable"}},
		Drift:  []result.Drift{},
		Checks: []result.CheckResult{},
	}
	if edit != nil {
		edit(r)
	}
	r.Gate = audit.EvaluateGate(r, policy)
	for _, f := range forge {
		f(r)
	}
	f, err := report.New("json", report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := f.Format(&b, r); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "saved.json")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// noFindings makes a saved run whose gate passes.
func noFindings(r *result.Report) { r.Findings = []result.Finding{} }

// parsesAsResults says what is wrong with b as a results file, or "".
func parsesAsResults(b []byte) string {
	var r struct {
		SchemaVersion int `json:"schema_version"`
		Nodes         []struct {
			Name string `json:"name"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return "not JSON: " + err.Error() + ": " + strconv.Quote(string(b[:min(len(b), 200)]))
	}
	if r.SchemaVersion != result.SchemaVersion || len(r.Nodes) != 2 {
		return "not the saved run: " + strconv.Quote(string(b[:min(len(b), 200)]))
	}
	return ""
}

// TestReportPathsWrittenThrough writes a report to what is not a regular
// file: a FIFO with a reader, a descriptor (/proc/self/fd/N, what a
// shell's >(...) hands over), a symlink to /dev/null, and stdout as "-".
// Each must receive the report and stay what it was: renaming a temporary
// file onto them would replace the FIFO or the device node, or fail. A
// regular file is still replaced atomically (a new inode; a hard link to
// the old one keeps the old content).
func TestReportPathsWrittenThrough(t *testing.T) {
	devNull, err := os.Lstat("/dev/null")
	if err != nil || devNull.Mode()&os.ModeCharDevice == 0 {
		t.Skipf("no character device /dev/null here: %v", err)
	}
	for _, tc := range []struct {
		name string
		// target prepares the path in dir and returns it with a check of
		// what arrived there, run after the command.
		target func(t *testing.T, dir string) (path string, check func(stdout string) string)
	}{
		{"fifo", func(t *testing.T, dir string) (string, func(string) string) {
			p := filepath.Join(dir, "results.fifo")
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
			got := make(chan []byte, 1)
			go func() {
				b, _ := os.ReadFile(p) // blocks until the writer opens and closes
				got <- b
			}()
			return p, func(string) string {
				select {
				case b := <-got:
					if msg := parsesAsResults(b); msg != "" {
						return "FIFO reader got " + msg
					}
				case <-time.After(10 * time.Second):
					return "FIFO reader got nothing in 10s"
				}
				if st, err := os.Lstat(p); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
					return "FIFO is no longer a FIFO after the run"
				}
				return ""
			}
		}},
		{"descriptor", func(t *testing.T, dir string) (string, func(string) string) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			got := make(chan []byte, 1)
			go func() {
				b, _ := io.ReadAll(r)
				got <- b
			}()
			t.Cleanup(func() { r.Close() })
			return "/proc/self/fd/" + strconv.Itoa(int(w.Fd())), func(string) string {
				w.Close() // the reader's EOF: the command closed its own descriptor
				select {
				case b := <-got:
					if msg := parsesAsResults(b); msg != "" {
						return "pipe reader got " + msg
					}
				case <-time.After(10 * time.Second):
					return "pipe reader got nothing in 10s"
				}
				return ""
			}
		}},
		{"symlink to /dev/null", func(t *testing.T, dir string) (string, func(string) string) {
			p := filepath.Join(dir, "null")
			if err := os.Symlink("/dev/null", p); err != nil {
				t.Fatal(err)
			}
			return p, func(string) string {
				st, err := os.Lstat("/dev/null")
				if err != nil || !os.SameFile(st, devNull) || st.Mode() != devNull.Mode() {
					return "/dev/null was replaced"
				}
				if st, err := os.Lstat(p); err != nil || st.Mode()&os.ModeSymlink == 0 {
					return "the symlink to /dev/null was replaced by a file"
				}
				return ""
			}
		}},
		{"stdout", func(t *testing.T, dir string) (string, func(string) string) {
			return "-", func(stdout string) string {
				if msg := parsesAsResults([]byte(stdout)); msg != "" {
					return "stdout is " + msg
				}
				if _, err := os.Lstat(filepath.Join(dir, "-")); err == nil {
					return `a file named "-" was written`
				}
				return ""
			}
		}},
		{"regular file", func(t *testing.T, dir string) (string, func(string) string) {
			p := filepath.Join(dir, "results.json")
			if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(dir, "old-link")
			if err := os.Link(p, link); err != nil {
				t.Fatal(err)
			}
			return p, func(string) string {
				b, err := os.ReadFile(p)
				if err != nil {
					return err.Error()
				}
				if msg := parsesAsResults(b); msg != "" {
					return "file holds " + msg
				}
				if old, _ := os.ReadFile(link); string(old) != "old" {
					return "written in place, not renamed: the old inode now holds " + strconv.Quote(string(old[:min(len(old), 40)]))
				}
				return ""
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			saved := writeSavedRun(t, t.TempDir(), audit.GatePolicy{FailOn: result.SeverityCritical}, noFindings)
			path, check := tc.target(t, dir)
			code, stdout, stderr := runCLI(t, "report", saved, "--json", path)
			if code != 0 {
				t.Fatalf("exit %d, want 0\n%s", code, stderr)
			}
			if msg := check(stdout); msg != "" {
				t.Errorf("--json %s: %s\nstderr:\n%s", path, msg, stderr)
			}
			if path == "-" && !strings.Contains(stderr, "gate: passed") {
				t.Errorf("--json -: the terminal summary is not on stderr:\n%s", stderr)
			}
		})
	}
}

// TestOneReportOnStdout: two reports on stdout would be one unparseable
// stream, so the command refuses before writing either.
func TestOneReportOnStdout(t *testing.T) {
	t.Chdir(t.TempDir())
	saved := writeSavedRun(t, t.TempDir(), audit.GatePolicy{FailOn: result.SeverityCritical}, noFindings)
	code, stdout, stderr := runCLI(t, "report", saved, "--json", "-", "--markdown", "-")
	if code != int(exitUsage) || !strings.Contains(stderr, "only one report can go to stdout") || stdout != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 2, nothing on stdout, and why", code, stdout, stderr)
	}
}

// TestReportsOntoTheirInputsRefused: report, diff and merge refuse to
// write a report onto the saved run they read (exit 2), and leave it as
// it was.
func TestReportsOntoTheirInputsRefused(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	saved := writeSavedRun(t, dir, audit.GatePolicy{FailOn: result.SeverityCritical}, noFindings)
	before, err := os.ReadFile(saved)
	if err != nil {
		t.Fatal(err)
	}
	for _, argv := range [][]string{
		{"report", saved, "--json", saved},
		{"report", saved, "--html", "./" + filepath.Base(saved)},
		{"diff", saved, "other.json", "--markdown", saved},
		{"merge", saved, "--junit", saved},
	} {
		code, _, stderr := runCLI(t, argv...)
		if code != int(exitUsage) || !strings.Contains(stderr, "reads: the report would overwrite it") {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 refusing to overwrite the input", argv, code, stderr)
		}
		if after, _ := os.ReadFile(saved); !bytes.Equal(after, before) {
			t.Fatalf("%q overwrote the saved run", argv)
		}
	}
}

// TestUnwritableOutputsRefusedBeforeContact: a report path that cannot be
// written is found before any node is dialled, exit 2 naming the flag and
// the path, and the node (a listener counting connections) never sees a
// connection. The writable case proves the listener would have seen one.
func TestUnwritableOutputsRefusedBeforeContact(t *testing.T) {
	for _, tc := range []struct {
		name     string
		path     func(t *testing.T, dir string) string
		wantErr  string // "" when the path is writable
		needUser bool   // the mode bits stop only a non-root user
	}{
		{"writable", func(t *testing.T, dir string) string { return filepath.Join(dir, "out.json") }, "", false},
		{"directory", func(t *testing.T, dir string) string { return dir }, "is a directory", false},
		{"missing directory", func(t *testing.T, dir string) string { return filepath.Join(dir, "missing", "out.json") }, "does not exist", false},
		{"read-only directory", func(t *testing.T, dir string) string {
			ro := filepath.Join(dir, "ro")
			if err := os.Mkdir(ro, 0o555); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(ro, "out.json")
		}, "not writable", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.needUser && os.Geteuid() == 0 {
				t.Skip("root writes into a 0555 directory; the directory and missing-directory cases still hold")
			}
			dir := t.TempDir()
			inv, dials := countingInventory(t, dir)
			path := tc.path(t, dir)
			code, _, stderr := runCLI(t, "run", "-i", inv, "--no-agent", "--connect-timeout", "5s", "-q", "--json", path)
			if tc.wantErr == "" {
				if dials.Load() == 0 || code == int(exitUsage) {
					t.Fatalf("control case: exit %d, %d connections; the node should have been dialled\n%s", code, dials.Load(), stderr)
				}
				return
			}
			if code != int(exitUsage) || !strings.Contains(stderr, "--json "+path+": ") || !strings.Contains(stderr, tc.wantErr) {
				t.Errorf("exit %d, stderr %q; want exit 2 naming --json %s: %s", code, stderr, path, tc.wantErr)
			}
			if n := dials.Load(); n != 0 {
				t.Errorf("the node was contacted %d times before the output was refused", n)
			}
		})
	}
}

// countingInventory writes dir/inventory.yaml with one node, a listener
// that counts the connections made to it: a test that must refuse before
// contact asserts the count stays 0.
func countingInventory(t *testing.T, dir string) (string, *atomic.Int32) {
	t.Helper()
	t.Setenv("HOME", dir)
	t.Setenv("SSH_AUTH_SOCK", "")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dials := new(atomic.Int32)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			dials.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	// A key, so that the node is dialled at all.
	_, _, keyPEM := newEd25519(t, "")
	key := filepath.Join(dir, "id")
	if err := os.WriteFile(key, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	inv := filepath.Join(dir, "inventory.yaml")
	doc := fmt.Sprintf("hosts:\n  node-1:\n    address: 127.0.0.1\n    port: %d\n    user: nobody\n    ssh_config: none\n    known_hosts: [%s]\n    identity_files: [%s]\n",
		ln.Addr().(*net.TCPAddr).Port, filepath.Join(dir, "known_hosts"), key)
	if err := os.WriteFile(inv, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return inv, dials
}

// TestClashingOutputsRefusedBeforeContact: a report onto a file the
// command reads (--html onto the inventory) would overwrite it, and two
// reports onto one file lose one; both are refused with exit 2, naming the
// flags, before any node is dialled, and the inputs are left as they were.
// Paths are compared as files too: ./x, x and a hard link are one file.
func TestClashingOutputsRefusedBeforeContact(t *testing.T) {
	for _, tc := range []struct {
		name string
		args func(dir, inv string) []string
		want string // "" for the control case, which dials the node
	}{
		{"distinct paths", func(dir, inv string) []string {
			return []string{"--json", filepath.Join(dir, "r.json"), "--html", filepath.Join(dir, "r.html")}
		}, ""},
		{"html onto the inventory", func(dir, inv string) []string { return []string{"--html", inv} },
			"--html %[2]s is the file -i/--inventory %[2]s reads: the report would overwrite it"},
		{"html onto the inventory by another name", func(dir, inv string) []string {
			return []string{"--html", dir + "/./sub/../inventory.yaml"}
		}, "is the file -i/--inventory %[2]s reads"},
		{"junit onto a hard link of the inventory", func(dir, inv string) []string {
			if err := os.Link(inv, filepath.Join(dir, "link.yaml")); err != nil {
				panic(err)
			}
			return []string{"--junit", filepath.Join(dir, "link.yaml")}
		}, "--junit %[1]s/link.yaml is the file -i/--inventory %[2]s reads"},
		{"two formats to one path", func(dir, inv string) []string {
			return []string{"--json", filepath.Join(dir, "r.out"), "--markdown", filepath.Join(dir, "r.out")}
		}, "--json %[1]s/r.out and --markdown %[1]s/r.out are one file: one would replace the other"},
		{"a report onto the retry file", func(dir, inv string) []string {
			return []string{"--json", filepath.Join(dir, "retry.txt"), "--retry-file", filepath.Join(dir, "retry.txt")}
		}, "--json %[1]s/retry.txt and --retry-file %[1]s/retry.txt are one file"},
		{"a report onto the waivers", func(dir, inv string) []string {
			w := filepath.Join(dir, "waivers.yaml")
			if err := os.WriteFile(w, []byte("waivers: []\n"), 0o600); err != nil {
				panic(err)
			}
			return []string{"--waivers", w, "--markdown", w}
		}, "is the file --waivers %[1]s/waivers.yaml reads"},
		{"a report onto the --limit file", func(dir, inv string) []string {
			l := filepath.Join(dir, "hosts.txt")
			if err := os.WriteFile(l, []byte("node-1\n"), 0o600); err != nil {
				panic(err)
			}
			return []string{"--limit", "@" + l, "--json", l}
		}, "is the file --limit @FILE %[1]s/hosts.txt reads"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			inv, dials := countingInventory(t, dir)
			before, err := os.ReadFile(inv)
			if err != nil {
				t.Fatal(err)
			}
			argv := append([]string{"run", "-i", inv, "--no-agent", "--connect-timeout", "5s", "-q"}, tc.args(dir, inv)...)
			code, _, stderr := runCLI(t, argv...)
			if tc.want == "" {
				if dials.Load() == 0 || code == int(exitUsage) {
					t.Fatalf("control case: exit %d, %d connections; the node should have been dialled\n%s", code, dials.Load(), stderr)
				}
				return
			}
			want := fmt.Sprintf(tc.want, dir, inv)
			if code != int(exitUsage) || !strings.Contains(stderr, want) {
				t.Errorf("exit %d, stderr %q; want exit 2 with %q", code, stderr, want)
			}
			if n := dials.Load(); n != 0 {
				t.Errorf("the node was contacted %d times before the outputs were refused", n)
			}
			if after, err := os.ReadFile(inv); err != nil || !bytes.Equal(after, before) {
				t.Errorf("the inventory was overwritten (%v):\n%.200s", err, after)
			}
		})
	}
}

// TestRunJSONToStdout: `run --json -` leaves stdout to the results alone,
// parseable by jq, with the terminal summary and verdict on stderr.
func TestRunJSONToStdout(t *testing.T) {
	testtools.SkipShort(t, "audits a fleet end to end")
	inv := startFleet(t, nil)
	t.Chdir(t.TempDir())
	t.Setenv("NO_COLOR", "1")
	code, stdout, stderr := runCLI(t, "run", "-i", inv, "--json", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r result.Report
	if err := json.Unmarshal([]byte(stdout), &r); err != nil || len(r.Nodes) != 3 {
		t.Errorf("stdout is not the results of 3 nodes (%v): %q", err, stdout[:min(len(stdout), 300)])
	}
	if !strings.Contains(stderr, "gate: passed") || !strings.Contains(stderr, "wrote json report to stdout") {
		t.Errorf("stderr lacks the summary or the note of where the results went:\n%s", stderr)
	}
}

// TestEmitWritesTheRestWhenOneFileFails: run, demo, report and diff share
// emit, so a file that cannot be written at the end of an audit or a diff
// is reported, the other files and the summary are still written, and the
// exit status is exitInternal however the gate went.
func TestEmitWritesTheRestWhenOneFileFails(t *testing.T) {
	for _, gateExit := range []int{0, result.ExitGateFailed} {
		t.Run(fmt.Sprintf("gate_exit_%d", gateExit), func(t *testing.T) {
			dir := t.TempDir()
			good := filepath.Join(dir, "good.md")
			// A path under a regular file: open fails with ENOTDIR.
			notDir := filepath.Join(dir, "file")
			if err := os.WriteFile(notDir, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			bad := filepath.Join(notDir, "bad.json")
			doc := document{
				noun:    "diff",
				formats: []string{"json", "markdown"},
				render:  func(w io.Writer, format string) error { _, err := fmt.Fprintf(w, "%s body\n", format); return err },
				summary: func(w io.Writer) error { _, err := fmt.Fprintln(w, "summary line"); return err },
				exit:    gateExit,
			}
			var stdout, stderr bytes.Buffer
			err := emit(doc, map[string]string{"json": bad, "markdown": good}, &stdout, &stderr)
			var ge *gateError
			if !errors.As(err, &ge) || ge.code != exitInternal {
				t.Fatalf("emit = %v; want exit %d", err, exitInternal)
			}
			if b, err := os.ReadFile(good); err != nil || string(b) != "markdown body\n" {
				t.Errorf("the writable file holds %q (%v); want it written", b, err)
			}
			if stdout.String() != "summary line\n" {
				t.Errorf("stdout %q; want the summary", stdout.String())
			}
			for _, want := range []string{"error: write json diff " + bad, "wrote markdown diff to " + good} {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr %q lacks %q", stderr.String(), want)
				}
			}
		})
	}
}

// TestReportModeFollowsUmask: reports hold node facts, so they are created
// as anything else the user writes is, 0666 under the umask (077 makes them
// private), and a report written over an existing file keeps that file's
// mode, as a shell's > would; it is never widened to 0644.
func TestReportModeFollowsUmask(t *testing.T) {
	for _, tc := range []struct {
		name     string
		umask    int
		existing os.FileMode // 0: no file there before
		want     os.FileMode
	}{
		{"umask 077", 0o077, 0, 0o600},
		{"umask 027", 0o027, 0, 0o640},
		{"umask 022", 0o022, 0, 0o644},
		{"an existing private file under umask 022", 0o022, 0o600, 0o600},
		{"an existing group-readable file under umask 077", 0o077, 0o640, 0o640},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			saved := writeSavedRun(t, dir, audit.GatePolicy{FailOn: result.SeverityCritical}, noFindings)
			out := filepath.Join(dir, "out")
			if err := os.Mkdir(out, 0o755); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"report", saved, "-q"}, everyReport(out)...)
			if tc.existing != 0 {
				for i := 2; i < len(args); i += 2 {
					if strings.HasPrefix(args[i-1], "--") && filepath.Dir(args[i]) == out {
						if err := os.WriteFile(args[i], nil, tc.existing); err != nil {
							t.Fatal(err)
						}
						if err := os.Chmod(args[i], tc.existing); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			old := syscall.Umask(tc.umask)
			code, _, stderr := runCLI(t, args...)
			syscall.Umask(old)
			if code != 0 {
				t.Fatalf("report exited %d: %s", code, stderr)
			}
			entries, err := os.ReadDir(out)
			if err != nil || len(entries) == 0 {
				t.Fatalf("no reports written: %v", err)
			}
			for _, e := range entries {
				st, err := os.Stat(filepath.Join(out, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				if st.Mode().Perm() != tc.want {
					t.Errorf("%s: mode %v, want %v", e.Name(), st.Mode().Perm(), tc.want)
				}
			}
		})
	}
}
