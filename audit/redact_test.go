package audit

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/inventory"
	"github.com/fleet-audit/fleet-audit/result"
)

// hostileTransport plays nodes whose stderr and errors quote secrets. Each
// host's nth Exec (0: the node bundle, 1: the cluster bundle) answers
// execs[n]; a host in openErr cannot be opened at all.
type hostileTransport struct {
	mu      sync.Mutex
	openErr map[string]error
	execs   map[string][]hostileExec
	calls   map[string]int
}

type hostileExec struct {
	res ExecResult
	err error
}

func (t *hostileTransport) Open(_ context.Context, h inventory.Host) (Session, error) {
	if err := t.openErr[h.Name]; err != nil {
		return nil, err
	}
	return &hostileSession{t: t, name: h.Name}, nil
}

type hostileSession struct {
	t    *hostileTransport
	name string
}

func (s *hostileSession) Exec(context.Context, []byte, time.Duration) (ExecResult, error) {
	s.t.mu.Lock()
	defer s.t.mu.Unlock()
	n := s.t.calls[s.name]
	s.t.calls[s.name]++
	if n >= len(s.t.execs[s.name]) {
		return ExecResult{ExitCode: 1}, errors.New("no more answers")
	}
	e := s.t.execs[s.name][n]
	return e.res, e.err
}

func (s *hostileSession) Close() error { return nil }

// What a node prints on stderr or into an error reaches every report
// through the Report model; no secret it quotes may survive there.
func TestNodeTextIsRedacted(t *testing.T) {
	const (
		token   = "K10" + "5e9a0c2f8b7d6e4a3c1b0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7::server:9f8e7d6c5b4a39281706f5e4d3c2b1a0"
		pemLine = "-----BEGIN OPENSSH PRIVATE KEY-----"
	)
	secrets := []string{token, "9f8e7d6c5b4a39281706f5e4d3c2b1a0", "PRIVATE KEY"}
	tr := &hostileTransport{
		openErr: map[string]error{"unreachable": errors.New("ssh: handshake failed: banner said token: " + token + "\nmore")},
		execs: map[string][]hostileExec{
			// No probe output, stderr quoting config.yaml: the node's Error.
			"stderr-token": {{res: ExecResult{Stderr: []byte("token: " + token + "\nsecond line " + token + "\n"), ExitCode: 2}}},
			"stderr-pem":   {{res: ExecResult{Stderr: []byte(pemLine + "\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n"), ExitCode: 2}}},
			// The connection drops (a server by role, so the cluster
			// probes are tried on it), then the cluster bundle fails
			// quoting the key.
			"server": {
				{err: &NodeError{Status: result.StatusConnectionLost, Message: "connection lost", Err: errors.New("remote said: token: " + token)}},
				{err: errors.New("exec: " + pemLine)},
			},
		},
		calls: map[string]int{},
	}
	inv := &inventory.Inventory{Name: "hostile"}
	for _, h := range []string{"unreachable", "stderr-token", "stderr-pem", "server"} {
		inv.Hosts = append(inv.Hosts, inventory.Host{Name: h, Address: "192.0.2.1", Roles: []string{"etcd"}})
	}
	probes, err := BuiltinProbes()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), RunOptions{Inventory: inv, Transport: tr, Forks: 1, NodeTimeout: time.Minute, Probes: probes})
	if err != nil {
		t.Fatal(err)
	}
	// Each hostile string reached the model, as <redacted>: the test
	// walks the paths it means to.
	for _, n := range r.Nodes {
		if !strings.Contains(n.Message+n.Error, result.Redacted) {
			t.Errorf("%s: message %q error %q: nothing redacted, so the secret never got there", n.Name, n.Message, n.Error)
		}
	}
	if r.Cluster == nil || len(r.Cluster.Attempts) != 1 || !strings.Contains(r.Cluster.Attempts[0].Reason, result.Redacted) {
		t.Errorf("cluster = %+v, want one attempt on server with its reason redacted", r.Cluster)
	}
	js, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if strings.Contains(string(js), s) {
			t.Errorf("the report's JSON holds %q:\n%s", s, js)
		}
	}
}

// The secret shapes the redactor knows, and ordinary facts that look a
// little like them and must stay as they are. Every case is checked both as
// a fact value and as a line of node stderr.
func TestRedactionShapes(t *testing.T) {
	tests := []struct {
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
		// fleet-audit's own prompt error: a passphrase key name is redacted
		// in facts, but "passphrase:" in text is followed by the error.
		{"passphrase prompt error", "read passphrase: EOF", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := sanitizeValue("x.fact", tc.value) == result.Redacted
			if got != tc.secret {
				t.Errorf("fact %q redacted = %v, want %v", tc.value, got, tc.secret)
			}
			text := redactText("node said: " + tc.value + "\nnext line")
			if got := strings.Contains(text, result.Redacted); got != tc.secret {
				t.Errorf("stderr %q -> %q: redacted = %v, want %v", tc.value, text, got, tc.secret)
			}
			if !strings.HasSuffix(text, "\nnext line") {
				t.Errorf("stderr %q -> %q: the next line was lost", tc.value, text)
			}
		})
	}
}
