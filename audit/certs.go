package audit

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fleet-audit/fleet-audit/audit/catalog"
	"github.com/fleet-audit/fleet-audit/audit/check"
)

// The certs probe sends each certificate file's first certificate as
// certs.pem.<area>.<name>.<piece>; this file turns them into the certs.*
// facts declared in catalog/builtin.go, on the client, with crypto/x509, and drops
// the pieces: they are transport (a few KB a node), not evidence a report
// should print.
const (
	certsPEMPrefix = "certs.pem."
	certsFilesFact = "certs.files"
	certsPieces    = 3
)

// certRenewDays is RKE2's renewal window: at every start it renews a leaf
// certificate whose days left are <= this (k3s pkg/daemons/control/deps
// deps.go expired → rancher/dynamiclistener cert/cert.go IsCertExpired(cert,
// config.CertificateRenewDays), "diffDays <= float64(days)"). k3s
// pkg/daemons/config/types.go CertificateRenewDays was 90 and is 120 since
// k3s PR #12232 (issue #12171); RKE2 took it in its May 2025 releases
// v1.33.1, v1.32.5, v1.31.9 and v1.30.13 (+rke2r1), whose go.mod pins
// k3s commits of 2025-05-16 (rke2-docs security/certificates.md: "Prior to
// the May 2025 releases ... 90 days"). The map is the first patch with 120
// on each minor line of those releases; later minors have it from .0 and
// earlier ones never got it.
var certRenew120Since = map[int]int{30: 13, 31: 9, 32: 5, 33: 1}

const (
	certRenewDaysOld = 90
	certRenewDaysNew = 120
)

// certRenewDays is the window of RKE2 release v, false when v is no
// version (absent, unknown, not-root).
func certRenewDays(v string) (int, bool) {
	p, ok := check.ParseVersion(v)
	if !ok || len(p) < 2 || p[0] != 1 {
		return 0, false
	}
	minor, patch := p[1], 0
	if len(p) > 2 {
		patch = p[2]
	}
	if since, ok := certRenew120Since[minor]; ok {
		if patch >= since {
			return certRenewDaysNew, true
		}
		return certRenewDaysOld, true
	}
	if minor > 33 {
		return certRenewDaysNew, true
	}
	return certRenewDaysOld, true
}

type nodeCert struct {
	file string // as the operator finds it under /var/lib/rancher/rke2
	cert *x509.Certificate
}

// certAreaDirs maps the probe's area to the directory under
// /var/lib/rancher/rke2 it globbed.
var certAreaDirs = map[string]string{"tls": "server/tls/", "etcd": "server/tls/etcd/", "agent": "agent/"}

// deriveCertFacts replaces the certs probe's certs.pem.* pieces in facts
// with what they say, as of now. It does nothing on a node whose certs
// probe did not run. A value of certs.files that is no count (not-root,
// unreadable) becomes the value of every derived fact, so the checks on
// them are "could not judge" there, never a pass.
func deriveCertFacts(facts map[string]string, now time.Time) {
	pieces := map[string]map[int]string{}
	for k, v := range facts {
		rest, ok := strings.CutPrefix(k, certsPEMPrefix)
		if !ok {
			continue
		}
		delete(facts, k)
		i := strings.LastIndexByte(rest, '.')
		n, err := strconv.Atoi(rest[i+1:])
		if i < 0 || err != nil {
			continue
		}
		if pieces[rest[:i]] == nil {
			pieces[rest[:i]] = map[int]string{}
		}
		pieces[rest[:i]][n] = v
	}
	files, ok := facts[certsFilesFact]
	if !ok {
		return
	}
	derived := []string{catalog.CertsLeafNotAfterFact, catalog.CertsLeafFileFact, catalog.CertsLeafDaysLeftFact, catalog.CertsLeafRenewDaysFact,
		catalog.CertsCANotAfterFact, catalog.CertsCAFileFact, catalog.CertsCADaysLeftFact, catalog.CertsValidityFact, catalog.CertsUnparsedFact}
	if _, err := strconv.Atoi(files); err != nil {
		for _, k := range derived {
			facts[k] = files
		}
		return
	}
	var leaves, cas []nodeCert
	var unparsed []string
	for _, id := range slices.Sorted(maps.Keys(pieces)) {
		area, name, _ := strings.Cut(id, ".")
		file := certAreaDirs[area] + name + ".crt"
		var b64 strings.Builder
		for n := 0; n < certsPieces; n++ {
			p, ok := pieces[id][n]
			if !ok {
				break
			}
			b64.WriteString(p)
		}
		der, err := base64.StdEncoding.DecodeString(b64.String())
		var c *x509.Certificate
		if err == nil {
			c, err = x509.ParseCertificate(der)
		}
		if err != nil {
			// Cut by the parser (a piece past the third), redacted as a
			// false secret, or not a certificate: said, never guessed.
			unparsed = append(unparsed, file)
			continue
		}
		if c.IsCA {
			cas = append(cas, nodeCert{file, c})
		} else {
			leaves = append(leaves, nodeCert{file, c})
		}
	}
	for _, k := range derived {
		facts[k] = "absent"
	}
	facts[catalog.CertsUnparsedFact] = "none"
	if len(unparsed) > 0 {
		facts[catalog.CertsUnparsedFact] = strings.Join(unparsed, ",")
	}
	window, windowKnown := certRenewDays(facts["rke2.version"])
	facts[catalog.CertsLeafRenewDaysFact] = "unknown"
	if windowKnown {
		facts[catalog.CertsLeafRenewDaysFact] = strconv.Itoa(window)
	}
	if leaf, ok := firstToExpire(leaves); ok {
		facts[catalog.CertsLeafNotAfterFact] = leaf.cert.NotAfter.UTC().Format(time.DateOnly)
		facts[catalog.CertsLeafFileFact] = leaf.file
		facts[catalog.CertsLeafDaysLeftFact] = strconv.Itoa(daysLeft(leaf.cert, now))
	}
	if ca, ok := firstToExpire(cas); ok {
		facts[catalog.CertsCANotAfterFact] = ca.cert.NotAfter.UTC().Format(time.DateOnly)
		facts[catalog.CertsCAFileFact] = ca.file
		facts[catalog.CertsCADaysLeftFact] = strconv.Itoa(daysLeft(ca.cert, now))
	}
	if len(leaves)+len(cas) > 0 {
		facts[catalog.CertsValidityFact] = validityPrint(leaves, cas, now, window, windowKnown)
	}
}

// daysLeft is whole days until c expires, rounded down: negative once it
// has expired, 0 on its last day.
func daysLeft(c *x509.Certificate, now time.Time) int {
	return int(math.Floor(c.NotAfter.Sub(now).Hours() / 24))
}

// firstToExpire is the certificate that expires first, the first file by name
// among equals.
func firstToExpire(cs []nodeCert) (nodeCert, bool) {
	if len(cs) == 0 {
		return nodeCert{}, false
	}
	e := cs[0]
	for _, c := range cs[1:] {
		if c.cert.NotAfter.Before(e.cert.NotAfter) {
			e = c
		}
	}
	return e, true
}

// validityPrint is what healthy peers share whenever they joined: the
// lifetimes their leaves were issued with (365 days unless
// CATTLE_NEW_SIGNED_CERT_EXPIRATION_DAYS says otherwise: dynamiclistener
// cert/cert.go NewSignedCert), where the earliest leaf stands against the
// renewal window, and which CAs the node trusts. Dates are left out: nodes
// joined or restarted on different days hold different ones by design. A
// node that missed a rotation its peers got (its leaves inside the window
// or expired while theirs were renewed, or a CA from before rotate-ca) has
// another value, which drift shows. The CAs are the agent's copies
// (agent/server-ca.crt, agent/client-ca.crt, fetched from a server at every
// start: k3s pkg/agent/config get), which servers and agents both hold, so
// the value does not differ by role; each is named by its key
// (SubjectKeyId, the hash of its public key where it has none), which a CA
// rotation changes and the passing days do not.
func validityPrint(leaves, cas []nodeCert, now time.Time, window int, windowKnown bool) string {
	life := map[int]bool{}
	for _, l := range leaves {
		life[int(math.Round(l.cert.NotAfter.Sub(l.cert.NotBefore).Hours()/24))] = true
	}
	var lives []string
	for _, d := range slices.Sorted(maps.Keys(life)) {
		lives = append(lives, fmt.Sprintf("%dd", d))
	}
	state := "none"
	if leaf, ok := firstToExpire(leaves); ok {
		d := daysLeft(leaf.cert, now)
		switch {
		case d < 0:
			state = "expired"
		case slices.ContainsFunc(leaves, func(l nodeCert) bool { return now.Before(l.cert.NotBefore) }):
			state = "not-yet-valid"
		case windowKnown && d < window, !windowKnown && d < certRenewDaysOld:
			state = "renews-at-restart"
		case windowKnown || d >= certRenewDaysNew:
			state = "valid"
		default:
			state = "window-unknown"
		}
	}
	var keys []string
	for _, c := range cas {
		if !strings.HasPrefix(c.file, certAreaDirs["agent"]) {
			continue
		}
		id := c.cert.SubjectKeyId
		if len(id) == 0 {
			h := sha256.Sum256(c.cert.RawSubjectPublicKeyInfo)
			id = h[:]
		}
		keys = append(keys, hex.EncodeToString(id))
	}
	ca := "none"
	if len(keys) > 0 {
		slices.Sort(keys)
		h := sha256.Sum256([]byte(strings.Join(keys, ",")))
		ca = hex.EncodeToString(h[:4])
	}
	leaf := state
	if len(lives) > 0 {
		leaf = strings.Join(lives, "/") + " " + state
	}
	return "leaf " + leaf + "; ca " + ca
}
