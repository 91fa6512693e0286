package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/sshfleet"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

// Bounds of the fault run. The probe timeout is the hanging probe's own.
const (
	faultConnectTimeout = 3 * time.Second
	faultProbeTimeout   = 2 * time.Second
	// faultMargin is what the run may take beyond connect + probe timeout:
	// the other probes of the hanging node, the watchdog's tick, the
	// flood being cut, and a 2-core machine under -race. A hang of any
	// node would blow it many times over: nothing else bounds it below
	// the two-minute node timeout.
	faultMargin = 25 * time.Second
)

// hangProbe hangs forever on a node that has the marker file, and only
// there: the healthy nodes run it in no time.
const hangProbe = `# id: hang
# description: hangs forever on a node holding etc/fleet-audit-hang (fault test)
# needs_root: false
# timeout: 2s
# facts: hang.done
if [ -e "$R/etc/fleet-audit-hang" ]; then
	sleep 100000
fi
fact hang.done yes
`

// faultNode is one node of the fault fleet and what must become of it.
type faultNode struct {
	name   string
	fault  sshfleet.Fault
	via    string // the bastion it is reached through, "" for direct
	status result.NodeStatus
	// facts: whether the node must report facts (the healthy nodes every
	// probe's, the partial ones some).
	facts bool
	// partial: what arrived before the cut is kept, so any facts may be.
	partial    bool
	wrongKey   bool
	hang       bool
	floodBytes int64
}

// TestFaultFleet is one audit over a fleet in which every kind of node
// failure happens at once. Each node must end with its own status and the
// healthy ones fully audited; the run must end within the connect timeout
// plus the probe timeout plus a margin; the flood must not be kept; every
// report must be written and the gate must fail closed.
func TestFaultFleet(t *testing.T) {
	testtools.SkipShort(t, "audits a fleet of faulty nodes end to end")
	t.Parallel()
	nodes := []faultNode{
		{name: "healthy-1", status: result.StatusOK, facts: true},
		{name: "healthy-2", via: "bastion-up", status: result.StatusOK, facts: true},
		{name: "refuses", fault: sshfleet.FaultRefuse, status: result.StatusUnreachable},
		{name: "silent", fault: sshfleet.FaultSilent, status: result.StatusTimeout},
		{name: "hangs", hang: true, status: result.StatusProbeTimeout, facts: true},
		{name: "rekeyed", wrongKey: true, status: result.StatusHostKeyMismatch},
		{name: "rejects", fault: sshfleet.FaultRejectKey, status: result.StatusAuthFailed},
		{name: "floods", fault: sshfleet.FaultFlood, floodBytes: 50 << 20, status: result.StatusOutputTruncated, partial: true},
		{name: "drops", fault: sshfleet.FaultDropMidRun, status: result.StatusConnectionLost, partial: true},
		{name: "behind-1", via: "bastion-down", status: result.StatusJumpFailed},
		{name: "behind-2", via: "bastion-down", status: result.StatusJumpFailed},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ff := startFaultFleet(ctx, t, nodes, map[string]sshfleet.Fault{"bastion-up": sshfleet.FaultNone, "bastion-down": sshfleet.FaultRefuse}, nil)
	dir, invPath, probes, byName := ff.dir, ff.inventory, ff.probes, ff.byName
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"run", "-i", invPath, "--probes", probes,
		"--connect-timeout", faultConnectTimeout.String(), "--forks", "20",
		"--json", filepath.Join(out, "results.json"), "--html", filepath.Join(out, "report.html"),
		"--markdown", filepath.Join(out, "report.md"), "--junit", filepath.Join(out, "junit.xml")}
	start := time.Now()
	code, stdout, stderr := runProcess(ctx, t, dir, nil, args...)
	wall := time.Since(start)
	t.Logf("fault run: exit %d in %s (bound %s)", code, wall.Round(time.Millisecond), faultConnectTimeout+faultProbeTimeout+faultMargin)
	if wall > faultConnectTimeout+faultProbeTimeout+faultMargin {
		t.Errorf("the run took %s: more than connect timeout %s + probe timeout %s + margin %s, so something waited without a bound",
			wall, faultConnectTimeout, faultProbeTimeout, faultMargin)
	}
	// Nodes not audited fail the gate closed, whatever the findings.
	if code != 3 {
		t.Errorf("exit %d, want 3 (nodes not audited)\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	data, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The flood is cut at the output cap and only facts are kept: the
	// saved run stays small.
	if len(data) > 1<<20 {
		t.Errorf("results.json is %d bytes: the flood was kept", len(data))
	}
	var r result.Report
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	got := map[string]result.Node{}
	for _, n := range r.Nodes {
		got[n.Name] = n
	}
	probeCount := 0
	if all, err := probe.BuiltinProbes(); err == nil {
		for _, p := range all {
			if p.Scope != probe.ScopeCluster {
				probeCount++
			}
		}
	}
	for _, want := range nodes {
		n, ok := got[want.name]
		if !ok {
			t.Errorf("%s: not in the report", want.name)
			continue
		}
		if n.Status != want.status {
			t.Errorf("%s: status %s, want %s (%s)", want.name, n.Status, want.status, n.Message)
		}
		if n.Status != result.StatusOK && (n.Message == "" || strings.Contains(n.Message, "\n")) {
			t.Errorf("%s: message %q, want one line", want.name, n.Message)
		}
		if !want.partial && want.facts != (len(n.Facts) > 0) {
			t.Errorf("%s: %d facts, want facts: %v", want.name, len(n.Facts), want.facts)
		}
		if want.status == result.StatusOK {
			// Fully audited: every builtin node probe and the hang probe ran.
			ok := 0
			for _, p := range n.Probes {
				if p.Status == result.ProbeOK {
					ok++
				}
			}
			if ok != probeCount+1 || n.Facts["hang.done"] != "yes" {
				t.Errorf("%s: %d of %d probes ok, hang.done=%q", want.name, ok, probeCount+1, n.Facts["hang.done"])
			}
		}
	}
	if h := got["hangs"]; h.Facts["os.kernel"] == "" || h.Facts["hang.done"] != "" {
		t.Errorf("hangs: the probes around the hanging one must be kept (os.kernel=%q) and the hanging one not (hang.done=%q)", h.Facts["os.kernel"], h.Facts["hang.done"])
	}
	for _, name := range []string{"behind-1", "behind-2"} {
		// The message is the status's cause; the node's own error, which
		// the reports print after it, names the hop.
		if m := got[name].Error; !strings.Contains(m, "bastion-down") {
			t.Errorf("%s: the error does not name the bastion that failed: %q", name, m)
		}
	}
	// The hanging probe was killed on the node when its timeout passed,
	// not left behind for the fleet's Close to find.
	if left := testtools.ProcessesWithEnv("FLEET_AUDIT_ROOT="+filepath.Join(dir, "nodes", "hangs"), "sleep\x00100000\x00"); len(left) > 0 {
		t.Errorf("the hanging probe's process outlived the run: pids %v", left)
	}
	if n := byName["bastion-up"].Accepted(); n != 1 {
		t.Errorf("bastion-up accepted %d connections, want 1", n)
	}

	for _, f := range []string{"report.html", "report.md", "junit.xml"} {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Errorf("report not written: %v", err)
			continue
		}
		for _, want := range nodes {
			if !bytes.Contains(b, []byte(want.name)) || !bytes.Contains(b, []byte(want.status.String())) {
				t.Errorf("%s does not show %s as %s", f, want.name, want.status)
			}
		}
	}
}

// faultFleet is a running fault fleet and the files that reach it.
type faultFleet struct {
	dir, inventory, probes, knownHosts string
	byName                             map[string]*sshfleet.Node
}

// startFaultFleet starts nodes (each with a simulated node root) and
// bastions (name → fault) on loopback and writes a key, known_hosts (of
// every node but those in unknown, and another key for a wrongKey node), an
// ssh_config naming the bastions, the hang probe and an inventory.
func startFaultFleet(ctx context.Context, t *testing.T, nodes []faultNode, bastions map[string]sshfleet.Fault, unknown map[string]bool) faultFleet {
	t.Helper()
	dir := t.TempDir()
	signer, keyPEM, err := sshfleet.NewClientKey()
	if err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(dir, "id_ed25519")
	probes := filepath.Join(dir, "probes")
	for p, b := range map[string][]byte{key: keyPEM, filepath.Join(probes, "hang.sh"): []byte(hangProbe)} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	auth := []ssh.PublicKey{signer.PublicKey()}
	var cfgs []sshfleet.NodeConfig
	for _, name := range slices.Sorted(maps.Keys(bastions)) {
		cfgs = append(cfgs, sshfleet.NodeConfig{Name: name, Bastion: true, AuthorizedKeys: auth, Fault: bastions[name]})
	}
	for _, n := range nodes {
		root := filepath.Join(dir, "nodes", n.name)
		if err := nodesim.Build(root, nodesim.Clean(1)[0].State); err != nil {
			t.Fatal(err)
		}
		if n.hang {
			if err := os.WriteFile(filepath.Join(root, "etc", "fleet-audit-hang"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cfgs = append(cfgs, sshfleet.NodeConfig{
			Name: n.name, AuthorizedKeys: auth, Env: nodesim.SessionEnv(root), Dir: root,
			Fault: n.fault, FloodBytes: n.floodBytes,
		})
	}
	fleet, err := sshfleet.Start(ctx, cfgs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fleet.Close() })
	byName := map[string]*sshfleet.Node{}
	for _, n := range fleet.Nodes() {
		byName[n.Config.Name] = n
	}

	// known_hosts holds every node's key, but another key for rekeyed;
	// the ssh_config gives the bastions' addresses, so proxy_jump names
	// them as a user would.
	var known, sshConfig, inv strings.Builder
	for _, n := range fleet.Nodes() {
		if unknown[n.Config.Name] {
			continue
		}
		pub := n.HostKey
		for _, fn := range nodes {
			if fn.name == n.Config.Name && fn.wrongKey {
				other, _, err := sshfleet.NewClientKey()
				if err != nil {
					t.Fatal(err)
				}
				pub = other.PublicKey()
			}
		}
		fmt.Fprintf(&known, "[%s]:%d %s", n.Host, n.Port, ssh.MarshalAuthorizedKey(pub))
	}
	for _, b := range slices.Sorted(maps.Keys(bastions)) {
		fmt.Fprintf(&sshConfig, "Host %s\n  HostName %s\n  Port %d\n", b, byName[b].Host, byName[b].Port)
	}
	knownPath, cfgPath := filepath.Join(dir, "known_hosts"), filepath.Join(dir, "ssh_config")
	fmt.Fprintf(&inv, "name: faults\ndefaults:\n  identity_files: [%q]\n  known_hosts: [%q]\n  ssh_config: %q\n  roles: [worker]\nhosts:\n", key, knownPath, cfgPath)
	for _, n := range nodes {
		s := byName[n.name]
		fmt.Fprintf(&inv, "  %s: {address: %s, port: %d", n.name, s.Host, s.Port)
		if n.via != "" {
			fmt.Fprintf(&inv, ", proxy_jump: %s", n.via)
		}
		inv.WriteString("}\n")
	}
	invPath := filepath.Join(dir, "inventory.yaml")
	for p, b := range map[string]string{knownPath: known.String(), cfgPath: sshConfig.String(), invPath: inv.String()} {
		if err := os.WriteFile(p, []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	return faultFleet{dir: dir, inventory: invPath, probes: probes, knownHosts: knownPath, byName: byName}
}

// TestJumpHostKeyPolicy: a bastion whose key nobody recorded is refused
// under strict, which fails its nodes as jump_failed, and recorded under
// --host-key-policy accept-new, which audits them and warns about the
// node's key too. Jump hosts take the command line's policy.
func TestJumpHostKeyPolicy(t *testing.T) {
	testtools.SkipShort(t, "audits fleets through a bastion end to end")
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	nodes := []faultNode{{name: "inner", via: "bastion"}}
	ff := startFaultFleet(ctx, t, nodes, map[string]sshfleet.Fault{"bastion": sshfleet.FaultNone}, map[string]bool{"bastion": true})
	audit1 := func(policy string) (int, *result.Report) {
		res := filepath.Join(t.TempDir(), "results.json")
		code, _, stderr := runProcess(ctx, t, ff.dir, nil, "run", "-i", ff.inventory, "--json", res, "--host-key-policy", policy)
		data, err := os.ReadFile(res)
		if err != nil {
			t.Fatalf("%s: exit %d, no results: %v\n%s", policy, code, err, stderr)
		}
		var r result.Report
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatal(err)
		}
		return code, &r
	}
	code, r := audit1("strict")
	if n := r.Nodes[0]; code != 3 || n.Status != result.StatusJumpFailed || !strings.Contains(n.Error, "bastion") {
		t.Errorf("strict: exit %d, %s: %s: %s", code, n.Status, n.Message, n.Error)
	}
	code, r = audit1("accept-new")
	if n := r.Nodes[0]; code != 0 || n.Status != result.StatusOK {
		t.Errorf("accept-new: exit %d, %s: %s", code, n.Status, n.Message)
	}
	if len(r.Warnings) != 1 || !strings.HasPrefix(r.Warnings[0], "jump host bastion: host key seen for the first time") {
		t.Errorf("accept-new: warnings %q, want one about the bastion's key", r.Warnings)
	}
	known, err := os.ReadFile(ff.knownHosts)
	if err != nil {
		t.Fatal(err)
	}
	b := ff.byName["bastion"]
	if !strings.Contains(string(known), fmt.Sprintf("[%s]:%d ", b.Host, b.Port)) {
		t.Errorf("accept-new did not record the bastion's key:\n%s", known)
	}
	code, r = audit1("strict")
	if n := r.Nodes[0]; code != 0 || n.Status != result.StatusOK || len(r.Warnings) != 0 {
		t.Errorf("strict after accept-new: exit %d, %s: %s, warnings %q", code, n.Status, n.Message, r.Warnings)
	}
}
