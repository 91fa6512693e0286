package sshdtest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

func clientKey(t *testing.T) ssh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// run logs in through the server's known_hosts line, so the host key the
// server reports is the one sshd really uses.
func run(t *testing.T, srv *Server, key ssh.Signer, command string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(path, []byte(srv.KnownHostsLine()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cb, err := knownhosts.New(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ssh.Dial("tcp", srv.Addr, &ssh.ClientConfig{
		User:              srv.User,
		Auth:              []ssh.AuthMethod{ssh.PublicKeys(key)},
		HostKeyCallback:   cb,
		HostKeyAlgorithms: hostKeyAlgorithms(srv.HostKey),
		Timeout:           5 * time.Second,
	})
	if err != nil {
		t.Fatalf("dial sshd: %v", err)
	}
	defer c.Close()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	done := make(chan struct{})
	var out []byte
	go func() {
		defer close(done)
		out, err = sess.CombinedOutput(command)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%q did not finish within 10s", command)
	}
	if err != nil {
		t.Fatalf("run %q: %v (output %q)", command, err, out)
	}
	return string(out)
}

func hostKeyAlgorithms(k ssh.PublicKey) []string {
	if k.Type() == ssh.KeyAlgoRSA {
		return []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256}
	}
	return []string{k.Type()}
}

func TestStart(t *testing.T) {
	key := clientKey(t)
	srv := Start(t, Options{
		Env:            map[string]string{"FLEET_AUDIT_ROOT": "/tmp/with space", "SECOND": "2"},
		AuthorizedKeys: []ssh.PublicKey{key.PublicKey()},
	})
	if srv.Host != "127.0.0.1" || srv.PID <= 0 || !strings.HasSuffix(srv.Addr, ":"+strconv.Itoa(srv.Port)) {
		t.Errorf("server %+v: want a loopback address and a pid", srv)
	}
	if log, _ := os.ReadFile(srv.LogFile); len(log) > 0 {
		t.Errorf("sshd logged errors:\n%s", log)
	}
	if got := run(t, srv, key, `printf '%s|%s' "$FLEET_AUDIT_ROOT" "$SECOND"`); got != "/tmp/with space|2" {
		t.Errorf("SetEnv: got %q", got)
	}
}

func TestStartWithHostKey(t *testing.T) {
	_, edPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rsaPriv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		key  any
	}{
		{"ed25519", edPriv},
		{"rsa", rsaPriv},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hostKey, err := ssh.NewSignerFromKey(tt.key)
			if err != nil {
				t.Fatal(err)
			}
			key := clientKey(t)
			srv := Start(t, Options{AuthorizedKeys: []ssh.PublicKey{key.PublicKey()}, HostKey: hostKey})
			if !bytes.Equal(srv.HostKey.Marshal(), hostKey.PublicKey().Marshal()) {
				t.Fatal("server reports a different host key than given")
			}
			if got := run(t, srv, key, "echo ok"); got != "ok\n" {
				t.Errorf("got %q", got)
			}
		})
	}
}

func TestCleanupStopsSSHD(t *testing.T) {
	var pid int
	t.Run("server", func(t *testing.T) {
		pid = Start(t, Options{}).PID
	})
	if pid == 0 {
		t.Skip("sshd did not start")
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("sshd pid %d still exists after the test's cleanup (kill: %v)", pid, err)
	}
}

func TestSetEnvLine(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    string
		wantErr bool
	}{
		{name: "none", env: nil, want: ""},
		{name: "sorted and quoted", env: map[string]string{"B": "x y", "A": "1"}, want: `SetEnv "A=1" "B=x y"`},
		{name: "quote in value", env: map[string]string{"A": `a"b`}, wantErr: true},
		{name: "backslash in value", env: map[string]string{"A": `a\b`}, wantErr: true},
		{name: "newline in value", env: map[string]string{"A": "a\nb"}, wantErr: true},
		{name: "bad name", env: map[string]string{"A=B": "x"}, wantErr: true},
		{name: "empty name", env: map[string]string{"": "x"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := setEnvLine(tt.env)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("setEnvLine = %q, %v; want %q, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}
