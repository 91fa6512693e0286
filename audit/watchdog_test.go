package audit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

// hangingProbe prints a fact, leaves a grandchild behind in the background
// and hangs: its timeout must end it, grandchild and all. Both sleeps carry
// marker, so the test can find them among the machine's processes.
func hangingProbe(t *testing.T, timeout string, marker int) probe.Probe {
	t.Helper()
	p, err := probe.ParseProbe("hangs.sh", fmt.Sprintf("# id: hangs\n# description: hangs (watchdog test)\n# needs_root: false\n# timeout: %s\n# facts: hangs.before hangs.after\n"+
		"fact hangs.before yes\nsleep %d &\nsleep %d\nfact hangs.after yes\n", timeout, marker, marker+1))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// quickProbe is a probe that runs after the hanging one and must not pay
// for it.
func quickProbe(t *testing.T) probe.Probe {
	t.Helper()
	p, err := probe.ParseProbe("quick.sh", "# id: quick\n# description: d\n# needs_root: false\n# timeout: 5s\n# facts: quick.ran\nfact quick.ran yes\n")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// sessionProcesses lists the pids whose environment holds root as
// FLEET_AUDIT_ROOT: every process a bundle on that simulated node started,
// subshells included.
func sessionProcesses(root string) []int {
	return testtools.ProcessesWithEnv("FLEET_AUDIT_ROOT="+root, "")
}

// waitGone polls until no process of the node's sessions is left, and
// fails the test naming those that stay. The bound only keeps a broken
// watchdog from hanging the test; nothing here measures how fast it is.
func waitGone(t *testing.T, root string) {
	t.Helper()
	var left []int
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if left = sessionProcesses(root); len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, pid := range left {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		t.Errorf("process %d (%s) of the bundle outlived its session", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// hangThenQuick is a healthy simulated node and two probes for it, one
// that hangs with the given timeout and a quick one after it, the shell sh
// found here, and the hanging probe's marker (unique in ps, from base).
func hangThenQuick(t *testing.T, sh []string, timeout string, base int) (root string, probes []probe.Probe, nonce string, shell []string, marker int) {
	t.Helper()
	root = filepath.Join(t.TempDir(), "node")
	if err := nodesim.Build(root, nodesim.Healthy("n", false)); err != nil {
		t.Fatal(err)
	}
	marker = base + int(time.Now().UnixNano()%1000)
	probes = []probe.Probe{hangingProbe(t, timeout, marker), quickProbe(t)}
	return root, probes, probe.NewNonce(), append([]string{testtools.Find(t, sh[0])}, sh[1:]...), marker
}

// TestWatchdogBoundsEachProbe runs, under every shell a node may have as
// /bin/sh, a bundle whose first probe hangs with a grandchild in the
// background: the watchdog kills the probe's whole tree when its timeout
// passes (exit 137, a timeout to the parser), keeps what it printed before,
// and the next probe runs as if nothing happened. The session ends with
// nothing of it left running and nothing holding its stdout.
func TestWatchdogBoundsEachProbe(t *testing.T) {
	testtools.SkipShort(t, "waits out a hung probe under the watchdog")
	for i, sh := range probeShells {
		t.Run(strings.Join(sh, " "), func(t *testing.T) {
			root, probes, nonce, shell, _ := hangThenQuick(t, sh, "1s", 700000000+i*1000)
			res, err := (&shSession{root: root, shell: shell}).Exec(context.Background(), scriptFor(t, probes, probe.Become{}, nonce, time.Minute))
			if err != nil {
				t.Fatalf("%v; stderr %s", err, res.Stderr)
			}
			parsed := probe.ParseOutput(res.Stdout, nonce, probes)
			hang, quick := parsed.Runs[0], parsed.Runs[1]
			if hang.Status != result.ProbeTimeout || hang.ExitCode != 137 {
				t.Errorf("hanging probe: %s exit %d, want timeout exit 137", hang.Status, hang.ExitCode)
			}
			if quick.Status != result.ProbeOK {
				t.Errorf("the probe after it: %s exit %d", quick.Status, quick.ExitCode)
			}
			want := map[string]string{"hangs.before": "yes", "quick.ran": "yes"}
			if !maps.Equal(parsed.Facts, want) {
				t.Errorf("facts %v, want %v", parsed.Facts, want)
			}
			if got := parsed.Meta[probe.MetaTimeout]; got != "watchdog" {
				t.Errorf("%s = %q, want watchdog", probe.MetaTimeout, got)
			}
			waitGone(t, root)
		})
	}
}

// TestWatchdogOutlivesNoSession kills only the session's shell while a
// probe hangs, as sshd does when the client sends a signal (OpenSSH
// session.c, session_signal_req: kill(2) of the shell's pid), on a node
// timeout or Ctrl-C: the watchdog sees the shell gone at its next tick and
// kills the body, the probe's tree and the ticker, so the session's stdout
// reaches EOF and no process of the bundle is left, under every shell.
func TestWatchdogOutlivesNoSession(t *testing.T) {
	testtools.SkipShort(t, "waits out a hung probe under the watchdog")
	for i, sh := range probeShells {
		t.Run(strings.Join(sh, " "), func(t *testing.T) {
			root, probes, nonce, shell, marker := hangThenQuick(t, sh, "300s", 710000000+i*1000)
			cmd := exec.Command(shell[0], append(slices.Clip(shell[1:]), "-s")...)
			cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, nodesim.SessionEnv(root)...)
			cmd.Stdin = bytes.NewReader(bundleFor(t, probes, probe.Become{}, nonce))
			var out bytes.Buffer
			cmd.Stdout = &out
			// Only a process that holds the session's stdout keeps Wait
			// from returning once the shell is dead; past the delay Wait
			// gives up and says so.
			cmd.WaitDelay = 20 * time.Second
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			hung := fmt.Sprintf("sleep\x00%d\x00", marker+1)
			for deadline := time.Now().Add(20 * time.Second); len(processesWith(hung, root)) == 0; time.Sleep(50 * time.Millisecond) {
				if time.Now().After(deadline) {
					_ = cmd.Process.Kill()
					t.Fatal("the hanging probe never started")
				}
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); errors.Is(err, exec.ErrWaitDelay) {
				t.Error("something of the bundle kept the session's stdout open after its shell was killed")
			}
			waitGone(t, root)
			if parsed := probe.ParseOutput(out.Bytes(), nonce, probes); parsed.Runs[1].Status != result.ProbeMissing {
				t.Errorf("the probe after the hanging one ran after the session was killed: %s", parsed.Runs[1].Status)
			}
		})
	}
}

// processesWith lists the pids of root's session whose command line starts
// with cmdline (NUL-separated, as in /proc/PID/cmdline).
func processesWith(cmdline, root string) []int {
	var pids []int
	for _, pid := range sessionProcesses(root) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err == nil && strings.HasPrefix(string(b), cmdline) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestProbesWithoutSleep: on a node without sleep(1) no tick reaches the
// watchdog, so the probes run unbounded, as they did without timeout(1),
// and the bundle says so (meta.timeout absent); they still all run and the
// session still ends.
func TestProbesWithoutSleep(t *testing.T) {
	testtools.SkipShort(t, "runs every probe in a shell without sleep")
	for _, tc := range []struct {
		name, bound string
		tweak       func(t *testing.T, root string)
	}{
		{"with sleep", "watchdog", func(*testing.T, string) {}},
		{"without sleep", "absent", func(t *testing.T, root string) {
			if err := os.Remove(filepath.Join(root, "bin", "sleep")); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "node")
			if err := nodesim.Build(root, nodesim.Healthy("n", false)); err != nil {
				t.Fatal(err)
			}
			tc.tweak(t, root)
			probes := []probe.Probe{quickProbe(t)}
			nonce := probe.NewNonce()
			res, err := (&shSession{root: root}).Exec(context.Background(), scriptFor(t, probes, probe.Become{}, nonce, time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			parsed := probe.ParseOutput(res.Stdout, nonce, probes)
			if parsed.Runs[0].Status != result.ProbeOK || parsed.Meta[probe.MetaTimeout] != tc.bound {
				t.Errorf("probe %s, %s = %q; want ok and %q (stderr %s)", parsed.Runs[0].Status, probe.MetaTimeout, parsed.Meta[probe.MetaTimeout], tc.bound, res.Stderr)
			}
			waitGone(t, root)
		})
	}
}
