//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/fleet-audit/fleet-audit/internal/testtools"
)

// asMainEnv makes the test binary run main() itself (see TestMain), so a
// test can signal the command as a user's terminal or a CI runner would.
const asMainEnv = "FLEET_AUDIT_TEST_AS_MAIN"

// syncBuffer is what a child wrote, read while it is still writing.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startMain starts the test binary as fleet-audit with args.
func startMain(t *testing.T, stdin *os.File, stdout, stderr *syncBuffer, attr *syscall.SysProcAttr, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Args[0] = "fleet-audit"
	cmd.Env = mainEnv(t.TempDir())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd
}

// waitExit is the child's exit code, or a test failure when it outlives
// the bound.
func waitExit(t *testing.T, cmd *exec.Cmd, bound time.Duration) (int, bool) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		return cmd.ProcessState.ExitCode(), true
	case <-time.After(bound):
		_ = cmd.Process.Kill()
		<-done
		return -1, false
	}
}

// TestSignalEndsBlockingReads: an interrupt ends the command at once with
// exit 130 while it waits on input that never comes: `report /dev/stdin`
// (and diff's saved runs, run's inventory) on a pipe nobody closes, and a
// --probes directory holding a FIFO nobody writes (open(2) blocks). Before, main's context was cancelled but nothing
// read it, so the command hung until killed.
func TestSignalEndsBlockingReads(t *testing.T) {
	testtools.SkipShort(t, "re-executes the command and signals it")
	fifoDir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(fifoDir, "stuck.sh"), 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	for _, tc := range []struct {
		name string
		sig  syscall.Signal
		args []string
	}{
		{"report /dev/stdin, SIGINT", syscall.SIGINT, []string{"report", "/dev/stdin"}},
		{"report /dev/stdin, SIGTERM", syscall.SIGTERM, []string{"report", "/dev/stdin"}},
		{"diff /dev/stdin, SIGINT", syscall.SIGINT, []string{"diff", "/dev/stdin", "/dev/stdin"}},
		{"run -i /dev/stdin, SIGINT", syscall.SIGINT, []string{"run", "-i", "/dev/stdin"}},
		{"probes --probes with a FIFO, SIGINT", syscall.SIGINT, []string{"probes", "--probes", fifoDir}},
		{"probes --probes with a FIFO, SIGTERM", syscall.SIGTERM, []string{"probes", "--probes", fifoDir}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Each case is a process of its own (startMain), waiting out
			// its second beside the others.
			t.Parallel()
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close() // held open: the reader never sees EOF
			var stdout, stderr syncBuffer
			cmd := startMain(t, r, &stdout, &stderr, nil, tc.args...)
			r.Close()
			// Let it reach the read; a signal before main's handler is
			// installed would kill it with the default action instead.
			time.Sleep(time.Second)
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			code, exited := waitExit(t, cmd, 10*time.Second)
			if !exited {
				t.Fatalf("still running 10s after %v\nstderr: %s", tc.sig, stderr.String())
			}
			if code != int(exitInterrupted) || !strings.Contains(stderr.String(), "interrupted") {
				t.Errorf("exit %d, want %d\nstderr: %s", code, exitInterrupted, stderr.String())
			}
		})
	}
}

// openTerminal is a pseudo-terminal's master and slave.
func openTerminal(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	unlock := int32(0)
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatalf("unlock pty: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatalf("pty number: %v", e)
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open pty slave: %v", err)
	}
	t.Cleanup(func() { slave.Close() })
	return master, slave
}

func echoOn(t *testing.T, tty *os.File) bool {
	t.Helper()
	var tio syscall.Termios
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, tty.Fd(), syscall.TCGETS, uintptr(unsafe.Pointer(&tio))); e != 0 {
		t.Fatalf("TCGETS: %v", e)
	}
	return tio.Lflag&syscall.ECHO != 0
}

// TestSignalAtPassphrasePrompt: Ctrl-C (SIGINT) or SIGTERM at the prompt
// for an identity file's passphrase ends the run at once with exit 130 and
// leaves the terminal echoing; a second signal, sent before the first is
// handled, ends it at once just the same. Before, the prompt ignored the
// signal and the run went on for the five minutes of the unlock timeout,
// with the terminal's echo off.
func TestSignalAtPassphrasePrompt(t *testing.T) {
	testtools.SkipShort(t, "re-executes the command and signals it")
	_, _, encPEM := newEd25519(t, "a passphrase nobody types")
	for _, tc := range []struct {
		name string
		sigs []syscall.Signal
	}{
		{"SIGINT", []syscall.Signal{syscall.SIGINT}},
		{"SIGTERM", []syscall.Signal{syscall.SIGTERM}},
		{"SIGINT twice", []syscall.Signal{syscall.SIGINT, syscall.SIGINT}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			key := filepath.Join(dir, "id_encrypted")
			inv := filepath.Join(dir, "inventory.yaml")
			for p, b := range map[string]string{
				key:                               string(encPEM),
				filepath.Join(dir, "known_hosts"): "",
				filepath.Join(dir, "ssh_config"):  "",
				inv: fmt.Sprintf("name: sig\ndefaults:\n  identity_files: [%q]\n  known_hosts: [%q]\n  ssh_config: %q\nhosts:\n  node-1: {address: 127.0.0.1, port: 1}\n",
					key, filepath.Join(dir, "known_hosts"), filepath.Join(dir, "ssh_config")),
			} {
				if err := os.WriteFile(p, []byte(b), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			master, slave := openTerminal(t)
			// Drained, so the prompt never blocks on a full terminal.
			go func() { _, _ = io.Copy(io.Discard, master) }()
			var stdout, stderr syncBuffer
			cmd := startMain(t, slave, &stdout, &stderr, &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0},
				"run", "-i", inv, "--connect-timeout", "2s")
			// Wait for the prompt, which turns the echo off.
			deadline := time.Now().Add(30 * time.Second)
			for echoOn(t, slave) {
				if time.Now().After(deadline) {
					t.Fatalf("no passphrase prompt\nstderr: %s", stderr.String())
				}
				time.Sleep(50 * time.Millisecond)
			}
			for _, s := range tc.sigs {
				if err := cmd.Process.Signal(s); err != nil {
					t.Fatal(err)
				}
			}
			code, exited := waitExit(t, cmd, 10*time.Second)
			if !exited {
				t.Fatalf("still running 10s after %v\nstderr: %s", tc.sigs, stderr.String())
			}
			if code != int(exitInterrupted) {
				t.Errorf("exit %d, want %d\nstderr: %s", code, exitInterrupted, stderr.String())
			}
			if !echoOn(t, slave) {
				t.Error("the terminal was left with echo off")
			}
		})
	}
}

// TestSignalDuringRunWritesReports: a run that is signalled while a probe
// is still running stops the probe, writes the reports for what it has
// (the node interrupted) and exits 130, for SIGINT and SIGTERM and for
// SIGHUP too: a closed terminal or a lost jump-host session. Go's default
// for SIGHUP ended the process at once (exit 129) with no report and the
// probe left running.
func TestSignalDuringRunWritesReports(t *testing.T) {
	testtools.SkipShort(t, "re-executes the command and signals it")
	for i, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			inv := filepath.Join(dir, "inventory.yaml")
			if err := os.WriteFile(inv, []byte("hosts:\n  this-machine:\n    connection: local\n    roles: [worker]\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			// A sleep unique in ps, long enough to outlive the test.
			marker := fmt.Sprint(700000000 + i*1000000 + int(time.Now().UnixNano()%1000000))
			probes := filepath.Join(dir, "probes")
			if err := os.Mkdir(probes, 0o755); err != nil {
				t.Fatal(err)
			}
			probe := "# id: sleeper\n# description: a probe that never ends by itself\n# needs_root: false\n# timeout: 1h\n# facts: sleeper.done\n\nsleep " + marker + "\nfact sleeper.done yes\n"
			if err := os.WriteFile(filepath.Join(probes, "sleeper.sh"), []byte(probe), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				for _, line := range leftovers(t, "sleep "+marker) {
					var pid int
					if _, err := fmt.Sscan(line, &pid); err == nil {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			})
			results := filepath.Join(dir, "results.json")
			var out, errb syncBuffer
			cmd := startMain(t, nil, &out, &errb, nil, "run", "-i", inv, "--probes", probes, "--node-timeout", "10m", "--json", results)
			for deadline := time.Now().Add(30 * time.Second); len(leftovers(t, "sleep "+marker)) == 0; time.Sleep(100 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the probe never started\n%s", errb.String())
				}
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			code, exited := waitExit(t, cmd, time.Minute)
			if !exited {
				t.Fatal("still running a minute after the signal")
			}
			if code != int(exitInterrupted) {
				t.Errorf("exit %d after %v, want %d\nstderr:\n%s", code, sig, exitInterrupted, errb.String())
			}
			if b, err := os.ReadFile(results); err != nil || !strings.Contains(string(b), `"interrupted": true`) {
				t.Errorf("no report of the interrupted run (%v):\n%.300s", err, b)
			}
			var left []string
			for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
				if left = leftovers(t, "sleep "+marker); len(left) == 0 || time.Now().After(deadline) {
					break
				}
			}
			if len(left) > 0 {
				t.Errorf("the probe still runs after the run ended:\n%s", strings.Join(left, "\n"))
			}
		})
	}
}
