package remote

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestDialError(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	opErr := func(err error) error {
		return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", err)}
	}
	tests := []struct {
		name   string
		parent context.Context
		err    error
		want   []error
	}{
		{"refused", context.Background(), opErr(syscall.ECONNREFUSED), []error{ErrUnreachable}},
		{"no route", context.Background(), opErr(syscall.EHOSTUNREACH), []error{ErrUnreachable}},
		{"network unreachable", context.Background(), opErr(syscall.ENETUNREACH), []error{ErrUnreachable}},
		{"dns", context.Background(), &net.OpError{Op: "dial", Err: &net.DNSError{Name: "node1.invalid", IsNotFound: true}}, []error{ErrUnreachable}},
		{"dns timeout", context.Background(), &net.OpError{Op: "dial", Err: &net.DNSError{Name: "node1", IsTimeout: true}}, []error{ErrConnectTimeout}},
		{"timeout", context.Background(), &net.OpError{Op: "dial", Err: timeoutErr{}}, []error{ErrConnectTimeout}},
		{"deadline", context.Background(), context.DeadlineExceeded, []error{ErrConnectTimeout}},
		{"cancelled", cancelled, opErr(syscall.ECONNREFUSED), []error{ErrConnectTimeout, context.Canceled}},
		{"other", context.Background(), errors.New("weird"), []error{ErrUnreachable}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := dialError(tt.parent, tt.err, time.Second)
			for _, w := range tt.want {
				if !errors.Is(got, w) {
					t.Errorf("dialError = %v, want it to wrap %v", got, w)
				}
			}
			if n := countSentinels(got); n != 1 {
				t.Errorf("dialError = %v wraps %d sentinels, want 1", got, n)
			}
		})
	}
}

func countSentinels(err error) int {
	n := 0
	for _, s := range []error{ErrUnreachable, ErrConnectTimeout, ErrAuthFailed, ErrHostKeyUnknown,
		ErrHostKeyMismatch, ErrRunTimeout, ErrOutputTruncated, ErrConnectionLost} {
		if errors.Is(err, s) {
			n++
		}
	}
	return n
}

func TestCappedBuffer(t *testing.T) {
	tests := []struct {
		name     string
		limit    int64
		writes   []string
		want     string
		overflow bool
	}{
		{"under", 10, []string{"abc", "def"}, "abcdef", false},
		{"exactly", 6, []string{"abc", "def"}, "abcdef", false},
		{"over in one write", 4, []string{"abcdef"}, "abcd", true},
		{"over across writes", 4, []string{"abc", "def", "ghi"}, "abcd", true},
		{"zero", 0, []string{"a"}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newCappedBuffer(tt.limit)
			for _, w := range tt.writes {
				if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v; want all bytes accepted", w, n, err)
				}
			}
			got, overflow := b.snapshot()
			if string(got) != tt.want || overflow != tt.overflow {
				t.Errorf("got %q overflow %v, want %q %v", got, overflow, tt.want, tt.overflow)
			}
			select {
			case <-b.exceeded:
				if !tt.overflow {
					t.Error("exceeded closed without overflow")
				}
			default:
				if tt.overflow {
					t.Error("exceeded not closed on overflow")
				}
			}
		})
	}
}

func TestPIDSniffer(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   string
		pid    *remotePID
	}{
		{"marker first", []string{"fleet-audit-pid 42 1234 40\nerr\n"}, "err\n", &remotePID{42, 1234, 40}},
		{"marker split", []string{"fleet-audit-p", "id 42 12", "34 4", "0\nrest"}, "rest", &remotePID{42, 1234, 40}},
		{"after login noise", []string{"bashrc says hi\n", "fleet-audit-pid 7 9 7\n"}, "bashrc says hi\n", &remotePID{7, 9, 7}},
		{"no marker", []string{"just errors\n", "partial"}, "just errors\npartial", nil},
		{"not digits", []string{"fleet-audit-pid 1;rm 2 3\n"}, "fleet-audit-pid 1;rm 2 3\n", nil},
		{"no session", []string{"fleet-audit-pid 1 2\n"}, "fleet-audit-pid 1 2\n", nil},
		{"only the first marker", []string{"fleet-audit-pid 1 2 1\nfleet-audit-pid 3 4 3\n"}, "fleet-audit-pid 3 4 3\n", &remotePID{1, 2, 1}},
		{"gives up after the scan limit", []string{strings.Repeat("x", maxPIDScan+1), "\nfleet-audit-pid 1 2 1\n"},
			strings.Repeat("x", maxPIDScan+1) + "\nfleet-audit-pid 1 2 1\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			var got *remotePID
			s := &pidSniffer{dst: &out, found: func(p remotePID) { got = &p }}
			for _, w := range tt.writes {
				if _, err := s.Write([]byte(w)); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.flush(); err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.want {
				t.Errorf("passed %q, want %q", out.String(), tt.want)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.pid) {
				t.Errorf("pid %v, want %v", got, tt.pid)
			}
		})
	}
}

func TestHostKeyAlgorithms(t *testing.T) {
	edPub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecPriv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ed, ec := mustPublicKey(t, edPub), mustPublicKey(t, ecPriv.Public())
	const addr = "10.0.0.1:2222"
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"nothing recorded", nil, nil},
		{"other host only", []string{knownhosts.Line([]string{"10.0.0.2:22"}, ed)}, nil},
		{"ed25519", []string{knownhosts.Line([]string{addr}, ed)}, []string{ssh.KeyAlgoED25519, ssh.CertAlgoED25519v01}},
		{"ecdsa then ed25519", []string{knownhosts.Line([]string{addr}, ec), knownhosts.Line([]string{addr}, ed)},
			[]string{ssh.KeyAlgoECDSA256, ssh.KeyAlgoED25519, ssh.CertAlgoECDSA256v01, ssh.CertAlgoED25519v01}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "known_hosts")
			if err := os.WriteFile(path, []byte(strings.Join(tt.lines, "\n")+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			h, err := loadHostKeys(addr, []string{path, filepath.Join(t.TempDir(), "missing")}, HostKeyStrict)
			if err != nil {
				t.Fatal(err)
			}
			if got := h.algorithms(); !slices.Equal(got, tt.want) {
				t.Errorf("algorithms = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestHostKeyAlgorithmsRSA(t *testing.T) {
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	rsaKey := mustPublicKey(t, priv.Public())
	const addr = "10.0.0.1:22"
	path := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(path, []byte(knownhosts.Line([]string{addr}, rsaKey)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h, err := loadHostKeys(addr, []string{path}, HostKeyStrict)
	if err != nil {
		t.Fatal(err)
	}
	got := h.algorithms()
	want := []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA}
	if len(got) < 3 || !slices.Equal(got[:3], want) {
		t.Errorf("algorithms = %v, want %v first", got, want)
	}
}

func mustPublicKey(t *testing.T, k any) ssh.PublicKey {
	t.Helper()
	pub, err := ssh.NewPublicKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

// TestPIDPreludeIsInvisible runs the prelude in the local shell: it must
// print only its marker and leave the script's state as it was.
func TestPIDPreludeIsInvisible(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	script := withPIDPrelude([]byte(`echo "args=$# s=${__fa_s-unset} lines"` + "\n"))
	var stdout, stderr bytes.Buffer
	e := &localExec{}
	code, err := e.run(nil, script, &stdout, &stderr)
	if err != nil || code != 0 {
		t.Fatalf("run: code %d err %v stderr %q", code, err, stderr.String())
	}
	if got := stdout.String(); got != "args=0 s=unset lines\n" {
		t.Errorf("stdout %q, want the script's state untouched", got)
	}
	if !pidMarker.MatchString(stderr.String()) {
		t.Errorf("stderr %q is not one pid marker line", stderr.String())
	}
}

// TestWatchedSignerKeepsAlgorithms pins that watching a signer for
// auth_failed's "offered" list hides none of its interfaces: x/crypto picks
// signature algorithms by them, and an RSA key seen as a plain Signer
// would be offered as SHA-1 ssh-rsa only, which OpenSSH refuses.
func TestWatchedSignerKeepsAlgorithms(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rsaSigner, err := ssh.NewSignerFromKey(rsaKey)
	if err != nil {
		t.Fatal(err)
	}
	edSigner, err := ssh.NewSignerFromKey(edKey)
	if err != nil {
		t.Fatal(err)
	}
	restricted, err := ssh.NewSignerWithAlgorithms(rsaSigner.(ssh.AlgorithmSigner), []string{ssh.KeyAlgoRSASHA512})
	if err != nil {
		t.Fatal(err)
	}
	cert := &ssh.Certificate{Key: edSigner.PublicKey(), CertType: ssh.UserCert, ValidPrincipals: []string{"tester"}, ValidBefore: ssh.CertTimeInfinity}
	if err := cert.SignCert(rand.Reader, edSigner); err != nil {
		t.Fatal(err)
	}
	certSigner, err := ssh.NewCertSigner(cert, edSigner)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		signer ssh.Signer
	}{
		{"rsa", rsaSigner},
		{"rsa-sha2-512 only", restricted},
		{"ed25519", edSigner},
		{"certificate", certSigner},
		{"plain Signer", struct{ ssh.Signer }{edSigner}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &authPlan{tried: []bool{false}}
			w := a.watch(tc.signer, 0)
			_, wasAlgo := tc.signer.(ssh.AlgorithmSigner)
			_, isAlgo := w.(ssh.AlgorithmSigner)
			origMulti, wasMulti := tc.signer.(ssh.MultiAlgorithmSigner)
			multi, isMulti := w.(ssh.MultiAlgorithmSigner)
			if wasAlgo != isAlgo || wasMulti != isMulti {
				t.Fatalf("AlgorithmSigner %t -> %t, MultiAlgorithmSigner %t -> %t", wasAlgo, isAlgo, wasMulti, isMulti)
			}
			if wasMulti && !slices.Equal(origMulti.Algorithms(), multi.Algorithms()) {
				t.Errorf("algorithms %v, want %v", multi.Algorithms(), origMulti.Algorithms())
			}
			if a.tried[0] {
				t.Fatal("marked as offered before x/crypto asked for its key")
			}
			if !bytes.Equal(w.PublicKey().Marshal(), tc.signer.PublicKey().Marshal()) || !a.tried[0] {
				t.Errorf("asking for the key: same key %t, marked offered %t", bytes.Equal(w.PublicKey().Marshal(), tc.signer.PublicKey().Marshal()), a.tried[0])
			}
		})
	}
}
