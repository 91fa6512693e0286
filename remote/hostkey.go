package remote

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// hostKeys verifies one dial's host key against known_hosts and remembers
// how verification went, so a failed handshake can be reported by its real
// cause instead of x/crypto's generic "handshake failed".
type hostKeys struct {
	addr    string   // host:port as dialled
	files   []string // known_hosts files, in the order given
	present []string // the subset that exists
	db      ssh.HostKeyCallback
	policy  HostKeyPolicy // never HostKeyDefault

	verified atomic.Bool
	mu       sync.Mutex
	failure  error
}

// loadHostKeys reads the known_hosts files that exist. Missing files are not
// an error, because a fresh machine has none; with no file at all every host
// is simply unknown.
func loadHostKeys(addr string, files []string, policy HostKeyPolicy) (*hostKeys, error) {
	if policy == HostKeyDefault {
		policy = HostKeyStrict
	}
	h := &hostKeys{addr: addr, files: files, policy: policy}
	for _, f := range files {
		_, err := os.Stat(f)
		switch {
		case err == nil:
			h.present = append(h.present, f)
		case errors.Is(err, fs.ErrNotExist):
		default:
			return nil, fmt.Errorf("%w: cannot read known_hosts: %w", ErrHostKeyUnknown, err)
		}
	}
	db, err := knownhosts.New(h.present...)
	if err != nil {
		return nil, fmt.Errorf("%w: cannot parse known_hosts: %w", ErrHostKeyUnknown, err)
	}
	h.db = db
	return h, nil
}

// probeKey is a key no known_hosts file can contain. Checking it against the
// database fails with a KeyError listing every key recorded for the host,
// which is the only way knownhosts exposes them.
var probeKey = sync.OnceValue(func() ssh.PublicKey {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(fmt.Sprintf("remote: generate probe key: %v", err))
	}
	k, err := ssh.NewPublicKey(pub)
	if err != nil {
		panic(fmt.Sprintf("remote: probe key: %v", err))
	}
	return k
})

// staticAddr satisfies net.Addr for the probe, which has no connection yet.
type staticAddr string

func (a staticAddr) Network() string { return "tcp" }
func (a staticAddr) String() string  { return string(a) }

// recorded returns the keys known_hosts holds for the host.
func (h *hostKeys) recorded() []knownhosts.KnownKey {
	var ke *knownhosts.KeyError
	if err := h.db(h.addr, staticAddr(h.addr), probeKey()); errors.As(err, &ke) {
		return ke.Want
	}
	return nil
}

// hostKeyAlgorithms maps a recorded key type to the signature algorithms
// that can prove it, strongest first.
var hostKeyAlgorithms = map[string][]string{
	ssh.KeyAlgoRSA: {ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA},
}

// hostCertAlgorithms lists the certificate algorithms over each key type.
// They come after every plain algorithm: a server holding a certificate also
// holds the plain key, and the recorded plain key is what we can verify.
var hostCertAlgorithms = map[string][]string{
	ssh.KeyAlgoRSA:       {ssh.CertAlgoRSASHA512v01, ssh.CertAlgoRSASHA256v01, ssh.CertAlgoRSAv01},
	ssh.KeyAlgoECDSA256:  {ssh.CertAlgoECDSA256v01},
	ssh.KeyAlgoECDSA384:  {ssh.CertAlgoECDSA384v01},
	ssh.KeyAlgoECDSA521:  {ssh.CertAlgoECDSA521v01},
	ssh.KeyAlgoED25519:   {ssh.CertAlgoED25519v01},
	ssh.KeyAlgoSKED25519: {ssh.CertAlgoSKED25519v01},
}

// algorithms returns the host key algorithms to offer: only those of key
// types recorded for the host. Without this, x/crypto prefers ECDSA and RSA
// over Ed25519, so a host recorded with its Ed25519 key that also has an
// ECDSA key would be reported as a mismatch. Nil means "no record, use the
// defaults" and verification will report the host as unknown.
func (h *hostKeys) algorithms() []string {
	supported := slices.Concat(ssh.SupportedAlgorithms().HostKeys, ssh.InsecureAlgorithms().HostKeys)
	var plain, certs []string
	add := func(list *[]string, algos ...string) {
		for _, a := range algos {
			if slices.Contains(supported, a) && !slices.Contains(*list, a) {
				*list = append(*list, a)
			}
		}
	}
	for _, k := range h.recorded() {
		typ := k.Key.Type()
		if algos, ok := hostKeyAlgorithms[typ]; ok {
			add(&plain, algos...)
		} else {
			add(&plain, typ)
		}
		add(&certs, hostCertAlgorithms[typ]...)
	}
	if len(plain) == 0 {
		return nil
	}
	return append(plain, certs...)
}

// check is the ssh.HostKeyCallback. Its errors carry the fix, because a
// host key problem is the one failure the user must resolve by hand.
func (h *hostKeys) check(hostname string, remote net.Addr, key ssh.PublicKey) error {
	err := h.db(hostname, remote, key)
	if err == nil {
		h.verified.Store(true)
		return nil
	}
	var (
		keyErr     *knownhosts.KeyError
		revokedErr *knownhosts.RevokedError
	)
	switch {
	case errors.As(err, &revokedErr):
		err = fmt.Errorf("%w: host key for %s (%s %s) is marked @revoked in %s:%d; do not connect until the node has a new host key",
			ErrHostKeyMismatch, h.addr, key.Type(), ssh.FingerprintSHA256(key),
			revokedErr.Revoked.Filename, revokedErr.Revoked.Line)
	case errors.As(err, &keyErr) && len(keyErr.Want) == 0:
		err = fmt.Errorf("%w: host key for %s is not in known_hosts (%s); verify the fingerprint %s %s and add it with: %s",
			ErrHostKeyUnknown, h.addr, h.describeFiles(), key.Type(), ssh.FingerprintSHA256(key), h.keyscanCommand())
	case errors.As(err, &keyErr):
		var want []string
		for _, k := range keyErr.Want {
			want = append(want, fmt.Sprintf("%s:%d (%s %s)", k.Filename, k.Line, k.Key.Type(), ssh.FingerprintSHA256(k.Key)))
		}
		err = fmt.Errorf("%w: host key for %s has changed: the server offered %s %s but known_hosts records %s; "+
			"if the node was reinstalled, remove the stale line with: ssh-keygen -R '%s' -f %s, otherwise the connection may be intercepted",
			ErrHostKeyMismatch, h.addr, key.Type(), ssh.FingerprintSHA256(key), strings.Join(want, ", "),
			knownhosts.Normalize(h.addr), keyErr.Want[0].Filename)
	default:
		// Certificate checks fail here, e.g. a host certificate signed by
		// an authority known_hosts does not trust.
		err = fmt.Errorf("%w: cannot verify host key for %s (%s %s): %w",
			ErrHostKeyUnknown, h.addr, key.Type(), ssh.FingerprintSHA256(key), err)
	}
	h.mu.Lock()
	h.failure = err
	h.mu.Unlock()
	return err
}

// typeMismatch describes a server that offers none of the key types
// recorded for it; nil if nothing is recorded.
func (h *hostKeys) typeMismatch() error {
	want := h.recorded()
	if len(want) == 0 {
		return nil
	}
	var recs []string
	for _, k := range want {
		recs = append(recs, fmt.Sprintf("%s:%d (%s %s)", k.Filename, k.Line, k.Key.Type(), ssh.FingerprintSHA256(k.Key)))
	}
	return fmt.Errorf("%w: host key for %s has changed: the server offers no key of the types known_hosts records (%s); "+
		"if the node was reinstalled, remove the stale line with: ssh-keygen -R '%s' -f %s, otherwise the connection may be intercepted",
		ErrHostKeyMismatch, h.addr, strings.Join(recs, ", "), knownhosts.Normalize(h.addr), want[0].Filename)
}

// failed returns the verification error, if verification ran and failed.
func (h *hostKeys) failed() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.failure
}

func (h *hostKeys) describeFiles() string {
	if len(h.present) == 0 {
		return "none of " + strings.Join(h.files, ", ") + " exists"
	}
	return strings.Join(h.present, ", ")
}

func (h *hostKeys) keyscanCommand() string {
	host, port, err := net.SplitHostPort(h.addr)
	if err != nil {
		host, port = h.addr, "22"
	}
	file := "~/.ssh/known_hosts"
	if len(h.files) > 0 {
		file = h.files[0]
	}
	if port == "22" {
		return fmt.Sprintf("ssh-keyscan %s >> %s", host, file)
	}
	return fmt.Sprintf("ssh-keyscan -p %s %s >> %s", port, host, file)
}
