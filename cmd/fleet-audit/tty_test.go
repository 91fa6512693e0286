//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/fleet-audit/fleet-audit/cmd/fleet-audit/internal/demo"
	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/sshfleet"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/report"
	"github.com/fleet-audit/fleet-audit/result"
)

// pty is a pseudo-terminal: the program writes to tty as it would to a
// terminal, the test reads what the terminal would show from the master.
type pty struct {
	tty  *os.File
	out  bytes.Buffer
	done chan struct{}
}

// openPTY opens a pseudo-terminal of the given width with the syscall
// package alone (the ioctls x/sys/unix would wrap), so the test needs no
// new module. It skips where the sandbox has no /dev/ptmx.
func openPTY(t *testing.T, cols int) *pty {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	fd := master.Fd()
	unlock := int32(0)
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		master.Close()
		t.Fatalf("unlock pty: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		master.Close()
		t.Fatalf("pty number: %v", e)
	}
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		t.Skipf("open pty slave: %v", err)
	}
	ws := struct{ rows, cols, x, y uint16 }{rows: 50, cols: uint16(cols)}
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, tty.Fd(), syscall.TIOCSWINSZ, uintptr(unsafe.Pointer(&ws))); e != 0 {
		t.Fatalf("set pty size: %v", e)
	}
	p := &pty{tty: tty, done: make(chan struct{})}
	go func() {
		// Linux ends the read with EIO once every slave fd is closed.
		io.Copy(&p.out, master)
		close(p.done)
	}()
	t.Cleanup(func() {
		tty.Close()
		master.Close()
	})
	return p
}

// shown closes the terminal side and returns everything written to it,
// with the line discipline's \r\n turned back into \n.
func (p *pty) shown(t *testing.T) string {
	t.Helper()
	p.tty.Close()
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		t.Fatal("the pty master never reported the end of the output")
	}
	return strings.ReplaceAll(p.out.String(), "\r\n", "\n")
}

// startFleet starts an in-process SSH fleet of healthy nodes, with faults,
// and returns its inventory. Three nodes are the cheapest fleet the
// testscripts already use.
func startFleet(t *testing.T, faults map[string]sshfleet.Fault) string {
	t.Helper()
	dir := t.TempDir()
	fl, err := demo.Start(context.Background(), dir, nodesim.Clean(3), demo.Options{Faults: faults})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fl.Close() })
	t.Setenv("SSH_AUTH_SOCK", "")
	t.Setenv("HOME", dir)
	return fl.InventoryPath
}

var sgrRe = regexp.MustCompile("\x1b\\[[0-9;]*m")

// TestTerminalOnPTY runs the real command with stdout and stderr on a
// pseudo-terminal: the progress line and colour appear there, the report is
// fitted to the terminal's width, and NO_COLOR and -q take them away.
func TestTerminalOnPTY(t *testing.T) {
	testtools.SkipShort(t, "audits a fleet end to end on a pseudo-terminal")
	inv := startFleet(t, map[string]sshfleet.Fault{"node-2": sshfleet.FaultRefuse})
	for _, tc := range []struct {
		name         string
		args         []string
		noColor      string
		wantProgress bool
		wantColor    bool
	}{
		{"plain", nil, "", true, true},
		{"NO_COLOR", nil, "1", true, false},
		{"NO_COLOR empty", nil, "", true, true},
		// -q prints the verdict alone, which is never coloured.
		{"quiet", []string{"-q"}, "", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("NO_COLOR", tc.noColor)
			t.Setenv("TERM", "xterm")
			p := openPTY(t, 60)
			args := append([]string{"fleet-audit", "run", "-i", inv}, tc.args...)
			code := run(context.Background(), args, p.tty, p.tty)
			out := p.shown(t)
			if code != int(exitUnaudited) {
				t.Errorf("exit %d, want %d\n%s", code, exitUnaudited, out)
			}
			progress := strings.Contains(out, "\rfleet-audit: 3/3 nodes audited, 1 failed\n")
			if progress != tc.wantProgress {
				t.Errorf("progress line shown = %v, want %v:\n%q", progress, tc.wantProgress, out)
			}
			if tc.wantProgress && !strings.Contains(out, "\rfleet-audit: 0/3 nodes audited, 0 failed") {
				t.Errorf("no progress line before the first node finished:\n%q", out)
			}
			if color := sgrRe.MatchString(out); color != tc.wantColor {
				t.Errorf("colour = %v, want %v:\n%q", color, tc.wantColor, out)
			}
			if strings.Contains(sgrRe.ReplaceAllString(out, ""), "\x1b") {
				t.Errorf("an escape that is not an SGR colour: %q", out)
			}
			if len(tc.args) > 0 {
				return
			}
			// The report follows the progress line on a line of its own.
			if !strings.Contains(out, " failed\nfleet-audit ") {
				t.Errorf("the report does not start on its own line:\n%q", out)
			}
			block := out[strings.Index(out, "Nodes not ok"):]
			block = sgrRe.ReplaceAllString(block[:strings.Index(block, "\n\n")], "")
			for _, l := range strings.Split(block, "\n") {
				if w := report.DisplayWidth(l); w > 60 {
					t.Errorf("line %d wide on a 60-column terminal: %q", w, l)
				}
			}
		})
	}
}

// TestNoProgressOffTerminal: with stderr a pipe or a buffer (CI, a log
// file) the progress line never appears, and stdout carries no colour even
// without NO_COLOR.
func TestNoProgressOffTerminal(t *testing.T) {
	testtools.SkipShort(t, "audits a fleet end to end")
	inv := startFleet(t, map[string]sshfleet.Fault{"node-2": sshfleet.FaultRefuse})
	t.Setenv("NO_COLOR", "")
	t.Setenv("TERM", "xterm")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var piped bytes.Buffer
	copied := make(chan struct{})
	go func() { io.Copy(&piped, r); close(copied) }()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"fleet-audit", "run", "-i", inv}, &stdout, w)
	w.Close()
	<-copied
	run(context.Background(), []string{"fleet-audit", "run", "-i", inv}, &stdout, &stderr)
	if code != int(exitUnaudited) {
		t.Fatalf("exit %d, want %d\n%s", code, exitUnaudited, stdout.String())
	}
	for name, got := range map[string]string{"pipe": piped.String(), "buffer": stderr.String()} {
		if strings.Contains(got, "\r") || strings.Contains(got, "nodes audited") {
			t.Errorf("progress on a %s stderr: %q", name, got)
		}
	}
	if strings.Contains(stdout.String(), "\x1b") {
		t.Errorf("colour on a non-terminal stdout: %q", stdout.String())
	}
	if !strings.Contains(stdout.String(), "node-2  ") {
		t.Errorf("the refused node is not listed:\n%s", stdout.String())
	}
	// Width falls back to the default off a terminal: the negative control
	// of the 60-column check in TestTerminalOnPTY.
	if !regexp.MustCompile(`(?m)^  node-2 .{59,}$`).MatchString(stdout.String()) {
		t.Errorf("off a terminal the node line was fitted narrower than the default width:\n%s", stdout.String())
	}
}

func TestUseColor(t *testing.T) {
	p := openPTY(t, 80)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for _, tc := range []struct {
		name string
		w    io.Writer
		env  map[string]string
		want bool
	}{
		{"terminal", p.tty, map[string]string{"TERM": "xterm-256color"}, true},
		{"terminal, TERM unset", p.tty, nil, true},
		{"terminal, NO_COLOR=1", p.tty, map[string]string{"NO_COLOR": "1"}, false},
		{"terminal, NO_COLOR=0 is still set", p.tty, map[string]string{"NO_COLOR": "0"}, false},
		{"terminal, NO_COLOR empty", p.tty, map[string]string{"NO_COLOR": ""}, true},
		{"terminal, TERM=dumb", p.tty, map[string]string{"TERM": "dumb"}, false},
		{"pipe", w, nil, false},
		{"file", file, nil, false},
		{"buffer", &bytes.Buffer{}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := func(k string) string { return tc.env[k] }
			if got := useColor(tc.w, env); got != tc.want {
				t.Errorf("useColor = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestEmitVerbose: -v reaches the terminal formatter; without it the
// summary is left to the other formats.
func TestEmitVerbose(t *testing.T) {
	r := &result.Report{
		Nodes: []result.Node{{Name: "n1", Status: result.StatusOK}},
		Findings: []result.Finding{{
			Check: "sysctl.ip-forward", Kind: result.KindCheck, Title: "IP forwarding is off", Severity: result.SeverityCritical,
			Nodes: []string{"n1"}, Summary: "Pods cannot reach Services without net.ipv4.ip_forward=1.",
		}},
		Gate: result.Gate{ExitCode: 1, Reasons: []string{"1 critical finding"}},
	}
	for _, verbose := range []bool{false, true} {
		var stdout, stderr bytes.Buffer
		if err := emitReport(r, nil, outputOptions{Verbose: verbose}, &stdout, &stderr); err == nil {
			t.Error("a failed gate returned no error")
		}
		out := stdout.String()
		if !strings.Contains(out, "  critical  sysctl.ip-forward  IP forwarding is off\n") {
			t.Errorf("verbose=%v: no finding line:\n%s", verbose, out)
		}
		if got := strings.Contains(out, "Pods cannot reach Services"); got != verbose {
			t.Errorf("verbose=%v: summary shown = %v:\n%s", verbose, got, out)
		}
	}
	// -v is the subcommand's verbose, not the app's --version.
	inv := startFleet(t, nil)
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"fleet-audit", "run", "-v", "-i", inv}, &stdout, &stderr); code != 0 {
		t.Fatalf("run -v: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "gate: passed") {
		t.Errorf("run -v printed no report:\n%s", stdout.String())
	}
}
