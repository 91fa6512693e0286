//go:build linux

package audit

import (
	"context"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

// credTransport opens every node's session as one real user.
type credTransport struct {
	roots map[string]string
	attr  *syscall.SysProcAttr
}

func (c *credTransport) Open(_ context.Context, h Target) (Session, error) {
	return &shSession{root: c.roots[h.Name], attr: c.attr}, nil
}

// TestBecomeSudoAgainstPrivateRKE2Dirs runs the real bundle as a real
// unprivileged login with become: sudo, its root probes escalating through
// the machine's real sudo, against simulated nodes whose RKE2 agent and
// pod-manifests directories are really 0700 root (k3s pkg/agent, rancher/rke2
// pkg/executor/staticpod), as are the BPF filesystem and the Cilium
// agent's socket: a split-role cluster on Cilium's kube-proxy replacement,
// one server running etcd and the control plane, one running the control
// plane only (no etcd manifest, nothing on 2379/2380), and an agent. What
// only root can see must come from a root probe: no node is told its etcd
// is down, kube-proxy's replacement is recognised, and the healthy fleet
// gets no warning and no critical.
func TestBecomeSudoAgainstPrivateRKE2Dirs(t *testing.T) {
	testtools.SkipShort(t, "runs the bundle through a real sudo")
	login := testtools.SudoLogin(t)
	dir := testtools.PublicDir(t)
	cpOnly := nodesim.Healthy("cp-1", true)
	cpOnly.Files = func() map[string]string {
		f := map[string]string{}
		for k, v := range cpOnly.Files {
			f[k] = v
		}
		delete(f, "var/lib/rancher/rke2/agent/pod-manifests/etcd.yaml")
		return f
	}()
	cpOnly = nodesim.WithoutPort(nodesim.WithoutPort(cpOnly, 2379), 2380)
	fleet := nodesim.WithCluster([]nodesim.Member{
		{Name: "etcd-1", Roles: []string{"etcd", "control-plane"}, State: nodesim.WithCiliumKPR(nodesim.Healthy("etcd-1", true))},
		{Name: "cp-1", Roles: []string{"control-plane"}, State: nodesim.WithCiliumKPR(cpOnly)},
		{Name: "worker-1", Roles: []string{"worker"}, State: nodesim.WithCiliumKPR(nodesim.Healthy("worker-1", false))},
	})
	tr := &credTransport{roots: map[string]string{},
		attr: &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: login.UID, Gid: login.GID}}}
	inv := &Fleet{Name: "sudo"}
	for _, m := range fleet {
		root := filepath.Join(dir, m.Name)
		if err := nodesim.Build(root, m.State); err != nil {
			t.Fatal(err)
		}
		tr.roots[m.Name] = root
		inv.Targets = append(inv.Targets, Target{Name: m.Name, Address: "127.0.0.1", Roles: m.Roles, Become: probe.Become{Method: "sudo"}})
	}
	probes, err := probe.BuiltinProbes()
	if err != nil {
		t.Fatal(err)
	}
	// Who each side runs as, beside the built-in probes.
	// and whether it may search RKE2's pod-manifests directory.
	for _, w := range []struct{ id, root string }{{"login_uid", "false"}, {"root_uid", "true"}} {
		p, err := probe.ParseProbe(w.id+".sh", "# id: "+w.id+"\n# description: the uid this side runs as\n# needs_root: "+w.root+
			"\n# timeout: 5s\n# facts: "+w.id+".uid "+w.id+".manifests\n\nfact "+w.id+".uid \"$(id -u)\"\n"+
			"if [ -x \"$R/var/lib/rancher/rke2/agent/pod-manifests\" ]; then fact "+w.id+".manifests searchable; else fact "+w.id+".manifests private; fi\n")
		if err != nil {
			t.Fatal(err)
		}
		probes = append(probes, p)
	}
	checks, err := check.BuiltinChecks()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), RunOptions{Fleet: inv, Transport: tr, Forks: 3, NodeTimeout: 2 * time.Minute,
		Rules: Rules{Probes: probes, Checks: checks, Gate: GatePolicy{FailOn: result.SeverityCritical}}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"etcd-1": "present", "cp-1": "absent", "worker-1": "absent"}
	for _, n := range r.Nodes {
		if n.Status != result.StatusOK {
			t.Fatalf("%s: status %s (%s)", n.Name, n.Status, n.Message)
		}
		// The login side really is the unprivileged user, the root side root.
		if got := n.Facts["login_uid.uid"]; got != strconv.Itoa(int(login.UID)) {
			t.Fatalf("%s: the login probes ran as uid %q, want %d", n.Name, got, login.UID)
		}
		if got := n.Facts["root_uid.uid"]; got != "0" {
			t.Fatalf("%s: the root probes ran as uid %q, want 0", n.Name, got)
		}
		if n.Facts["login_uid.manifests"] != "private" || n.Facts["root_uid.manifests"] != "searchable" {
			t.Fatalf("%s: pod-manifests is %s to the login, %s to root: the test proves nothing", n.Name, n.Facts["login_uid.manifests"], n.Facts["root_uid.manifests"])
		}
		for _, f := range []struct{ fact, want string }{
			{"rke2.manifest.etcd", want[n.Name]},
			{"rke2.manifest.kube-proxy", "absent"},
			{"kubeproxy.mode.configured", "absent"},
			{"kubeproxy.cilium.kube_proxy_replacement", "True"},
			{"cni.kube_proxy_replaced", "yes"},
		} {
			if got := n.Facts[f.fact]; got != f.want {
				t.Errorf("%s: %s = %q, want %q", n.Name, f.fact, got, f.want)
			}
		}
	}
	if got := warningsByNode(t, r); len(got) != 0 {
		t.Errorf("a healthy fleet audited through sudo has findings: %v", got)
	}
	if !r.Gate.Passed {
		t.Errorf("gate failed: %v", r.Gate.Reasons)
	}
}
