package probe

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
	"unique"

	"github.com/fleet-audit/fleet-audit/result"
)

// Limits on what one node may make us keep.
const (
	maxValueLen   = 1024
	maxProbeBytes = 256 << 10
	// MaxClusterNodes bounds how many Kubernetes nodes a cluster probe may
	// report on: the largest cluster Kubernetes supports
	// (kubernetes.io/docs/setup/best-practices/cluster-large: "No more
	// than 5,000 nodes").
	MaxClusterNodes = 5000
	// clusterNodeBytes is what a cluster probe may print per node. The
	// cluster probe prints about 1.8 KiB for a node with every node fact
	// (33 "@node k8s.*=value" lines); each line repeats the node's name,
	// which may be 253 characters long, and the rest is headroom for long
	// pod names and lists. The whole budget is held only for the one
	// session that runs the cluster probes.
	clusterNodeBytes = 8 << 10
	// maxClusterProbeBytes is the budget of a cluster probe, which reports
	// on every node of the cluster: the largest cluster must fit, or its
	// view is cut and every node past the cut loses its cluster facts.
	maxClusterProbeBytes = MaxClusterNodes * clusterNodeBytes
	// framingBytes is room for a bundle's markers and meta lines.
	framingBytes = 1 << 20
)

// OutputCap is how much of a bundle's stdout the transport must keep for
// ParseOutput to see all that its probes may print within their budgets:
// 0 (the transport's own cap, which bounds what one node may make us hold)
// for node probes, which print a few KiB on a healthy node, and the
// cluster probes' budgets with room for the rest when the bundle holds one,
// since a cluster probe reports on every node of the cluster.
func OutputCap(probes []Probe) int64 {
	var cluster, node int64
	for _, p := range probes {
		if p.Scope == ScopeCluster {
			cluster += maxClusterProbeBytes
		} else {
			node += maxProbeBytes
		}
	}
	if cluster == 0 {
		return 0
	}
	return cluster + node + framingBytes
}

// k8sNodeNameRe is a DNS-1123 subdomain, what Kubernetes allows as a node name.
var k8sNodeNameRe = regexp.MustCompile(`^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$`)

var (
	secretKeyRe = regexp.MustCompile(`(?i)(token|password|passwd|secret|passphrase|private[_-]?key)`)
	// secretValueRe finds secrets inside a value or a line of text, by the
	// shapes TestRedactionShapes pins, each with what must stay readable.
	secretValueRe = regexp.MustCompile(strings.Join([]string{
		// RKE2 join tokens: K10<ca-hash>::<user>:<secret>.
		`(?i:K10[0-9a-f]{16,})`,
		`(?i:-----BEGIN [A-Z ]*PRIVATE KEY)`,
		`(?i:bearer\s+[A-Za-z0-9._~+/=-]{8,})`,
		// A key naming a secret, then : or = and a value: config.yaml's
		// token: and agent-token:, kubeconfig's token:, id-token: and
		// client-key-data:, aws_secret_access_key=, password: in YAML,
		// key=value or JSON, secret_key: (S3 clients, Django). "tokens=3",
		// "kind: Secret" and secretKeyRef: name no secret.
		`(?i:(token|password|passwd|secret|secret[_-]?(access[_-]?)?key|client-key-data|private[_-]?key|api[_-]?key)["']?[ \t]*[:=][ \t]*["']?[^\s"',}])`,
		// HTTP Basic credentials (RFC 7617: base64 of user:password) in an
		// Authorization or Proxy-Authorization header; the challenge
		// "WWW-Authenticate: Basic realm=" carries none.
		`(?i:authorization["']?[ \t]*[:=][ \t]*["']?basic[ \t]+[A-Za-z0-9+/]{4,}=*)`,
		// JWTs (a Kubernetes service account token): base64url header
		// starting {" , payload and signature.
		`eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*`,
		// AWS access key ids (long-term AKIA, temporary ASIA).
		`\b(AKIA|ASIA)[0-9A-Z]{16}\b`,
		// user:password@ in a URL; user@ alone is no secret.
		`(?i:\b[a-z][a-z0-9+.-]*://[^/\s:@]*:[^/\s@]+@)`,
		// The base64 body of an OpenSSH private key: "openssh-key-v1\0".
		`b3BlbnNzaC1rZXktdjE`,
		// GitHub tokens: ghp_/gho_/ghu_/ghs_/ghr_ + 36, fine-grained github_pat_.
		`\bgh[pousr]_[A-Za-z0-9]{36}\b`,
		`\bgithub_pat_[A-Za-z0-9_]{22,}`,
		// The vendor token prefixes gitleaks knows (config/gitleaks.toml,
		// rules slack-bot-token/slack-user-token, gitlab-pat,
		// stripe-access-token, gcp-api-key), each with a body long enough
		// that the bare prefix in a sentence stays readable. GitLab's
		// routable tokens are longer than the classic 20 characters.
		`\bxox[abposre]-[0-9A-Za-z-]{10,}`,
		`\bglpat-[0-9A-Za-z_-]{20,}`,
		`\b[rs]k_(live|test|prod)_[0-9A-Za-z]{10,}`,
		`\bAIza[0-9A-Za-z_-]{35}`,
	}, "|"))
)

// The bundle's own facts (Parsed.Meta), printed by its prelude before any
// probe runs.
const (
	// MetaUID is the uid the probes that do not need root ran as.
	MetaUID = "meta.uid"
	// MetaSudo is how the root side went under become: sudo: ok,
	// password_required, requiretty, absent or timeout.
	MetaSudo = "meta.sudo"
	// MetaTimeout is "watchdog" when the bundle's watchdog bounds each
	// probe (the node has sleep(1) to tick it), else "absent".
	MetaTimeout = "meta.timeout"
)

// Parsed is what ParseOutput recovered from one node's bundle output.
type Parsed struct {
	Facts map[string]string
	// Meta holds the bundle's own facts (uid, sudo availability).
	Meta map[string]string
	// NodeFacts are what cluster probes reported about other nodes, keyed
	// by Kubernetes node name.
	NodeFacts map[string]map[string]string
	Runs      []result.ProbeRun
	// Bytes is how much each probe that began printed, for --debug.
	Bytes map[string]int
}

// ParseOutput splits the bundle output into probe sections by the nonce
// markers and turns each section's key=value lines into facts. Lines that are
// not facts, keys the probe did not declare, and anything past a probe's
// byte budget are dropped. It never fails: a probe whose section is missing
// or unterminated is recorded as such, with the facts it did print.
func ParseOutput(out []byte, nonce string, probes []Probe) Parsed {
	res := Parsed{Facts: map[string]string{}, Meta: map[string]string{}, NodeFacts: map[string]map[string]string{}, Bytes: map[string]int{}}
	// Each declared key maps to itself: a fact is stored under the
	// probe's own string, shared by every node, not a piece of the line.
	declared := map[string]map[string]string{"_meta": {MetaUID: MetaUID, MetaSudo: MetaSudo, MetaTimeout: MetaTimeout}}
	nodeDeclared := map[string]map[string]string{}
	budget := map[string]int{"_meta": maxProbeBytes}
	runs := map[string]*result.ProbeRun{}
	for _, p := range probes {
		declared[p.ID] = map[string]string{}
		for _, f := range p.Facts {
			declared[p.ID][f] = f
		}
		budget[p.ID] = maxProbeBytes
		if p.Scope == ScopeCluster {
			budget[p.ID] = maxClusterProbeBytes
		}
		nodeDeclared[p.ID] = map[string]string{}
		for _, f := range p.NodeFacts {
			nodeDeclared[p.ID][f] = f
		}
		runs[p.ID] = &result.ProbeRun{ID: p.ID, Status: result.ProbeMissing, ExitCode: -1}
	}
	begin := "@@FA:" + nonce + ":begin:"
	end := "@@FA:" + nonce + ":end:"
	var cur string
	var used int
	for rest := out; len(rest) > 0; {
		var line string
		line, rest = nextLine(rest)
		switch {
		case strings.HasPrefix(line, begin):
			id := strings.TrimPrefix(line, begin)
			if _, ok := declared[id]; ok {
				cur, used = id, 0
				if r := runs[id]; r != nil {
					r.Status = result.ProbeTruncated // until its end marker arrives
				}
			}
			continue
		case strings.HasPrefix(line, end):
			id, rcText, _ := strings.Cut(strings.TrimPrefix(line, end), ":")
			if id == cur && cur != "" {
				res.Bytes[id] = used
			}
			if r := runs[id]; r != nil && id == cur {
				rc, err := strconv.Atoi(rcText)
				if err != nil {
					rc = -1
				}
				r.ExitCode = rc
				switch {
				case rc == 124 || rc == 137:
					r.Status = result.ProbeTimeout // a watchdog killed it (timeout(1)'s statuses before)
				case r.Status == result.ProbeTruncated && used > budget[id]:
				case rc != 0:
					r.Status = result.ProbeFailed
				default:
					r.Status = result.ProbeOK
				}
			}
			cur = ""
			continue
		}
		if cur == "" {
			continue
		}
		used += len(line) + 1
		res.Bytes[cur] = used
		if used > budget[cur] {
			continue
		}
		if node, kv, isNode := strings.Cut(strings.TrimPrefix(line, "@"), " "); isNode && strings.HasPrefix(line, "@") {
			key, val, ok := strings.Cut(kv, "=")
			key, isDeclared := nodeDeclared[cur][key]
			if !ok || !isDeclared || !k8sNodeNameRe.MatchString(node) {
				continue
			}
			if len(res.NodeFacts) >= MaxClusterNodes && res.NodeFacts[node] == nil {
				continue
			}
			if res.NodeFacts[node] == nil {
				res.NodeFacts[node] = map[string]string{}
			}
			res.NodeFacts[node][key] = intern(sanitizeValue(key, val))
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		key, isDeclared := declared[cur][key]
		if !ok || !isDeclared {
			continue
		}
		val = intern(sanitizeValue(key, val))
		if cur == "_meta" {
			res.Meta[key] = val
		} else {
			res.Facts[key] = val
		}
	}
	for _, p := range probes {
		res.Runs = append(res.Runs, *runs[p.ID])
	}
	return res
}

// The redactor's pre-filter (issue 31): most values cannot hold a secret
// (numbers, unit states, versions), and a value in which none of the
// literals below starts cannot match secretValueRe, whose every
// alternative needs one of them: the shapes' fixed prefixes, and the
// words the key-naming and header shapes begin with. Those of the (?i:)
// alternatives are looked for in any ASCII case (secretFold), the others
// as they are written (secretExact); a value with a byte outside ASCII
// goes to the expressions as it is, since (?i) also folds K (U+212A) to k
// and ſ (U+017F) to s. TestRedactPrefilter and FuzzRedactPrefilter hold
// it to never pass over a value the expressions would redact.
var (
	secretFold = [256][]string{
		'k': {"k10"},
		'-': {"-----begin"},
		'b': {"bearer"},
		't': {"token"},
		'p': {"passw", "private"},
		's': {"secret"},
		'c': {"client-key-data"},
		'a': {"api", "authorization"},
		':': {"://"},
	}
	secretExact = [256][]string{
		'e': {"eyJ"},
		'A': {"AKIA", "ASIA", "AIza"},
		'b': {"b3BlbnNzaC1rZXktdjE"},
		'g': {"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-"},
		'x': {"xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "xoxe-"},
		'k': {"k_live_", "k_test_", "k_prod_"},
	}
)

// mayHoldSecret reports whether secretValueRe could match s: false only
// when it cannot.
func mayHoldSecret(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return true
		}
		for _, lit := range secretExact[c] {
			if strings.HasPrefix(s[i:], lit) {
				return true
			}
		}
		for _, lit := range secretFold[lower(c)] {
			if hasPrefixFold(s[i:], lit) {
				return true
			}
		}
	}
	return false
}

// keyTriggers are the words secretKeyRe needs, in any ASCII case, as
// secretFold and secretExact are secretValueRe's.
var keyTriggers = [256][]string{
	't': {"token"},
	'p': {"passw", "passphrase", "private"},
	's': {"secret"},
}

// mayNameSecret reports whether secretKeyRe could match key.
func mayNameSecret(key string) bool {
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c >= utf8.RuneSelf {
			return true
		}
		for _, lit := range keyTriggers[lower(c)] {
			if hasPrefixFold(key[i:], lit) {
				return true
			}
		}
	}
	return false
}

// lower is c in ASCII lower case.
func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// hasPrefixFold reports whether s starts with lit (lower case) in any
// ASCII case.
func hasPrefixFold(s, lit string) bool {
	if len(s) < len(lit) {
		return false
	}
	for j := 0; j < len(lit); j++ {
		if lower(s[j]) != lit[j] {
			return false
		}
	}
	return true
}

// secretKey and secretValue are the redactor's two tests, the
// pre-filter first.
func secretKey(key string) bool   { return mayNameSecret(key) && secretKeyRe.MatchString(key) }
func secretValue(val string) bool { return mayHoldSecret(val) && secretValueRe.MatchString(val) }

// intern returns the one copy of s that every node's facts share
// (unique.Make): most values are the same across a fleet (versions, unit
// states, settings), and a fact kept as a piece of its output line held
// the whole line (issue 31, memory per node).
func intern(s string) string { return unique.Make(s).Value() }

func sanitizeValue(key, val string) string {
	val = strings.TrimSpace(val)
	if secretKey(key) || secretValue(val) {
		return result.Redacted
	}
	val = ValidUTF8(val)
	if len(val) > maxValueLen {
		// Cut on a rune boundary, so the cut itself makes no invalid UTF-8.
		i := maxValueLen
		for i > 0 && !utf8.RuneStart(val[i]) {
			i--
		}
		val = val[:i] + "…"
	}
	if val == "" {
		return "empty"
	}
	return val
}

// ValidUTF8 writes each byte of s that is not part of valid UTF-8 as the
// four characters \xNN. encoding/json would store it as U+FFFD, so a
// results.json would no longer hold what the run showed and `report` would
// not render it again byte for byte; the reports make \xNN visible the same
// way they show an invalid byte. As there, a value that literally holds
// `\xff` reads the same: this keeps what the node said readable, it is not
// an encoding.
func ValidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			fmt.Fprintf(&b, `\x%02x`, s[i])
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// nextLine splits off the first line of b. A line longer than a value may be
// is cut short, so one endless line costs nothing but the time to skip it.
func nextLine(b []byte) (string, []byte) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		i = len(b)
	}
	line := b[:i]
	if len(line) > 2*maxValueLen {
		line = line[:2*maxValueLen]
	}
	if i < len(b) {
		i++
	}
	return string(line), b[i:]
}

// RedactText is sanitizeValue's secret test for free text a node supplied
// (stderr, error messages): each line is cut at the first secret-looking
// span, so the context before it still says what failed.
func RedactText(s string) string {
	if !secretValue(s) {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, line := range lines {
		if loc := secretValueRe.FindStringIndex(line); loc != nil {
			lines[i] = line[:loc[0]] + result.Redacted
		}
	}
	return strings.Join(lines, "\n")
}

// RedactFact is sanitizeValue's secret test alone, for a fact value already
// stored: result.Redacted when the key or the value looks secret, else the
// value unchanged, so that a file written by a release that missed a
// secret is cleaned by every later render and a clean file renders byte
// for byte.
func RedactFact(key, val string) string {
	if secretKey(key) || secretValue(val) {
		return result.Redacted
	}
	return val
}
