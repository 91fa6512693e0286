package audit

import (
	"testing"

	"github.com/fleet-audit/fleet-audit/result"
)

// TestIsServerIsTheOneAnswer pins the one server predicate and that skew,
// rollout and server_only facts all ask it: a crashed server is a server
// everywhere (it was an agent to the skew policy and a worker to rollout
// when each had its own test), the rke2 facts beat the inventory role, and
// the role decides only where the facts say nothing.
func TestIsServerIsTheOneAnswer(t *testing.T) {
	tests := []struct {
		name   string
		facts  map[string]string
		roles  []string
		server bool
	}{
		{"active server", map[string]string{"rke2.service": "rke2-server", "rke2.server.active": "active", "rke2.agent.active": "inactive"}, nil, true},
		{"crashed server", map[string]string{"rke2.service": "none", "rke2.server.active": "failed", "rke2.agent.active": "inactive"}, nil, true},
		{"active agent with a server role", map[string]string{"rke2.service": "rke2-agent", "rke2.server.active": "inactive", "rke2.agent.active": "active"}, []string{"etcd"}, false},
		{"service only (older report)", map[string]string{"rke2.service": "rke2-server"}, nil, true},
		{"stopped, role control-plane", map[string]string{"rke2.service": "none", "rke2.server.active": "inactive", "rke2.agent.active": "inactive"}, []string{"master"}, true},
		{"stopped, role worker", map[string]string{"rke2.service": "none", "rke2.server.active": "inactive", "rke2.agent.active": "inactive"}, []string{"worker"}, false},
		{"no facts, role etcd", map[string]string{}, []string{"etcd"}, true},
		{"no facts, no role", map[string]string{}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := result.Node{Name: "n1", Status: result.StatusOK, Roles: tt.roles, Facts: tt.facts}
			if got := isServer(n); got != tt.server {
				t.Fatalf("isServer = %v, want %v", got, tt.server)
			}
			n.Facts = map[string]string{}
			for k, v := range tt.facts {
				n.Facts[k] = v
			}
			n.Facts["rke2.version"] = "v1.31.4+rke2r1"
			if vs := fleetVersions([]result.Node{n}); len(vs) != 1 || vs[0].server != tt.server {
				t.Errorf("skew sees server=%v, want %v", vs, tt.server)
			}
			if len(tt.roles) == 0 {
				want := result.ClassWorker
				if tt.server {
					want = result.ClassControlPlane
				}
				if got := nodeClass(n); got != want {
					t.Errorf("rollout class %s, want %s", got, want)
				}
			}
		})
	}
}
