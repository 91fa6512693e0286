package remote_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/fleet-audit/fleet-audit/internal/sshdtest"
	"github.com/fleet-audit/fleet-audit/internal/sshfleet"
	"github.com/fleet-audit/fleet-audit/remote"
)

// hop is node i as a jump host, with the fleet's key and known_hosts.
func (f *testFleet) hop(i int) remote.Hop {
	n := f.Nodes()[i]
	return remote.Hop{
		Name:            n.Config.Name,
		Address:         n.Host,
		Port:            n.Port,
		User:            "tester",
		IdentityFiles:   []string{f.keyFile},
		KnownHostsFiles: []string{f.knownHosts},
	}
}

// behind is the target for node i reached through the given hops.
func (f *testFleet) behind(i int, hops ...int) remote.Target {
	t := f.target(i)
	for _, h := range hops {
		t.Jumps = append(t.Jumps, f.hop(h))
	}
	return t
}

func runEcho(t *testing.T, c remote.Conn, want string) {
	t.Helper()
	out, err := c.Run(t.Context(), remote.Script{Stdin: []byte("echo " + want + "\n"), Timeout: 10 * time.Second})
	if err != nil || string(out.Stdout) != want+"\n" {
		t.Errorf("run: stdout %q err %v, want %q", out.Stdout, err, want)
	}
}

// dialWithin fails the test, instead of hanging it, when Dial does not
// return in time.
func dialWithin(t *testing.T, d remote.Dialer, tgt remote.Target, limit time.Duration) (remote.Conn, error) {
	t.Helper()
	type result struct {
		c   remote.Conn
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := d.Dial(t.Context(), tgt)
		done <- result{c, err}
	}()
	select {
	case r := <-done:
		return r.c, r.err
	case <-time.After(limit):
		t.Fatalf("dial did not return within %s", limit)
		return nil, nil
	}
}

func closeDialer(t *testing.T, d *remote.SSHDialer) {
	t.Helper()
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	})
}

func TestJumpTwoHops(t *testing.T) {
	t.Parallel()
	f := startFleet(t,
		sshfleet.NodeConfig{Name: "bastion1", Bastion: true},
		sshfleet.NodeConfig{Name: "bastion2", Bastion: true},
		sshfleet.NodeConfig{Name: "node"},
	)
	b1, b2, node := f.Nodes()[0], f.Nodes()[1], f.Nodes()[2]
	d := testDialer(remote.SSHOptions{})
	closeDialer(t, d)
	c := dialOrFatal(t, d, f.behind(2, 0, 1))
	runEcho(t, c, "through two hops")

	// Without the hops the node would be dialled directly and no bastion
	// would have forwarded anything.
	for _, tc := range []struct {
		what string
		got  int
	}{
		{"connections bastion1 accepted", b1.Accepted()},
		{"channels bastion1 forwarded (to bastion2)", b1.Forwards()},
		{"connections bastion2 accepted (from bastion1)", b2.Accepted()},
		{"channels bastion2 forwarded (to the node)", b2.Forwards()},
		{"connections the node accepted (from bastion2)", node.Accepted()},
	} {
		if tc.got != 1 {
			t.Errorf("%d %s, want 1", tc.got, tc.what)
		}
	}
}

func TestJumpSharesOneConnection(t *testing.T) {
	t.Parallel()
	const nodes = 20
	cfgs := []sshfleet.NodeConfig{{Name: "bastion", Bastion: true}}
	for i := range nodes {
		cfgs = append(cfgs, sshfleet.NodeConfig{Name: fmt.Sprintf("node-%d", i)})
	}
	f := startFleet(t, cfgs...)
	bastion := f.Nodes()[0]

	dialAll := func(t *testing.T, d *remote.SSHDialer) {
		var wg sync.WaitGroup
		for i := 1; i <= nodes; i++ {
			wg.Go(func() {
				c, err := d.Dial(t.Context(), f.behind(i, 0))
				if err != nil {
					t.Errorf("dial node %d: %v", i, err)
					return
				}
				defer c.Close()
				runEcho(t, c, strconv.Itoa(i))
			})
		}
		wg.Wait()
	}

	d := testDialer(remote.SSHOptions{})
	closeDialer(t, d)
	dialAll(t, d)
	if got := bastion.Accepted(); got != 1 {
		t.Errorf("bastion accepted %d connections for %d concurrent nodes, want 1", got, nodes)
	}
	if got := bastion.Forwards(); got != nodes {
		t.Errorf("bastion forwarded %d channels, want %d", got, nodes)
	}

	// Negative control: the count is per dialer, so it can tell sharing
	// from a fresh connection.
	other := testDialer(remote.SSHOptions{})
	closeDialer(t, other)
	dialAll(t, other)
	if got := bastion.Accepted(); got != 2 {
		t.Errorf("bastion accepted %d connections after a second dialer, want 2", got)
	}
}

func TestJumpFailures(t *testing.T) {
	t.Parallel()
	f := startFleet(t,
		sshfleet.NodeConfig{Name: "bastion", Bastion: true},
		sshfleet.NodeConfig{Name: "bastion-down", Bastion: true, Fault: sshfleet.FaultRefuse},
		sshfleet.NodeConfig{Name: "bastion-silent", Bastion: true, Fault: sshfleet.FaultSilent},
		sshfleet.NodeConfig{Name: "bastion-rejects", Bastion: true, Fault: sshfleet.FaultRejectKey},
		sshfleet.NodeConfig{Name: "not-a-bastion"},
		sshfleet.NodeConfig{Name: "node"},
		sshfleet.NodeConfig{Name: "node-down", Fault: sshfleet.FaultRefuse},
		sshfleet.NodeConfig{Name: "node-silent", Fault: sshfleet.FaultSilent},
	)
	const (
		bastion, down, silent, rejects, notBastion = 0, 1, 2, 3, 4
		node, nodeDown, nodeSilent                 = 5, 6, 7
	)
	nodes := f.Nodes()
	dir := t.TempDir()
	// known_hosts where the bastion's key changed, and one that knows
	// only the bastion.
	changed := writeFile(t, dir, "changed", []byte(knownhosts.Line([]string{nodes[bastion].Addr}, newSigner(t).PublicKey())+"\n"))
	onlyBastion := writeFile(t, dir, "only-bastion", []byte(knownhosts.Line([]string{nodes[bastion].Addr}, nodes[bastion].HostKey)+"\n"))
	keyscan := func(n *sshfleet.Node) string { return fmt.Sprintf("ssh-keyscan -p %d %s", n.Port, n.Host) }
	const connectTimeout = time.Second

	tests := []struct {
		name      string
		target    remote.Target
		wantErr   []error
		notErr    []error
		wantInMsg []string
		notInMsg  []string
	}{
		{
			name: "bastion down", target: f.behind(node, down),
			wantErr:   []error{remote.ErrJumpFailed, remote.ErrUnreachable},
			wantInMsg: []string{"jump host bastion-down", "connection refused"},
		},
		{
			name: "bastion silent", target: f.behind(node, silent),
			wantErr:   []error{remote.ErrJumpFailed, remote.ErrConnectTimeout},
			wantInMsg: []string{"jump host bastion-silent"},
		},
		{
			name: "bastion rejects the key", target: f.behind(node, rejects),
			wantErr:   []error{remote.ErrJumpFailed, remote.ErrAuthFailed},
			wantInMsg: []string{"jump host bastion-rejects"},
		},
		{
			name: "bastion host key changed",
			target: func() remote.Target {
				tg := f.behind(node, bastion)
				tg.Jumps[0].KnownHostsFiles = []string{changed}
				return tg
			}(),
			wantErr:   []error{remote.ErrJumpFailed, remote.ErrHostKeyMismatch},
			wantInMsg: []string{"jump host bastion", nodes[bastion].Addr, ssh.FingerprintSHA256(nodes[bastion].HostKey)},
		},
		{
			// The hop was fine: the node's own key is unknown, and it is
			// looked up under the node's address, not the bastion's.
			name: "node host key unknown",
			target: func() remote.Target {
				tg := f.behind(node, bastion)
				tg.KnownHostsFiles = []string{onlyBastion}
				return tg
			}(),
			wantErr:   []error{remote.ErrHostKeyUnknown},
			notErr:    []error{remote.ErrJumpFailed},
			wantInMsg: []string{keyscan(nodes[node]), ssh.FingerprintSHA256(nodes[node].HostKey)},
			notInMsg:  []string{keyscan(nodes[bastion])},
		},
		{
			name: "node down behind a bastion", target: f.behind(nodeDown, bastion),
			wantErr:   []error{remote.ErrUnreachable},
			notErr:    []error{remote.ErrJumpFailed},
			wantInMsg: []string{"jump host bastion", "could not connect to " + nodes[nodeDown].Addr},
		},
		{
			// A tunnel has no deadlines; only closing it ends this.
			name: "node silent behind a bastion", target: f.behind(nodeSilent, bastion),
			wantErr:   []error{remote.ErrConnectTimeout},
			notErr:    []error{remote.ErrJumpFailed},
			wantInMsg: []string{"no SSH handshake"},
		},
		{
			name: "hop does not forward", target: f.behind(node, notBastion),
			wantErr: []error{remote.ErrUnreachable},
			notErr:  []error{remote.ErrJumpFailed},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := testDialer(remote.SSHOptions{ConnectTimeout: connectTimeout})
			closeDialer(t, d)
			start := time.Now()
			c, err := dialWithin(t, d, tt.target, connectTimeout+10*time.Second)
			if elapsed := time.Since(start); elapsed > connectTimeout+2*time.Second {
				t.Errorf("dial took %s, want within the %s connect timeout", elapsed, connectTimeout)
			}
			if err == nil {
				_ = c.Close()
				t.Fatal("dial succeeded, want an error")
			}
			t.Logf("dial error: %v", err)
			for _, w := range tt.wantErr {
				if !errors.Is(err, w) {
					t.Errorf("error does not wrap %v", w)
				}
			}
			for _, w := range tt.notErr {
				if errors.Is(err, w) {
					t.Errorf("error wraps %v, want not", w)
				}
			}
			for _, s := range tt.wantInMsg {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error does not mention %q", s)
				}
			}
			for _, s := range tt.notInMsg {
				if strings.Contains(err.Error(), s) {
					t.Errorf("error mentions %q", s)
				}
			}
		})
	}
}

// TestJumpFailureShared: nodes waiting for the same hop dial share its
// failure instead of each dialling the bastion.
func TestJumpFailureShared(t *testing.T) {
	t.Parallel()
	const nodes = 20
	cfgs := []sshfleet.NodeConfig{{Name: "bastion", Bastion: true, Fault: sshfleet.FaultSilent}}
	for i := range nodes {
		cfgs = append(cfgs, sshfleet.NodeConfig{Name: fmt.Sprintf("node-%d", i)})
	}
	f := startFleet(t, cfgs...)
	// Long enough that every node is waiting before the first gives up.
	d := testDialer(remote.SSHOptions{ConnectTimeout: 3 * time.Second})
	closeDialer(t, d)
	var wg sync.WaitGroup
	for i := 1; i <= nodes; i++ {
		wg.Go(func() {
			c, err := d.Dial(t.Context(), f.behind(i, 0))
			if err == nil {
				_ = c.Close()
				t.Errorf("node %d: dial through a silent bastion succeeded", i)
				return
			}
			if !errors.Is(err, remote.ErrJumpFailed) || !errors.Is(err, remote.ErrConnectTimeout) ||
				!strings.Contains(err.Error(), "jump host bastion") {
				t.Errorf("node %d: %v, want ErrJumpFailed and ErrConnectTimeout naming the bastion", i, err)
			}
		})
	}
	wg.Wait()
	if got := f.Nodes()[0].Accepted(); got != 1 {
		t.Errorf("silent bastion accepted %d connections from %d waiting nodes, want 1", got, nodes)
	}
}

func TestJumpHopRedialled(t *testing.T) {
	t.Parallel()
	f := startFleet(t,
		sshfleet.NodeConfig{Name: "bastion", Bastion: true},
		sshfleet.NodeConfig{Name: "node"},
	)
	bastion := f.Nodes()[0]
	d := testDialer(remote.SSHOptions{})
	closeDialer(t, d)

	first := dialOrFatal(t, d, f.behind(1, 0))
	runEcho(t, first, "before")
	if n := bastion.DropConnections(); n == 0 {
		t.Fatal("the bastion held no connection to drop")
	}
	// The old tunnel died with its hop.
	if _, err := first.Run(t.Context(), remote.Script{Stdin: []byte("echo after\n"), Timeout: 10 * time.Second}); !errors.Is(err, remote.ErrConnectionLost) {
		t.Errorf("run over a dropped hop: %v, want ErrConnectionLost", err)
	}

	second := dialOrFatal(t, d, f.behind(1, 0))
	runEcho(t, second, "after")
	if got := bastion.Accepted(); got != 2 {
		t.Errorf("bastion accepted %d connections, want 2: the dead one must be replaced", got)
	}
}

func TestJumpKeepAlive(t *testing.T) {
	t.Parallel()
	f := startFleet(t,
		sshfleet.NodeConfig{Name: "bastion", Bastion: true},
		// Forwards, but answers no keepalive.
		sshfleet.NodeConfig{Name: "bastion-hang", Bastion: true, Fault: sshfleet.FaultHang},
		sshfleet.NodeConfig{Name: "node"},
		sshfleet.NodeConfig{Name: "node-hang", Fault: sshfleet.FaultHang},
	)
	const bastion, bastionHang, node, nodeHang = 0, 1, 2, 3
	const fast = 100 * time.Millisecond

	tests := []struct {
		name      string
		target    remote.Target
		opts      remote.SSHOptions
		script    string
		wantErr   error
		wantInMsg []string
	}{
		{
			// 250ms: see TestKeepAliveAnswered.
			name:   "answered through a hop",
			target: f.behind(node, bastion),
			opts:   remote.SSHOptions{KeepAliveInterval: 250 * time.Millisecond},
			script: "sleep 1; echo alive\n",
		},
		{
			name: "node behind a hop does not answer",
			target: func() remote.Target {
				tg := f.behind(nodeHang, bastion)
				tg.KeepAliveInterval, tg.KeepAliveCountMax = fast, 2
				return tg
			}(),
			script:    "echo hi\n",
			wantErr:   remote.ErrConnectionLost,
			wantInMsg: []string{"no answer to 2 keepalives"},
		},
		{
			// The node answers its own keepalives; the hop's are what
			// find the bastion dead.
			name: "hop does not answer",
			target: func() remote.Target {
				tg := f.behind(node, bastionHang)
				tg.KeepAliveInterval = time.Hour
				return tg
			}(),
			opts:      remote.SSHOptions{KeepAliveInterval: fast},
			script:    "sleep 30\n",
			wantErr:   remote.ErrConnectionLost,
			wantInMsg: []string{"jump host bastion-hang", "no answer to 3 keepalives"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := testDialer(tt.opts)
			closeDialer(t, d)
			c := dialOrFatal(t, d, tt.target)
			out, err := c.Run(t.Context(), remote.Script{Stdin: []byte(tt.script), Timeout: 60 * time.Second})
			if tt.wantErr == nil {
				if err != nil || string(out.Stdout) != "alive\n" {
					t.Errorf("run: stdout %q err %v", out.Stdout, err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("run error %v, want %v", err, tt.wantErr)
			}
			t.Logf("run error: %v", err)
			if out.Duration > 20*time.Second {
				t.Errorf("run took %s, want the keepalives to end it", out.Duration)
			}
			for _, s := range tt.wantInMsg {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error does not mention %q", s)
				}
			}
		})
	}
}

func TestJumpPerTargetConnectTimeout(t *testing.T) {
	t.Parallel()
	f := startFleet(t,
		sshfleet.NodeConfig{Name: "bastion", Bastion: true},
		sshfleet.NodeConfig{Name: "node-silent", Fault: sshfleet.FaultSilent},
	)
	// The dialer's own timeout would hold the test for a minute; the
	// target's is what must apply.
	d := testDialer(remote.SSHOptions{ConnectTimeout: time.Minute})
	closeDialer(t, d)
	tg := f.behind(1, 0)
	tg.ConnectTimeout = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	_, err := d.Dial(ctx, tg)
	if !errors.Is(err, remote.ErrConnectTimeout) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("dial error %v, want ErrConnectTimeout from the target's own timeout", err)
	}
	if !strings.Contains(fmt.Sprint(err), "300ms") {
		t.Errorf("error %v does not name the target's 300ms timeout", err)
	}
}

func TestDialAfterClose(t *testing.T) {
	t.Parallel()
	f := startFleet(t,
		sshfleet.NodeConfig{Name: "bastion", Bastion: true},
		sshfleet.NodeConfig{Name: "node"},
	)
	d := testDialer(remote.SSHOptions{})
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	for _, tg := range []remote.Target{f.target(1), f.behind(1, 0)} {
		if c, err := d.Dial(t.Context(), tg); err == nil {
			_ = c.Close()
			t.Errorf("dial %v after Close succeeded", tg.Jumps)
		}
	}
	if got := f.Nodes()[0].Accepted(); got != 0 {
		t.Errorf("bastion accepted %d connections after Close, want 0", got)
	}
}

// TestDialerCloseLeavesNoGoroutines is not parallel, so the goroutine
// count is this test's own.
func TestDialerCloseLeavesNoGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	func() {
		key, pemBytes, err := sshfleet.NewClientKey()
		if err != nil {
			t.Fatal(err)
		}
		auth := []ssh.PublicKey{key.PublicKey()}
		// Not t.Context: its cleanup would run after the count.
		fl, err := sshfleet.Start(context.Background(), []sshfleet.NodeConfig{
			{Name: "bastion1", Bastion: true, AuthorizedKeys: auth},
			{Name: "bastion2", Bastion: true, AuthorizedKeys: auth},
			{Name: "bastion-silent", Bastion: true, Fault: sshfleet.FaultSilent},
			{Name: "node1", AuthorizedKeys: auth},
			{Name: "node2", Fault: sshfleet.FaultHang, AuthorizedKeys: auth},
		})
		if err != nil {
			t.Fatal(err)
		}
		defer fl.Close()
		dir := t.TempDir()
		f := &testFleet{
			Fleet:      fl,
			key:        key,
			keyFile:    writeFile(t, dir, "id_ed25519", pemBytes),
			knownHosts: writeFile(t, dir, "known_hosts", fl.KnownHosts()),
		}
		d := testDialer(remote.SSHOptions{KeepAliveInterval: 10 * time.Millisecond, ConnectTimeout: 30 * time.Second})
		for _, tg := range []remote.Target{f.behind(3, 0), f.behind(3, 0, 1), f.behind(4, 0, 1)} {
			c, err := d.Dial(context.Background(), tg)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = c.Run(context.Background(), remote.Script{Stdin: []byte("echo hi; sleep 5\n"), Timeout: 300 * time.Millisecond})
			if err := c.Close(); err != nil {
				t.Error(err)
			}
		}

		// A hop dial still in flight when the dialer closes must end
		// with it, and so must the node waiting for it.
		waiting := make(chan error, 1)
		go func() {
			_, err := d.Dial(context.Background(), f.behind(3, 2))
			waiting <- err
		}()
		for f.Nodes()[2].Accepted() == 0 {
			time.Sleep(10 * time.Millisecond)
		}
		if err := d.Close(); err != nil {
			t.Error(err)
		}
		select {
		case err := <-waiting:
			if !errors.Is(err, remote.ErrJumpFailed) {
				t.Errorf("dial in flight at Close: %v, want ErrJumpFailed", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a dial in flight did not end when the dialer closed")
		}
	}()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines after Close, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

// TestJumpThroughSSHD checks the tunnel against OpenSSH on either side:
// sshd as the bastion (its direct-tcpip, AllowTcpForwarding's default) and
// sshd as the node behind the in-process bastion.
func TestJumpThroughSSHD(t *testing.T) {
	t.Parallel()
	f := startFleet(t, sshfleet.NodeConfig{Name: "bastion", Bastion: true}, sshfleet.NodeConfig{Name: "node"})
	srv := sshdtest.Start(t, sshdtest.Options{AuthorizedKeys: []ssh.PublicKey{f.key.PublicKey()}})
	known := writeFile(t, t.TempDir(), "known_hosts", append(f.KnownHosts(), srv.KnownHostsLine()+"\n"...))
	sshd := remote.Hop{
		Name: "sshd", Address: srv.Host, Port: srv.Port, User: srv.User,
		IdentityFiles: []string{f.keyFile}, KnownHostsFiles: []string{known},
	}

	sshdBastion := f.target(1)
	sshdBastion.Jumps = []remote.Hop{sshd}
	sshdNode := remote.Target{
		Name: "sshd", Address: srv.Host, Port: srv.Port, User: srv.User,
		IdentityFiles: []string{f.keyFile}, KnownHostsFiles: []string{known},
		Jumps: []remote.Hop{f.hop(0)},
	}
	for _, tc := range []struct {
		name string
		tgt  remote.Target
	}{
		{"sshd as the bastion", sshdBastion},
		{"sshd behind the bastion", sshdNode},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := testDialer(remote.SSHOptions{})
			closeDialer(t, d)
			runEcho(t, dialOrFatal(t, d, tc.tgt), "via openssh")
		})
	}
}
