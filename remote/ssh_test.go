package remote_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/fleet-audit/fleet-audit/internal/sshfleet"
	"github.com/fleet-audit/fleet-audit/remote"
)

func newSigner(t *testing.T) ssh.Signer {
	t.Helper()
	s, _, err := sshfleet.NewClientKey()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var rsaKey = sync.OnceValues(func() (ssh.Signer, error) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	return ssh.NewSignerFromKey(k)
})

func newRSASigner(t *testing.T) ssh.Signer {
	t.Helper()
	s, err := rsaKey()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestHostKeyVerification(t *testing.T) {
	t.Parallel()
	rsaHost := newRSASigner(t)
	f := startFleet(t,
		sshfleet.NodeConfig{Name: "plain"},
		// Offers RSA as well; x/crypto prefers RSA over Ed25519 unless
		// told which algorithms known_hosts can verify.
		sshfleet.NodeConfig{Name: "multi-key", ExtraHostKeys: []ssh.Signer{rsaHost}},
	)
	plain, multi := f.Nodes()[0], f.Nodes()[1]
	line := func(n *sshfleet.Node, key ssh.PublicKey) string {
		return knownhosts.Line([]string{n.Addr}, key) + "\n"
	}
	stranger := newSigner(t).PublicKey()

	tests := []struct {
		name       string
		node       int
		knownHosts string // "" with noFile: the file does not exist
		noFile     bool
		wantErr    error
		wantInMsg  []string
	}{
		{
			name: "recorded key", node: 0,
			knownHosts: line(plain, plain.HostKey),
		},
		{
			name: "host not recorded", node: 0,
			knownHosts: line(multi, multi.HostKey),
			wantErr:    remote.ErrHostKeyUnknown,
			wantInMsg:  []string{ssh.FingerprintSHA256(plain.HostKey), fmt.Sprintf("ssh-keyscan -p %d 127.0.0.1 >> ", plain.Port)},
		},
		{
			name: "no known_hosts file", node: 0, noFile: true,
			wantErr:   remote.ErrHostKeyUnknown,
			wantInMsg: []string{"exists", ssh.FingerprintSHA256(plain.HostKey)},
		},
		{
			name: "changed key", node: 0,
			knownHosts: line(multi, multi.HostKey) + line(plain, stranger),
			wantErr:    remote.ErrHostKeyMismatch,
			wantInMsg:  []string{ssh.FingerprintSHA256(plain.HostKey), "known_hosts:2", ssh.FingerprintSHA256(stranger), "ssh-keygen -R '[127.0.0.1]:"},
		},
		{
			name: "revoked key", node: 0,
			knownHosts: "@revoked * " + string(ssh.MarshalAuthorizedKey(plain.HostKey)) + line(plain, plain.HostKey),
			wantErr:    remote.ErrHostKeyMismatch,
			wantInMsg:  []string{"@revoked", "known_hosts:1"},
		},
		{
			name: "rsa and ed25519 recorded", node: 0,
			knownHosts: line(plain, rsaHost.PublicKey()) + line(plain, plain.HostKey),
		},
		{
			name: "only ed25519 recorded, server prefers rsa", node: 1,
			knownHosts: line(multi, multi.HostKey),
		},
		{
			name: "only rsa recorded", node: 1,
			knownHosts: line(multi, rsaHost.PublicKey()),
		},
		{
			name: "only another key type recorded", node: 0,
			knownHosts: line(plain, rsaHost.PublicKey()),
			wantErr:    remote.ErrHostKeyMismatch,
			wantInMsg:  []string{"known_hosts:1", "ssh-rsa", "ssh-keygen -R"},
		},
		{
			name: "hashed entry", node: 0,
			knownHosts: knownhosts.HashHostname(knownhosts.Normalize(plain.Addr)) + " " + string(ssh.MarshalAuthorizedKey(plain.HostKey)),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tgt := f.target(tt.node)
			path := filepath.Join(t.TempDir(), "known_hosts")
			if !tt.noFile {
				writeFile(t, filepath.Dir(path), "known_hosts", []byte(tt.knownHosts))
			}
			tgt.KnownHostsFiles = []string{path}
			c, err := testDialer(remote.SSHOptions{}).Dial(t.Context(), tgt)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("dial: %v", err)
				}
				defer c.Close()
				out, err := c.Run(t.Context(), remote.Script{Stdin: []byte("echo ok\n"), Timeout: 10 * time.Second})
				if err != nil || string(out.Stdout) != "ok\n" {
					t.Errorf("run: stdout %q err %v", out.Stdout, err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("dial error %v, want %v", err, tt.wantErr)
			}
			t.Logf("dial error: %v", err)
			for _, s := range tt.wantInMsg {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
		})
	}
}

func TestDialFailures(t *testing.T) {
	t.Parallel()
	f := startFleet(t,
		sshfleet.NodeConfig{Name: "refuse", Fault: sshfleet.FaultRefuse},
		sshfleet.NodeConfig{Name: "silent", Fault: sshfleet.FaultSilent},
		sshfleet.NodeConfig{Name: "reject", Fault: sshfleet.FaultRejectKey},
		sshfleet.NodeConfig{Name: "ok", User: "tester"},
	)
	dir := t.TempDir()
	encPEM := encryptedKey(t)
	encrypted := writeFile(t, dir, "id_encrypted", encPEM)
	missing := filepath.Join(dir, "id_missing")
	const connectTimeout = 500 * time.Millisecond

	tests := []struct {
		name      string
		node      int
		edit      func(*remote.Target)
		wantErr   error
		wantInMsg []string
	}{
		{name: "refused", node: 0, wantErr: remote.ErrUnreachable, wantInMsg: []string{"connection refused"}},
		{name: "silent", node: 1, wantErr: remote.ErrConnectTimeout, wantInMsg: []string{"no SSH handshake"}},
		{
			name: "key rejected", node: 2,
			edit:      func(tg *remote.Target) { tg.IdentityFiles = []string{encrypted, f.keyFile} },
			wantErr:   remote.ErrAuthFailed,
			wantInMsg: []string{`"tester"`, f.keyFile, ssh.FingerprintSHA256(f.key.PublicKey()), encrypted + ": passphrase-protected"},
		},
		{
			name: "wrong user", node: 3,
			edit:    func(tg *remote.Target) { tg.User = "intruder" },
			wantErr: remote.ErrAuthFailed,
		},
		{
			name: "passphrase key skipped", node: 3,
			edit: func(tg *remote.Target) { tg.IdentityFiles = []string{encrypted, missing, f.keyFile} },
		},
		{
			name: "no usable key", node: 3,
			edit:      func(tg *remote.Target) { tg.IdentityFiles = []string{encrypted, missing} },
			wantErr:   remote.ErrAuthFailed,
			wantInMsg: []string{"no usable key", "passphrase-protected", missing + ": no such file"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tgt := f.target(tt.node)
			if tt.edit != nil {
				tt.edit(&tgt)
			}
			start := time.Now()
			c, err := testDialer(remote.SSHOptions{ConnectTimeout: connectTimeout}).Dial(t.Context(), tgt)
			if elapsed := time.Since(start); elapsed > connectTimeout+2*time.Second {
				t.Errorf("dial took %s, want within the %s connect timeout", elapsed, connectTimeout)
			}
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("dial: %v", err)
				}
				_ = c.Close()
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("dial error %v, want %v", err, tt.wantErr)
			}
			t.Logf("dial error: %v", err)
			if strings.Contains(err.Error(), "PRIVATE KEY") {
				t.Errorf("error leaks key material: %v", err)
			}
			for _, s := range tt.wantInMsg {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
		})
	}
}

func TestDialHonoursContext(t *testing.T) {
	t.Parallel()
	f := startFleet(t, sshfleet.NodeConfig{Name: "silent", Fault: sshfleet.FaultSilent})
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	_, err := testDialer(remote.SSHOptions{ConnectTimeout: 30 * time.Second}).Dial(ctx, f.target(0))
	if !errors.Is(err, context.Canceled) || !errors.Is(err, remote.ErrConnectTimeout) {
		t.Errorf("dial error %v, want ErrConnectTimeout and context.Canceled", err)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("dial took %s after cancel", elapsed)
	}
}

func encryptedKey(t *testing.T) []byte {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKeyWithPassphrase(priv, "", []byte("secret"))
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(block)
}

func TestRunFaults(t *testing.T) {
	t.Parallel()
	f := startFleet(t,
		sshfleet.NodeConfig{Name: "drop", Fault: sshfleet.FaultDropMidRun},
		sshfleet.NodeConfig{Name: "flood", Fault: sshfleet.FaultFlood, FloodBytes: 50 << 20},
		sshfleet.NodeConfig{Name: "hang", Fault: sshfleet.FaultHang},
	)
	const maxOutput = 1 << 20

	tests := []struct {
		name      string
		node      int
		timeout   time.Duration
		keepAlive time.Duration
		wantErr   error
		check     func(t *testing.T, out remote.Output)
	}{
		{
			name: "dropped mid run", node: 0, timeout: 10 * time.Second,
			wantErr: remote.ErrConnectionLost,
			check: func(t *testing.T, out remote.Output) {
				if !strings.Contains(string(out.Stdout), "partial output") {
					t.Errorf("stdout %q, want the output before the drop", out.Stdout)
				}
			},
		},
		{
			name: "flood", node: 1, timeout: 30 * time.Second,
			wantErr: remote.ErrOutputTruncated,
			check: func(t *testing.T, out remote.Output) {
				if len(out.Stdout) != maxOutput || !out.Truncated {
					t.Errorf("kept %d bytes, truncated %v; want %d, true", len(out.Stdout), out.Truncated, maxOutput)
				}
			},
		},
		{name: "hang", node: 2, timeout: 500 * time.Millisecond, wantErr: remote.ErrRunTimeout},
		{
			// The hanging node answers no keepalive either, so the
			// connection is declared dead long before the run timeout.
			name: "keepalives unanswered", node: 2, timeout: 30 * time.Second, keepAlive: 100 * time.Millisecond,
			wantErr: remote.ErrConnectionLost,
			check: func(t *testing.T, out remote.Output) {
				if out.Duration > 10*time.Second {
					t.Errorf("run took %s, want the keepalives to end it", out.Duration)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := dialOrFatal(t, testDialer(remote.SSHOptions{KeepAliveInterval: tt.keepAlive}), f.target(tt.node))
			start := time.Now()
			out, err := c.Run(t.Context(), remote.Script{Stdin: []byte("echo hi\n"), Timeout: tt.timeout, MaxOutput: maxOutput})
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("run error %v, want %v", err, tt.wantErr)
			}
			t.Logf("run error: %v", err)
			if elapsed := time.Since(start); elapsed > tt.timeout+15*time.Second {
				t.Errorf("run took %s", elapsed)
			}
			if out.ExitCode != -1 {
				t.Errorf("exit code %d after %v, want -1", out.ExitCode, err)
			}
			if tt.check != nil {
				tt.check(t, out)
			}
		})
	}
}

func TestKeepAliveAnswered(t *testing.T) {
	t.Parallel()
	f := startFleet(t, sshfleet.NodeConfig{Name: "ok"})
	// 250ms, eight keepalives while the script sleeps: at 20ms, three
	// unanswered in a row (60ms) happened on a loaded CI machine.
	c := dialOrFatal(t, testDialer(remote.SSHOptions{KeepAliveInterval: 250 * time.Millisecond}), f.target(0))
	out, err := c.Run(t.Context(), remote.Script{Stdin: []byte("sleep 2; echo alive\n"), Timeout: 10 * time.Second})
	if err != nil || string(out.Stdout) != "alive\n" {
		t.Errorf("run with fast keepalives: stdout %q err %v", out.Stdout, err)
	}
}

func TestAgentAuth(t *testing.T) {
	t.Parallel()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	keyring := agent.NewKeyring()
	if err := keyring.Add(agent.AddedKey{PrivateKey: priv, Comment: "test agent key"}); err != nil {
		t.Fatal(err)
	}
	agentKey, err := ssh.NewPublicKey(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	sock := serveAgent(t, keyring)
	emptySock := serveAgent(t, agent.NewKeyring())
	f := startFleet(t, sshfleet.NodeConfig{Name: "ok", AuthorizedKeys: []ssh.PublicKey{agentKey}})

	tests := []struct {
		name      string
		socket    string
		files     []string
		wantErr   error
		wantInMsg []string
	}{
		{name: "agent key", socket: sock},
		{name: "agent then file", socket: emptySock, files: []string{f.keyFile}},
		{name: "empty agent", socket: emptySock, wantErr: remote.ErrAuthFailed, wantInMsg: []string{"holds no keys"}},
		{name: "dead agent socket", socket: filepath.Join(filepath.Dir(sock), "nothing.sock"), wantErr: remote.ErrAuthFailed, wantInMsg: []string{"no usable key", "ssh-agent"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tgt := f.target(0)
			tgt.IdentityFiles = tt.files
			c, err := testDialer(remote.SSHOptions{AgentSocket: tt.socket}).Dial(t.Context(), tgt)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("dial: %v", err)
				}
				_ = c.Close()
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("dial error %v, want %v", err, tt.wantErr)
			}
			t.Logf("dial error: %v", err)
			for _, s := range tt.wantInMsg {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
		})
	}
}

// serveAgent serves an agent on a unix socket until the test ends. The
// socket is in a short directory: socket paths are limited to 108 bytes.
func serveAgent(t *testing.T, a agent.Agent) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "fa-agent-")
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "agent.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				_ = agent.ServeAgent(a, c)
			}()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		// Each dial closes its agent connection when it ends.
		done := make(chan struct{})
		go func() {
			wg.Wait()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("agent connections still open 5s after the test")
		}
		_ = os.RemoveAll(dir)
	})
	return sock
}

// TestCloseLeavesNoGoroutines is not parallel, so the goroutine count is
// this test's own.
func TestCloseLeavesNoGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	func() {
		f := newFleetForLeakTest(t)
		defer f.Close()
		d := testDialer(remote.SSHOptions{KeepAliveInterval: 10 * time.Millisecond})
		for i := range f.Nodes() {
			c, err := d.Dial(context.Background(), f.target(i))
			if err != nil {
				t.Fatal(err)
			}
			_, _ = c.Run(context.Background(), remote.Script{Stdin: []byte("echo hi; sleep 5\n"), Timeout: 300 * time.Millisecond})
			_, _ = c.Run(context.Background(), remote.Script{Stdin: []byte("yes\n"), MaxOutput: 1 << 10, Timeout: 5 * time.Second})
			if err := c.Close(); err != nil {
				t.Error(err)
			}
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

// newFleetForLeakTest is startFleet without t.Context, whose cleanup would
// run after the goroutine count is taken.
func newFleetForLeakTest(t *testing.T) *testFleet {
	t.Helper()
	key, pemBytes, err := sshfleet.NewClientKey()
	if err != nil {
		t.Fatal(err)
	}
	auth := []ssh.PublicKey{key.PublicKey()}
	f, err := sshfleet.Start(context.Background(), []sshfleet.NodeConfig{
		{Name: "ok", AuthorizedKeys: auth},
		{Name: "hang", Fault: sshfleet.FaultHang, AuthorizedKeys: auth},
	})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	return &testFleet{
		Fleet:      f,
		key:        key,
		keyFile:    writeFile(t, dir, "id_ed25519", pemBytes),
		knownHosts: writeFile(t, dir, "known_hosts", f.KnownHosts()),
	}
}
