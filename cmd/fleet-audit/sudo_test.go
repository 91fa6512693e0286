//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/internal/sshdtest"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

// sudoNode starts a real sshd that the non-root login reaches with
// become: sudo, and writes the inventory. env is the sessions' environment.
func sudoNode(t *testing.T, login string, env map[string]string) string {
	t.Helper()
	return loginNode(t, login, env, "sudo")
}

// loginNode is sudoNode with the inventory's become ("" = none written).
func loginNode(t *testing.T, login string, env map[string]string, become string) string {
	t.Helper()
	dir := t.TempDir()
	signer, key := clientKeyFile(t, dir)
	srv := sshdtest.Start(t, sshdtest.Options{
		Env:            env,
		AuthorizedKeys: []ssh.PublicKey{signer.PublicKey()},
		KeysDir:        testtools.PublicDir(t),
	})
	known := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(known, []byte(srv.KnownHostsLine()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "ssh_config")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	becomeLine := ""
	if become != "" {
		becomeLine = "  become: " + become + "\n"
	}
	inv := fmt.Sprintf("name: sudo\ndefaults:\n  identity_files: [%q]\n  known_hosts: [%q]\n  ssh_config: %q\n  user: %s\n%shosts:\n  node-1: {address: 127.0.0.1, port: %d, roles: [worker]}\n",
		key, known, empty, login, becomeLine, srv.Port)
	invPath := filepath.Join(dir, "inventory.yaml")
	if err := os.WriteFile(invPath, []byte(inv), 0o600); err != nil {
		t.Fatal(err)
	}
	return invPath
}

// leftovers lists the processes whose command line holds marker, "PID UID
// ARGS" each.
func leftovers(t *testing.T, marker string) []string {
	t.Helper()
	return testtools.CommandLines(marker)
}

// TestSudoProbeTimeout runs, over real OpenSSH with a non-root login and
// NOPASSWD sudo, a root probe that would sleep for days. The login user can
// signal neither the root probe nor (from its own process group) sudo, so
// the bound must hold on the root side: the probe's own timeout ends it, and
// when the node timeout comes first the root side must still die with the
// session. Either way the run ends long before the sleep would, and no
// process of the probe is left on the node.
func TestSudoProbeTimeout(t *testing.T) {
	testtools.SkipShort(t, "logs in through sshd and sudo")
	login := testtools.SudoLogin(t).Name
	tests := []struct {
		name         string
		probeTimeout string
		nodeTimeout  string
		// within is a generous bound on the run, far below the sleep and
		// below the node timeout where the probe's timeout must end it.
		within time.Duration
		// interruptAfter cancels the run's context as Ctrl-C does (main's
		// signal.NotifyContext); zero lets it run.
		interruptAfter time.Duration
	}{
		{"probe timeout", "3s", "100s", 30 * time.Second, 0},
		{"node timeout", "200s", "15s", 45 * time.Second, 0},
		{"interrupted", "200s", "100s", 45 * time.Second, 15 * time.Second},
	}
	// Each case runs the command as its own process (startMain), so the
	// cases wait out their bounds side by side: in one process they could
	// not overlap, as urfave/cli's help and version flags are package
	// variables that every app's parse writes (a data race under -race).
	// The interrupt is a real SIGINT, which main turns into the run's
	// cancellation (signal.NotifyContext) as a user's Ctrl-C does.
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			inv := sudoNode(t, login, nil)
			// A sleep long enough to outlive any test, and unique in ps.
			marker := fmt.Sprintf("%d", 800000000+i*30000000+int(time.Now().UnixNano()%30000000))
			probes := testtools.PublicDir(t)
			probe := fmt.Sprintf("# id: sleeper\n# description: a root probe that never ends by itself\n# needs_root: true\n# timeout: %s\n# facts: sleeper.done\n\nsleep %s\nfact sleeper.done yes\n", tt.probeTimeout, marker)
			if err := os.WriteFile(filepath.Join(probes, "sleeper.sh"), []byte(probe), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				// Never leave a days-long sleep behind, even when the test fails.
				for _, line := range leftovers(t, "sleep "+marker) {
					var pid int
					if _, err := fmt.Sscan(line, &pid); err == nil {
						_ = exec.Command("kill", "-KILL", fmt.Sprint(pid)).Run()
					}
				}
			})
			start := time.Now()
			var out, errb syncBuffer
			cmd := startMain(t, nil, &out, &errb, nil, "run", "-i", inv, "--probes", probes, "--node-timeout", tt.nodeTimeout,
				"--json", filepath.Join(t.TempDir(), "results.json"))
			if tt.interruptAfter > 0 {
				time.Sleep(tt.interruptAfter)
				if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
					t.Fatal(err)
				}
			}
			code, exited := waitExit(t, cmd, 2*tt.within)
			if !exited {
				t.Fatalf("still running after %v", 2*tt.within)
			}
			stdout, stderr := out.String(), errb.String()
			wall := time.Since(start)
			t.Logf("exit %d after %v", code, wall.Round(time.Millisecond))
			if tt.interruptAfter > 0 && code != int(exitInterrupted) {
				t.Errorf("exit %d after SIGINT, want %d\nstderr:\n%s", code, exitInterrupted, stderr)
			}
			if wall > tt.within {
				t.Errorf("the run took %v: the root probe's bound did not hold\nstdout:\n%s\nstderr:\n%s", wall, stdout, stderr)
			}
			// The root side may still be tearing down when the run returns
			// after a node timeout; a left-over sleep would live for years.
			var left []string
			for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
				if left = leftovers(t, "sleep "+marker); len(left) == 0 || time.Now().After(deadline) {
					break
				}
			}
			if len(left) > 0 {
				t.Errorf("processes of the probe left on the node after the run:\n%s", strings.Join(left, "\n"))
			}
			// The node's processes that the run could have left: the login
			// user's and the probe's. Other tests run at the same time.
			ps, _ := exec.Command("ps", "-eo", "pid,ppid,user:20,etime,args").Output()
			var node []string
			for i, line := range strings.Split(string(ps), "\n") {
				if f := strings.Fields(line); i == 0 || len(f) > 2 && f[2] == login || strings.Contains(line, marker) {
					node = append(node, line[:min(len(line), 160)])
				}
			}
			t.Logf("ps after the run:\n%s", strings.Join(node, "\n"))
		})
	}
}

// TestSudoProbePath: a root probe does not run what the login user's PATH
// finds first. sudo's secure_path (sudoers(5)) exists so that root never
// runs a command the login user planted; sudo -n env PATH=... would hand the
// login's PATH to root regardless. The login's own probe still sees its
// PATH, so the test proves the plant was in reach.
func TestSudoProbePath(t *testing.T) {
	testtools.SkipShort(t, "logs in through sshd and sudo")
	login := testtools.SudoLogin(t).Name
	planted := testtools.PublicDir(t)
	commands := []string{"iptables", "nft", "ip"}
	for _, c := range commands {
		if err := os.WriteFile(filepath.Join(planted, c), []byte("#!/bin/sh\necho planted\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	inv := sudoNode(t, login, map[string]string{"PATH": planted + ":/usr/local/bin:/usr/bin:/bin"})
	probes := testtools.PublicDir(t)
	for _, p := range []struct{ id, root string }{{"asroot", "true"}, {"aslogin", "false"}} {
		var facts, body strings.Builder
		fmt.Fprintf(&facts, "%s.uid %s.path", p.id, p.id)
		fmt.Fprintf(&body, "fact %s.uid \"$(id -u)\"\nfact %s.path \"$PATH\"\n", p.id, p.id)
		for _, c := range commands {
			fmt.Fprintf(&facts, " %s.%s", p.id, c)
			fmt.Fprintf(&body, "fact %s.%s \"$(command -v %s || echo none)\"\n", p.id, c, c)
		}
		probe := fmt.Sprintf("# id: %s\n# description: which commands the probe's PATH finds\n# needs_root: %s\n# timeout: 10s\n# facts: %s\n\n%s", p.id, p.root, facts.String(), body.String())
		if err := os.WriteFile(filepath.Join(probes, p.id+".sh"), []byte(probe), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	results := filepath.Join(t.TempDir(), "results.json")
	code, stdout, stderr := runCLI(t, "run", "-i", inv, "--probes", probes, "--json", results)
	if code != 0 && code != 1 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	facts := readResults(t, results).Nodes[0].Facts
	if facts["asroot.uid"] != "0" || facts["aslogin.uid"] == "0" {
		t.Fatalf("the probes did not run as root and as the login: asroot.uid=%q aslogin.uid=%q\nstderr:\n%s", facts["asroot.uid"], facts["aslogin.uid"], stderr)
	}
	if strings.Contains(facts["asroot.path"], planted) {
		t.Errorf("the root probe's PATH holds the login's directory: %s", facts["asroot.path"])
	}
	for _, c := range commands {
		t.Run(c, func(t *testing.T) {
			if got := facts["aslogin."+c]; got != filepath.Join(planted, c) {
				t.Fatalf("the login's PATH finds %q, not the planted %s: the test proves nothing", got, c)
			}
			if got := facts["asroot."+c]; strings.HasPrefix(got, planted) {
				t.Errorf("the root probe runs the login's planted %s (%s)", c, got)
			}
		})
	}
}

// TestSudoAuditIsReadOnly audits the test machine itself over real OpenSSH,
// as the README's default deploys fleet-audit: a non-root login whose root
// probes go through NOPASSWD sudo, with no simulated root. What the machine
// shows before and after (iptables-save, every sysctl, /proc/modules, the
// temporary directories) must not change, and the probes must have run as
// root (meta.sudo ok), so the root side is covered too.
func TestSudoAuditIsReadOnly(t *testing.T) {
	testtools.SkipShort(t, "logs in through sshd and sudo")
	login := testtools.SudoLogin(t).Name
	inv := sudoNode(t, login, nil)
	probes, err := probe.BuiltinProbes()
	if err != nil {
		t.Fatal(err)
	}
	ignore := func(p string) bool { return goTestTempDir.MatchString(filepath.Base(p)) }
	// Who each side runs as, next to the built-in probes.
	whoami := testtools.PublicDir(t)
	// The root one is over Linux's 128 KiB limit on one exec argument, so
	// it also shows the root side takes the probe text on stdin.
	pad := "# " + strings.Repeat("x", 1000) + "\n"
	for _, w := range []struct{ id, root, pad string }{{"login_uid", "false", ""}, {"root_uid", "true", strings.Repeat(pad, 140)}} {
		probe := fmt.Sprintf("# id: %s\n# description: the uid this side runs as\n# needs_root: %s\n# timeout: 5s\n# facts: %s.uid\n\n%sfact %s.uid \"$(id -u)\"\n", w.id, w.root, w.id, w.pad, w.id)
		if err := os.WriteFile(filepath.Join(whoami, w.id+".sh"), []byte(probe), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := takeSystemSnapshot(t)
	again := takeSystemSnapshot(t)
	results := filepath.Join(t.TempDir(), "results.json")
	code, stdout, stderr := runCLI(t, "run", "-i", inv, "--probes", whoami, "--json", results, "--connect-timeout", "10s")
	if code == int(exitUsage) {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	r := readResults(t, results)
	if len(r.Nodes) != 1 || r.Nodes[0].Facts["root_uid.uid"] != "0" || r.Nodes[0].Facts["login_uid.uid"] == "0" || r.Nodes[0].Facts["login_uid.uid"] == "" {
		t.Fatalf("the audit did not run as a non-root login with sudo: %+v\nstderr:\n%s", r.Nodes, stderr)
	}
	for _, p := range r.Nodes[0].Probes {
		if p.Status != result.ProbeOK {
			t.Errorf("probe %s: %s (exit %d)", p.ID, p.Status, p.ExitCode)
		}
	}
	if diff := diffSystem(before, again, takeSystemSnapshot(t), tmpName(probes), ignore); len(diff) > 0 {
		t.Errorf("the audit through sudo changed this machine:\n  %s", strings.Join(diff, "\n  "))
	}

	// Negative control: a root probe that writes is caught the same way.
	tmpFile := filepath.Join(os.TempDir(), "fleet-audit-negctl-"+probe.NewNonce())
	t.Cleanup(func() { _ = os.Remove(tmpFile) })
	writer := testtools.PublicDir(t)
	probe := "# id: writer\n# description: writes as root\n# needs_root: true\n# timeout: 5s\n# facts: writer.done\n\n: >" + tmpFile + "\nfact writer.done yes\n"
	if err := os.WriteFile(filepath.Join(writer, "writer.sh"), []byte(probe), 0o644); err != nil {
		t.Fatal(err)
	}
	before = takeSystemSnapshot(t)
	again = takeSystemSnapshot(t)
	runCLI(t, "run", "-i", inv, "--probes", writer, "--json", results, "--connect-timeout", "10s")
	diff := diffSystem(before, again, takeSystemSnapshot(t), tmpName(probes), ignore)
	if !slices.ContainsFunc(diff, func(d string) bool { return strings.HasSuffix(d, "added "+filepath.Base(tmpFile)) }) {
		t.Errorf("a root probe's write to %s was not detected: %v", tmpFile, diff)
	}
}

// TestSudoNonRootWithoutBecome is the most common first try, over real
// OpenSSH with a real non-root login: no become in the inventory. The root
// probe runs as the login and cannot see what it checks, so the run exits 3
// and says, for the node, which check it could not judge and the fix; the
// same inventory with -b judges it through sudo and passes. Before, the
// check was silently skipped and the gate passed with 0.
func TestSudoNonRootWithoutBecome(t *testing.T) {
	testtools.SkipShort(t, "logs in through sshd and sudo")
	login := testtools.SudoLogin(t).Name
	inv := loginNode(t, login, nil, "")
	rules := testtools.PublicDir(t)
	// A root probe as the built-in ones are written: what only root can
	// see is printed as root, and left out otherwise.
	probeText := "# id: rootsee\n# description: a table only root can list\n# needs_root: true\n# timeout: 10s\n# facts: rootsee.table\n\nif is_root; then fact rootsee.table present; fi\n"
	checkText := "- id: rootsee.table-missing\n  title: the table is missing\n  severity: critical\n  when:\n    - {fact: rootsee.table, op: ne, value: present}\n  summary: the table is missing\n  remediation: create it\n"
	for name, text := range map[string]string{"rootsee.sh": probeText, "rootsee.yaml": checkText} {
		if err := os.WriteFile(filepath.Join(rules, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name   string
		flags  []string
		exit   int
		status result.NodeStatus
	}{
		{"no become", nil, int(exitUnaudited), result.StatusPartial},
		{"allow-unreachable does not cover it", []string{"--allow-unreachable"}, int(exitUnaudited), result.StatusPartial},
		{"allow-partial", []string{"--allow-partial"}, 0, result.StatusPartial},
		{"-b", []string{"-b"}, 0, result.StatusOK},
		{"--become --become-user root", []string{"--become", "--become-user", "root"}, 0, result.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			results := filepath.Join(t.TempDir(), "results.json")
			args := append([]string{"run", "-i", inv, "--probes", rules, "--only", "rootsee.*", "--json", results, "--connect-timeout", "10s"}, tc.flags...)
			code, stdout, stderr := runCLI(t, args...)
			if code != tc.exit {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.exit, stdout, stderr)
			}
			t.Logf("stdout:\n%s", stdout)
			n := readResults(t, results).Nodes[0]
			if n.Status != tc.status {
				t.Fatalf("status %s (%s), want %s", n.Status, n.Message, tc.status)
			}
			if tc.status == result.StatusOK {
				if n.Facts["rootsee.table"] != "present" {
					t.Errorf("with become the root probe did not see the table: rootsee.table=%q", n.Facts["rootsee.table"])
				}
				return
			}
			for _, want := range []string{"node-1", "partial", "rootsee.table-missing", "become: sudo", "-b"} {
				if !strings.Contains(stdout, want) {
					t.Errorf("the report does not say %q:\n%s", want, stdout)
				}
			}
		})
	}
}
