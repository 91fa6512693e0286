package sshfleet

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

func startFleet(t *testing.T, cfgs ...NodeConfig) (*Fleet, ssh.Signer) {
	t.Helper()
	signer, _, err := NewClientKey()
	if err != nil {
		t.Fatal(err)
	}
	for i := range cfgs {
		cfgs[i].AuthorizedKeys = append(cfgs[i].AuthorizedKeys, signer.PublicKey())
	}
	f, err := Start(t.Context(), cfgs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	})
	return f, signer
}

func dial(t *testing.T, n *Node, signer ssh.Signer, userName string) (*ssh.Client, error) {
	t.Helper()
	c, err := ssh.Dial("tcp", n.Addr, &ssh.ClientConfig{
		User:            userName,
		Auth:            []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.FixedHostKey(n.HostKey),
		Timeout:         5 * time.Second,
	})
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, nil
}

func mustDial(t *testing.T, n *Node, signer ssh.Signer) *ssh.Client {
	t.Helper()
	c, err := dial(t, n, signer, "tester")
	if err != nil {
		t.Fatalf("dial %s: %v", n.Addr, err)
	}
	return c
}

type result struct {
	stdout, stderr string
	err            error
}

// run runs command with a deadline, so a broken server fails the test
// instead of hanging it.
func run(t *testing.T, c *ssh.Client, command, stdin string, timeout time.Duration) (result, bool) {
	t.Helper()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatalf("new session: %v", err)
	}
	t.Cleanup(func() { _ = sess.Close() })
	var stdout, stderr lockedBuffer
	sess.Stdout, sess.Stderr = &stdout, &stderr
	sess.Stdin = strings.NewReader(stdin)
	done := make(chan error, 1)
	go func() { done <- sess.Run(command) }()
	select {
	case err := <-done:
		return result{stdout.String(), stderr.String(), err}, true
	case <-time.After(timeout):
		_ = sess.Close()
		return result{stdout.String(), stderr.String(), nil}, false
	}
}

func TestExec(t *testing.T) {
	dir := t.TempDir()
	f, signer := startFleet(t, NodeConfig{
		Name: "n1",
		User: "tester",
		Env:  []string{"FLEET_AUDIT_ROOT=/tmp/root x"},
		Dir:  dir,
	})
	c := mustDial(t, f.Nodes()[0], signer)

	tests := []struct {
		name, command, stdin string
		stdout, stderr       string
		exit                 int
	}{
		{name: "stdout", command: "echo hello", stdout: "hello\n"},
		{name: "stdin script", command: "/bin/sh -s", stdin: "echo from stdin\nexit 0\n", stdout: "from stdin\n"},
		{name: "exit status", command: "exit 3", exit: 3},
		{name: "stderr", command: "echo oops >&2", stderr: "oops\n"},
		{name: "env", command: `printf %s "$FLEET_AUDIT_ROOT"`, stdout: "/tmp/root x"},
		{name: "only configured env", command: `printf %s "${HOME-unset}"`, stdout: "unset"},
		{name: "default PATH", command: `printf %s "$PATH"`, stdout: "/usr/local/bin:/usr/bin:/bin"},
		{name: "dir", command: "pwd", stdout: dir + "\n"},
		{name: "killed by signal", command: "kill -TERM $$", exit: 128 + int(syscall.SIGTERM)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, ok := run(t, c, tt.command, tt.stdin, 10*time.Second)
			if !ok {
				t.Fatal("command did not finish within 10s")
			}
			exit := 0
			var exitErr *ssh.ExitError
			if errors.As(res.err, &exitErr) {
				exit = exitErr.ExitStatus()
			} else if res.err != nil {
				t.Fatalf("run: %v", res.err)
			}
			if res.stdout != tt.stdout || res.stderr != tt.stderr || exit != tt.exit {
				t.Errorf("got stdout %q stderr %q exit %d, want %q %q %d", res.stdout, res.stderr, exit, tt.stdout, tt.stderr, tt.exit)
			}
		})
	}
}

func TestOnlyExecIsServed(t *testing.T) {
	f, signer := startFleet(t, NodeConfig{Name: "n1"})
	c := mustDial(t, f.Nodes()[0], signer)

	tests := []struct {
		name string
		try  func(s *ssh.Session) error
	}{
		{"shell", func(s *ssh.Session) error { return s.Shell() }},
		{"pty", func(s *ssh.Session) error { return s.RequestPty("xterm", 24, 80, nil) }},
		{"subsystem", func(s *ssh.Session) error { return s.RequestSubsystem("sftp") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := c.NewSession()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := tt.try(s); err == nil {
				t.Errorf("%s request accepted, want rejected", tt.name)
			}
		})
	}
	if _, _, err := c.OpenChannel("direct-tcpip", nil); err == nil {
		t.Error("direct-tcpip channel accepted, want rejected")
	}
}

func TestAuth(t *testing.T) {
	f, signer := startFleet(t,
		NodeConfig{Name: "strict", User: "tester"},
		NodeConfig{Name: "reject", Fault: FaultRejectKey},
	)
	other, _, err := NewClientKey()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		node   int
		signer ssh.Signer
		user   string
		ok     bool
	}{
		{"authorized", 0, signer, "tester", true},
		{"wrong user", 0, signer, "root", false},
		{"unknown key", 0, other, "tester", false},
		{"reject-key fault", 1, signer, "tester", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			signer := tt.signer
			if signer == nil {
				signer = other
			}
			_, err := dial(t, f.Nodes()[tt.node], signer, tt.user)
			if (err == nil) != tt.ok {
				t.Errorf("dial error %v, want success %v", err, tt.ok)
			}
			if err != nil && !strings.Contains(err.Error(), "unable to authenticate") {
				t.Errorf("dial error %v, want an authentication failure", err)
			}
		})
	}
}

func TestFaults(t *testing.T) {
	const flood = 3<<20 + 17
	f, signer := startFleet(t,
		NodeConfig{Name: "refuse", Fault: FaultRefuse},
		NodeConfig{Name: "silent", Fault: FaultSilent},
		NodeConfig{Name: "flood", Fault: FaultFlood, FloodBytes: flood},
		NodeConfig{Name: "drop", Fault: FaultDropMidRun},
		NodeConfig{Name: "hang", Fault: FaultHang},
	)
	nodes := f.Nodes()

	t.Run("refuse", func(t *testing.T) {
		_, err := dial(t, nodes[0], signer, "tester")
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("dial error %v, want connection refused", err)
		}
	})
	t.Run("silent", func(t *testing.T) {
		raw, err := net.DialTimeout("tcp", nodes[1].Addr, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		// ClientConfig.Timeout would bound only the TCP dial, which
		// succeeds; the deadline is what ends the wait for a banner.
		_ = raw.SetDeadline(time.Now().Add(300 * time.Millisecond))
		_, _, _, err = ssh.NewClientConn(raw, nodes[1].Addr, &ssh.ClientConfig{
			User: "tester", Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
			HostKeyCallback: ssh.FixedHostKey(nodes[1].HostKey),
		})
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("handshake error %v, want the deadline to pass", err)
		}
	})
	t.Run("flood", func(t *testing.T) {
		res, ok := run(t, mustDial(t, nodes[2], signer), "ignored", "", 30*time.Second)
		if !ok || res.err != nil {
			t.Fatalf("finished %v, err %v", ok, res.err)
		}
		if len(res.stdout) != flood || strings.Trim(res.stdout, "x\n") != "" {
			t.Errorf("got %d bytes of flood, want %d of x lines", len(res.stdout), flood)
		}
	})
	t.Run("drop mid run", func(t *testing.T) {
		res, ok := run(t, mustDial(t, nodes[3], signer), "echo never", "", 10*time.Second)
		if !ok {
			t.Fatal("run did not end after the drop")
		}
		if res.err == nil || !strings.Contains(res.stdout, "partial output") {
			t.Errorf("got stdout %q err %v, want partial output and an error", res.stdout, res.err)
		}
	})
	t.Run("hang", func(t *testing.T) {
		c := mustDial(t, nodes[4], signer)
		if _, ok := run(t, c, "echo hi", "", 300*time.Millisecond); ok {
			t.Error("a hanging node finished a command")
		}
		answered := make(chan struct{})
		go func() {
			_, _, _ = c.SendRequest("keepalive@openssh.com", true, nil)
			close(answered)
		}()
		select {
		case <-answered:
			t.Error("a hanging node answered a keepalive")
		case <-time.After(300 * time.Millisecond):
		}
	})
}

func TestKeepAliveAnswered(t *testing.T) {
	f, signer := startFleet(t, NodeConfig{Name: "n1"})
	c := mustDial(t, f.Nodes()[0], signer)
	ok, _, err := c.SendRequest("keepalive@openssh.com", true, nil)
	if err != nil || !ok {
		t.Errorf("keepalive: ok %v err %v", ok, err)
	}
}

func TestKnownHosts(t *testing.T) {
	f, _ := startFleet(t,
		NodeConfig{Name: "a"},
		NodeConfig{Name: "refuse", Fault: FaultRefuse},
		NodeConfig{Name: "b", Fault: FaultHang},
	)
	path := t.TempDir() + "/known_hosts"
	if err := os.WriteFile(path, f.KnownHosts(), 0o600); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(f.KnownHosts())), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d known_hosts lines, want 2 (refusing node left out):\n%s", len(lines), f.KnownHosts())
	}
	cb, err := knownhosts.New(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []*Node{f.Nodes()[0], f.Nodes()[2]} {
		if !strings.HasPrefix(knownhosts.Normalize(n.Addr), "[127.0.0.1]:") {
			t.Errorf("node address %s is not on loopback", n.Addr)
		}
		if err := cb(n.Addr, addr(n.Addr), n.HostKey); err != nil {
			t.Errorf("node %s not in its own known_hosts: %v", n.Config.Name, err)
		}
	}
}

type addr string

func (a addr) Network() string { return "tcp" }
func (a addr) String() string  { return string(a) }

// TestSignalKillsGroup checks a signal reaches the command's children, not
// just the shell, since probes run pipelines.
func TestSignalKillsGroup(t *testing.T) {
	f, signer := startFleet(t, NodeConfig{Name: "n1"})
	c := mustDial(t, f.Nodes()[0], signer)
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	stdout, err := sess.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.Start("sleep 60 & echo $!; wait"); err != nil {
		t.Fatal(err)
	}
	pid := readPID(t, stdout)
	if err := sess.Signal(ssh.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
}

// TestCloseLeavesNothing checks Close kills a running command and returns
// every goroutine, even when the client never closed its session.
func TestCloseLeavesNothing(t *testing.T) {
	before := runtime.NumGoroutine()
	signer, _, err := NewClientKey()
	if err != nil {
		t.Fatal(err)
	}
	f, err := Start(context.Background(), []NodeConfig{
		{Name: "n1", AuthorizedKeys: []ssh.PublicKey{signer.PublicKey()}},
		{Name: "hang", Fault: FaultHang, AuthorizedKeys: []ssh.PublicKey{signer.PublicKey()}},
		{Name: "silent", Fault: FaultSilent},
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := ssh.Dial("tcp", f.Nodes()[0].Addr, &ssh.ClientConfig{
		User: "tester", Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.FixedHostKey(f.Nodes()[0].HostKey),
		Timeout:         5 * time.Second,
	})
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

	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
	_ = c.Close()

	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines after Close, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

func TestContextClosesFleet(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f, err := Start(ctx, []NodeConfig{{Name: "n1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", f.Nodes()[0].Addr, time.Second)
		if err != nil {
			return
		}
		_ = c.Close()
		time.Sleep(20 * time.Millisecond)
	}
	t.Error("fleet still listening 5s after its context was cancelled")
}

func readPID(t *testing.T, r interface{ Read([]byte) (int, error) }) int {
	t.Helper()
	buf := make([]byte, 64)
	var line []byte
	deadline := time.Now().Add(10 * time.Second)
	for !bytes.Contains(line, []byte("\n")) {
		if time.Now().After(deadline) {
			t.Fatal("no pid within 10s")
		}
		n, err := r.Read(buf)
		line = append(line, buf[:n]...)
		if err != nil {
			t.Fatalf("read pid: %v (got %q)", err, line)
		}
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(line)))
	if err != nil {
		t.Fatalf("parse pid %q: %v", line, err)
	}
	return pid
}

// waitGone waits for pid to be dead and reaped, or a zombie whose parent
// has not reaped it yet: either way it runs no more.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if !alive(pid) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("process %d still running 10s later", pid)
}

func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(fields) == 0 || fields[0] != "Z"
}

// lockedBuffer is written by the session's copier and read by the test.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestRefusedPortStaysRefused: a FaultRefuse node's port refuses
// connections, and no listener can be handed it while the fleet lives, so
// a test of "refused" can never reach another test's server on a reused
// port; closing the fleet gives the port back.
func TestRefusedPortStaysRefused(t *testing.T) {
	f, _ := startFleet(t, NodeConfig{Name: "refuse", Fault: FaultRefuse})
	addr := f.Nodes()[0].Addr
	if c, err := net.DialTimeout("tcp", addr, 2*time.Second); err == nil || !errors.Is(err, syscall.ECONNREFUSED) {
		if c != nil {
			_ = c.Close()
		}
		t.Fatalf("dial %s: %v, want connection refused", addr, err)
	}
	if ln, err := net.Listen("tcp", addr); err == nil {
		_ = ln.Close()
		t.Fatalf("another listener was given the refusing node's port %s", addr)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the port %s was not given back on Close: %v", addr, err)
	}
	_ = ln.Close()
}
