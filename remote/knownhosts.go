package remote

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"sync"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// hostDB is the known_hosts files of one run, parsed once and indexed by
// host, with what knownhosts does not tell: which lines are
// @cert-authority lines. knownhosts reports those among a host's keys
// (KeyError.Want) and even accepts a plain host key equal to a CA key, so
// every verdict in hostkey.go first separates authorities from host keys.
//
// Its verdicts are those of golang.org/x/crypto/ssh/knownhosts (v0.59.0,
// knownhosts.go: parseLine, newHostnameMatcher, wildcardMatch, hashedHost,
// hostKeyDB.check, checkAddr, IsHostAuthority, IsRevoked and Read), whose
// parser and matcher are ported here because knownhosts.New scans every
// line of every file for each host it is asked about, and reads only from
// files: for a fleet of N nodes that is N² line matches, and the file
// read again for every dial. Here a line whose host patterns are plain
// names (no wildcard, negation or hash) is found through a map; only the
// others are matched one by one, as knownhosts matches every line.
// TestHostDBAgreesWithKnownhosts holds the two to the same answers.
type hostDB struct {
	checker ssh.CertChecker

	mu      sync.RWMutex
	lines   []hostLine
	byAddr  map[hostAddr][]int // plain-named lines by each name, in file order
	scan    []int              // every other line, in file order
	revoked map[string]*knownhosts.KnownKey
	ca      map[lineRef]bool
	last    map[string]int // the last line of each file parsed
}

type lineRef struct {
	file string
	line int
}

// hostAddr is knownhosts' addr: a host and a port, "22" when none.
type hostAddr struct{ host, port string }

func (a hostAddr) String() string {
	h := a.host
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	return h + ":" + a.port
}

type hostLine struct {
	cert    bool
	matcher hostMatcher
	key     knownhosts.KnownKey
}

type hostMatcher interface {
	match(hostAddr) bool
}

func newHostDB() *hostDB {
	db := &hostDB{byAddr: map[hostAddr][]int{}, revoked: map[string]*knownhosts.KnownKey{}, ca: map[lineRef]bool{}, last: map[string]int{}}
	db.checker.IsHostAuthority = db.isHostAuthority
	db.checker.IsRevoked = db.isRevoked
	db.checker.HostKeyFallback = db.checkPlain
	return db
}

// openHostDB reads and parses files, as knownhosts.New(files...) does.
func openHostDB(files []string) (*hostDB, error) {
	db := newHostDB()
	for _, fn := range files {
		if err := db.readFile(fn); err != nil {
			return nil, fmt.Errorf("cannot parse known_hosts: %w", err)
		}
	}
	return db, nil
}

func (db *hostDB) readFile(fn string) error {
	f, err := os.Open(fn)
	if err != nil {
		return err
	}
	defer f.Close()
	return db.read(f, fn)
}

// read is knownhosts' hostKeyDB.Read: lines that cannot be parsed are
// skipped, but a file of invalid lines and no valid one is an error.
func (db *hostDB) read(r io.Reader, filename string) error {
	scanner := bufio.NewScanner(r)
	var firstErr error
	firstErrLine, valid, lineNum := 0, 0, 0
	for scanner.Scan() {
		lineNum++
		line := bytes.Trim(scanner.Bytes(), " \t")
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		if err := db.add(line, filename, lineNum); err != nil {
			if firstErr == nil {
				firstErr, firstErrLine = err, lineNum
			}
			continue
		}
		valid++
	}
	if err := scanner.Err(); err != nil {
		return err
	}
	if valid == 0 && firstErr != nil {
		return fmt.Errorf("knownhosts: %s: no valid entries, line %d: %v", filename, firstErrLine, firstErr)
	}
	return nil
}

// add parses one line (knownhosts' hostKeyDB.parseLine) and indexes it.
func (db *hostDB) add(line []byte, filename string, lineNum int) error {
	marker, pattern, key, err := parseHostLine(line)
	if err != nil {
		return err
	}
	known := knownhosts.KnownKey{Key: key, Filename: filename, Line: lineNum}
	db.mu.Lock()
	defer db.mu.Unlock()
	db.last[filename] = max(db.last[filename], lineNum)
	if marker == markerRevoked {
		db.revoked[plainKeyBlob(key)] = &known
		return nil
	}
	entry := hostLine{cert: marker == markerCert, key: known}
	var plain []hostAddr
	if pattern[0] == '|' {
		entry.matcher, err = newHashedHost(pattern)
	} else {
		var ps hostPatterns
		ps, err = newHostnameMatcher(pattern)
		entry.matcher, plain = ps, ps.plainAddrs()
	}
	if err != nil {
		return err
	}
	i := len(db.lines)
	db.lines = append(db.lines, entry)
	if entry.cert {
		db.ca[lineRef{filename, lineNum}] = true
	}
	if plain == nil {
		db.scan = append(db.scan, i)
		return nil
	}
	for _, a := range plain {
		if l := db.byAddr[a]; len(l) == 0 || l[len(l)-1] != i {
			db.byAddr[a] = append(l, i)
		}
	}
	return nil
}

// matching returns, in file order, the lines whose patterns match a.
func (db *hostDB) matching(a hostAddr) []hostLine {
	db.mu.RLock()
	defer db.mu.RUnlock()
	var idx []int
	for _, i := range db.scan {
		if db.lines[i].matcher.match(a) {
			idx = append(idx, i)
		}
	}
	if plain := db.byAddr[a]; len(idx) == 0 {
		idx = plain
	} else if len(plain) > 0 {
		idx = append(idx, plain...)
		slices.Sort(idx)
	}
	out := make([]hostLine, len(idx))
	for j, i := range idx {
		out[j] = db.lines[i]
	}
	return out
}

// has reports whether file's line lineNum was read already: lines are
// read in order, and accept-new only appends.
func (db *hostDB) has(file string, lineNum int) bool {
	db.mu.RLock()
	defer db.mu.RUnlock()
	return lineNum <= db.last[file]
}

// isCA reports whether the line is a @cert-authority line.
func (db *hostDB) isCA(file string, line int) bool {
	db.mu.RLock()
	defer db.mu.RUnlock()
	return db.ca[lineRef{file, line}]
}

// check is the callback knownhosts.New returns: a certificate is checked
// against the authorities, any other key by checkPlain.
func (db *hostDB) check(address string, remote net.Addr, key ssh.PublicKey) error {
	return db.checker.CheckHostKey(address, remote, key)
}

// isHostAuthority is knownhosts' IsHostAuthority.
func (db *hostDB) isHostAuthority(remote ssh.PublicKey, address string) bool {
	h, p, err := net.SplitHostPort(address)
	if err != nil {
		return false
	}
	for _, l := range db.matching(hostAddr{h, p}) {
		if l.cert && keysEqual(l.key.Key, remote) {
			return true
		}
	}
	return false
}

// isRevoked is knownhosts' IsRevoked.
func (db *hostDB) isRevoked(key *ssh.Certificate) bool {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if _, ok := db.revoked[plainKeyBlob(key)]; ok {
		return true
	}
	_, ok := db.revoked[plainKeyBlob(key.SignatureKey)]
	return ok
}

// checkPlain is knownhosts' hostKeyDB.check and checkAddr: the name
// dialled is preferred to the remote address, and the key must be on a
// line that matches it (a @cert-authority line included, as there).
func (db *hostDB) checkPlain(address string, remote net.Addr, remoteKey ssh.PublicKey) error {
	db.mu.RLock()
	revoked := db.revoked[plainKeyBlob(remoteKey)]
	db.mu.RUnlock()
	if revoked != nil {
		return &knownhosts.RevokedError{Revoked: *revoked}
	}
	host, port, err := net.SplitHostPort(remote.String())
	if err != nil {
		return fmt.Errorf("knownhosts: SplitHostPort(%s): %v", remote, err)
	}
	a := hostAddr{host, port}
	if address != "" {
		host, port, err := net.SplitHostPort(address)
		if err != nil {
			return fmt.Errorf("knownhosts: SplitHostPort(%s): %v", address, err)
		}
		a = hostAddr{host, port}
	}
	keyErr := &knownhosts.KeyError{}
	for _, l := range db.matching(a) {
		keyErr.Want = append(keyErr.Want, l.key)
		if keysEqual(l.key.Key, remoteKey) {
			return nil
		}
	}
	return keyErr
}

// plainKeyBlob is the serialized public part of key: the certified key of
// a certificate, otherwise the key itself.
func plainKeyBlob(key ssh.PublicKey) string {
	if cert, ok := key.(*ssh.Certificate); ok {
		return string(cert.Key.Marshal())
	}
	return string(key.Marshal())
}

const (
	markerCert    = "@cert-authority"
	markerRevoked = "@revoked"
)

func nextWord(line []byte) (string, []byte) {
	i := bytes.IndexAny(line, "\t ")
	if i == -1 {
		return string(line), nil
	}
	return string(line[:i]), bytes.Trim(line[i:], " \t")
}

// parseHostLine is knownhosts' parseLine.
func parseHostLine(line []byte) (marker, host string, key ssh.PublicKey, err error) {
	if w, next := nextWord(line); w == markerCert || w == markerRevoked {
		marker = w
		line = next
	}
	host, line = nextWord(line)
	// A second marker ("@cert-authority @revoked") or an unknown one.
	if len(host) > 0 && host[0] == '@' {
		return "", "", nil, fmt.Errorf("knownhosts: unexpected marker: %q", host)
	}
	if len(line) == 0 {
		return "", "", nil, errors.New("knownhosts: missing host pattern")
	}
	wantType, line := nextWord(line)
	if len(line) == 0 {
		return "", "", nil, errors.New("knownhosts: missing key type pattern")
	}
	keyBlob, _ := nextWord(line)
	keyBytes, err := base64.StdEncoding.DecodeString(keyBlob)
	if err != nil {
		return "", "", nil, err
	}
	if key, err = ssh.ParsePublicKey(keyBytes); err != nil {
		return "", "", nil, err
	}
	if key.Type() != wantType {
		return "", "", nil, fmt.Errorf("knownhosts: key type mismatch: found %q, want %q", key.Type(), wantType)
	}
	return marker, host, key, nil
}

type hostPattern struct {
	negate bool
	addr   hostAddr
}

type hostPatterns []hostPattern

func newHostnameMatcher(pattern string) (hostPatterns, error) {
	var hps hostPatterns
	for _, p := range strings.Split(pattern, ",") {
		if len(p) == 0 {
			continue
		}
		var a hostAddr
		var negate bool
		if p[0] == '!' {
			negate = true
			p = p[1:]
		}
		if len(p) == 0 {
			return nil, errors.New("knownhosts: negation without following hostname")
		}
		var err error
		if p[0] == '[' {
			a.host, a.port, err = net.SplitHostPort(p)
			if err != nil {
				return nil, err
			}
		} else {
			a.host, a.port, err = net.SplitHostPort(p)
			if err != nil {
				a.host = p
				a.port = "22"
			}
		}
		hps = append(hps, hostPattern{negate: negate, addr: a})
	}
	return hps, nil
}

// plainAddrs returns the names of a line whose patterns are all plain
// names, which match exactly their own text; nil otherwise.
func (ps hostPatterns) plainAddrs() []hostAddr {
	var out []hostAddr
	for _, p := range ps {
		if p.negate || strings.ContainsAny(p.addr.host, "*?") {
			return nil
		}
		out = append(out, p.addr)
	}
	return out
}

func (ps hostPatterns) match(a hostAddr) bool {
	matched := false
	for _, p := range ps {
		if !wildcardMatch([]byte(p.addr.host), []byte(a.host)) || p.addr.port != a.port {
			continue
		}
		if p.negate {
			return false
		}
		matched = true
	}
	return matched
}

// wildcardMatch is OpenSSH's match_pattern (match.c), as knownhosts has
// it: * matches any run of characters, separators included, ? one.
func wildcardMatch(pat []byte, str []byte) bool {
	for {
		if len(pat) == 0 {
			return len(str) == 0
		}
		if len(str) == 0 {
			return false
		}
		if pat[0] == '*' {
			if len(pat) == 1 {
				return true
			}
			for j := range str {
				if wildcardMatch(pat[1:], str[j:]) {
					return true
				}
			}
			return false
		}
		if pat[0] == '?' || pat[0] == str[0] {
			pat = pat[1:]
			str = str[1:]
		} else {
			return false
		}
	}
}

// hashedHost is a HashKnownHosts entry, |1|salt|hash: HMAC-SHA1 of the
// normalized name keyed by the salt (OpenSSH hostfile.c, host_hash).
type hashedHost struct {
	salt []byte
	hash []byte
}

func newHashedHost(encoded string) (*hashedHost, error) {
	components := strings.Split(encoded, "|")
	if len(components) != 4 {
		return nil, fmt.Errorf("knownhosts: got %d components, want 3", len(components))
	}
	salt, err := base64.StdEncoding.DecodeString(components[2])
	if err != nil {
		return nil, err
	}
	hash, err := base64.StdEncoding.DecodeString(components[3])
	if err != nil {
		return nil, err
	}
	if components[1] != "1" {
		return nil, fmt.Errorf("knownhosts: got hash type %s, must be '1'", components[1])
	}
	return &hashedHost{salt: salt, hash: hash}, nil
}

func (h *hashedHost) match(a hostAddr) bool {
	mac := hmac.New(sha1.New, h.salt)
	mac.Write([]byte(knownhosts.Normalize(a.String())))
	return bytes.Equal(mac.Sum(nil), h.hash)
}
