package remote

import (
	"crypto/ed25519"
	crand "crypto/rand"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// TestHostDBAgreesWithKnownhosts holds hostDB, the index the dialer parses
// once per run, to knownhosts.New's verdicts: for every host and key
// asked, the same error (nil, *KeyError with the same lines in the same
// order, *RevokedError with the same line, or another error), over files
// of plain names with and without ports, several names on a line,
// wildcards, negations, hashed names, @cert-authority and @revoked lines,
// comments and lines that do not parse, for plain keys and host
// certificates; then over random files of the same kinds of lines.
func TestHostDBAgreesWithKnownhosts(t *testing.T) {
	keys := make([]ssh.PublicKey, 6)
	signers := make([]ssh.Signer, len(keys))
	for i := range keys {
		var err error
		if signers[i], err = ssh.NewSignerFromKey(ed25519.NewKeyFromSeed(append(make([]byte, 31), byte(i)))); err != nil {
			t.Fatal(err)
		}
		keys[i] = signers[i].PublicKey()
	}
	// Host certificates of key 2 for node-1.example and db.internal,
	// signed by key 5 (an authority for *.example below) and by key 0.
	var certs []ssh.PublicKey
	for _, ca := range []int{5, 0} {
		cert := &ssh.Certificate{Key: keys[2], CertType: ssh.HostCert, ValidPrincipals: []string{"node-1.example", "db.internal"},
			ValidBefore: ssh.CertTimeInfinity, Serial: uint64(ca)}
		if err := cert.SignCert(crand.Reader, signers[ca]); err != nil {
			t.Fatal(err)
		}
		certs = append(certs, cert)
	}
	line := func(hosts string, k int) string {
		return hosts + " " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(keys[k])))
	}
	hosts := []string{"10.0.0.1:22", "10.0.0.1:2222", "10.0.0.2:22", "node-1.example:22", "node-2.example:22", "node-1.example:2222",
		"[fd00::1]:22", "[fd00::1]:2222", "db.internal:22", "other:22", "Node-1.example:22"}
	fixed := strings.Join([]string{
		"# a comment",
		line("10.0.0.1", 0),
		line("[10.0.0.1]:2222", 1),
		line("node-1.example,10.0.0.2", 2),
		line("node-1.example", 3), // a second key for the host
		line("*.example,!node-2.example", 4),
		line("[node-?.example]:2222", 5),
		line(knownhosts.HashHostname("db.internal"), 1),
		line(knownhosts.HashHostname("[fd00::1]:2222"), 2),
		"@cert-authority " + line("*.example", 5),
		"@revoked " + line("ignored", 3),
		"not a valid line",
		"@unknown " + line("x", 0),
		line("fd00::1", 0),
		line(",10.0.0.2,", 4),
		line("!other", 1),
		"   ",
	}, "\n") + "\n"
	compare(t, "fixed", []string{fixed, line("other", 2) + "\n" + line("10.0.0.1", 5)}, hosts, append(keys, certs...))

	rng := rand.New(rand.NewPCG(31, 31))
	names := []string{"10.0.0.1", "10.0.0.2", "node-1.example", "node-2.example", "fd00::1", "db.internal", "other"}
	pattern := func() string {
		n := names[rng.IntN(len(names))]
		switch rng.IntN(8) {
		case 0:
			return "[" + n + "]:2222"
		case 1:
			return "!" + n
		case 2:
			return n[:rng.IntN(len(n))] + "*"
		case 3:
			return strings.Replace(n, "1", "?", 1)
		}
		return n
	}
	for round := range 40 {
		var lines []string
		for range 30 {
			var ps []string
			for range 1 + rng.IntN(3) {
				ps = append(ps, pattern())
			}
			l := line(strings.Join(ps, ","), rng.IntN(len(keys)))
			switch rng.IntN(12) {
			case 0:
				l = "@cert-authority " + l
			case 1:
				l = "@revoked " + l
			case 2:
				l = line(knownhosts.HashHostname(knownhosts.Normalize(hosts[rng.IntN(len(hosts))])), rng.IntN(len(keys)))
			}
			lines = append(lines, l)
		}
		compare(t, fmt.Sprintf("random %d", round), []string{strings.Join(lines, "\n")}, hosts, append(keys, certs...))
	}
}

// compare writes each of contents to a file and asks both databases about
// every host with every key, through the remote address too.
func compare(t *testing.T, name string, contents []string, hosts []string, keys []ssh.PublicKey) {
	t.Helper()
	dir := t.TempDir()
	var files []string
	for i, c := range contents {
		f := filepath.Join(dir, fmt.Sprintf("known_hosts%d", i))
		if err := os.WriteFile(f, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	want, wantErr := knownhosts.New(files...)
	got, gotErr := openHostDB(files)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("%s: knownhosts.New: %v; openHostDB: %v", name, wantErr, gotErr)
	}
	if wantErr != nil {
		return
	}
	remoteAddr := &net.TCPAddr{IP: net.ParseIP("10.0.0.2"), Port: 22}
	for _, h := range hosts {
		for _, k := range append(keys, probeKey()) {
			for _, address := range []string{h, ""} {
				w, g := want(address, remoteAddr, k), got.check(address, remoteAddr, k)
				if !sameVerdict(w, g) {
					t.Errorf("%s: host %q key %s: knownhosts says %v, hostDB %v", name, address, ssh.FingerprintSHA256(k), describe(w), describe(g))
				}
			}
		}
	}
}

func sameVerdict(a, b error) bool {
	var ka, kb *knownhosts.KeyError
	var ra, rb *knownhosts.RevokedError
	switch {
	case a == nil || b == nil:
		return a == nil && b == nil
	case errors.As(a, &ka):
		return errors.As(b, &kb) && reflect.DeepEqual(ka.Want, kb.Want)
	case errors.As(a, &ra):
		return errors.As(b, &rb) && reflect.DeepEqual(ra.Revoked, rb.Revoked)
	}
	return a.Error() == b.Error()
}

func describe(err error) string {
	var ke *knownhosts.KeyError
	if errors.As(err, &ke) {
		var lines []string
		for _, w := range ke.Want {
			lines = append(lines, fmt.Sprintf("%s:%d", filepath.Base(w.Filename), w.Line))
		}
		return fmt.Sprintf("%v %v", err, lines)
	}
	return fmt.Sprint(err)
}
