package remote

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/fleet-audit/fleet-audit/internal/shquote"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// authPlan is the keys one dial may offer, and the notes that explain a
// failure: which keys were offered and which were skipped and why. It never
// records key material or passphrases, only paths and fingerprints.
type authPlan struct {
	agentSocket    string
	agentConn      net.Conn // nil without a usable agent
	files          []fileSigner
	identitiesOnly bool
	// identities are the public keys of the identity files (derived from
	// the file or read from K.pub), the only agent keys IdentitiesOnly
	// lets through.
	identities map[string]bool
	// certs are the user certificates found next to identity files, by
	// the blob of the key they certify, so an agent holding that key can
	// present the certificate too.
	certs map[string]certFile

	mu      sync.Mutex
	loaded  bool
	signers []ssh.Signer
	// planned describes every signer, in the order handed to x/crypto;
	// tried marks those x/crypto actually put to the server. A server
	// that stops at MaxAuthTries never sees the rest, and listing them as
	// offered sends the user looking for the wrong problem.
	planned []string
	tried   []bool
	notes   []string
}

type fileSigner struct {
	path   string
	signer ssh.Signer
}

type certFile struct {
	path string
	cert *ssh.Certificate
}

// newAuthPlan parses the identity files and connects to the agent. Keys that
// cannot be used are skipped with a note rather than failing the dial,
// because another key may still be accepted.
//
// An encrypted identity file is unlocked with the value of the environment
// variable passphraseEnv, read now, else with ask; the result is kept for
// the process (see unlock), so a hundred nodes sharing the key ask once.
func newAuthPlan(deadline time.Time, agentSocket string, defaults, identityFiles []string, identitiesOnly bool, passphraseEnv string, ask PassphraseFunc) *authPlan {
	a := &authPlan{
		agentSocket:    agentSocket,
		identitiesOnly: identitiesOnly,
		identities:     make(map[string]bool),
		certs:          make(map[string]certFile),
	}
	if agentSocket != "" {
		d := net.Dialer{Deadline: deadline}
		conn, err := d.Dial("unix", agentSocket)
		if err != nil {
			a.note("ssh-agent at %s: %v", agentSocket, err)
		} else {
			// The agent answers during authentication, inside the dial
			// deadline; a hung agent must not outlive it.
			_ = conn.SetDeadline(deadline)
			a.agentConn = conn
		}
	}
	if len(identityFiles) == 0 {
		// As ssh does when no IdentityFile is configured anywhere: the
		// default keys that exist, after the agent. A missing one is
		// not worth a note; every user lacks most of them.
		for _, path := range defaults {
			if p := expandHome(path); fileExists(p) {
				a.addIdentity(deadline, p, passphraseEnv, ask)
			}
		}
		return a
	}
	for _, path := range identityFiles {
		a.addIdentity(deadline, expandHome(path), passphraseEnv, ask)
	}
	return a
}

// DefaultIdentityFiles are the keys ssh tries when no IdentityFile is
// configured, in its order (OpenSSH readconf.c, fill_default_options:
// id_rsa, id_ecdsa, id_ecdsa_sk, id_ed25519, id_ed25519_sk). Security-key
// (_sk) files need a hardware token x/crypto cannot drive; they are still
// listed so the failure note names them instead of leaving the user to
// wonder why their key was not offered.
var DefaultIdentityFiles = []string{
	"~/.ssh/id_rsa",
	"~/.ssh/id_ecdsa",
	"~/.ssh/id_ecdsa_sk",
	"~/.ssh/id_ed25519",
	"~/.ssh/id_ed25519_sk",
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func (a *authPlan) addIdentity(deadline time.Time, path, passphraseEnv string, ask PassphraseFunc) {
	if pub := readPublicKey(path + ".pub"); pub != nil {
		a.identities[string(pub.Marshal())] = true
	}
	a.addCert(path)
	pemBytes, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			a.note("%s: no such file", path)
		} else {
			a.note("%s: %v", path, err)
		}
		return
	}
	signer, err := ssh.ParsePrivateKey(pemBytes)
	var missing *ssh.PassphraseMissingError
	switch {
	case errors.As(err, &missing):
		if missing.PublicKey != nil {
			a.identities[string(missing.PublicKey.Marshal())] = true
		}
		var note string
		signer, note = unlock(deadline, path, pemBytes, passphraseEnv, ask)
		if signer == nil {
			a.note("%s", note)
			return
		}
	case err != nil:
		a.note("%s: not a usable private key: %v", path, err)
		return
	}
	a.identities[string(signer.PublicKey().Marshal())] = true
	a.files = append(a.files, fileSigner{path: path, signer: signer})
}

// addCert records K-cert.pub, the name OpenSSH looks for next to an
// identity file K.
func (a *authPlan) addCert(keyPath string) {
	path := keyPath + "-cert.pub"
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		a.note("%s: %v", path, err)
		return
	}
	pub, _, _, _, err := ssh.ParseAuthorizedKey(data)
	if err != nil {
		a.note("%s: not a certificate: %v", path, err)
		return
	}
	cert, ok := pub.(*ssh.Certificate)
	if !ok || cert.CertType != ssh.UserCert {
		a.note("%s: not a user certificate", path)
		return
	}
	now := uint64(time.Now().Unix())
	if now < cert.ValidAfter || (cert.ValidBefore != ssh.CertTimeInfinity && now >= cert.ValidBefore) {
		a.note("%s: certificate %q is outside its validity period; renew it", path, cert.KeyId)
		return
	}
	a.certs[string(cert.Key.Marshal())] = certFile{path: path, cert: cert}
	a.identities[string(cert.Key.Marshal())] = true
}

func readPublicKey(path string) ssh.PublicKey {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	pub, _, _, _, err := ssh.ParseAuthorizedKey(data)
	if err != nil {
		return nil
	}
	if cert, ok := pub.(*ssh.Certificate); ok {
		return cert.Key
	}
	return pub
}

// usable reports whether any key could be offered. An agent counts before
// it is asked, because listing its keys is deferred to the server's request,
// unless IdentitiesOnly leaves it nothing it may offer.
func (a *authPlan) usable() bool {
	if len(a.files) > 0 {
		return true
	}
	return a.agentConn != nil && (!a.identitiesOnly || len(a.identities) > 0)
}

// getSigners is handed to ssh.PublicKeysCallback, so the agent is only
// queried when the server actually asks for public key authentication.
// Agent keys come first, then identity files; a certificate comes right
// before the key it certifies, and a key offered once is not offered again,
// since every attempt counts against the server's MaxAuthTries.
func (a *authPlan) getSigners() ([]ssh.Signer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.loaded {
		return a.signers, nil
	}
	a.loaded = true
	seen := make(map[string]bool)
	add := func(s ssh.Signer, what string) {
		blob := string(s.PublicKey().Marshal())
		if seen[blob] {
			return
		}
		seen[blob] = true
		a.signers = append(a.signers, a.watch(s, len(a.planned)))
		a.planned = append(a.planned, what)
		a.tried = append(a.tried, false)
	}
	withCert := func(s ssh.Signer, what string) {
		if _, isCert := s.PublicKey().(*ssh.Certificate); !isCert {
			if cf, ok := a.certs[string(s.PublicKey().Marshal())]; ok {
				if cs, err := ssh.NewCertSigner(cf.cert, s); err != nil {
					a.notes = append(a.notes, fmt.Sprintf("%s: %v", cf.path, err))
				} else {
					add(cs, fmt.Sprintf("certificate %s (%q)", cf.path, cf.cert.KeyId))
				}
			}
		}
		add(s, what)
	}
	if a.agentConn != nil {
		signers, err := agent.NewClient(a.agentConn).Signers()
		switch {
		case err != nil:
			a.notes = append(a.notes, fmt.Sprintf("ssh-agent at %s: list keys: %v", a.agentSocket, err))
		case len(signers) == 0:
			a.notes = append(a.notes, fmt.Sprintf("ssh-agent at %s holds no keys", a.agentSocket))
		}
		hidden := 0
		for _, s := range signers {
			if a.identitiesOnly && !a.identities[string(plainKey(s.PublicKey()).Marshal())] {
				hidden++
				continue
			}
			withCert(s, "agent "+describeKey(s.PublicKey()))
		}
		if hidden > 0 {
			a.notes = append(a.notes, fmt.Sprintf("IdentitiesOnly: %d ssh-agent key(s) matching no identity file not offered", hidden))
		}
	}
	for _, f := range a.files {
		withCert(f.signer, f.path+" "+describeKey(f.signer.PublicKey()))
	}
	return a.signers, nil
}

// watch wraps s so that x/crypto's use of it is seen. For each signer in
// turn, x/crypto's publicKeyCallback.auth asks it for its public key and
// sends that key to the server as a query (RFC 4252 7, without a
// signature), signing only if the server accepts it; it stops asking at
// the first key the server accepts, or when the server disconnects. So
// the signers asked for their key are the keys the server was offered.
// Two edges: a key x/crypto skips for want of a common signature algorithm
// was asked for its key too, and against x/crypto's own server the key
// answered by the MaxAuthTries disconnect was sent but never read (OpenSSH
// reads it and disconnects in reply).
// The wrapper keeps the signer's interfaces, because x/crypto picks the
// signature algorithms by them: a plain Signer over an RSA key would be
// offered with SHA-1 ssh-rsa only, which OpenSSH refuses.
func (a *authPlan) watch(s ssh.Signer, i int) ssh.Signer {
	mark := func() {
		a.mu.Lock()
		a.tried[i] = true
		a.mu.Unlock()
	}
	switch s := s.(type) {
	case ssh.MultiAlgorithmSigner:
		return watchedMultiAlgorithmSigner{s, mark}
	case ssh.AlgorithmSigner:
		return watchedAlgorithmSigner{s, mark}
	}
	return watchedSigner{s, mark}
}

type watchedSigner struct {
	ssh.Signer
	mark func()
}

func (w watchedSigner) PublicKey() ssh.PublicKey {
	w.mark()
	return w.Signer.PublicKey()
}

type watchedAlgorithmSigner struct {
	ssh.AlgorithmSigner
	mark func()
}

func (w watchedAlgorithmSigner) PublicKey() ssh.PublicKey {
	w.mark()
	return w.AlgorithmSigner.PublicKey()
}

type watchedMultiAlgorithmSigner struct {
	ssh.MultiAlgorithmSigner
	mark func()
}

func (w watchedMultiAlgorithmSigner) PublicKey() ssh.PublicKey {
	w.mark()
	return w.MultiAlgorithmSigner.PublicKey()
}

func (a *authPlan) note(format string, args ...any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.notes = append(a.notes, fmt.Sprintf(format, args...))
}

// summary says which keys the server was offered, which it never saw, and
// why other keys were not usable, for an authentication error.
func (a *authPlan) summary() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var offered, untried []string
	for i, what := range a.planned {
		if a.tried[i] {
			offered = append(offered, what)
		} else {
			untried = append(untried, what)
		}
	}
	var parts []string
	if len(offered) > 0 {
		parts = append(parts, "offered "+strings.Join(offered, ", "))
	} else {
		parts = append(parts, "no key was offered")
	}
	if len(untried) > 0 {
		parts = append(parts, "not offered: "+strings.Join(untried, ", "))
	}
	parts = append(parts, a.notes...)
	return strings.Join(parts, "; ")
}

// noKeyReason explains why there is nothing to offer at all.
func (a *authPlan) noKeyReason() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	notes := append([]string(nil), a.notes...)
	switch {
	case a.agentSocket == "":
		notes = append(notes, "no ssh-agent configured (SSH_AUTH_SOCK)")
	case a.agentConn != nil && a.identitiesOnly:
		notes = append(notes, "IdentitiesOnly is set, so the ssh-agent may offer only the keys of identity files, and none is usable")
	}
	if len(notes) == 0 {
		notes = append(notes, "no identity file configured")
	}
	return strings.Join(notes, "; ")
}

func (a *authPlan) close() {
	if a.agentConn != nil {
		_ = a.agentConn.Close()
	}
}

func describeKey(k ssh.PublicKey) string {
	if cert, ok := k.(*ssh.Certificate); ok {
		return fmt.Sprintf("certificate %q for %s %s", cert.KeyId, cert.Key.Type(), ssh.FingerprintSHA256(cert.Key))
	}
	return k.Type() + " " + ssh.FingerprintSHA256(k)
}

// plainKey is the key a certificate certifies, or k itself.
func plainKey(k ssh.PublicKey) ssh.PublicKey {
	if cert, ok := k.(*ssh.Certificate); ok {
		return cert.Key
	}
	return k
}

// unlocked holds what decrypting each encrypted identity file gave, for
// the whole process: a fleet of a hundred nodes sharing one key asks for
// its passphrase once, and a wrong passphrase is not asked again. Entries
// are keyed by path and content, so a replaced file is decrypted afresh.
var unlocked = struct {
	mu sync.Mutex
	m  map[unlockKey]*unlockEntry
}{m: make(map[unlockKey]*unlockEntry)}

type unlockKey struct {
	path string
	sum  [sha256.Size]byte
}

type unlockEntry struct {
	signer   ssh.Signer          // set once any source decrypted the key
	attempts map[string]*attempt // by passphrase source
}

// attempt is one decryption with a passphrase from one source. done is
// closed when signer or note is set.
type attempt struct {
	done   chan struct{}
	signer ssh.Signer
	note   string
}

// unlock decrypts an encrypted identity file, or says in a note why not.
// The passphrase comes from the environment variable passphraseEnv, else
// from ask. Concurrent dials share one attempt per source; the wait for it
// (a person typing) is bounded by the dial's deadline, after which the
// attempt goes on for later dials. Notes never contain the passphrase.
func unlock(deadline time.Time, path string, pemBytes []byte, passphraseEnv string, ask PassphraseFunc) (ssh.Signer, string) {
	var (
		source string
		get    func() ([]byte, error)
		from   string
	)
	if passphraseEnv != "" {
		if v := os.Getenv(passphraseEnv); v != "" {
			// The value is part of the key so that a corrected variable
			// is tried, but only as a hash: entries are never printed,
			// and still no secret should sit in a map key.
			sum := sha256.Sum256([]byte(v))
			source = "env:" + passphraseEnv + ":" + string(sum[:])
			get = func() ([]byte, error) { return []byte(v), nil }
			from = "from $" + passphraseEnv
		}
	}
	if get == nil && ask != nil {
		source = "ask"
		get = func() ([]byte, error) { return ask(path) }
		from = "as entered"
	}
	k := unlockKey{path: path, sum: sha256.Sum256(pemBytes)}
	// A key already unlocked (by Unlock, or another node's dial) needs no
	// source of its own.
	unlocked.mu.Lock()
	if e := unlocked.m[k]; e != nil && e.signer != nil {
		s := e.signer
		unlocked.mu.Unlock()
		return s, ""
	}
	unlocked.mu.Unlock()
	if get == nil {
		why := "no passphrase_env is set for it"
		if passphraseEnv != "" {
			why = "$" + passphraseEnv + " is empty"
		}
		return nil, fmt.Sprintf("%s: passphrase-protected and %s; set passphrase_env to a variable holding its passphrase, or load it into ssh-agent with: ssh-add %s",
			path, why, shquote.Readable(path))
	}

	unlocked.mu.Lock()
	e := unlocked.m[k]
	if e == nil {
		e = &unlockEntry{attempts: make(map[string]*attempt)}
		unlocked.m[k] = e
	}
	if e.signer != nil {
		s := e.signer
		unlocked.mu.Unlock()
		return s, ""
	}
	at := e.attempts[source]
	if at == nil {
		at = &attempt{done: make(chan struct{})}
		e.attempts[source] = at
		go func() {
			signer, note := decrypt(path, pemBytes, get, from)
			unlocked.mu.Lock()
			at.signer, at.note = signer, note
			if signer != nil {
				e.signer = signer
			}
			unlocked.mu.Unlock()
			close(at.done)
		}()
	}
	unlocked.mu.Unlock()

	select {
	case <-at.done:
	default:
		if !deadline.IsZero() && !await(at.done, time.Until(deadline)) {
			return nil, fmt.Sprintf("%s: passphrase-protected and still being unlocked at the connect deadline", path)
		}
		<-at.done
	}
	unlocked.mu.Lock()
	defer unlocked.mu.Unlock()
	return at.signer, at.note
}

func decrypt(path string, pemBytes []byte, get func() ([]byte, error), from string) (ssh.Signer, string) {
	pass, err := get()
	if err != nil {
		return nil, fmt.Sprintf("%s: passphrase-protected and no passphrase is available (%v); set passphrase_env or load it into ssh-agent with: ssh-add %s",
			path, err, shquote.Readable(path))
	}
	defer clear(pass)
	signer, err := ssh.ParsePrivateKeyWithPassphrase(pemBytes, pass)
	switch {
	case errors.Is(err, x509.IncorrectPasswordError):
		return nil, fmt.Sprintf("%s: wrong passphrase %s; key skipped", path, from)
	case err != nil:
		// x/crypto's decryption errors describe the format, never the
		// input; still, nothing but the error's text goes in the note.
		return nil, fmt.Sprintf("%s: cannot decrypt the private key: %v; key skipped", path, redact(err.Error(), pass))
	}
	return signer, ""
}

// redact removes a secret from a message, in case a library ever echoes it.
func redact(msg string, secret []byte) string {
	if len(secret) == 0 || !bytes.Contains([]byte(msg), secret) {
		return msg
	}
	return strings.ReplaceAll(msg, string(secret), "[redacted]")
}

// expandHome expands a leading "~/" as the shell would, since inventories
// are written with shell paths in mind.
func expandHome(path string) string {
	if !strings.HasPrefix(path, "~/") {
		return path
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return path
	}
	return home + path[1:]
}

// Unlock decrypts an encrypted identity file ahead of the dials and keeps
// it for them, so that a person typing its passphrase is not racing every
// node's connect timeout; ctx bounds the wait instead. A key that is not
// encrypted, or cannot be read, is left to the dials, which report it.
// The error is the note a dial would give.
func Unlock(ctx context.Context, path, passphraseEnv string, ask PassphraseFunc) error {
	path = expandHome(path)
	pemBytes, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var missing *ssh.PassphraseMissingError
	if _, err := ssh.ParsePrivateKey(pemBytes); !errors.As(err, &missing) {
		return nil
	}
	deadline, _ := ctx.Deadline()
	if signer, note := unlock(deadline, path, pemBytes, passphraseEnv, ask); signer == nil {
		return errors.New(note)
	}
	return nil
}
