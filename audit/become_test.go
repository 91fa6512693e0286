package audit

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

// sudoStubs are sudo as it answers sudo -n in each sudoers setup. The
// NOPASSWD one checks the arguments it was given, so a bundle that passed
// the wrong ones fails its probes instead of passing by accident.
var sudoStubs = map[string]string{
	"nopasswd": `#!/bin/sh
[ "$1" = -n ] || { echo "sudo: want -n first, got $1" >&2; exit 1; }
# What sudo runs is root (sudo(8)): the id stub answers 0 under it.
FA_SIM_SUDO=1
export FA_SIM_SUDO
shift
if [ "$1" = -u ]; then
	[ "$2" = "$FA_WANT_USER" ] || { echo "sudo: unknown user $2" >&2; exit 1; }
	shift 2
elif [ -n "$FA_WANT_USER" ]; then
	echo "sudo: want -u $FA_WANT_USER" >&2; exit 1
fi
exec "$@"
`,
	"password": "#!/bin/sh\necho 'sudo: a password is required' >&2\nexit 1\n",
	// PAM, sssd or LDAP down: sudo -n waits in a lookup that never
	// answers (sudo plugins/sudoers/set_perms.c, PERM_ROOT, sets the real
	// uid to 0 around those lookups, so the login user may not even be
	// able to signal it). The sleep carries a marker the test finds it by.
	"hang":       "#!/bin/sh\nsleep 86399\n",
	"requiretty": "#!/bin/sh\necho 'sudo: sorry, you must have a tty to run sudo' >&2\nexit 1\n",
}

// asNonRoot turns a simulated node into one whose login user is not root
// (the suite runs as root in CI) and whose sudo behaves as kind; "absent"
// takes sudo away. Only id(1) and sudo are faked (id says 0 under the
// NOPASSWD sudo, 1000 elsewhere): the probes still run as root, so no file
// permission bites. TestBecomeSudoAgainstPrivateRKE2Dirs
// runs the bundle as a real unprivileged user through the real sudo.
func asNonRoot(t *testing.T, root, kind string) {
	t.Helper()
	bin := filepath.Join(root, "bin")
	write := func(name, body string) {
		_ = os.Remove(filepath.Join(bin, name))
		if err := os.WriteFile(filepath.Join(bin, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("id", "#!/bin/sh\nif [ -n \"${FA_SIM_SUDO:-}\" ]; then echo 0; else echo 1000; fi\n")
	if kind == "absent" {
		_ = os.Remove(filepath.Join(bin, "sudo"))
		return
	}
	write("sudo", sudoStubs[kind])
}

func TestBecomeSudo(t *testing.T) {
	testtools.SkipShort(t, "runs the whole bundle through four simulated sudos")
	for _, tc := range []struct {
		kind, sudo string
		status     result.NodeStatus
		message    string
	}{
		{"nopasswd", "ok", result.StatusOK, ""},
		{"password", "password_required", result.StatusSudoPasswordRequired, "asks for a password"},
		{"requiretty", "requiretty", result.StatusSudoPasswordRequired, "requiretty"},
		{"absent", "absent", result.StatusSudoPasswordRequired, "not installed"},
		{"hang", "timeout", result.StatusSudoTimeout, "did not answer"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			fleet := nodesim.Clean(1)
			fleet[0].Name = "n1"
			inv, tr := simulate(t, fleet)
			asNonRoot(t, tr.roots["n1"], tc.kind)
			inv.Targets[0].Become = probe.Become{Method: "sudo"}
			r := runSim(t, inv, tr)
			n := r.Nodes[0]
			if n.Status != tc.status || !strings.Contains(n.Message, tc.message) {
				t.Errorf("status %s (%q), want %s with %q", n.Status, n.Message, tc.status, tc.message)
			}
			// Whatever sudo said, the probes that need no root ran.
			if n.Facts["os.kernel"] == "" || n.Facts["sysctl.net.ipv4.ip_forward"] == "" {
				t.Errorf("unprivileged facts missing: os.kernel=%q ip_forward=%q", n.Facts["os.kernel"], n.Facts["sysctl.net.ipv4.ip_forward"])
			}
			var rootProbes, failed int
			for _, p := range n.Probes {
				if p.Status != result.ProbeOK {
					failed++
				}
			}
			probes, _ := probe.BuiltinProbes()
			for _, p := range probes {
				rootProbes += map[bool]int{true: 1}[p.NeedsRoot]
			}
			if rootProbes == 0 {
				t.Fatal("no embedded probe needs root: this test proves nothing")
			}
			if failed > 0 {
				t.Errorf("%d probes did not finish ok: %+v", failed, n.Probes)
			}
			waitGone(t, tr.roots["n1"])
		})
	}
}

// TestBuildBundleBecomeUser: become_user reaches sudo -u, and a value that
// could mean anything to a shell never reaches the bundle.
func TestBuildBundleBecomeUser(t *testing.T) {
	probes, err := probe.BuiltinProbes()
	if err != nil {
		t.Fatal(err)
	}
	var rootProbe []probe.Probe
	for _, p := range probes {
		if p.NeedsRoot {
			rootProbe = append(rootProbe, p)
			break
		}
	}
	for _, tc := range []struct {
		user, stubWants string
		sudo            string
	}{
		{"ops", "ops", "ok"},
		{"", "", "ok"},
		// The stub refuses another user: the bundle must not claim sudo works.
		{"ops", "audit", "password_required"},
	} {
		root := filepath.Join(t.TempDir(), "node")
		if err := nodesim.Build(root, nodesim.Clean(1)[0].State); err != nil {
			t.Fatal(err)
		}
		asNonRoot(t, root, "nopasswd")
		nonce := probe.NewNonce()
		sess := &shSession{root: root, env: []string{"FA_WANT_USER=" + tc.stubWants}}
		res, err := sess.Exec(context.Background(), scriptFor(t, rootProbe, probe.Become{Method: "sudo", User: tc.user}, nonce, rootProbe[0].Timeout+5e9))
		if err != nil {
			t.Fatal(err)
		}
		parsed := probe.ParseOutput(res.Stdout, nonce, rootProbe)
		if got := parsed.Meta["meta.sudo"]; got != tc.sudo {
			t.Errorf("become_user %q, sudo wants %q: meta.sudo = %q, want %q (stderr %s)", tc.user, tc.stubWants, got, tc.sudo, res.Stderr)
		}
	}
	for _, bad := range []string{"ops;id", "$(id)", "`id`", "o'ps", "ops\nid", "-u", "Root", "a b", strings.Repeat("a", 33)} {
		if b, err := probe.BuildBundle(rootProbe, probe.Become{Method: "sudo", User: bad}, probe.NewNonce()); err == nil {
			t.Errorf("become_user %q accepted:\n%s", bad, b[:min(len(b), 200)])
		}
	}
}

// TestRootProbePathOnSimulatedNode pins the one exception to root probes'
// fixed system PATH: on a simulated node whose bin/ holds .only, the stubs
// stay the whole PATH under sudo too, so a test never reaches the tools of
// the machine it runs on. (The fixed PATH itself is proved over real sshd
// and sudo by cmd/fleet-audit's TestSudoProbePath.)
func TestRootProbePathOnSimulatedNode(t *testing.T) {
	for _, tc := range []struct {
		name      string
		needsRoot bool
	}{
		{"root probe through sudo", true},
		{"login probe", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "node")
			if err := nodesim.Build(root, nodesim.Clean(1)[0].State); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(root, "bin", ".only")); err != nil {
				t.Fatalf("nodesim no longer marks its bin/ with .only: %v", err)
			}
			asNonRoot(t, root, "nopasswd")
			probes := []probe.Probe{{ID: "pathcheck", NeedsRoot: tc.needsRoot, Timeout: 5e9, Facts: []string{"pathcheck.path"},
				Script: `fact pathcheck.path "$PATH"`}}
			nonce := probe.NewNonce()
			sess := &shSession{root: root}
			res, err := sess.Exec(context.Background(), scriptFor(t, probes, probe.Become{Method: "sudo"}, nonce, 20e9))
			if err != nil {
				t.Fatal(err)
			}
			parsed := probe.ParseOutput(res.Stdout, nonce, probes)
			if got := parsed.Meta["meta.sudo"]; got != "ok" {
				t.Fatalf("meta.sudo = %q, want ok (stderr %s)", got, res.Stderr)
			}
			if got, want := parsed.Facts["pathcheck.path"], filepath.Join(root, "bin"); got != want {
				t.Errorf("PATH = %q, want only the stubs %q", got, want)
			}
		})
	}
}

// TestNonRootWithoutBecomeIsPartial is the most common first try: a
// non-root login and no become. The root probes run as the login and
// print not-root; before, the checks reading those facts passed or
// skipped unseen, the node was ok and the gate passed. Now the node is
// partial, names the checks it could not judge and the fix, and the gate
// exits 3 unless --allow-partial; with become: sudo the same node is ok.
func TestNonRootWithoutBecomeIsPartial(t *testing.T) {
	for _, tc := range []struct {
		name   string
		become probe.Become
		policy GatePolicy
		status result.NodeStatus
		exit   int
	}{
		{"no become", probe.Become{}, GatePolicy{FailOn: result.SeverityCritical}, result.StatusPartial, result.ExitUnaudited},
		{"no become, allow-unreachable", probe.Become{}, GatePolicy{FailOn: result.SeverityCritical, AllowUnreachable: true}, result.StatusPartial, result.ExitUnaudited},
		{"no become, allow-partial", probe.Become{}, GatePolicy{FailOn: result.SeverityCritical, AllowPartial: true}, result.StatusPartial, result.ExitOK},
		{"become sudo", probe.Become{Method: "sudo"}, GatePolicy{FailOn: result.SeverityCritical}, result.StatusOK, result.ExitOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fleet := nodesim.Clean(1)
			fleet[0].Name = "n1"
			inv, tr := simulate(t, fleet)
			asNonRoot(t, tr.roots["n1"], "nopasswd")
			inv.Targets[0].Become = tc.become
			r := runSim(t, inv, tr)
			Analyze(r, simRules(t, tc.policy))
			n := r.Nodes[0]
			if n.Status != tc.status || r.Gate.ExitCode != tc.exit {
				t.Fatalf("status %s, exit %d (%v); want %s, exit %d\nmessage: %s", n.Status, r.Gate.ExitCode, r.Gate.Reasons, tc.status, tc.exit, n.Message)
			}
			var unjudged []string
			for _, c := range r.Checks {
				if c.Outcome == result.OutcomeUnjudged {
					unjudged = append(unjudged, c.Check)
					if !strings.Contains(c.Detail, "not-root") {
						t.Errorf("%s unjudged for another reason: %s", c.Check, c.Detail)
					}
				}
			}
			if tc.status == result.StatusOK {
				if len(unjudged) > 0 || n.Message != "" {
					t.Errorf("with become, unjudged %v, message %q", unjudged, n.Message)
				}
				return
			}
			// The simulated node lets the login read what root would, so
			// only the probes that ask is_root leave facts unread here;
			// cmd/fleet-audit's TestSudoNonRootWithoutBecome shows a real one.
			if !slices.Contains(unjudged, "iptables.kube-rules-low") {
				t.Fatalf("iptables.kube-rules-low judged without root: unjudged %v", unjudged)
			}
			for _, id := range unjudged {
				if !strings.Contains(n.Message, id) {
					t.Errorf("message does not name %s: %s", id, n.Message)
				}
			}
			if !strings.Contains(n.Message, "become: sudo") || !strings.Contains(n.Message, "-b") {
				t.Errorf("message gives no fix: %s", n.Message)
			}
		})
	}
}

// simRules are runSim's rules under policy.
func simRules(t *testing.T, policy GatePolicy) Rules {
	t.Helper()
	probes, err := probe.BuiltinProbes()
	if err != nil {
		t.Fatal(err)
	}
	checks, err := check.BuiltinChecks()
	if err != nil {
		t.Fatal(err)
	}
	return Rules{Probes: probes, Checks: checks, Gate: policy}
}
