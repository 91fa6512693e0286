package audit

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/audit/probe"
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

func (t *hostileTransport) Open(_ context.Context, h Target) (Session, error) {
	if err := t.openErr[h.Name]; err != nil {
		return nil, err
	}
	return &hostileSession{t: t, name: h.Name}, nil
}

type hostileSession struct {
	t    *hostileTransport
	name string
}

func (s *hostileSession) Exec(context.Context, Script) (ExecResult, error) {
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
	inv := &Fleet{Name: "hostile"}
	for _, h := range []string{"unreachable", "stderr-token", "stderr-pem", "server"} {
		inv.Targets = append(inv.Targets, Target{Name: h, Address: "192.0.2.1", Roles: []string{"etcd"}})
	}
	probes, err := probe.BuiltinProbes()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), RunOptions{Fleet: inv, Transport: tr, Forks: 1, NodeTimeout: time.Minute, Rules: Rules{Probes: probes}})
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
