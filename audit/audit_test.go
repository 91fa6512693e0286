package audit

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
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

// shTransport runs the bundle with the local /bin/sh against a simulated node
// root per host: the real probes, no SSH.
type shTransport struct {
	roots map[string]string
	// fail makes Open fail for a host with this error.
	fail map[string]error
	// calls records the hosts opened, so a test can verify each was used.
	mu    sync.Mutex
	calls map[string]int
	// shell and env are every session's shell and extra environment (see
	// shSession): the login shell and pam_env of the simulated nodes.
	shell []string
	env   []string
	// attr starts every session as another user (see shSession).
	attr *syscall.SysProcAttr
}

type shSession struct {
	root string
	env  []string // more environment for the shell
	// shell is the session's shell (a path and its flags) instead of
	// /bin/sh: the probes run in its subshells, so it is the shell they
	// run under.
	shell []string
	// attr, when set, starts the shell as another user (Credential), for
	// the tests that run the bundle as a real unprivileged login.
	attr *syscall.SysProcAttr
}

func (t *shTransport) Open(ctx context.Context, h Target) (Session, error) {
	t.mu.Lock()
	t.calls[h.Name]++
	t.mu.Unlock()
	if err := t.fail[h.Name]; err != nil {
		return nil, err
	}
	root, ok := t.roots[h.Name]
	if !ok {
		return nil, fmt.Errorf("shTransport: unexpected host %q", h.Name)
	}
	return &shSession{root: root, shell: t.shell, env: t.env, attr: t.attr}, nil
}

func (s *shSession) Exec(ctx context.Context, script Script) (ExecResult, error) {
	ctx, cancel := context.WithTimeout(ctx, script.Timeout)
	defer cancel()
	shell := []string{"/bin/sh"}
	if s.shell != nil {
		shell = s.shell
	}
	cmd := exec.CommandContext(ctx, shell[0], append(slices.Clip(shell[1:]), "-s")...)
	cmd.Env = append(append([]string{"PATH=/usr/bin:/bin"}, nodesim.SessionEnv(s.root)...), s.env...)
	cmd.Stdin = bytes.NewReader(script.Text())
	// A child a probe left holding the session's stdout must not hold the
	// test past its bound: Run then gives up and returns.
	cmd.WaitDelay = 5 * time.Second
	// A session of its own, as sshd gives a command (OpenSSH session.c,
	// do_exec_no_pty: setsid in the child): the bundle kills its session's
	// orphans, which must be the node's and never the test's.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if s.attr != nil {
		// The test's working directory may be closed to that user.
		attr := *s.attr
		attr.Setsid = true
		cmd.SysProcAttr, cmd.Dir = &attr, "/"
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code, err = ee.ExitCode(), nil
	}
	return ExecResult{Stdout: out.Bytes(), Stderr: errb.Bytes(), ExitCode: code}, err
}

func (s *shSession) Close() error { return nil }

func simulate(t *testing.T, fleet []nodesim.Member) (*Fleet, *shTransport) {
	t.Helper()
	testtools.SkipShort(t, "runs the probe bundle in a shell on a simulated fleet")
	dir := t.TempDir()
	tr := &shTransport{roots: map[string]string{}, fail: map[string]error{}, calls: map[string]int{}}
	inv := &Fleet{Name: "sim"}
	for _, m := range fleet {
		root := filepath.Join(dir, m.Name)
		if err := nodesim.Build(root, m.State); err != nil {
			t.Fatal(err)
		}
		tr.roots[m.Name] = root
		inv.Targets = append(inv.Targets, Target{Name: m.Name, Address: "127.0.0.1", Roles: m.Roles})
	}
	return inv, tr
}

func runSim(t *testing.T, inv *Fleet, tr Transport) *result.Report {
	t.Helper()
	probes, err := probe.BuiltinProbes()
	if err != nil {
		t.Fatal(err)
	}
	checks, err := check.BuiltinChecks()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), RunOptions{Fleet: inv, Transport: tr, Forks: 4, NodeTimeout: time.Minute,
		Rules: Rules{Probes: probes, Checks: checks, Gate: GatePolicy{FailOn: result.SeverityCritical}}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestIncidentNamesUFWAsProbableCause judges the incident fleet's facts,
// which TestFactsFixtures holds to what audit.Run gets from the real
// bundle on nodesim.Incident.
func TestIncidentNamesUFWAsProbableCause(t *testing.T) {
	r := judgeFixture(t, "incident", nil)
	for _, n := range r.Nodes {
		if n.Status != result.StatusOK {
			t.Fatalf("node %s: status %s (%s)", n.Name, n.Status, n.Message)
		}
	}
	if len(r.Findings) == 0 || r.Findings[0].Kind != result.KindCorrelation {
		t.Fatalf("first finding is not a correlation: %+v", r.Findings)
	}
	f := r.Findings[0]
	want := "etcd-1,etcd-2,worker-2,worker-4"
	if got := strings.Join(f.Nodes, ","); got != want {
		t.Errorf("correlation nodes = %s, want %s", got, want)
	}
	if f.Severity != result.SeverityCritical || f.Cause == nil || !strings.HasPrefix(f.Cause.Fact, "ufw.") || !f.Cause.Exact {
		t.Fatalf("cause = %+v, want an exact ufw.* cause", f.Cause)
	}
	if f.Cause.Fact != "ufw.active" || f.Cause.Value != "active" {
		t.Errorf("cause = %s=%s, want ufw.active=active (the flagged fact ranks first)", f.Cause.Fact, f.Cause.Value)
	}
	if !strings.Contains(f.Evidence[0], "on the same 4 and on none of the 5 healthy ones") {
		t.Errorf("evidence = %q", f.Evidence[0])
	}
	if r.Gate.ExitCode != result.ExitGateFailed || r.Gate.Passed {
		t.Errorf("gate = %+v, want failed with 1", r.Gate)
	}
	// As a real kube-proxy with a failing sync loop serves it
	// (pkg/proxy/healthcheck/proxy_health.go): 503 on both endpoints, and
	// still UFW named; the healthy nodes answer 200 on both.
	for _, n := range r.Nodes {
		code := "200"
		if strings.Contains(","+want+",", ","+n.Name+",") {
			code = "503"
		}
		if n.Facts["kubeproxy.healthz.code"] != code || n.Facts["kubeproxy.livez.code"] != code {
			t.Errorf("%s: healthz %s livez %s, want %s on both", n.Name, n.Facts["kubeproxy.healthz.code"], n.Facts["kubeproxy.livez.code"], code)
		}
	}
	if !slices.Contains(f.Cause.Symptoms, "kubeproxy.healthz-failing") {
		t.Errorf("correlation symptoms = %v, want kubeproxy.healthz-failing among them", f.Cause.Symptoms)
	}
	// Nothing but the incident: no conntrack or module finding on nodes
	// whose sysctls and modules are as a healthy Debian node's.
	for _, x := range r.Findings {
		if strings.HasPrefix(x.Check, "conntrack.") || strings.HasPrefix(x.Check, "module.") {
			t.Errorf("unexpected finding %s on %v", x.Check, x.Nodes)
		}
	}
	// worker-3's newer kernel is drift but not the cause.
	found := false
	for _, d := range r.Drift {
		if d.Fact == "os.kernel" && d.Scope == "fleet" {
			found = true
			if d.Majority != "6.1.0-28-amd64" || len(d.Groups) != 2 || d.Groups[1].Nodes[0] != "worker-3" {
				t.Errorf("kernel drift = %+v", d)
			}
		}
		if d.Fact == "rke2.service" && d.Scope == "fleet" {
			t.Errorf("role-scoped fact rke2.service reported as fleet drift")
		}
	}
	if !found {
		t.Error("no fleet drift for os.kernel")
	}
	for _, n := range r.Nodes {
		for k, v := range n.Facts {
			if strings.Contains(v, "K10") || strings.Contains(v, "s3cr3t") {
				t.Errorf("%s: secret reached fact %s=%s", n.Name, k, v)
			}
		}
	}
}

func TestCleanFleetPasses(t *testing.T) {
	r := judgeFixture(t, "clean-3", nil)
	if !r.Gate.Passed || r.Gate.ExitCode != result.ExitOK {
		t.Fatalf("gate = %+v, findings = %+v", r.Gate, r.Findings)
	}
	if len(r.Drift) != 0 {
		t.Errorf("clean fleet has drift: %+v", r.Drift)
	}
}

func TestUnreachableNodeGates3(t *testing.T) {
	inv, tr := simulate(t, nodesim.Clean(3))
	tr.fail["node-2"] = &NodeError{Status: result.StatusUnreachable, Message: "connection refused", Err: fmt.Errorf("dial")}
	r := runSim(t, inv, tr)
	if r.Gate.ExitCode != result.ExitUnaudited {
		t.Fatalf("gate = %+v", r.Gate)
	}
	if r.Nodes[1].Status != result.StatusUnreachable || r.Nodes[0].Status != result.StatusOK || r.Nodes[2].Status != result.StatusOK {
		t.Errorf("statuses: %v %v %v", r.Nodes[0].Status, r.Nodes[1].Status, r.Nodes[2].Status)
	}
	// node-1, the server, gets a second session for the cluster probes.
	want := map[string]int{"node-1": 2, "node-2": 1, "node-3": 1}
	for name, n := range tr.calls {
		if n != want[name] {
			t.Errorf("host %s opened %d times, want %d", name, n, want[name])
		}
	}
}

func TestProbeHangIsProbeTimeout(t *testing.T) {
	testtools.SkipShort(t, "waits out a probe timeout on a real bundle")
	fleet := nodesim.Clean(2)
	h := fleet[1].State.HealthHTTP["/healthz"]
	h.Hang = true
	fleet[1].State.HealthHTTP = map[string]nodesim.HTTP{"/healthz": h, "/livez": fleet[1].State.HealthHTTP["/livez"]}
	inv, tr := simulate(t, fleet)
	probes, _ := probe.BuiltinProbes()
	for i := range probes {
		if probes[i].ID == "kubeproxy" {
			probes[i].Timeout = 2 * time.Second
		}
	}
	checks, _ := check.BuiltinChecks()
	r, err := Run(context.Background(), RunOptions{Fleet: inv, Transport: tr, Rules: Rules{Probes: probes, Checks: checks, Gate: GatePolicy{FailOn: result.SeverityCritical}}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Nodes[1].Status != result.StatusProbeTimeout {
		t.Fatalf("node-2 status = %s (%s)", r.Nodes[1].Status, r.Nodes[1].Message)
	}
	if r.Nodes[1].Facts["os.kernel"] == "" {
		t.Error("facts of the other probes were lost")
	}
	if r.Gate.ExitCode != result.ExitUnaudited {
		t.Errorf("gate = %+v", r.Gate)
		for _, f := range r.Findings {
			t.Logf("finding %s %s on %v: %s", f.Severity, f.Check, f.Nodes, f.Summary)
		}
	}
}

// TestShippedProbes checks the embedded data the way kube-bench tests its
// YAML: headers parse, ids are unique, sh -n passes, nothing writes, and
// every check reads a fact some probe declares.
func TestShippedProbes(t *testing.T) {
	probes, err := probe.BuiltinProbes()
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]bool{}
	writeVerbs := regexp.MustCompile(`(^|[\s;|&(])(rm|mv|cp|tee|dd\s+of=|touch|mkdir|chmod|chown|ln|truncate|sed\s+-i|iptables\s+-[ADIFXNPR]|ufw\s+(enable|disable|allow|deny|reset)|systemctl\s+(start|stop|restart|enable|disable|reload)|modprobe|sysctl\s+-w|kill)\b|[^&0-9<>]>\s*[^&/\s=0-9]|>>`)
	// Facts that Go code provides (catalog/builtin.go's GoFacts a check may read:
	// the target version, the join of the cluster probes to the
	// inventory, the certificates' dates).
	global := map[string]bool{}
	for _, f := range catalog.CheckableGoFacts() {
		global[f], declared[f] = true, true
	}
	for _, p := range probes {
		for _, f := range append(append([]string{}, p.Facts...), p.NodeFacts...) {
			if declared[f] {
				t.Errorf("fact %s declared by two probes", f)
			}
			declared[f] = true
		}
		full := probe.Library() + "\n" + p.Script
		cmd := exec.Command("/bin/sh", "-n")
		cmd.Stdin = strings.NewReader(full)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("probe %s: sh -n: %v: %s", p.ID, err, out)
		}
		for i, line := range strings.Split(full, "\n") {
			code, _, _ := strings.Cut(line, "#")
			code = strings.ReplaceAll(code, "2>/dev/null", "")
			code = strings.ReplaceAll(code, ">/dev/null", "")
			if writeVerbs.MatchString(code) {
				t.Errorf("probe %s line %d may write: %q", p.ID, i+1, line)
			}
		}
	}
	checks, err := check.BuiltinChecks()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		for _, f := range c.Facts() {
			if !declared[f] {
				t.Errorf("check %s reads fact %s that no probe emits", c.ID, f)
			}
		}
	}
	// Every declared fact is really emitted on a simulated fleet (the
	// clean-3 fixture, the real bundle's facts): node facts on a node,
	// cluster facts once, node facts of the cluster probe joined to the
	// node they name.
	r := judgeFixture(t, "clean-3", nil)
	if got := r.Nodes[0].Facts["kubeproxy.port10256.listening"]; got != "yes" {
		t.Errorf("kubeproxy.port10256.listening = %s on a node listening on 10256", got)
	}
	if r.Cluster == nil || r.Cluster.Status != result.ClusterOK {
		t.Fatalf("cluster = %+v", r.Cluster)
	}
	for f := range declared {
		// Flags of the run, not facts of the fleet.
		if global[f] && slices.Contains([]string{catalog.TargetVersionFact, catalog.EtcdSnapshotMaxAgeFact, catalog.CAHorizonFact}, f) {
			continue
		}
		// The certificates' pieces are read into the certs.* Go facts and
		// dropped (deriveCertFacts); TestCertsProbe holds what the probe
		// prints.
		if strings.HasPrefix(f, certsPEMPrefix) {
			continue
		}
		if _, ok := r.Nodes[0].Facts[f]; ok {
			continue
		}
		if _, ok := r.Cluster.Facts[f]; !ok {
			t.Errorf("fact %s declared but not emitted", f)
		}
	}
}

// blockingTransport answers the first host and blocks the others until the
// context ends, like nodes still handshaking when the user presses Ctrl-C.
type blockingTransport struct {
	*shTransport
	first  string
	cancel context.CancelFunc
}

func (b *blockingTransport) Open(ctx context.Context, h Target) (Session, error) {
	if h.Name == b.first {
		return b.shTransport.Open(ctx, h)
	}
	b.cancel()
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestInterruptKeepsFinishedNodes(t *testing.T) {
	inv, tr := simulate(t, nodesim.Clean(4))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bt := &blockingTransport{shTransport: tr, first: "node-1", cancel: cancel}
	probes, _ := probe.BuiltinProbes()
	checks, _ := check.BuiltinChecks()
	// Forks 1: node-1 finishes before any other node starts.
	r, err := Run(ctx, RunOptions{Fleet: inv, Transport: bt, Forks: 1, Rules: Rules{Probes: probes, Checks: checks, Gate: GatePolicy{FailOn: result.SeverityCritical}}})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Interrupted || r.Gate.ExitCode != result.ExitInterrupted {
		t.Fatalf("interrupted=%v gate=%+v", r.Interrupted, r.Gate)
	}
	if r.Nodes[0].Status != result.StatusOK || len(r.Nodes[0].Facts) == 0 {
		t.Errorf("finished node lost: %s", r.Nodes[0].Status)
	}
	for _, n := range r.Nodes[1:] {
		if n.Status != result.StatusInterrupted {
			t.Errorf("%s: status %s, want interrupted", n.Name, n.Status)
		}
		// The status's meaning has one home (result), said here with when.
		if !strings.HasPrefix(n.Message, result.StatusInterrupted.Meaning()+" ") {
			t.Errorf("%s: message %q does not start with the status's meaning", n.Name, n.Message)
		}
	}
}
