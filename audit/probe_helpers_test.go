package audit

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/audit/catalog"
	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

// runProbe runs one embedded probe (and the bundle around it, exactly as on
// a node) against a simulated node built from s, and returns what the
// parser kept. The test fails if the probe did not finish with exit 0.
func runProbe(t *testing.T, id string, s nodesim.State) probe.Parsed {
	t.Helper()
	return runProbeTweaked(t, id, s, nil)
}

// runProbeTweaked is runProbe with a hook that changes the built node tree
// before the probe runs (e.g. to take away curl, which every simulated node
// gets, or to replace a file by a symlink).
func runProbeTweaked(t *testing.T, id string, s nodesim.State, tweak func(root string)) probe.Parsed {
	t.Helper()
	parsed, _ := runProbeOn(t, id, s, tweak, nil)
	return parsed
}

// builtinProbe is the embedded probe id, alone in the list a bundle takes,
// or fails the test.
func builtinProbe(t *testing.T, id string) []probe.Probe {
	t.Helper()
	all, err := probe.BuiltinProbes()
	if err != nil {
		t.Fatal(err)
	}
	for _, pr := range all {
		if pr.ID == id {
			return []probe.Probe{pr}
		}
	}
	t.Fatalf("no embedded probe %q", id)
	return nil
}

// runProbeOn builds the node from s, applies tweak (if any) to its tree and
// runs probe id in the bundle, in a session of shell (a path and its flags)
// instead of /bin/sh when shell is set. It returns what the parser kept and
// the node's raw stdout and stderr.
func runProbeOn(t *testing.T, id string, s nodesim.State, tweak func(root string), shell []string) (probe.Parsed, string) {
	t.Helper()
	testtools.SkipShort(t, "runs a probe in a shell on a simulated node")
	p := builtinProbe(t, id)
	root := filepath.Join(t.TempDir(), "node")
	if err := nodesim.Build(root, s); err != nil {
		t.Fatal(err)
	}
	if tweak != nil {
		tweak(root)
	}
	nonce := probe.NewNonce()
	bundle := bundleFor(t, p, probe.Become{}, nonce)
	under := "/bin/sh"
	if shell != nil {
		under = strings.Join(shell, " ")
	}
	res, err := (&shSession{root: root, shell: shell}).Exec(context.Background(), Script{Bundle: bundle, Timeout: p[0].Timeout + 5e9})
	if err != nil {
		t.Fatalf("probe %s: %v", id, err)
	}
	parsed := probe.ParseOutput(res.Stdout, nonce, p)
	if r := parsed.Runs[0]; r.Status != result.ProbeOK {
		t.Fatalf("probe %s under %s: status %s exit %d, stderr %q\nstdout:\n%s", id, under, r.Status, r.ExitCode, res.Stderr, res.Stdout)
	}
	return parsed, string(res.Stdout) + string(res.Stderr)
}

// builtinChecks returns the embedded checks or fails the test.
func builtinChecks(t *testing.T) []check.Check {
	t.Helper()
	cs, err := check.BuiltinChecks()
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// builtinChecksByID indexes the embedded checks by id.
func builtinChecksByID(t *testing.T) map[string]check.Check {
	t.Helper()
	byID := map[string]check.Check{}
	for _, c := range builtinChecks(t) {
		byID[c.ID] = c
	}
	return byID
}

// mergeFacts returns the union of fact maps, later ones winning.
func mergeFacts(maps ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func TestRunProbeHelperSeesSimulatedIptables(t *testing.T) {
	s := nodesim.Healthy("n1", false)
	got := runProbe(t, "iptables", s).Facts
	if got["iptables.backend"] != "nf_tables" {
		t.Fatalf("iptables.backend = %q, want nf_tables; facts %v", got["iptables.backend"], got)
	}
}

// bundleFor is BuildBundle for a test, which fails on an error.
func bundleFor(tb testing.TB, probes []probe.Probe, become probe.Become, nonce string) []byte {
	tb.Helper()
	b, err := probe.BuildBundle(probes, become, nonce)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// scriptFor is bundleFor as the run hands it to a session.
func scriptFor(tb testing.TB, probes []probe.Probe, become probe.Become, nonce string, timeout time.Duration) Script {
	tb.Helper()
	return Script{Bundle: bundleFor(tb, probes, become, nonce), Timeout: timeout, RunMarker: probe.RunMarker(nonce)}
}

// runProbeUnder is runProbe with the session's shell, in whose subshells
// the probes run, shell instead of /bin/sh.
func runProbeUnder(t *testing.T, shell []string, id string, s nodesim.State) (probe.Parsed, string) {
	t.Helper()
	path := testtools.Find(t, shell[0])
	return runProbeOn(t, id, s, nil, append([]string{path}, shell[1:]...))
}

// runAsNobody runs probe id on a node built from s, changed by tweak, as a
// real unprivileged uid (nobody), without become, as an audit through a
// login without root does: RKE2's 0700 directories and 0600 files stay
// closed to it. The node lies in a 0755 directory of its own, since
// t.TempDir's tree is 0700 root; switching uid needs root.
func runAsNobody(t *testing.T, id string, s nodesim.State, tweak func(root string)) map[string]string {
	t.Helper()
	testtools.SkipShort(t, "runs a probe in a shell as nobody")
	if os.Geteuid() != 0 {
		testtools.Require(t, "root")
	}
	dir, err := os.MkdirTemp("", id+"-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "node")
	if err := nodesim.Build(root, s); err != nil {
		t.Fatal(err)
	}
	if tweak != nil {
		tweak(root)
	}
	p := builtinProbe(t, id)
	nonce := probe.NewNonce()
	cmd := exec.Command("/bin/sh", "-s")
	cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, nodesim.SessionEnv(root)...)
	cmd.Stdin = bytes.NewReader(bundleFor(t, p, probe.Become{}, nonce))
	// A session of its own, as sshd gives (see shSession): the bundle
	// kills its session's orphans, never the test's.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}, Setsid: true}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	parsed := probe.ParseOutput(out.Bytes(), nonce, p)
	if r := parsed.Runs[0]; r.Status != result.ProbeOK {
		t.Fatalf("status %s: %s\n%s", r.Status, errb.String(), out.String())
	}
	return parsed.Facts
}

// builtinCatalog is the embedded catalogue or fails the test.
func builtinCatalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	c, err := catalog.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// userRules are the probes and checks a --probes dir adds to the embedded
// catalogue, or fail the test.
func userRules(t *testing.T, dir string) ([]probe.Probe, []check.Check) {
	t.Helper()
	c, err := catalog.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	embedded := builtinCatalog(t)
	return c.Probes[len(embedded.Probes):], c.Checks[len(embedded.Checks):]
}
