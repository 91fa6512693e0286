package remote

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/fleet-audit/fleet-audit/internal/sshfleet"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
)

func newTestSigner(t *testing.T) ssh.Signer {
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

// hostCert certifies key as a host key for principals, signed by ca.
func hostCert(t *testing.T, key ssh.PublicKey, ca ssh.Signer, principals []string, validBefore uint64) *ssh.Certificate {
	t.Helper()
	c := &ssh.Certificate{
		Key:             key,
		CertType:        ssh.HostCert,
		KeyId:           "test host",
		ValidPrincipals: principals,
		ValidBefore:     validBefore,
	}
	if err := c.SignCert(rand.Reader, ca); err != nil {
		t.Fatal(err)
	}
	return c
}

func authorizedLine(k ssh.PublicKey) string { return string(ssh.MarshalAuthorizedKey(k)) }

func writeKnownHosts(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestKnownHostsEntries checks each kind of known_hosts line against keys
// and host certificates offered by a server at addr.
func TestKnownHostsEntries(t *testing.T) {
	t.Parallel()
	const addr = "127.0.0.1:2222"
	host, other, ca, otherCA := newTestSigner(t), newTestSigner(t), newTestSigner(t), newTestSigner(t)
	hostPub := host.PublicKey()
	plainLine := func(k ssh.PublicKey) string { return knownhosts.Line([]string{addr}, k) + "\n" }
	caLine := func(pattern string, k ssh.PublicKey) string {
		return "@cert-authority " + pattern + " " + authorizedLine(k)
	}
	inf := uint64(ssh.CertTimeInfinity)
	good := hostCert(t, hostPub, ca, []string{"127.0.0.1"}, inf)
	byOtherCA := hostCert(t, hostPub, otherCA, []string{"127.0.0.1"}, inf)
	expired := hostCert(t, hostPub, ca, []string{"127.0.0.1"}, uint64(time.Now().Add(-time.Hour).Unix()))
	wrongName := hostCert(t, hostPub, ca, []string{"10.9.9.9"}, inf)
	hashedCA := "@cert-authority " + knownhosts.HashHostname(knownhosts.Normalize(addr)) + " " + authorizedLine(ca.PublicKey())

	tests := []struct {
		name    string
		files   []string // contents, one file each
		offered ssh.PublicKey
		wantErr error
		wantMsg []string
	}{
		{name: "plain entry", files: []string{plainLine(hostPub)}, offered: hostPub},
		{name: "hashed entry", files: []string{knownhosts.HashHostname(knownhosts.Normalize(addr)) + " " + authorizedLine(hostPub)}, offered: hostPub},
		{name: "hashed entry, other key", files: []string{"# comment\n" + knownhosts.HashHostname(knownhosts.Normalize(addr)) + " " + authorizedLine(other.PublicKey())},
			offered: hostPub, wantErr: ErrHostKeyMismatch, wantMsg: []string{"kh0:2", ssh.FingerprintSHA256(other.PublicKey())}},
		{name: "entry in the second file", files: []string{"", plainLine(hostPub)}, offered: hostPub},
		{name: "cert-authority", files: []string{caLine("[127.0.0.1]:2222", ca.PublicKey())}, offered: good},
		{name: "cert-authority, wildcard pattern", files: []string{caLine("[127.0.0.*]:2222", ca.PublicKey())}, offered: good},
		{name: "cert-authority, hashed pattern", files: []string{hashedCA}, offered: good},
		{name: "cert-authority for another port", files: []string{caLine("127.0.0.1", ca.PublicKey())}, offered: good,
			wantErr: ErrHostKeyUnknown, wantMsg: []string{ssh.FingerprintSHA256(hostPub), "ssh-keyscan -p 2222"}},
		{name: "certificate by an untrusted authority", files: []string{caLine("[127.0.0.1]:2222", ca.PublicKey())}, offered: byOtherCA,
			wantErr: ErrHostKeyUnknown, wantMsg: []string{ssh.FingerprintSHA256(otherCA.PublicKey()), "no @cert-authority line"}},
		{name: "untrusted authority, certified key recorded", files: []string{plainLine(hostPub)}, offered: byOtherCA},
		{name: "expired certificate", files: []string{caLine("[127.0.0.1]:2222", ca.PublicKey())}, offered: expired,
			wantErr: ErrHostKeyUnknown, wantMsg: []string{"expired", "renew"}},
		{name: "certificate for another host", files: []string{caLine("[127.0.0.1]:2222", ca.PublicKey())}, offered: wrongName,
			wantErr: ErrHostKeyUnknown, wantMsg: []string{"principal"}},
		// knownhosts lists authorities among a host's keys; a plain key
		// equal to the CA key must not pass as the host's key...
		{name: "plain key equal to the authority", files: []string{caLine("[127.0.0.1]:2222", ca.PublicKey())}, offered: ca.PublicKey(),
			wantErr: ErrHostKeyUnknown, wantMsg: []string{"offered no certificate"}},
		// ...and a host covered only by an authority is unknown, not changed.
		{name: "authority only, plain key offered", files: []string{caLine("[127.0.0.1]:2222", ca.PublicKey())}, offered: hostPub,
			wantErr: ErrHostKeyUnknown},
		{name: "revoked key", files: []string{"@revoked * " + authorizedLine(hostPub) + plainLine(hostPub)}, offered: hostPub,
			wantErr: ErrHostKeyMismatch, wantMsg: []string{"@revoked in", "kh0:1"}},
		{name: "revoked key in another file", files: []string{plainLine(hostPub), "\n@revoked * " + authorizedLine(hostPub)}, offered: hostPub,
			wantErr: ErrHostKeyMismatch, wantMsg: []string{"kh1:2"}},
		{name: "revoked authority", files: []string{caLine("[127.0.0.1]:2222", ca.PublicKey()) + "@revoked * " + authorizedLine(ca.PublicKey())}, offered: good,
			wantErr: ErrHostKeyMismatch, wantMsg: []string{"certificate authority", "kh0:2"}},
		{name: "revoked certified key", files: []string{caLine("[127.0.0.1]:2222", ca.PublicKey()) + "@revoked * " + authorizedLine(hostPub)}, offered: good,
			wantErr: ErrHostKeyMismatch, wantMsg: []string{"kh0:2", ssh.FingerprintSHA256(hostPub)}},
		{name: "changed key in two files", files: []string{plainLine(other.PublicKey()), "#\n" + plainLine(other.PublicKey())}, offered: hostPub,
			wantErr: ErrHostKeyMismatch, wantMsg: []string{
				"offered ssh-ed25519 " + ssh.FingerprintSHA256(hostPub), "kh0:1 (ssh-ed25519 " + ssh.FingerprintSHA256(other.PublicKey()), "kh1:2",
				"ssh-keygen -R '[127.0.0.1]:2222' -f ", "kh0 && ssh-keygen -R '[127.0.0.1]:2222' -f ", "kh1,"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			var files []string
			for i, c := range tt.files {
				files = append(files, writeKnownHosts(t, dir, "kh"+strconv.Itoa(i), c))
			}
			h, err := loadHostKeys(addr, files, HostKeyStrict)
			if err != nil {
				t.Fatal(err)
			}
			err = h.check(addr, staticAddr(addr), tt.offered)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("check: %v", err)
				}
				if !h.verified.Load() || h.failed() != nil {
					t.Errorf("verified %v, failed %v after success", h.verified.Load(), h.failed())
				}
				return
			}
			if !errors.Is(err, tt.wantErr) || countSentinels(err) != 1 {
				t.Fatalf("check = %v, want only %v", err, tt.wantErr)
			}
			if !errors.Is(h.failed(), tt.wantErr) {
				t.Errorf("failed() = %v, want the check's error", h.failed())
			}
			for _, s := range tt.wantMsg {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
		})
	}
}

func TestHostKeyAlgorithmsWithAuthority(t *testing.T) {
	t.Parallel()
	const addr = "10.0.0.1:2222"
	ed, ca := newTestSigner(t).PublicKey(), newTestSigner(t).PublicKey()
	caLine := "@cert-authority [10.0.0.1]:2222 " + authorizedLine(ca)
	isCert := func(a string) bool { return strings.Contains(a, "-cert-v01@") }
	tests := []struct {
		name   string
		lines  string
		policy HostKeyPolicy
		check  func([]string) error
	}{
		{"authority only: certificates first, then plain", caLine, HostKeyStrict, func(got []string) error {
			i := slices.IndexFunc(got, func(a string) bool { return !isCert(a) })
			if i <= 0 || !slices.Contains(got[:i], ssh.CertAlgoED25519v01) || !slices.Contains(got[i:], ssh.KeyAlgoED25519) ||
				slices.ContainsFunc(got[i:], isCert) {
				return errors.New("want every certificate algorithm, then the plain ones")
			}
			return nil
		}},
		{"authority and a recorded key: certificates of every type first", caLine + knownhosts.Line([]string{addr}, ed) + "\n", HostKeyStrict, func(got []string) error {
			if !slices.Contains(got, ssh.CertAlgoRSASHA512v01) || got[len(got)-1] != ssh.KeyAlgoED25519 || slices.Contains(got, ssh.KeyAlgoECDSA256) {
				return errors.New("want all certificate algorithms, then ed25519 alone")
			}
			return nil
		}},
		{"authority for another host", "@cert-authority 10.0.0.2 " + authorizedLine(ca), HostKeyStrict, func(got []string) error {
			if got != nil {
				return errors.New("want the defaults")
			}
			return nil
		}},
		{"insecure-ignore takes the defaults", knownhosts.Line([]string{addr}, ed) + "\n", HostKeyInsecureIgnore, func(got []string) error {
			if got != nil {
				return errors.New("want the defaults, so any key can be shown")
			}
			return nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeKnownHosts(t, t.TempDir(), "known_hosts", tt.lines)
			h, err := loadHostKeys(addr, []string{path}, tt.policy)
			if err != nil {
				t.Fatal(err)
			}
			got := h.algorithms()
			if err := tt.check(got); err != nil {
				t.Errorf("algorithms = %v: %v", got, err)
			}
		})
	}
}

func TestHostKeyPolicies(t *testing.T) {
	t.Parallel()
	host, other := newTestSigner(t), newTestSigner(t)
	hostPub := host.PublicKey()
	tests := []struct {
		name     string
		addr     string
		existing *string // nil: the file does not exist
		mode     fs.FileMode
		policy   HostKeyPolicy
		wantErr  error
		// wantFile is the file's content afterwards; "" means unchanged.
		wantFile    func(t *testing.T, data string)
		wantIgnored error
	}{
		{name: "strict, unknown", addr: "127.0.0.1:2222", policy: HostKeyStrict, wantErr: ErrHostKeyUnknown},
		{name: "default is strict", addr: "127.0.0.1:2222", policy: HostKeyDefault, wantErr: ErrHostKeyUnknown},
		{name: "strict, changed", addr: "127.0.0.1:2222", existing: ptr(knownhosts.Line([]string{"127.0.0.1:2222"}, other.PublicKey()) + "\n"),
			policy: HostKeyStrict, wantErr: ErrHostKeyMismatch},
		{name: "accept-new, no file", addr: "127.0.0.1:2222", policy: HostKeyAcceptNew, wantFile: func(t *testing.T, data string) {
			if want := "[127.0.0.1]:2222 " + authorizedLine(hostPub); data != want {
				t.Errorf("file %q, want %q", data, want)
			}
		}},
		{name: "accept-new, port 22", addr: "127.0.0.1:22", policy: HostKeyAcceptNew, wantFile: func(t *testing.T, data string) {
			if want := "127.0.0.1 " + authorizedLine(hostPub); data != want {
				t.Errorf("file %q, want %q", data, want)
			}
		}},
		{name: "accept-new keeps content and mode", addr: "127.0.0.1:2222", mode: 0o640,
			existing: ptr("# mine\nnode9 " + strings.TrimSuffix(authorizedLine(other.PublicKey()), "\n")), // no final newline
			policy:   HostKeyAcceptNew, wantFile: func(t *testing.T, data string) {
				want := "# mine\nnode9 " + authorizedLine(other.PublicKey()) + "[127.0.0.1]:2222 " + authorizedLine(hostPub)
				if data != want {
					t.Errorf("file %q, want %q", data, want)
				}
			}},
		{name: "accept-new hashes in a hashed file", addr: "127.0.0.1:2222",
			existing: ptr(knownhosts.HashHostname("node9") + " " + authorizedLine(other.PublicKey())),
			policy:   HostKeyAcceptNew, wantFile: func(t *testing.T, data string) {
				lines := strings.Split(strings.TrimSpace(data), "\n")
				if len(lines) != 2 || !strings.HasPrefix(lines[1], "|1|") || strings.Contains(data, "127.0.0.1") {
					t.Errorf("file %q, want a second, hashed line", data)
				}
			}},
		{name: "accept-new never replaces a changed key", addr: "127.0.0.1:2222",
			existing: ptr(knownhosts.Line([]string{"127.0.0.1:2222"}, other.PublicKey()) + "\n"),
			policy:   HostKeyAcceptNew, wantErr: ErrHostKeyMismatch},
		{name: "accept-new refuses a revoked key", addr: "127.0.0.1:2222",
			existing: ptr("@revoked * " + authorizedLine(hostPub)), policy: HostKeyAcceptNew, wantErr: ErrHostKeyMismatch},
		{name: "insecure-ignore, unknown", addr: "127.0.0.1:2222", policy: HostKeyInsecureIgnore, wantIgnored: ErrHostKeyUnknown},
		{name: "insecure-ignore, changed", addr: "127.0.0.1:2222",
			existing: ptr(knownhosts.Line([]string{"127.0.0.1:2222"}, other.PublicKey()) + "\n"),
			policy:   HostKeyInsecureIgnore, wantIgnored: ErrHostKeyMismatch},
		{name: "insecure-ignore, recorded", addr: "127.0.0.1:2222",
			existing: ptr(knownhosts.Line([]string{"127.0.0.1:2222"}, hostPub) + "\n"), policy: HostKeyInsecureIgnore},
		{name: "insecure-ignore still refuses a revoked key", addr: "127.0.0.1:2222",
			existing: ptr("@revoked * " + authorizedLine(hostPub)), policy: HostKeyInsecureIgnore, wantErr: ErrHostKeyMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "ssh")
			path := filepath.Join(dir, "known_hosts")
			if tt.existing != nil {
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				writeKnownHosts(t, dir, "known_hosts", *tt.existing)
				if tt.mode != 0 {
					if err := os.Chmod(path, tt.mode); err != nil {
						t.Fatal(err)
					}
				}
			}
			h, err := loadHostKeys(tt.addr, []string{path, filepath.Join(dir, "second")}, tt.policy)
			if err != nil {
				t.Fatal(err)
			}
			err = h.check(tt.addr, staticAddr(tt.addr), hostPub)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("check = %v, want %v", err, tt.wantErr)
			}
			if ig := h.ignoredMismatch(); !errors.Is(ig, tt.wantIgnored) || (tt.wantIgnored == nil) != (ig == nil) {
				t.Errorf("ignoredMismatch = %v, want %v", ig, tt.wantIgnored)
			} else if ig != nil && !strings.Contains(ig.Error(), ssh.FingerprintSHA256(hostPub)) {
				t.Errorf("ignoredMismatch %q does not name the accepted key", ig)
			}
			data, rerr := os.ReadFile(path)
			if tt.wantFile == nil {
				switch {
				case tt.existing == nil && !errors.Is(rerr, fs.ErrNotExist):
					t.Errorf("known_hosts created (%v), want none", rerr)
				case tt.existing != nil && string(data) != *tt.existing:
					t.Errorf("known_hosts changed to %q", data)
				}
				if h.learnedIn() != "" {
					t.Errorf("learnedIn = %q, want nothing recorded", h.learnedIn())
				}
				return
			}
			if rerr != nil {
				t.Fatal(rerr)
			}
			tt.wantFile(t, string(data))
			if h.learnedIn() != path {
				t.Errorf("learnedIn = %q, want %q", h.learnedIn(), path)
			}
			wantMode := tt.mode
			if wantMode == 0 {
				wantMode = 0o600
			}
			if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != wantMode {
				t.Errorf("mode %v (%v), want %v", fi.Mode().Perm(), err, wantMode)
			}
			if tt.existing == nil {
				if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
					t.Errorf("dir mode %v (%v), want 0700", fi.Mode().Perm(), err)
				}
			}
			// What was recorded verifies strictly, and a second look
			// appends nothing.
			again, err := loadHostKeys(tt.addr, []string{path}, HostKeyAcceptNew)
			if err != nil {
				t.Fatal(err)
			}
			if err := again.check(tt.addr, staticAddr(tt.addr), hostPub); err != nil || again.learnedIn() != "" {
				t.Errorf("second check: %v, learned %q; want verified without recording", err, again.learnedIn())
			}
			if err := again.check(tt.addr, staticAddr(tt.addr), other.PublicKey()); !errors.Is(err, ErrHostKeyMismatch) {
				t.Errorf("another key after accept-new: %v, want a mismatch", err)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, data) {
				t.Errorf("file changed by later checks: %q", after)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("directory holds %d entries, want only known_hosts (no temporary files)", len(entries))
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestAcceptNewConcurrent records many hosts from many goroutines at once,
// each with its own view of the file as separate dials have; several race
// for the same host too. Every host must end up recorded exactly once.
func TestAcceptNewConcurrent(t *testing.T) {
	t.Parallel()
	const hosts, racers = 40, 5
	path := filepath.Join(t.TempDir(), "known_hosts")
	keys := make([]ssh.PublicKey, hosts)
	for i := range keys {
		keys[i] = newTestSigner(t).PublicKey()
	}
	addr := func(i int) string { return "127.0.0.1:" + strconv.Itoa(10000+i) }
	var wg sync.WaitGroup
	errs := make(chan error, hosts*racers)
	for i := range hosts {
		for range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				h, err := loadHostKeys(addr(i), []string{path}, HostKeyAcceptNew)
				if err == nil {
					err = h.check(addr(i), staticAddr(addr(i)), keys[i])
				}
				if err != nil {
					errs <- fmt.Errorf("host %d: %w", i, err)
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n != hosts {
		t.Errorf("known_hosts has %d lines, want %d:\n%s", n, hosts, data)
	}
	for i := range hosts {
		h, err := loadHostKeys(addr(i), []string{path}, HostKeyStrict)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.check(addr(i), staticAddr(addr(i)), keys[i]); err != nil {
			t.Errorf("host %d not recorded: %v", i, err)
		}
	}
}

func TestAcceptNewFollowsSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := writeKnownHosts(t, dir, "real_known_hosts", "")
	link := filepath.Join(dir, "known_hosts")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	const addr = "127.0.0.1:2222"
	h, err := loadHostKeys(addr, []string{link}, HostKeyAcceptNew)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.check(addr, staticAddr(addr), newTestSigner(t).PublicKey()); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("known_hosts is no longer a symlink (%v)", err)
	}
	if data, _ := os.ReadFile(target); !strings.HasPrefix(string(data), "[127.0.0.1]:2222 ") {
		t.Errorf("link target holds %q, want the new entry", data)
	}
}

// TestHostCertificateDial dials in-process servers whose host key is a
// certificate, known only through a @cert-authority line.
func TestHostCertificateDial(t *testing.T) {
	t.Parallel()
	ca := newTestSigner(t)
	hostSigner := newTestSigner(t)
	rsaPriv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	oldRSA, err := ssh.NewSignerFromKey(rsaPriv)
	if err != nil {
		t.Fatal(err)
	}
	client, pemBytes, err := sshfleet.NewClientKey()
	if err != nil {
		t.Fatal(err)
	}
	cert := hostCert(t, hostSigner.PublicKey(), ca, []string{"127.0.0.1"}, ssh.CertTimeInfinity)
	certSigner, err := ssh.NewCertSigner(cert, hostSigner)
	if err != nil {
		t.Fatal(err)
	}
	f, err := sshfleet.Start(t.Context(), []sshfleet.NodeConfig{{
		Name: "certified", HostKey: certSigner, AuthorizedKeys: []ssh.PublicKey{client.PublicKey()},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	n := f.Nodes()[0]
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "id")
	if err := os.WriteFile(keyFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	caLine := fmt.Sprintf("@cert-authority [127.0.0.1]:%d %s", n.Port, authorizedLine(ca.PublicKey()))
	tests := []struct {
		name       string
		knownHosts string
		wantErr    error
	}{
		{"authority only", caLine, nil},
		// The RSA key recorded before the node was certified is gone:
		// only offering every certificate algorithm finds the ed25519
		// certificate.
		{"authority and a stale key of another type", knownhosts.Line([]string{n.Addr}, oldRSA.PublicKey()) + "\n" + caLine, nil},
		{"authority for another port", fmt.Sprintf("@cert-authority [127.0.0.1]:%d %s", n.Port+1, authorizedLine(ca.PublicKey())), ErrHostKeyUnknown},
		{"another authority", fmt.Sprintf("@cert-authority [127.0.0.1]:%d %s", n.Port, authorizedLine(newTestSigner(t).PublicKey())), ErrHostKeyUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			kh := writeKnownHosts(t, t.TempDir(), "known_hosts", tt.knownHosts)
			d := NewSSHDialer(SSHOptions{ConnectTimeout: 5 * time.Second, DefaultKnownHosts: []string{"/nonexistent"}})
			c, err := d.Dial(t.Context(), Target{Address: n.Host, Port: n.Port, User: "tester", IdentityFiles: []string{keyFile}, KnownHostsFiles: []string{kh}})
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("dial = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("dial: %v", err)
			}
			defer c.Close()
			out, err := c.Run(t.Context(), Script{Stdin: []byte("echo ok\n"), Timeout: 10 * time.Second})
			if err != nil || string(out.Stdout) != "ok\n" {
				t.Errorf("run: %q %v", out.Stdout, err)
			}
		})
	}
}

// keyedFleet starts n in-process nodes n0... that accept one client key,
// whose private half it writes to keyFile in dir; no known_hosts file is
// written, which is each test's business.
func keyedFleet(t *testing.T, n int) (f *sshfleet.Fleet, dir, keyFile string) {
	t.Helper()
	client, pemBytes, err := sshfleet.NewClientKey()
	if err != nil {
		t.Fatal(err)
	}
	cfgs := make([]sshfleet.NodeConfig, n)
	for i := range cfgs {
		cfgs[i] = sshfleet.NodeConfig{Name: fmt.Sprint("n", i), AuthorizedKeys: []ssh.PublicKey{client.PublicKey()}}
	}
	f, err = sshfleet.Start(t.Context(), cfgs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	dir = t.TempDir()
	keyFile = filepath.Join(dir, "id")
	if err := os.WriteFile(keyFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	return f, dir, keyFile
}

// TestAcceptNewDial dials a fleet concurrently with accept-new into a
// known_hosts file that does not exist yet, then strictly.
func TestAcceptNewDial(t *testing.T) {
	t.Parallel()
	const nodes = 12
	f, dir, keyFile := keyedFleet(t, nodes)
	kh := filepath.Join(dir, "new", "known_hosts")
	dial := func(policy HostKeyPolicy, n *sshfleet.Node) error {
		d := NewSSHDialer(SSHOptions{ConnectTimeout: 5 * time.Second, DefaultKnownHosts: []string{"/nonexistent"}, HostKeyPolicy: policy})
		c, err := d.Dial(t.Context(), Target{Address: n.Host, Port: n.Port, User: "tester", IdentityFiles: []string{keyFile}, KnownHostsFiles: []string{kh}})
		if err != nil {
			return err
		}
		return c.Close()
	}
	if err := dial(HostKeyStrict, f.Nodes()[0]); !errors.Is(err, ErrHostKeyUnknown) {
		t.Fatalf("strict before accept-new: %v, want unknown", err)
	}
	var wg sync.WaitGroup
	for _, n := range f.Nodes() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := dial(HostKeyAcceptNew, n); err != nil {
				t.Errorf("accept-new %s: %v", n.Config.Name, err)
			}
		}()
	}
	wg.Wait()
	data, err := os.ReadFile(kh)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(data), "\n"); got != nodes {
		t.Errorf("known_hosts has %d lines, want %d", got, nodes)
	}
	for _, n := range f.Nodes() {
		if err := dial(HostKeyStrict, n); err != nil {
			t.Errorf("strict after accept-new %s: %v", n.Config.Name, err)
		}
	}
	// A node whose recorded key changed stays a mismatch.
	changed := knownhosts.Line([]string{f.Nodes()[0].Addr}, newTestSigner(t).PublicKey()) + "\n"
	if err := os.WriteFile(kh, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := dial(HostKeyAcceptNew, f.Nodes()[0]); !errors.Is(err, ErrHostKeyMismatch) {
		t.Errorf("accept-new with a changed key: %v, want a mismatch", err)
	}
	if err := dial(HostKeyInsecureIgnore, f.Nodes()[0]); err != nil {
		t.Errorf("insecure-ignore with a changed key: %v", err)
	}
	if after, _ := os.ReadFile(kh); string(after) != changed {
		t.Errorf("known_hosts changed to %q", after)
	}
}

// knownHostsHelperEnv makes the test binary, re-executed by
// TestAcceptNewAcrossProcesses, act as one more fleet-audit process
// recording hosts into a shared known_hosts file.
const knownHostsHelperEnv = "FLEET_AUDIT_TEST_KNOWN_HOSTS_HELPER"

// seededHostKey is host i's key, the same in every process, so that
// processes racing for one host offer the same key.
func seededHostKey(t testing.TB, i int) ssh.PublicKey {
	t.Helper()
	seed := sha256.Sum256([]byte("fleet-audit test host " + strconv.Itoa(i)))
	k, err := ssh.NewPublicKey(ed25519.NewKeyFromSeed(seed[:]).Public())
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func seededHostAddr(i int) string { return "127.0.0.1:" + strconv.Itoa(20000+i) }

// recordHosts runs accept-new for every host from racers goroutines each,
// every goroutine with its own view of the file as separate dials have.
func recordHosts(t testing.TB, path string, hosts []int, racers int) []error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, i := range hosts {
		key := seededHostKey(t, i)
		for range racers {
			wg.Go(func() {
				addr := seededHostAddr(i)
				h, err := loadHostKeys(addr, []string{path}, HostKeyAcceptNew)
				if err == nil {
					err = h.check(addr, staticAddr(addr), key)
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("host %d: %w", i, err))
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	return errs
}

// TestAcceptNewHelperProcess is not a test by itself: it is the body of
// the child processes of TestAcceptNewAcrossProcesses, and returns at once
// when not started as one.
func TestAcceptNewHelperProcess(t *testing.T) {
	path := os.Getenv(knownHostsHelperEnv)
	if path == "" {
		return
	}
	var hosts []int
	for _, f := range strings.Split(os.Getenv(knownHostsHelperEnv+"_HOSTS"), ",") {
		i, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		hosts = append(hosts, i)
	}
	// Start together with the other processes: say ready, wait for go.
	fmt.Println("ready")
	if _, err := os.Stdin.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	for _, err := range recordHosts(t, path, hosts, 2) {
		t.Error(err)
	}
}

// TestAcceptNewAcrossProcesses has several OS processes and, in each, many
// goroutines record hosts into one known_hosts file at once, as two
// fleet-audit runs sharing ~/.ssh/known_hosts do. Every process records
// hosts of its own and a few hosts every process records too. Every key
// must end up in the file exactly once, the file must stay the same inode
// with the same mode (so a hard link sees every line), and a host recorded
// by another process while a dial had it as unknown must still refuse a
// different key.
func TestAcceptNewAcrossProcesses(t *testing.T) {
	if os.Getenv(knownHostsHelperEnv) != "" {
		t.Skip("running as a helper process")
	}
	testtools.SkipShort(t, "starts three helper processes per trial, twenty trials")
	const (
		trials = 20
		procs  = 3 // children, besides this process
		own    = 8 // hosts each process alone records
		shared = 3 // hosts every process records
		seed   = 9999
	)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sharedHosts := make([]int, shared)
	for i := range sharedHosts {
		sharedHosts[i] = 1000 + i
	}
	hostsOf := func(p int) []int {
		var hs []int
		for i := range own {
			hs = append(hs, p*own+i)
		}
		return append(hs, sharedHosts...)
	}
	want := 1 + (procs+1)*own + shared
	var counts []int
	for trial := range trials {
		dir := t.TempDir()
		path := writeKnownHosts(t, dir, "known_hosts", knownhosts.Line([]string{seededHostAddr(seed)}, seededHostKey(t, seed))+"\n")
		if err := os.Chmod(path, 0o640); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(dir, "known_hosts.hardlink")
		if err := os.Link(path, link); err != nil {
			t.Fatal(err)
		}
		before, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		// A dial that found a shared host unknown before any process
		// recorded it.
		stale, err := loadHostKeys(seededHostAddr(sharedHosts[0]), []string{path}, HostKeyAcceptNew)
		if err != nil {
			t.Fatal(err)
		}

		type child struct {
			cmd    *exec.Cmd
			stdin  io.WriteCloser
			output chan string
		}
		var children []child
		for p := range procs {
			cmd := exec.CommandContext(t.Context(), exe, "-test.run=^TestAcceptNewHelperProcess$", "-test.count=1")
			var hs []string
			for _, i := range hostsOf(p) {
				hs = append(hs, strconv.Itoa(i))
			}
			cmd.Env = append(os.Environ(), knownHostsHelperEnv+"="+path, knownHostsHelperEnv+"_HOSTS="+strings.Join(hs, ","))
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			r := bufio.NewReader(stdout)
			if line, err := r.ReadString('\n'); line != "ready\n" {
				t.Fatalf("helper process: got %q (%v) instead of ready; stderr:\n%s", line, err, stderr.String())
			}
			c := child{cmd: cmd, stdin: stdin, output: make(chan string, 1)}
			go func() {
				rest, _ := io.ReadAll(r)
				c.output <- string(rest)
			}()
			children = append(children, c)
		}
		for _, c := range children {
			if _, err := c.stdin.Write([]byte("g")); err != nil {
				t.Fatal(err)
			}
			_ = c.stdin.Close()
		}
		for _, err := range recordHosts(t, path, hostsOf(procs), 2) {
			t.Errorf("trial %d: %v", trial, err)
		}
		for i, c := range children {
			out := <-c.output
			if err := c.cmd.Wait(); err != nil {
				t.Errorf("trial %d: helper process %d: %v:\n%s%s", trial, i, err, out, c.cmd.Stderr)
			}
		}
		if err := stale.check(stale.addr, staticAddr(stale.addr), newTestSigner(t).PublicKey()); !errors.Is(err, ErrHostKeyMismatch) {
			t.Errorf("trial %d: a changed key for a host another process recorded meanwhile: got %v, want %v", trial, err, ErrHostKeyMismatch)
		}

		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		counts = append(counts, len(lines))
		if len(lines) != want {
			t.Errorf("trial %d: known_hosts has %d lines, want %d", trial, len(lines), want)
		}
		perHost := make(map[string]int)
		for _, l := range lines {
			perHost[l]++
		}
		all := append([]int{seed}, sharedHosts...)
		for p := range procs + 1 {
			all = append(all, hostsOf(p)[:own]...)
		}
		for _, i := range all {
			l := knownhosts.Line([]string{seededHostAddr(i)}, seededHostKey(t, i))
			if n := perHost[l]; n != 1 {
				t.Errorf("trial %d: host %d recorded %d times, want once", trial, i, n)
			}
		}
		if linked, err := os.ReadFile(link); err != nil || !bytes.Equal(linked, data) {
			t.Errorf("trial %d: the hard link holds %d lines (%v), known_hosts %d: the file was replaced", trial, strings.Count(string(linked), "\n"), err, len(lines))
		}
		after, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if !os.SameFile(before, after) || after.Mode() != before.Mode() {
			t.Errorf("trial %d: known_hosts is now %v (same inode: %t), was %v", trial, after.Mode(), os.SameFile(before, after), before.Mode())
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 2 {
			t.Errorf("trial %d: directory holds %d entries, want known_hosts and its hard link only", trial, len(entries))
		}
	}
	t.Logf("known_hosts line counts over %d trials (want %d each): %v", trials, want, counts)
}

// TestKnownHostsReadOncePerRun: a dialer, which is one run, reads and
// parses its known_hosts files once for all its dials (issue 31), so a
// file rewritten mid-run is not seen until the next run, while what
// accept-new records is seen at once, as the lock's re-read sees it, also
// by a strict dial of the same run. Each node is dialled with its own
// Target, as the audit does.
func TestKnownHostsReadOncePerRun(t *testing.T) {
	t.Parallel()
	f, dir, keyFile := keyedFleet(t, 4)
	kh := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(kh, f.KnownHosts(), 0o600); err != nil {
		t.Fatal(err)
	}
	newDialer := func() *SSHDialer {
		return NewSSHDialer(SSHOptions{ConnectTimeout: 5 * time.Second, DefaultIdentityFiles: []string{}, DefaultKnownHosts: []string{"/nonexistent"}})
	}
	dial := func(d *SSHDialer, n *sshfleet.Node, policy HostKeyPolicy) error {
		c, err := d.Dial(t.Context(), Target{Name: n.Config.Name, Address: n.Host, Port: n.Port, User: "tester", IdentityFiles: []string{keyFile},
			KnownHostsFiles: []string{kh}, HostKeyPolicy: policy})
		if err != nil {
			return err
		}
		return c.Close()
	}

	run := newDialer()
	if err := dial(run, f.Nodes()[0], HostKeyStrict); err != nil {
		t.Fatal(err)
	}
	// Every node's key replaced by another's, as if the fleet had been
	// reinstalled: a later run refuses them, this one read the file
	// before.
	other, _, err := sshfleet.NewClientKey()
	if err != nil {
		t.Fatal(err)
	}
	var wrong strings.Builder
	for _, n := range f.Nodes() {
		wrong.WriteString(knownhosts.Line([]string{n.Addr}, other.PublicKey()) + "\n")
	}
	if err := os.WriteFile(kh, []byte(wrong.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, n := range f.Nodes()[1:] {
		if err := dial(run, n, HostKeyStrict); err != nil {
			t.Errorf("%s in the same run: %v; want the file as the run first read it", n.Config.Name, err)
		}
	}
	if got := run.known.parses.Load(); got != 1 {
		t.Errorf("known_hosts parsed %d times for %d dials, want once", got, len(f.Nodes()))
	}
	if err := dial(newDialer(), f.Nodes()[1], HostKeyStrict); !errors.Is(err, ErrHostKeyMismatch) {
		t.Errorf("a new run: %v; want the rewritten file's mismatch", err)
	}

	// A fresh file: accept-new records a node; a strict dial of the same
	// run then knows it, without reading the file again.
	if err := os.WriteFile(kh, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	run = newDialer()
	n := f.Nodes()[2]
	if err := dial(run, n, HostKeyStrict); !errors.Is(err, ErrHostKeyUnknown) {
		t.Fatalf("strict on an empty file: %v, want unknown", err)
	}
	if err := dial(run, n, HostKeyAcceptNew); err != nil {
		t.Fatalf("accept-new: %v", err)
	}
	if err := dial(run, n, HostKeyStrict); err != nil {
		t.Errorf("strict after accept-new recorded the key in the same run: %v", err)
	}
	if err := dial(run, f.Nodes()[3], HostKeyStrict); !errors.Is(err, ErrHostKeyUnknown) {
		t.Errorf("strict on a node nobody recorded: %v, want unknown", err)
	}
	if got := run.known.parses.Load(); got != 1 {
		t.Errorf("known_hosts parsed %d times in the second run, want once", got)
	}
}
