package remote

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/fleet-audit/fleet-audit/internal/shquote"
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
	db      *hostDB
	policy  HostKeyPolicy // never HostKeyDefault

	verified atomic.Bool
	mu       sync.Mutex
	failure  error
	ignored  error  // what strict would have refused, under insecure-ignore
	learned  string // the file accept-new recorded the key in

	// onLearn, when set, is told the line accept-new appended to a file,
	// numbered as a fresh read of the file would number it.
	onLearn func(file string, lineNum int, line []byte)
}

// loadHostKeys reads and parses the known_hosts files that exist, for one
// dial. A dialer reads them once for all its dials (knownHostsCache).
// Missing files are not an error, because a fresh machine has none; with no
// file at all every host is simply unknown.
func loadHostKeys(addr string, files []string, policy HostKeyPolicy) (*hostKeys, error) {
	set := &knownHostsSet{files: files}
	if err := set.load(); err != nil {
		return nil, err
	}
	return set.hostKeys(addr, policy), nil
}

// knownHostsCache holds the known_hosts files of one dialer, which is one
// run, read and parsed once each (issue 31: a fleet's file grows with the
// fleet, and reading it for every dial made a run quadratic in its size).
// Only accept-new reads a file again, under its lock, as it must.
type knownHostsCache struct {
	mu     sync.Mutex
	sets   map[string]*knownHostsSet // by the file list, joined with NUL
	parses atomic.Int64              // sets loaded, for a test
}

// knownHostsSet is one list of known_hosts files, as a target names them.
type knownHostsSet struct {
	files []string
	once  sync.Once
	err   error
	db    *hostDB

	mu      sync.Mutex
	present []string // the files that exist
}

// get returns the parsed set for files, reading it on first use.
func (c *knownHostsCache) get(files []string) (*knownHostsSet, error) {
	key := strings.Join(files, "\x00")
	c.mu.Lock()
	if c.sets == nil {
		c.sets = map[string]*knownHostsSet{}
	}
	set, ok := c.sets[key]
	if !ok {
		set = &knownHostsSet{files: files}
		c.sets[key] = set
	}
	c.mu.Unlock()
	set.once.Do(func() {
		c.parses.Add(1)
		set.err = set.load()
	})
	return set, set.err
}

// learned adds the line accept-new wrote to file to every set that reads
// file, so the rest of the run knows the key as a fresh read would.
func (c *knownHostsCache) learned(file string, lineNum int, line []byte) {
	c.mu.Lock()
	var sets []*knownHostsSet
	for _, set := range c.sets {
		if slices.Contains(set.files, file) {
			sets = append(sets, set)
		}
	}
	c.mu.Unlock()
	for _, set := range sets {
		set.once.Do(func() {}) // wait for a set still loading
		if set.err != nil {
			continue
		}
		set.mu.Lock()
		if !slices.Contains(set.present, file) {
			set.present = nil
			for _, f := range set.files {
				if _, err := os.Stat(f); err == nil {
					set.present = append(set.present, f)
				}
			}
		}
		set.mu.Unlock()
		if !set.db.has(file, lineNum) { // a set that loaded after the write has it
			_ = set.db.add(line, file, lineNum)
		}
	}
}

// load finds the files that exist and parses them.
func (s *knownHostsSet) load() error {
	for _, f := range s.files {
		_, err := os.Stat(f)
		switch {
		case err == nil:
			s.present = append(s.present, f)
		case errors.Is(err, fs.ErrNotExist):
		default:
			return fmt.Errorf("%w: cannot read known_hosts: %w", ErrHostKeyUnknown, err)
		}
	}
	db, err := openHostDB(s.present)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrHostKeyUnknown, err)
	}
	s.db = db
	return nil
}

// hostKeys starts one dial's verification against the set.
func (s *knownHostsSet) hostKeys(addr string, policy HostKeyPolicy) *hostKeys {
	if policy == HostKeyDefault {
		policy = HostKeyStrict
	}
	s.mu.Lock()
	present := slices.Clone(s.present)
	s.mu.Unlock()
	return &hostKeys{addr: addr, files: s.files, present: present, policy: policy, db: s.db}
}

// probeKey is a key no known_hosts file can contain. Checking it against the
// database fails with a KeyError listing every line that matches the host,
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

// lookup returns the host keys and the certificate authorities known_hosts
// lists for host.
func (db *hostDB) lookup(host string) (keys, authorities []knownhosts.KnownKey) {
	var ke *knownhosts.KeyError
	if err := db.check(host, staticAddr(host), probeKey()); errors.As(err, &ke) {
		return db.split(ke.Want)
	}
	return nil, nil
}

func (db *hostDB) split(want []knownhosts.KnownKey) (keys, authorities []knownhosts.KnownKey) {
	for _, k := range want {
		if db.isCA(k.Filename, k.Line) {
			authorities = append(authorities, k)
		} else {
			keys = append(keys, k)
		}
	}
	return keys, authorities
}

// recorded returns the host keys known_hosts holds for the host, not
// counting certificate authorities.
func (h *hostKeys) recorded() []knownhosts.KnownKey {
	keys, _ := h.db.lookup(h.addr)
	return keys
}

// hostKeyAlgorithms maps a recorded key type to the signature algorithms
// that can prove it, strongest first.
var hostKeyAlgorithms = map[string][]string{
	ssh.KeyAlgoRSA: {ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA},
}

// hostCertAlgorithms lists the certificate algorithms over each key type.
// Without a @cert-authority line for the host they come after every plain
// algorithm: a server holding a certificate also holds the plain key, and
// the recorded plain key is what we can verify (check falls back to the
// certified key, as OpenSSH does).
var hostCertAlgorithms = map[string][]string{
	ssh.KeyAlgoRSA:       {ssh.CertAlgoRSASHA512v01, ssh.CertAlgoRSASHA256v01, ssh.CertAlgoRSAv01},
	ssh.KeyAlgoECDSA256:  {ssh.CertAlgoECDSA256v01},
	ssh.KeyAlgoECDSA384:  {ssh.CertAlgoECDSA384v01},
	ssh.KeyAlgoECDSA521:  {ssh.CertAlgoECDSA521v01},
	ssh.KeyAlgoED25519:   {ssh.CertAlgoED25519v01},
	ssh.KeyAlgoSKED25519: {ssh.CertAlgoSKED25519v01},
}

// algorithms returns the host key algorithms to offer. Without this,
// x/crypto prefers ECDSA and RSA over Ed25519, so a host recorded with its
// Ed25519 key that also has an ECDSA key would be reported as a mismatch.
//
// With a @cert-authority line for the host every certificate algorithm
// comes first, as in OpenSSH: the authority vouches for a certificate over
// any key type. Nil means x/crypto's defaults: nothing is recorded, or
// insecure-ignore takes whatever the server has.
func (h *hostKeys) algorithms() []string {
	if h.policy == HostKeyInsecureIgnore {
		return nil
	}
	supported := slices.Concat(ssh.SupportedAlgorithms().HostKeys, ssh.InsecureAlgorithms().HostKeys)
	var plain, certs []string
	add := func(list *[]string, algos ...string) {
		for _, a := range algos {
			if slices.Contains(supported, a) && !slices.Contains(*list, a) {
				*list = append(*list, a)
			}
		}
	}
	keys, authorities := h.db.lookup(h.addr)
	if len(authorities) > 0 {
		for _, a := range ssh.SupportedAlgorithms().HostKeys {
			if strings.Contains(a, "-cert-v01@openssh.com") {
				add(&certs, a)
			}
		}
	}
	for _, k := range keys {
		typ := k.Key.Type()
		if algos, ok := hostKeyAlgorithms[typ]; ok {
			add(&plain, algos...)
		} else {
			add(&plain, typ)
		}
		add(&certs, hostCertAlgorithms[typ]...)
	}
	switch {
	case len(authorities) > 0 && len(plain) == 0:
		// A server without a certificate then still shows its plain
		// key, and is reported as unknown rather than as having no
		// common algorithm.
		var rest []string
		for _, a := range ssh.SupportedAlgorithms().HostKeys {
			if !strings.Contains(a, "-cert-v01@openssh.com") {
				rest = append(rest, a)
			}
		}
		return append(certs, rest...)
	case len(authorities) > 0:
		return append(certs, plain...)
	case len(plain) == 0:
		return nil
	}
	return append(plain, certs...)
}

// verdict is how known_hosts judges an offered key.
type verdict int

const (
	keyOK      verdict = iota
	keyUnknown         // nothing recorded vouches for or against the key
	keyChanged         // the host has other keys recorded
	keyRevoked         // the key or its certificate authority is @revoked
	keyBadCert         // a trusted authority's certificate that does not verify
)

// check is the ssh.HostKeyCallback. Its errors carry the fix, because a
// host key problem is the one failure the user must resolve by hand.
func (h *hostKeys) check(hostname string, remote net.Addr, key ssh.PublicKey) error {
	v, err := h.judge(h.db, hostname, remote, key)
	switch {
	case v == keyOK:
	case v == keyRevoked:
		// Even insecure-ignore refuses a key the user has revoked, as
		// OpenSSH does: the line is an explicit statement about it.
	case h.policy == HostKeyInsecureIgnore:
		h.mu.Lock()
		h.ignored = err
		h.mu.Unlock()
		err = nil
	case h.policy == HostKeyAcceptNew && v == keyUnknown:
		err = h.acceptNew(hostname, remote, key)
	}
	h.mu.Lock()
	h.failure = err
	h.mu.Unlock()
	if err != nil {
		return err
	}
	h.verified.Store(true)
	return nil
}

// judge verifies key against db for hostname and explains a refusal.
func (h *hostKeys) judge(db *hostDB, hostname string, remote net.Addr, key ssh.PublicKey) (verdict, error) {
	plain := key
	cert, isCert := key.(*ssh.Certificate)
	if isCert {
		plain = cert.Key
	}
	// knownhosts checks revocation of a certificate only after trusting
	// its authority, and reports it as an anonymous error; asking for the
	// certified key and the authority by themselves gives the line.
	revokedKeys := []ssh.PublicKey{plain}
	if isCert {
		revokedKeys = append(revokedKeys, cert.SignatureKey)
	}
	for i, k := range revokedKeys {
		var re *knownhosts.RevokedError
		if err := db.check(hostname, remote, k); errors.As(err, &re) {
			what := fmt.Sprintf("host key for %s (%s)", h.addr, describeKey(k))
			if i > 0 {
				what = fmt.Sprintf("certificate authority (%s) that signed the host certificate of %s", describeKey(k), h.addr)
			}
			return keyRevoked, fmt.Errorf("%w: the %s is marked @revoked in %s:%d; do not connect until the node has a new host key",
				ErrHostKeyMismatch, what, re.Revoked.Filename, re.Revoked.Line)
		}
	}

	keys, authorities := db.lookup(hostname)
	if isCert {
		trusted := slices.ContainsFunc(authorities, func(k knownhosts.KnownKey) bool { return keysEqual(k.Key, cert.SignatureKey) })
		if trusted {
			if err := db.check(hostname, remote, key); err != nil {
				return keyBadCert, fmt.Errorf("%w: host certificate of %s (%s, signed by %s) is not valid: %w; renew the node's host certificate",
					ErrHostKeyUnknown, h.addr, describeKey(plain), describeKey(cert.SignatureKey), err)
			}
			return keyOK, nil
		}
		// An authority not trusted for this host: the certified key may
		// still be recorded by itself, which OpenSSH accepts too.
	}

	if slices.ContainsFunc(keys, func(k knownhosts.KnownKey) bool { return keysEqual(k.Key, plain) }) {
		return keyOK, nil
	}
	if len(keys) > 0 {
		return keyChanged, h.changedError(hostname, plain, keys)
	}
	var also string
	switch {
	case isCert && len(authorities) > 0:
		also = fmt.Sprintf("; its certificate is signed by %s, which no @cert-authority line for the host lists", describeKey(cert.SignatureKey))
	case len(authorities) > 0:
		also = "; a @cert-authority line covers the host but the server offered no certificate"
	}
	return keyUnknown, fmt.Errorf("%w: host key for %s is not in known_hosts (%s)%s; verify the fingerprint %s and add it with: %s",
		ErrHostKeyUnknown, h.addr, h.describeFiles(), also, describeKey(plain), h.keyscanCommand())
}

func (h *hostKeys) changedError(hostname string, offered ssh.PublicKey, want []knownhosts.KnownKey) error {
	var recs []string
	for _, k := range want {
		recs = append(recs, fmt.Sprintf("%s:%d (%s)", k.Filename, k.Line, describeKey(k.Key)))
	}
	return fmt.Errorf("%w: host key for %s has changed: the server offered %s but known_hosts records %s; "+
		"if the node was reinstalled, remove the stale entry with: %s, otherwise the connection may be intercepted",
		ErrHostKeyMismatch, h.addr, describeKey(offered), strings.Join(recs, ", "), removeCommand(hostname, want))
}

// removeCommand is the ssh-keygen -R invocation for every file that
// records the host; -R also finds hashed entries.
func removeCommand(hostname string, want []knownhosts.KnownKey) string {
	var files, cmds []string
	for _, k := range want {
		if !slices.Contains(files, k.Filename) {
			files = append(files, k.Filename)
			cmds = append(cmds, "ssh-keygen -R "+shquote.Readable(knownhosts.Normalize(hostname))+" -f "+shquote.Readable(k.Filename))
		}
	}
	return strings.Join(cmds, " && ")
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
		recs = append(recs, fmt.Sprintf("%s:%d (%s)", k.Filename, k.Line, describeKey(k.Key)))
	}
	return fmt.Errorf("%w: host key for %s has changed: the server offers no key of the types known_hosts records (%s); "+
		"if the node was reinstalled, remove the stale entry with: %s, otherwise the connection may be intercepted",
		ErrHostKeyMismatch, h.addr, strings.Join(recs, ", "), removeCommand(h.addr, want))
}

// failed returns the verification error, if verification ran and failed.
func (h *hostKeys) failed() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.failure
}

// ignoredMismatch returns what strict verification would have refused when
// insecure-ignore accepted the key anyway: an error wrapping
// ErrHostKeyUnknown or ErrHostKeyMismatch with the fingerprints; nil when
// the key was verified.
func (h *hostKeys) ignoredMismatch() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ignored
}

// learnedIn returns the known_hosts file accept-new recorded the host's key
// in during this dial, or "".
func (h *hostKeys) learnedIn() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.learned
}

// knownHostsLocks serializes accept-new among the dials of this process
// before they take the file lock, so a fleet of new hosts queues on a mutex
// rather than parking one OS thread per dial in flock(2). Keyed by the
// resolved path.
var knownHostsLocks sync.Map // string -> *sync.Mutex

// acceptNew records key for an unknown host in the first known_hosts file.
// It re-reads that file under its lock: a concurrent dial, here or in
// another fleet-audit process, may have recorded the host meanwhile, with
// this key (accepted, not added twice) or another (a mismatch, never
// replaced).
func (h *hostKeys) acceptNew(hostname string, remote net.Addr, key ssh.PublicKey) error {
	plain := key
	if cert, ok := key.(*ssh.Certificate); ok {
		plain = cert.Key
	}
	if len(h.files) == 0 {
		return fmt.Errorf("%w: host key for %s (%s) is unknown and no known_hosts file is configured to record it in",
			ErrHostKeyUnknown, h.addr, describeKey(plain))
	}
	path, err := resolveLink(h.files[0])
	if err != nil {
		return fmt.Errorf("%w: record host key of %s: %w", ErrHostKeyUnknown, h.addr, err)
	}
	muAny, _ := knownHostsLocks.LoadOrStore(path, new(sync.Mutex))
	mu := muAny.(*sync.Mutex)
	mu.Lock()
	defer mu.Unlock()

	f, err := lockKnownHosts(path)
	if err != nil {
		return fmt.Errorf("%w: record host key of %s in %s: %w", ErrHostKeyUnknown, h.addr, path, err)
	}
	defer f.Close() // also releases the flock
	old, err := io.ReadAll(io.NewSectionReader(f, 0, math.MaxInt64))
	if err != nil {
		return fmt.Errorf("%w: record host key of %s: %w", ErrHostKeyUnknown, h.addr, err)
	}
	if len(old) > 0 {
		// lockKnownHosts made sure path still names the locked file, so
		// parsing it by name reads what the lock protects.
		db, err := openHostDB([]string{path})
		if err != nil {
			return fmt.Errorf("%w: record host key of %s in %s: %w", ErrHostKeyUnknown, h.addr, path, err)
		}
		if v, err := h.judge(db, hostname, remote, plain); v != keyUnknown {
			return err
		}
	}
	host := knownhosts.Normalize(hostname)
	if usesHashedHosts(old) {
		host = knownhosts.HashHostname(host)
	}
	line := host + " " + string(ssh.MarshalAuthorizedKey(plain))
	if len(old) > 0 && old[len(old)-1] != '\n' {
		line = "\n" + line
	}
	// One write on an O_APPEND descriptor: the line lands whole at the
	// end even beside a writer that takes no lock (ssh itself).
	if _, err := f.WriteString(line); err != nil {
		return fmt.Errorf("%w: record host key of %s in %s: %w", ErrHostKeyUnknown, h.addr, path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("%w: record host key of %s in %s: %w", ErrHostKeyUnknown, h.addr, path, err)
	}
	if h.onLearn != nil {
		// Lines as bufio.Scanner counts them: the last one may lack its
		// newline, and a line was added after it.
		n := bytes.Count(old, []byte("\n"))
		if len(old) > 0 && old[len(old)-1] != '\n' {
			n++
		}
		h.onLearn(h.files[0], n+1, bytes.TrimSpace([]byte(line)))
	}
	h.mu.Lock()
	h.learned = path
	h.mu.Unlock()
	return nil
}

// lockKnownHosts opens path for appending, creating it 0600 in a 0700
// directory as ssh does, and takes an exclusive flock(2) on it.
//
// Entries are appended in place, as OpenSSH's add_host_to_hostfile does
// (hostfile.c: fopen(filename, "a")), never written to a temporary file and
// renamed over the original: a rename hands the file to the running user
// and a new inode, cutting off hard links, and it is what let two
// fleet-audit processes each rename their own copy over the other's and
// lose entries. Because the inode is never replaced, the lock is taken on
// known_hosts itself rather than on a sibling lock file: there is no
// stray file left in ~/.ssh, and every fleet-audit process sharing the file
// through any hard link or symlink meets on the same lock. ssh and
// ssh-keyscan take no lock, so it cannot order them; ssh-keygen -R does
// replace the file, so once locked the descriptor is checked to still be
// what path names, and opened again if not.
func lockKnownHosts(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	for range 10 {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return nil, err
		}
		if err := flock(f); err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("lock: %w", err)
		}
		held, err := f.Stat()
		if err != nil {
			_ = f.Close()
			return nil, err
		}
		named, err := os.Stat(path)
		switch {
		case err == nil && os.SameFile(held, named):
			return f, nil
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			_ = f.Close()
			return nil, err
		}
		// Replaced or removed while we waited for the lock.
		_ = f.Close()
	}
	return nil, errors.New("the file keeps being replaced while locking it")
}

// flock takes an exclusive advisory lock, retrying when a signal
// interrupts the wait.
func flock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// resolveLink follows a symlinked known_hosts file, so the in-process lock
// is shared by every name of it and a missing target is not created
// through a dangling link.
func resolveLink(path string) (string, error) {
	real, err := filepath.EvalSymlinks(path)
	switch {
	case err == nil:
		return real, nil
	case errors.Is(err, fs.ErrNotExist):
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return "", fmt.Errorf("%s is a dangling symlink", path)
		}
		return filepath.Clean(path), nil
	}
	return "", err
}

// usesHashedHosts reports whether the file's entries hide their host names
// (HashKnownHosts), so a new entry should too.
func usesHashedHosts(data []byte) bool {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) > 0 && strings.HasPrefix(f[0], "@") {
			f = f[1:]
		}
		if len(f) > 0 && !strings.HasPrefix(f[0], "#") {
			return strings.HasPrefix(f[0], "|1|")
		}
	}
	return false
}

func keysEqual(a, b ssh.PublicKey) bool {
	return bytes.Equal(a.Marshal(), b.Marshal())
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
		file = shquote.Readable(h.files[0])
		if data, err := os.ReadFile(h.files[0]); err == nil && usesHashedHosts(data) {
			host = "-H " + shquote.Readable(host)
		} else {
			host = shquote.Readable(host)
		}
	}
	if port == "22" {
		return fmt.Sprintf("ssh-keyscan %s >> %s", host, file)
	}
	return fmt.Sprintf("ssh-keyscan -p %s %s >> %s", port, host, file)
}
