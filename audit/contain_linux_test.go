//go:build linux

package audit

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

// escapeRoutes are the ways a probe's child can leave its probe's process
// tree or outlive it: each line ends the probe at once, leaving a sleep
// behind (holding the session's stdout, except where it says otherwise).
// %d is the sleep's marker.
var escapeRoutes = []struct{ name, script string }{
	{"background", "sleep %d &"},
	{"setsid", "setsid sleep %d &"},
	{"nohup", "nohup sleep %d &"},
	{"devnull background", "sleep %d >/dev/null 2>&1 &"},
	{"kill $$", "sleep %d &\nkill $$"},
	// The sleep's parent, sh, ends at once: it is no child of the probe
	// when the probe ends, only its environment says whose it is.
	{"orphaned grandchild", "sh -c 'sleep %d &'"},
	// A subshell's background subshell never execs: its environment is
	// the session shell's, without the marker, and its parent ends at
	// once. Killing its sleep is not enough, the loop starts another.
	{"orphaned subshell loop", "( (while :; do sleep %d; done) & )"},
	// The same from inside a command substitution, whose $! the probe
	// never sees.
	{"orphan from a command substitution", "x=$( (while :; do sleep %d; done) >/dev/null 2>&1 & )"},
}

// TestProbesLeaveNothingBehind runs, per escape route, shell and login (the
// node's root, and a real NOPASSWD login whose root probes go through the
// machine's real sudo), a login probe and a root probe that each leave a
// child behind and end: every probe that ended on its own is ok, the
// session ends without waiting for the children, the node is not a probe
// timeout, and afterwards no process of the run is left on the machine.
//
// Before the containment (issue 27 item 8), every route left both sleeps
// running (root's as root under sudo), under every shell and both logins;
// those holding stdout held the session past its end, and kill $$ killed
// the session's shell (root login) or the root supervisor (sudo), leaving
// the probe's child to nothing that would kill it.
func TestProbesLeaveNothingBehind(t *testing.T) {
	testtools.SkipShort(t, "runs every probe in a shell and watches what it leaves")
	login := testtools.SudoLogin(t)
	for _, who := range []string{"root", "sudo"} {
		for si, sh := range probeShells {
			for ri, route := range escapeRoutes {
				t.Run(fmt.Sprintf("%s/%s/%s", who, strings.Join(sh, " "), route.name), func(t *testing.T) {
					dir := testtools.PublicDir(t)
					marker := 730000000 + si*10000 + ri*100 + int(time.Now().UnixNano()%50)*2
					var probes []probe.Probe
					for i, needsRoot := range []bool{false, true} {
						id := fmt.Sprintf("escape%d", i)
						p, err := probe.ParseProbe(id+".sh", fmt.Sprintf("# id: %s\n# description: leaves a child behind\n# needs_root: %v\n# timeout: 5s\n# facts: %s.ran\n"+
							"fact %s.ran yes\n"+route.script+"\n", id, needsRoot, id, id, marker+i))
						if err != nil {
							t.Fatal(err)
						}
						probes = append(probes, p)
					}
					probes = append(probes, quickProbe(t))
					sess := &shSession{env: probe.SimulatedNodeEnv(dir), shell: append([]string{testtools.Find(t, sh[0])}, sh[1:]...)}
					become := probe.Become{}
					if who == "sudo" {
						sess.attr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: login.UID, Gid: login.GID}}
						become.Method = "sudo"
					}
					nonce := probe.NewNonce()
					start := time.Now()
					res, err := sess.Exec(context.Background(), scriptFor(t, probes, become, nonce, 15*time.Second))
					took := time.Since(start)
					// On an error the test goes on, so that what the run
					// left behind is still named and killed.
					if err != nil {
						t.Errorf("%v (took %v, stderr %s, stdout %s)", err, took, res.Stderr, res.Stdout)
					}
					parsed := probe.ParseOutput(res.Stdout, nonce, probes)
					if who == "sudo" && parsed.Meta[probe.MetaSudo] != "ok" {
						t.Errorf("meta.sudo = %q (stderr %s)", parsed.Meta[probe.MetaSudo], res.Stderr)
					}
					for _, r := range parsed.Runs {
						// kill $$ reaches the shell that runs the probe (the
						// session's, or root's supervisor), which ignores it:
						// the probe itself ends as it would have.
						if r.Status != result.ProbeOK {
							t.Errorf("probe %s: %s exit %d", r.ID, r.Status, r.ExitCode)
						}
					}
					if parsed.Facts["quick.ran"] != "yes" {
						t.Errorf("the probe after them did not run: %v", parsed.Facts)
					}
					// Each probe's timeout is 5s: a session held by a child
					// takes the run's whole bound instead.
					if took > 10*time.Second {
						t.Errorf("the session took %v: something held it open", took)
					}
					left := waitLeft(dir)
					for _, pid := range left {
						cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
						t.Errorf("process %d (%s) outlived the run", pid, strings.ReplaceAll(string(cmdline), "\x00", " "))
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				})
			}
		}
	}
}

// waitLeft gives a run's processes a moment to go, then lists those of
// node root that are still there.
func waitLeft(root string) []int {
	var left []int
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if left = sessionProcesses(root); len(left) == 0 || time.Now().After(deadline) {
			return left
		}
	}
}
