package sshfleet

import (
	"context"
	"errors"
	"net"
	"runtime"
	"strconv"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// through opens an SSH connection to n tunnelled through the bastion client.
func through(t *testing.T, bastion *ssh.Client, n *Node, signer ssh.Signer) (*ssh.Client, error) {
	t.Helper()
	raw, err := bastion.Dial("tcp", n.Addr)
	if err != nil {
		return nil, err
	}
	// A tunnel has no deadlines; closing it is what bounds a stall.
	stop := time.AfterFunc(5*time.Second, func() { _ = raw.Close() })
	defer stop.Stop()
	sc, chans, reqs, err := ssh.NewClientConn(raw, n.Addr, &ssh.ClientConfig{
		User: "tester", Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.FixedHostKey(n.HostKey),
	})
	if err != nil {
		_ = raw.Close()
		return nil, err
	}
	c := ssh.NewClient(sc, chans, reqs)
	t.Cleanup(func() { _ = c.Close() })
	return c, nil
}

func TestBastionForwards(t *testing.T) {
	f, signer := startFleet(t,
		NodeConfig{Name: "bastion", Bastion: true},
		NodeConfig{Name: "n1"},
		NodeConfig{Name: "refuse", Fault: FaultRefuse},
	)
	bastion, n1, refuse := f.Nodes()[0], f.Nodes()[1], f.Nodes()[2]
	b := mustDial(t, bastion, signer)

	c, err := through(t, b, n1, signer)
	if err != nil {
		t.Fatalf("through the bastion: %v", err)
	}
	res, ok := run(t, c, "echo tunnelled", "", 10*time.Second)
	if !ok || res.err != nil || res.stdout != "tunnelled\n" {
		t.Errorf("run through the bastion: %+v finished %v", res, ok)
	}

	tests := []struct {
		name   string
		dest   string
		reason ssh.RejectionReason
	}{
		{"closed port", refuse.Addr, ssh.ConnectionFailed},
		// Loopback, so a bastion that wrongly forwarded could reach
		// nothing beyond this machine.
		{"other loopback address", net.JoinHostPort("127.0.0.2", strconv.Itoa(n1.Port)), ssh.Prohibited},
		{"host name", net.JoinHostPort("localhost", strconv.Itoa(n1.Port)), ssh.Prohibited},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := b.Dial("tcp", tt.dest)
			if err == nil {
				_ = conn.Close()
				t.Fatalf("forward to %s accepted", tt.dest)
			}
			var oce *ssh.OpenChannelError
			if !errors.As(err, &oce) || oce.Reason != tt.reason {
				t.Errorf("forward to %s: %v, want rejection %v", tt.dest, err, tt.reason)
			}
		})
	}
	if got, want := bastion.Forwards(), 1+len(tests); got != want {
		t.Errorf("bastion counted %d forwards, want %d", got, want)
	}
	if got := bastion.Accepted(); got != 1 {
		t.Errorf("bastion accepted %d connections, want 1", got)
	}

	// Negative control: a node that is no bastion forwards nothing.
	if _, err := through(t, mustDial(t, n1, signer), n1, signer); err == nil {
		t.Error("a node without Bastion forwarded a connection")
	}
	if got := n1.Forwards(); got != 0 {
		t.Errorf("non-bastion counted %d forwards", got)
	}
}

func TestDropHandshake(t *testing.T) {
	f, signer := startFleet(t,
		NodeConfig{Name: "drop2", Fault: FaultDropHandshake, DropFirst: 2},
		NodeConfig{Name: "drop-default", Fault: FaultDropHandshake},
	)
	tests := []struct {
		node  *Node
		drops int
	}{
		{f.Nodes()[0], 2},
		{f.Nodes()[1], 1},
	}
	for _, tt := range tests {
		t.Run(tt.node.Config.Name, func(t *testing.T) {
			for i := range tt.drops {
				if _, err := dial(t, tt.node, signer, "tester"); err == nil {
					t.Fatalf("connection %d was served, want dropped", i+1)
				}
			}
			mustDial(t, tt.node, signer)
			if got := tt.node.Accepted(); got != tt.drops+1 {
				t.Errorf("accepted %d, want %d", got, tt.drops+1)
			}
		})
	}
}

func TestDropConnections(t *testing.T) {
	f, signer := startFleet(t, NodeConfig{Name: "bastion", Bastion: true}, NodeConfig{Name: "n1"})
	bastion, n1 := f.Nodes()[0], f.Nodes()[1]
	b := mustDial(t, bastion, signer)
	c, err := through(t, b, n1, signer)
	if err != nil {
		t.Fatal(err)
	}
	// The client's connection and the forward to n1.
	if got := bastion.DropConnections(); got != 2 {
		t.Errorf("dropped %d connections, want 2", got)
	}
	waitClosed := func(name string, c *ssh.Client) {
		done := make(chan struct{})
		go func() {
			_ = c.Wait()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Errorf("%s still open 5s after the drop", name)
		}
	}
	waitClosed("bastion connection", b)
	waitClosed("tunnelled connection", c)
	// The node keeps listening.
	mustDial(t, bastion, signer)
}

// TestCloseWithForwards: Close ends tunnels in use, and everything behind
// them.
func TestCloseWithForwards(t *testing.T) {
	before := runtime.NumGoroutine()
	signer, _, err := NewClientKey()
	if err != nil {
		t.Fatal(err)
	}
	keys := []ssh.PublicKey{signer.PublicKey()}
	f, err := Start(context.Background(), []NodeConfig{
		{Name: "bastion", Bastion: true, AuthorizedKeys: keys},
		{Name: "n1", AuthorizedKeys: keys},
		{Name: "silent", Fault: FaultSilent},
	})
	if err != nil {
		t.Fatal(err)
	}
	bastion, n1, silent := f.Nodes()[0], f.Nodes()[1], f.Nodes()[2]
	b, err := ssh.Dial("tcp", bastion.Addr, &ssh.ClientConfig{
		User: "tester", Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.FixedHostKey(bastion.HostKey), Timeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := through(t, b, n1, signer)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := sess.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.Start("echo $$; exec sleep 60"); err != nil {
		t.Fatal(err)
	}
	pid := readPID(t, stdout)
	// A forward to a node that never speaks stays open until Close.
	quiet, err := b.Dial("tcp", silent.Addr)
	if err != nil {
		t.Fatal(err)
	}

	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
	_ = quiet.Close()
	_ = c.Close()
	_ = b.Close()

	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines after Close, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}
