package remote_test

import (
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/fleet-audit/fleet-audit/internal/sshdtest"
	"github.com/fleet-audit/fleet-audit/internal/sshfleet"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/remote"
)

// netcatEnv makes the test binary a netcat: started with it set to
// host:port, it connects there and copies stdin to the connection and the
// connection to stdout, which is what `nc HOST PORT` or `ssh -W` do as a
// ProxyCommand.
const netcatEnv = "FLEET_AUDIT_TEST_NETCAT"

func TestMain(m *testing.M) {
	if addr := os.Getenv(netcatEnv); addr != "" {
		os.Exit(netcat(addr))
	}
	os.Exit(m.Run())
}

func netcat(addr string) int {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		os.Stderr.WriteString("netcat: " + err.Error() + "\n")
		return 1
	}
	go func() {
		_, _ = io.Copy(conn, os.Stdin)
		_ = conn.(*net.TCPConn).CloseWrite()
	}()
	_, _ = io.Copy(os.Stdout, conn)
	return 0
}

// netcatCommand is a ProxyCommand that reaches node i of f, first writing
// its own pid to pidFile so a test can check that it was ended. It is one
// sh -c because ssh runs "exec COMMAND": only the first command of a list
// would run.
func netcatCommand(t *testing.T, f *testFleet, i int, pidFile string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	n := f.Nodes()[i]
	return proxyScript("echo $$ > " + pidFile + "; exec env " + netcatEnv + "=" + net.JoinHostPort(n.Host, strconv.Itoa(n.Port)) + " " + self)
}

// proxyScript is a ProxyCommand running script in one shell (see
// netcatCommand); script must hold no single quote.
func proxyScript(script string) string {
	return "sh -c '" + script + "'"
}

// gone reports whether the process whose pid is in pidFile no longer
// exists (a zombie would still answer signal 0: it must be reaped too).
func gone(t *testing.T, pidFile string) bool {
	t.Helper()
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the ProxyCommand never ran: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// TestProxyCommand dials through a ProxyCommand as ssh does
// (sshconnect.c ssh_proxy_connect: the SSH stream on the command's stdin
// and stdout, "exec COMMAND" run by the shell): the node is reached, its
// host key is checked against its own address, the proxy's failures are
// reported with what it printed on stderr and are not retried, and no
// proxy outlives its connection.
func TestProxyCommand(t *testing.T) {
	t.Parallel()
	f := startFleet(t, sshfleet.NodeConfig{Name: "node"}, sshfleet.NodeConfig{Name: "other"})
	dir := t.TempDir()

	t.Run("reaches the node and ends with the connection", func(t *testing.T) {
		pidFile := filepath.Join(dir, "ok.pid")
		tgt := f.target(0)
		tgt.ProxyCommand = netcatCommand(t, f, 0, pidFile)
		d := testDialer(remote.SSHOptions{})
		closeDialer(t, d)
		c, err := dialWithin(t, d, tgt, 10*time.Second)
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		runEcho(t, c, "through-the-proxy")
		if gone(t, pidFile) {
			t.Fatal("the proxy ended while its connection was open")
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if !gone(t, pidFile) {
			t.Error("the proxy is still there (or unreaped) after Close")
		}
	})

	t.Run("host key is the target's, not the proxy's", func(t *testing.T) {
		tgt := f.target(0)
		// The proxy leads to the other node, whose key known_hosts
		// lists under another address.
		tgt.ProxyCommand = netcatCommand(t, f, 1, filepath.Join(dir, "mismatch.pid"))
		d := testDialer(remote.SSHOptions{})
		closeDialer(t, d)
		_, err := dialWithin(t, d, tgt, 10*time.Second)
		if !errors.Is(err, remote.ErrHostKeyMismatch) {
			t.Fatalf("err = %v, want ErrHostKeyMismatch", err)
		}
	})

	t.Run("a failing proxy is reported with its stderr, once", func(t *testing.T) {
		runs := filepath.Join(dir, "runs")
		tgt := f.target(0)
		tgt.ProxyCommand = proxyScript("echo run >> " + runs + "; echo channel 0: open failed: connect failed: Connection refused >&2; exit 255")
		d := testDialer(remote.SSHOptions{Retries: 3})
		closeDialer(t, d)
		_, err := dialWithin(t, d, tgt, 10*time.Second)
		if !errors.Is(err, remote.ErrUnreachable) {
			t.Fatalf("err = %v, want ErrUnreachable", err)
		}
		for _, want := range []string{"via ProxyCommand", "ProxyCommand exited with status 255", "connect failed: Connection refused"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("err = %v, want it to say %q", err, want)
			}
		}
		if data, _ := os.ReadFile(runs); strings.Count(string(data), "run") != 1 {
			t.Errorf("the proxy ran %d times, want once: its failure is not the transient drop retries are for", strings.Count(string(data), "run"))
		}
	})

	t.Run("a silent proxy ends at the connect timeout", func(t *testing.T) {
		pidFile := filepath.Join(dir, "hang.pid")
		tgt := f.target(0)
		tgt.ProxyCommand = proxyScript("echo $$ > " + pidFile + "; echo waiting for approval >&2; exec sleep 60")
		tgt.ConnectTimeout = 500 * time.Millisecond
		d := testDialer(remote.SSHOptions{})
		closeDialer(t, d)
		_, err := dialWithin(t, d, tgt, 10*time.Second)
		if !errors.Is(err, remote.ErrConnectTimeout) || !strings.Contains(err.Error(), "waiting for approval") {
			t.Fatalf("err = %v, want ErrConnectTimeout saying what the proxy printed", err)
		}
		if !gone(t, pidFile) {
			t.Error("the proxy outlived the dial it timed out")
		}
	})

	t.Run("a command that cannot run", func(t *testing.T) {
		tgt := f.target(0)
		tgt.ProxyCommand = "/nonexistent/proxy %h"
		d := testDialer(remote.SSHOptions{})
		closeDialer(t, d)
		_, err := dialWithin(t, d, tgt, 10*time.Second)
		if !errors.Is(err, remote.ErrUnreachable) || !strings.Contains(err.Error(), "status 127") {
			t.Fatalf("err = %v, want ErrUnreachable with the shell's status 127", err)
		}
	})
}

// TestProxyCommandToFirstHop reaches a bastion through a ProxyCommand (as
// an SSM or Teleport bastion is) and the node through the bastion.
func TestProxyCommandToFirstHop(t *testing.T) {
	t.Parallel()
	f := startFleet(t, sshfleet.NodeConfig{Name: "bastion", Bastion: true}, sshfleet.NodeConfig{Name: "node"})
	pidFile := filepath.Join(t.TempDir(), "hop.pid")
	tgt := f.behind(1, 0)
	tgt.Jumps[0].ProxyCommand = netcatCommand(t, f, 0, pidFile)
	d := testDialer(remote.SSHOptions{})
	c, err := dialWithin(t, d, tgt, 10*time.Second)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	runEcho(t, c, "behind-the-bastion")
	_ = c.Close()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if !gone(t, pidFile) {
		t.Error("the bastion's proxy is still there after the dialer closed")
	}
}

// TestProxyCommandThroughOpenSSH is the ProxyCommand bastions most often
// are: OpenSSH's own client forwarding stdio with -W through a real sshd,
// with options of its own (so it is run, not turned into a ProxyJump).
func TestProxyCommandThroughOpenSSH(t *testing.T) {
	t.Parallel()
	sshBin := testtools.Find(t, "ssh")
	f := startFleet(t, sshfleet.NodeConfig{Name: "node"})
	srv := sshdtest.Start(t, sshdtest.Options{AuthorizedKeys: []ssh.PublicKey{f.key.PublicKey()}})
	bastionKnown := writeFile(t, t.TempDir(), "bastion_known_hosts", []byte(srv.KnownHostsLine()+"\n"))
	n := f.Nodes()[0]
	tgt := f.target(0)
	tgt.ProxyCommand = strings.Join([]string{sshBin, "-F", "none", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
		"-o", "UserKnownHostsFile=" + bastionKnown, "-i", f.keyFile, "-p", strconv.Itoa(srv.Port),
		"-W", net.JoinHostPort(n.Host, strconv.Itoa(n.Port)), srv.User + "@" + srv.Host}, " ")
	d := testDialer(remote.SSHOptions{})
	closeDialer(t, d)
	c, err := dialWithin(t, d, tgt, 15*time.Second)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	runEcho(t, c, "through-openssh")

	// The bastion refusing to forward (the node's port is closed) is the
	// node's error, with ssh's own words.
	closed := f.target(0)
	closed.ProxyCommand = strings.Replace(tgt.ProxyCommand, "-W "+net.JoinHostPort(n.Host, strconv.Itoa(n.Port)), "-W 127.0.0.1:1", 1)
	_, err = dialWithin(t, d, closed, 15*time.Second)
	if !errors.Is(err, remote.ErrUnreachable) || !strings.Contains(err.Error(), "ProxyCommand exited with status 255") || !strings.Contains(err.Error(), "open failed") {
		t.Errorf("err = %v, want ErrUnreachable with ssh's exit status and its stdio forwarding error", err)
	}
}
