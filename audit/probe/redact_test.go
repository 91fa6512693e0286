package probe

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/result"
)

// The secret shapes the redactor knows, and ordinary facts that look a
// little like them and must stay as they are. Every case is checked both as
// a fact value and as a line of node stderr (TestRedactionShapes).
var redactionShapes = []struct {
	name   string
	value  string
	secret bool
}{
	{"RKE2 join token", "K10" + "5e9a0c2f8b7d6e4a3c1b0f9e::server:9f8e7d6c5b4a3928", true},
	{"config.yaml token line", "token: abc123", true},
	{"config.yaml agent-token line", "agent-token: abc123", true},
	{"PEM private key", "-----BEGIN RSA PRIVATE KEY-----", true},
	{"bearer token", "Authorization: Bearer abcdefghijkl", true},
	{"JWT", "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJpc3MiOiJrdWJlcm5ldGVzIn0.c2lnbmF0dXJlLXNpZ25hdHVyZQ", true},
	{"JWT in a sentence", "using sa eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc-_def now", true},
	{"AWS access key id", "AKIA" + "IOSFODNN7EXAMPLE", true},
	{"AWS session key id", "ASIA" + "IOSFODNN7EXAMPLE", true},
	{"aws_secret_access_key=", "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", true},
	{"aws_secret_access_key YAML", "aws_secret_access_key: wJalrXUtnFEMI/K7MDENG", true},
	{"URL credentials", "https://admin:s3cr3t@registry.example.com/v2/", true},
	{"URL credentials, user only with password", "postgres://app:pw@db:5432/x", true},
	{"kubeconfig client-key-data", "    client-key-data: LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0t", true},
	{"kubeconfig token", "    token: 8c7f2a9e1b", true},
	{"kubeconfig id-token", "id-token: abc.def", true},
	{"OpenSSH private key body", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW", true},
	{"password YAML", "password: hunter2", true},
	{"password key=value", "db_password=hunter2", true},
	{"quoted password JSON", `{"password":"hunter2"}`, true},
	{"secret YAML", "client-secret: abc", true},
	{"secret key=value", "SECRET=abc", true},
	{"GitHub classic token", "ghp_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", true},
	{"GitHub OAuth token", "gho_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", true},
	{"GitHub fine-grained token", "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", true},
	{"secret_key YAML", "secret_key: wJalrXUtnFEMI/K7MDENG", true},
	{"SECRET_KEY env", "SECRET_KEY=wJalrXUtnFEMI", true},
	{"basic auth header", "Authorization: Basic " + "YWRtaW46czNjcjN0", true},
	{"basic proxy auth header", "Proxy-Authorization: basic " + "YWRtaW46czNjcjN0", true},
	{"Slack bot token", "xoxb-" + "1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", true},
	{"Slack user token", "SLACK=xoxp-" + "1234567890-1234567890-1234567890-0a1b2c3d4e5f", true},
	{"GitLab personal access token", "glpat-" + "aBcDeFgHiJkLmNoPqRsT", true},
	{"Stripe live secret key", "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", true},
	{"Stripe restricted key", "rk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", true},
	{"Google API key", "AIza" + "SyA1bC2dE3fG4hI5jK6lM7nO8pQ9rS0tUvW", true},

	{"RKE2 version", "v1.28.9+rke2r1", false},
	{"image tag with a hash", "rancher/hardened-kubernetes:v1.28.9-rke2r1-build20240416", false},
	{"sha256 digest", "docker.io/rancher/mirrored-pause@sha256:0a7e3d54b1d3ddc21b27cd4d5b2c1a3f1e2d3c4b5a69788796a5b4c3d2e1f001", false},
	{"bare sha256", "sha256:0a7e3d54b1d3ddc21b27cd4d5b2c1a3f1e2d3c4b5a69788796a5b4c3d2e1f001", false},
	{"cni name", "cni.name=canal", false},
	{"API server URL", "https://127.0.0.1:6443/readyz", false},
	{"ssh URL with a user only", "ssh://audit@10.0.0.5:22", false},
	{"scp-like git address", "git@github.com:rancher/rke2.git", false},
	{"sshd setting", "PasswordAuthentication no", false},
	{"RBAC denial", `secrets is forbidden: User "x" cannot list resource "secrets" in API group ""`, false},
	{"kind Secret", "kind: Secret", false},
	{"sudo message", "sudo: a password is required", false},
	{"token count", "tokens=3", false},
	{"upper-case word", "AKIAFOO", false},
	{"kernel version", "6.8.0-45-generic", false},
	{"empty token", "token:", false},
	{"secretKeyRef reference", "secretKeyRef: {name: db-creds}", false},
	{"basic auth challenge", `WWW-Authenticate: Basic realm="rke2"`, false},
	{"basic auth in prose", "basic authentication failed for audit", false},
	{"Slack prefix in prose", "bot tokens start with xoxb-", false},
	{"GitLab prefix in prose", "rotate the glpat-token", false},
	{"Stripe-like word", "disk_live_bytes=4096", false},
	{"Stripe prefix in prose", "a key starting sk_live_", false},
	{"Google-like short word", "AIzawl", false},
	{"Google prefix too short", "AIzaSyShort", false},
	// fleet-audit's own prompt error: a passphrase key name is redacted
	// in facts, but "passphrase:" in text is followed by the error.
	{"passphrase prompt error", "read passphrase: EOF", false},
}

func TestRedactionShapes(t *testing.T) {
	for _, tc := range redactionShapes {
		t.Run(tc.name, func(t *testing.T) {
			got := sanitizeValue("x.fact", tc.value) == result.Redacted
			if got != tc.secret {
				t.Errorf("fact %q redacted = %v, want %v", tc.value, got, tc.secret)
			}
			text := RedactText("node said: " + tc.value + "\nnext line")
			if got := strings.Contains(text, result.Redacted); got != tc.secret {
				t.Errorf("stderr %q -> %q: redacted = %v, want %v", tc.value, text, got, tc.secret)
			}
			if !strings.HasSuffix(text, "\nnext line") {
				t.Errorf("stderr %q -> %q: the next line was lost", tc.value, text)
			}
		})
	}
}

// TestRedactPrefilter holds the redactor's pre-filter (mayHoldSecret,
// mayNameSecret) to never pass over what the expressions would redact:
// on every case of redactionShapes, in a sentence, in upper and lower
// case, with each byte changed in turn, and on random values built from
// pieces of the shapes; the filtered redactor then answers as the
// expressions alone do. It also shows that the filter does its work: the
// plain values a node prints skip the expressions.
func TestRedactPrefilter(t *testing.T) {
	var values []string
	for _, tc := range redactionShapes {
		for _, v := range []string{tc.value, "node said: " + tc.value + " then", strings.ToUpper(tc.value), strings.ToLower(tc.value)} {
			values = append(values, v)
			for i := range len(v) {
				b := []byte(v)
				b[i] ^= 0x20 // the other case of a letter, or another byte
				values = append(values, string(b))
			}
		}
	}
	// Every member of the shapes' character classes and alternations.
	for _, c := range "pousr" {
		values = append(values, "gh"+string(c)+"_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789")
	}
	for _, c := range "abposre" {
		values = append(values, "xox"+string(c)+"-1234567890-abcdef")
	}
	for _, c := range "rs" {
		for _, env := range []string{"live", "test", "prod"} {
			values = append(values, string(c)+"k_"+env+"_4eC39HqLyjWDarjtT1zdp7dc")
		}
	}
	for _, w := range []string{"token", "password", "passwd", "secret", "secret_key", "secret-access-key", "secretaccesskey", "client-key-data",
		"private_key", "private-key", "privatekey", "api_key", "api-key", "apikey", "passphrase"} {
		values = append(values, w+": x", w+"=x", `"`+w+`":"x"`, strings.ToUpper(w)+" =\tx")
	}
	// Fragments of every shape, its separators and a few bytes the
	// expressions fold (K U+212A, ſ U+017F), glued at random.
	pieces := []string{"K10", "k10", "5e9a0c2f8b7d6e4a3c1b", "::", ":", "=", " ", "\t", "\"", "'", "-----BEGIN ", "RSA ", "PRIVATE KEY",
		"Bearer ", "abcdefghijkl", "token", "TOKEN", "pass", "word", "passwd", "secret", "_", "-", "access", "key", "client-key-data",
		"private", "api", "authorization", "Basic ", "YWRtaW46czNjcjN0", "==", "eyJ", "eyJhbGciOiJIUzI1NiJ9", ".", "AKIA", "ASIA",
		"IOSFODNN7EXAMPLE", "https", "://", "admin", "@", "/", "b3BlbnNzaC1rZXktdjE", "gh", "p", "o", "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
		"github_pat_", "11ABCDEFG0123456789_abcdefghijklmnopqr", "xox", "b", "glpat-", "aBcDeFgHiJkLmNoPqRsT", "sk", "rk", "_live_",
		"_test_", "4eC39HqLyjWDarjtT1zdp7dc", "AIza", "SyA1bC2dE3fG4hI5jK6lM7nO8pQ9rS0tUvW", "\u212a10", "ſecret", "v1.28.9+rke2r1", "6443", "active",
		"u", "s", "r", "a", "e"}
	rng := rand.New(rand.NewPCG(31, 1))
	for range 50000 {
		var b strings.Builder
		for range 1 + rng.IntN(6) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		values = append(values, b.String())
	}
	for _, v := range values {
		checkPrefilter(t, v)
	}

	plain := []string{"active", "6.8.0-45-generic", "v1.28.9+rke2r1", "131072", "true", "iptables", "10.0.0.11/24", "enabled", "0.003"}
	for _, v := range plain {
		if mayHoldSecret(v) {
			t.Errorf("%q goes to the expressions: the pre-filter lets a plain value through", v)
		}
	}
}

// FuzzRedactPrefilter: for any value, a value or key the expressions
// would redact passes the pre-filter.
func FuzzRedactPrefilter(f *testing.F) {
	for _, tc := range redactionShapes {
		f.Add(tc.value)
	}
	f.Fuzz(func(t *testing.T, v string) { checkPrefilter(t, v) })
}

func checkPrefilter(t *testing.T, v string) {
	t.Helper()
	if secretValueRe.MatchString(v) && !mayHoldSecret(v) {
		t.Fatalf("value %q: the expressions redact it, the pre-filter passes over it", v)
	}
	if secretKeyRe.MatchString(v) && !mayNameSecret(v) {
		t.Fatalf("key %q: the expression redacts it, the pre-filter passes over it", v)
	}
	if got, want := sanitizeValue(v, "x"), map[bool]string{true: result.Redacted, false: "x"}[secretKeyRe.MatchString(v)]; got != want {
		t.Fatalf("key %q: sanitizeValue %q, want %q", v, got, want)
	}
}
