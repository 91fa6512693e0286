package discover

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/internal/kubefake"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/inventory"
)

var update = flag.Bool("update", false, "rewrite testdata/rke2-inventory.yaml")

func node(name string, labels map[string]string, addrs ...Address) Node {
	var n Node
	n.Metadata.Name, n.Metadata.Labels, n.Status.Addresses = name, labels, addrs
	return n
}

// labels makes node-role.kubernetes.io/ROLE=true labels, as RKE2 and
// kubectl label node set them.
func labels(roles ...string) map[string]string {
	m := map[string]string{"kubernetes.io/os": "linux"}
	for _, r := range roles {
		m[roleLabelPrefix+r] = "true"
	}
	return m
}

func TestRoles(t *testing.T) {
	tests := []struct {
		name      string
		labels    map[string]string
		want      []string
		wantNotes int
	}{
		{"RKE2 server", labels("control-plane", "etcd", "master"), []string{"control-plane", "etcd"}, 0},
		{"RKE2 agent: no role label", labels(), []string{"worker"}, 0},
		{"no labels at all", nil, []string{"worker"}, 0},
		{"agent labelled worker (Rancher)", labels("worker"), []string{"worker"}, 0},
		{"Rancher all-in-one node", labels("control-plane", "etcd", "worker"), []string{"control-plane", "etcd", "worker"}, 0},
		{"etcd-only server", labels("etcd"), []string{"etcd"}, 0},
		{"control-plane-only server, older label only", labels("master"), []string{"control-plane"}, 0},
		{"the label's value does not matter, as in kubectl", map[string]string{roleLabelPrefix + "etcd": ""}, []string{"etcd"}, 0},
		{"legacy kubernetes.io/role", map[string]string{legacyRoleLabel: "master"}, []string{"control-plane"}, 0},
		{"empty legacy role", map[string]string{legacyRoleLabel: ""}, []string{"worker"}, 0},
		{"a role of the operator's own stays, and a non-server is a worker", labels("infra"), []string{"infra", "worker"}, 0},
		{"empty role suffix is no role", map[string]string{roleLabelPrefix: "true"}, []string{"worker"}, 0},
		{"role the inventory refuses is dropped with a note", labels("a:b", "etcd"), []string{"etcd"}, 1},
		{"hostile legacy role value", map[string]string{legacyRoleLabel: "x\ny: z"}, []string{"worker"}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, notes := roles(tc.labels)
			if !reflect.DeepEqual(got, tc.want) || len(notes) != tc.wantNotes {
				t.Errorf("roles(%v) = %v, notes %q; want %v and %d notes", tc.labels, got, notes, tc.want, tc.wantNotes)
			}
		})
	}
}

func TestAddress(t *testing.T) {
	in, ex, hn := "InternalIP", "ExternalIP", "Hostname"
	tests := []struct {
		name      string
		addrs     []Address
		want      string
		wantType  string
		wantNotes int
	}{
		{"InternalIP first whatever the order", []Address{{hn, "n1"}, {ex, "203.0.113.1"}, {in, "10.0.0.1"}}, "10.0.0.1", in, 0},
		{"dual stack: the first InternalIP", []Address{{in, "fd00::1"}, {in, "10.0.0.1"}}, "fd00::1", in, 0},
		{"ExternalIP without InternalIP", []Address{{hn, "n1"}, {ex, "203.0.113.1"}}, "203.0.113.1", ex, 0},
		{"Hostname last", []Address{{"InternalDNS", "n1.internal"}, {hn, "n1.example.com"}}, "n1.example.com", hn, 0},
		{"invalid InternalIP passed over with a note", []Address{{in, "10.0.0.1; reboot"}, {ex, "203.0.113.1"}}, "203.0.113.1", ex, 1},
		{"host:port is not an address", []Address{{in, "10.0.0.1:22"}}, "", "", 1},
		{"none", nil, "", "", 0},
		{"only DNS types", []Address{{"ExternalDNS", "n1.example.com"}}, "", "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, typ, notes := address(tc.addrs)
			if got != tc.want || typ != tc.wantType || len(notes) != tc.wantNotes {
				t.Errorf("address(%v) = %q %q notes %q; want %q %q and %d notes", tc.addrs, got, typ, notes, tc.want, tc.wantType, tc.wantNotes)
			}
		})
	}
}

// TestMapNodesHostile: a name the inventory would refuse is reported, not
// written, and never breaks the other nodes.
func TestMapNodesHostile(t *testing.T) {
	ip := Address{"InternalIP", "10.0.0.9"}
	m := MapNodes([]Node{
		node("b-node", nil, ip),
		node("evil\n  hosts:\n    x", nil, ip),
		node("a b", nil, ip),
		node("-oProxyCommand=sh", nil, ip),
		node("$(reboot)", nil, ip),
		node("", nil, ip),
		node("line\u2028break", nil, ip),
		node(strings.Repeat("n", 300), nil, ip),
		node("b-node", nil, ip),
		node("no-address", nil),
		node("a-node", labels("etcd"), ip),
	})
	var names []string
	for _, h := range m.Hosts {
		names = append(names, h.Name)
	}
	if want := []string{"a-node", "b-node"}; !reflect.DeepEqual(names, want) {
		t.Errorf("written %q, want %q (sorted, hostile ones left out)", names, want)
	}
	if len(m.Skipped) != 9 {
		t.Fatalf("skipped %d nodes, want 9: %q", len(m.Skipped), m.Skipped)
	}
	for _, s := range m.Skipped {
		if s.Reason == "" {
			t.Errorf("node %q skipped without a reason", s.Name)
		}
	}
}

// A node whose kubelet does not run on Linux (an RKE2 Windows agent) is
// not written: the probes are POSIX sh. The kubelet's
// nodeInfo.operatingSystem says so, else the kubernetes.io/os label; a
// node that says neither is written.
func TestMapNodesNotLinux(t *testing.T) {
	ip := Address{"InternalIP", "10.0.0.9"}
	withOS := func(name, nodeInfo string, labels map[string]string) Node {
		n := node(name, labels, ip)
		n.Status.NodeInfo.OperatingSystem = nodeInfo
		return n
	}
	for _, tc := range []struct {
		name    string
		n       Node
		written bool
	}{
		{"linux by both", withOS("l", "linux", labels()), true},
		{"windows by nodeInfo", withOS("w", "windows", nil), false},
		{"windows by label only", withOS("w", "", map[string]string{"kubernetes.io/os": "windows"}), false},
		{"nodeInfo wins over the label", withOS("w", "windows", labels()), false},
		{"unknown OS is written", withOS("u", "", nil), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := MapNodes([]Node{tc.n})
			if got := len(m.Hosts) == 1; got != tc.written {
				t.Fatalf("written = %v, want %v (skipped %q)", got, tc.written, m.Skipped)
			}
			if !tc.written && (len(m.Skipped) != 1 || !strings.Contains(m.Skipped[0].Reason, "not a Linux node")) {
				t.Errorf("skipped %q, want one with why", m.Skipped)
			}
		})
	}
}

func TestParseNodeList(t *testing.T) {
	for _, tc := range []struct{ in, wantErr string }{
		{`{"kind":"NodeList","items":[]}`, ""},
		{`{"kind":"Status","status":"Failure"}`, `the kind is "Status"`},
		{`{"items":[]}`, `the kind is ""`},
		{`<html>`, "not a NodeList"},
	} {
		_, err := ParseNodeList([]byte(tc.in))
		if (err == nil) != (tc.wantErr == "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("ParseNodeList(%s) = %v, want error %q", tc.in, err, tc.wantErr)
		}
	}
}

// TestRenderReadsBack: what Render writes, Parse reads back as exactly
// the mapped hosts, with values YAML would otherwise take for booleans,
// numbers or null, and with a context that tries to end its comment line.
func TestRenderReadsBack(t *testing.T) {
	ip := func(a string) Address { return Address{"InternalIP", a} }
	nodes := []Node{
		node("true", labels("control-plane", "etcd", "master"), ip("10.0.0.1")),
		node("null", labels("control-plane", "etcd", "master"), ip("fd00::1")),
		node("1e3", nil, ip("fe80::1%eth0")),
		node("0x10", labels("worker"), ip("10.0.0.4")),
		node("010", labels("etcd"), ip("10.0.0.5")),
		node("1:20", nil, Address{"Hostname", "n1.example.com"}),
		node("yes", labels("infra"), Address{"ExternalIP", "203.0.113.7"}),
		node("fd00::9", labels("a_b"), ip("fd00::9")),
		node("bad\nname: x", nil, ip("10.0.0.9")),
	}
	m := MapNodes(nodes)
	src := Source{Context: "ctx\ngroups: {}\u2028name: evil\u0085x", Kubeconfig: "/k\n#", Listed: time.Date(2026, 12, 4, 1, 2, 3, 0, time.UTC), Nodes: len(nodes)}
	text, err := Render(src, m)
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(text), "\n") {
		if strings.ContainsAny(line, "\r\u0085\u2028\u2029") || strings.HasPrefix(line, "name:") {
			t.Errorf("line %d escaped its comment: %q", i+1, line)
		}
	}
	inv, err := inventory.Parse("discovered.yaml", text, inventory.LoadOptions{UserSSHConfig: "none", Home: t.TempDir(), CurrentUser: "u"})
	if err != nil {
		t.Fatalf("the rendered inventory does not load: %v\n%s", err, text)
	}
	type host struct {
		name, address string
		roles         []string
	}
	var want, got []host
	for _, h := range m.Hosts {
		want = append(want, host{h.Name, h.Address, h.Roles})
	}
	for _, h := range inv.Hosts {
		got = append(got, host{h.Name, h.Address, h.Roles})
	}
	slices.SortFunc(got, func(a, b host) int { return strings.Compare(a.name, b.name) })
	if len(want) != 8 || !reflect.DeepEqual(got, want) {
		t.Errorf("read back %v\nwant %v\n%s", got, want, text)
	}
	if inv.Name != "discovered" {
		t.Errorf("an invalid context became the name %q", inv.Name)
	}
	for _, h := range inv.Hosts {
		if wantGroup := strings.Join(h.Roles, "_"); h.Group != wantGroup {
			t.Errorf("%s is in group %q, want %q", h.Name, h.Group, wantGroup)
		}
	}
}

func TestInventoryName(t *testing.T) {
	for ctx, want := range map[string]string{
		"prod":                     "prod",
		"gke_proj_europe-west1_c1": "gke_proj_europe-west1_c1",
		"arn:aws:eks:eu-west-1:123456789012:cluster/prod": "prod",
		"user@cluster": "",
		"":             "",
		"a/b\n":        "",
	} {
		if got := inventoryName(ctx); got != want {
			t.Errorf("inventoryName(%q) = %q, want %q", ctx, got, want)
		}
	}
}

// TestGroupNamesCollide: two role sets whose joined names are the same
// get two groups, never one group with the first set's roles.
func TestGroupNamesCollide(t *testing.T) {
	groups := groupByRoles([]Host{
		{Name: "n1", Address: "10.0.0.1", Roles: []string{"a", "b_worker"}},
		{Name: "n2", Address: "10.0.0.2", Roles: []string{"a_b", "worker"}},
	})
	if len(groups) != 2 || groups[0].name == groups[1].name {
		t.Fatalf("groups %+v: want two, differently named", groups)
	}
}

// TestRKE2Golden renders a cluster of 3 RKE2 servers and 2 agents as an
// operator will see it. The fixture's nodes carry what RKE2 puts on them:
// the server role labels k3s sets (see roles), node.kubernetes.io/
// instance-type rke2, the rke2.io/ annotations, an InternalIP and a
// Hostname address (kubelet's, core/v1 NodeAddress), and one agent
// labelled worker with an ExternalIP, as Rancher-provisioned ones are.
func TestRKE2Golden(t *testing.T) {
	data, err := os.ReadFile("testdata/rke2-nodes.json")
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := ParseNodeList(data)
	if err != nil {
		t.Fatal(err)
	}
	text, err := Render(Source{Context: "rke2-prod", Kubeconfig: "/home/ops/.kube/rke2.yaml", Listed: time.Date(2026, 12, 4, 1, 0, 0, 0, time.UTC), Nodes: len(nodes)}, MapNodes(nodes))
	if err != nil {
		t.Fatal(err)
	}
	golden := "testdata/rke2-inventory.yaml"
	if *update {
		if err := os.WriteFile(golden, text, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != string(text) {
		t.Errorf("%s differs (go test ./cmd/fleet-audit/internal/discover -run TestRKE2Golden -update): %s", golden, testtools.FirstDiff(want, text))
	}
}

func startFake(t *testing.T) (*kubefake.Server, string) {
	t.Helper()
	data, err := os.ReadFile("testdata/rke2-nodes.json")
	if err != nil {
		t.Fatal(err)
	}
	srv := kubefake.Start(data)
	t.Cleanup(srv.Close)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := srv.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	// kubectl may write a cache under $HOME; keep it out of the user's.
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBECONFIG", "")
	return srv, kubeconfig
}

// TestDiscoverThroughKubectl lists the fake API server's nodes through
// the real kubectl: the kubeconfig's CA, token and contexts are kubectl's
// to use, and the header names the context kubectl used.
func TestDiscoverThroughKubectl(t *testing.T) {
	kubectl := testtools.Find(t, "kubectl")
	srv, kubeconfig := startFake(t)
	now := time.Date(2026, 12, 4, 1, 0, 0, 0, time.UTC)

	d, err := Discover(context.Background(), Options{Kubeconfig: kubeconfig, Kubectl: kubectl, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	// rke2-win-1, a Windows agent, is listed but not written.
	if d.Source.Context != kubefake.Context || d.Source.Nodes != 6 || len(d.Hosts) != 5 {
		t.Errorf("source %+v, %d hosts; want the current context %q, 6 nodes and 5 hosts", d.Source, len(d.Hosts), kubefake.Context)
	}
	if !strings.Contains(string(d.Text), `node "rke2-win-1": not a Linux node (kubernetes.io/os="windows")`) {
		t.Errorf("the header does not say why the Windows node is left out:\n%s", d.Text)
	}
	if !slices.Contains(srv.Requests(), "GET /api/v1/nodes") {
		t.Errorf("kubectl made the requests %q, none for the node list", srv.Requests())
	}
	inv, err := d.Inventory("<cluster>", inventory.LoadOptions{UserSSHConfig: "none", Home: t.TempDir(), CurrentUser: "u"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, h := range inv.Hosts {
		got[h.Name] = h.Address + " " + strings.Join(h.Roles, ",")
	}
	want := map[string]string{
		"rke2-server-1": "10.0.0.11 control-plane,etcd", "rke2-server-2": "10.0.0.12 control-plane,etcd",
		"rke2-server-3": "10.0.0.13 control-plane,etcd", "rke2-agent-1": "10.0.1.21 worker", "rke2-agent-2": "10.0.1.22 worker",
	}
	if !reflect.DeepEqual(got, want) || inv.Name != kubefake.Context {
		t.Errorf("inventory %q hosts %v, want %q and %v", inv.Name, got, kubefake.Context, want)
	}
	if !strings.Contains(string(d.Text), `context:    "`+kubefake.Context+`"`) || !strings.Contains(string(d.Text), "2026-12-04T01:00:00Z") {
		t.Errorf("the header does not say where and when the nodes came from:\n%s", d.Text)
	}

	// The credentials of another context are refused; kubectl's own
	// message reaches the error.
	_, err = Discover(context.Background(), Options{Kubeconfig: kubeconfig, Context: kubefake.WrongContext, Kubectl: kubectl})
	if err == nil || !strings.Contains(err.Error(), "--context="+kubefake.WrongContext) || !strings.Contains(strings.ToLower(err.Error()), "unauthorized") {
		t.Errorf("with the wrong token: %v; want kubectl's argv and its Unauthorized", err)
	}
	// A context the kubeconfig does not have.
	_, err = Discover(context.Background(), Options{Kubeconfig: kubeconfig, Context: "-nope", Kubectl: kubectl})
	if err == nil || !strings.Contains(err.Error(), "-nope") {
		t.Errorf("with an unknown context: %v", err)
	}
}

func TestDiscoverWithoutKubectl(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Discover(context.Background(), Options{})
	if !errors.Is(err, ErrNoKubectl) || !strings.Contains(err.Error(), "install kubectl") {
		t.Errorf("got %v, want ErrNoKubectl saying what to do", err)
	}
}

// TestDiscoverDeadline: a kubectl that never answers (a credential plugin
// waiting for a browser) is stopped at the deadline. A script stands in
// for kubectl here, since no real one can be made to hang on purpose.
func TestDiscoverDeadline(t *testing.T) {
	hang := filepath.Join(t.TempDir(), "kubectl")
	if err := os.WriteFile(hang, []byte("#!/bin/sh\nexec sleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := Discover(context.Background(), Options{Kubectl: hang, Context: "c", Timeout: 300 * time.Millisecond})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no answer within 300ms") {
		t.Errorf("got %v, want the deadline", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s", d)
	}
}

// TestDiscoverInterrupted: Ctrl-C while kubectl runs stops it and is told
// apart from the deadline, so the command exits as interrupted.
func TestDiscoverInterrupted(t *testing.T) {
	hang := filepath.Join(t.TempDir(), "kubectl")
	if err := os.WriteFile(hang, []byte("#!/bin/sh\nexec sleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	time.AfterFunc(100*time.Millisecond, stop)
	_, err := Discover(ctx, Options{Kubectl: hang, Context: "c"})
	if !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "no answer within") {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

// fakeKubectl writes a script standing in for kubectl.
func fakeKubectl(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "kubectl")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// What kubectl says on stderr and the context name reach the user's
// terminal in the error: an OSC 52 clipboard write, a screen clear or a
// bidi override in them arrives made visible, as in every report.
func TestDiscoverErrorIsEscaped(t *testing.T) {
	kubectl := fakeKubectl(t, `printf 'error: \033]52;c;cHduZWQ=\007 \033[2J\342\200\256evil\nsecond line\n' >&2; exit 1`+"\n")
	_, err := Discover(context.Background(), Options{Kubectl: kubectl, Context: "prod\x1b[2J\u202e"})
	if err == nil {
		t.Fatal("a failing kubectl gave no error")
	}
	msg := err.Error()
	for _, raw := range []string{"\x1b", "\x07", "\u202e"} {
		if strings.Contains(msg, raw) {
			t.Errorf("the error holds %q raw: %q", raw, msg)
		}
	}
	for _, shown := range []string{`\x1b]52;c;cHduZWQ=\x07`, `\x1b[2J`, `\u202eevil`, "--context=prod\\x1b[2J\\u202e", "\nsecond line"} {
		if !strings.Contains(msg, shown) {
			t.Errorf("the error does not show %q: %q", shown, msg)
		}
	}
}

// Ctrl-C (or the deadline) stops what kubectl started too: a credential
// plugin left behind would go on waiting for a browser login. The
// stand-in starts a child that would outlive it, then waits.
func TestDiscoverInterruptedKillsKubectlsChildren(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	kubectl := fakeKubectl(t, "sleep 60 &\necho $! > '"+pidFile+"'\nwait\n")
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go func() {
		for range 100 {
			if b, err := os.ReadFile(pidFile); err == nil && len(b) > 0 && b[len(b)-1] == '\n' {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		stop()
	}()
	_, err := Discover(ctx, Options{Kubectl: kubectl, Context: "c"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	gone := false
	for range 100 {
		// A zombie child of nobody's is reaped by init; kill(pid, 0)
		// fails once it is gone.
		if syscall.Kill(pid, 0) != nil {
			gone = true
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !gone {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("kubectl's child %d still runs after the interrupt", pid)
	}
}

// A huge node list is read as it streams, so its size costs time, not
// memory: 64 MiB of nodes allocate a small part of that, and an answer
// over the bound is an error that says so.
func TestDiscoverLargeAnswerIsStreamed(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "nodes.json")
	f, err := os.Create(list)
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x", 64<<10)
	fmt.Fprint(f, `{"kind":"NodeList","apiVersion":"v1","metadata":{},"items":[`)
	const n = 1024
	for i := range n {
		if i > 0 {
			fmt.Fprint(f, ",")
		}
		fmt.Fprintf(f, `{"metadata":{"name":"node-%d","annotations":{"pad":%q}},"status":{"addresses":[{"type":"InternalIP","address":"10.0.%d.%d"}]}}`, i, pad, i/250, i%250+1)
	}
	fmt.Fprint(f, "]}")
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	kubectl := fakeKubectl(t, "exec cat '"+list+"'\n")
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	d, err := Discover(context.Background(), Options{Kubectl: kubectl, Context: "c"})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Hosts) != n {
		t.Errorf("%d hosts, want %d", len(d.Hosts), n)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
		t.Errorf("a 64 MiB node list allocated %d MiB", alloc>>20)
	}
	defer func(m int64) { maxNodeList = m }(maxNodeList)
	maxNodeList = 1 << 20
	_, err = Discover(context.Background(), Options{Kubectl: kubectl, Context: "c"})
	if err == nil || !strings.Contains(err.Error(), "more than 1 MiB") {
		t.Errorf("over the bound: %v, want an error naming it", err)
	}
}
