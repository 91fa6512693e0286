package nodesim

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"testing"
)

// kubectl auth can-i as the stub answers it: "yes" on stdout and exit 0, or
// "no" and exit 1 (kubectl pkg/cmd/auth/cani.go RunAccessCheck, and the
// os.Exit(1) of NewCmdCanI), per verb and resource as ClusterRole
// system:node-proxier grants them (kubernetes
// plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go); whatever it
// does not grant is denied.
func TestKubectlCanIPerVerbAndResource(t *testing.T) {
	server := func(edit func(State) State) State {
		s := WithCluster(Clean(2))[0].State
		if edit != nil {
			s = edit(s)
		}
		return s
	}
	tests := []struct {
		name     string
		state    State
		verb     string
		resource string // as the cluster probe passes it
		extra    []string
		allowed  bool
	}{
		{"get nodes", server(nil), "get", "nodes", nil, true},
		{"list endpointslices", server(nil), "list", "endpointslices.discovery.k8s.io", nil, true},
		{"watch services", server(nil), "watch", "services", nil, true},
		{"patch events.k8s.io events", server(nil), "patch", "events.events.k8s.io", nil, true},
		{"delete nodes is not granted", server(nil), "delete", "nodes", nil, false},
		{"get configmaps is not granted", server(nil), "get", "configmaps", nil, false},
		{"get secrets is not granted", server(nil), "get", "secrets", nil, false},
		{"a subresource is not its resource", server(nil), "get", "nodes", []string{"--subresource=proxy"}, false},
		{"binding removed: get nodes", server(WithKubeProxyRBACBroken), "get", "nodes", nil, false},
		{"binding removed: list endpointslices", server(WithKubeProxyRBACBroken), "list", "endpointslices.discovery.k8s.io", nil, false},
		{"one rule taken away", server(func(s State) State { return WithKubeProxyCanI(s, "list", "endpointslices.discovery.k8s.io", false) }),
			"list", "endpointslices.discovery.k8s.io", nil, false},
		{"one rule taken away leaves the others", server(func(s State) State { return WithKubeProxyCanI(s, "list", "endpointslices.discovery.k8s.io", false) }),
			"watch", "endpointslices.discovery.k8s.io", nil, true},
		{"a rule granted beyond node-proxier beats deny-by-default", server(func(s State) State { return WithKubeProxyCanI(s, "get", "nodes/proxy", true) }),
			"get", "nodes", []string{"--subresource=proxy"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "node")
			if err := Build(root, tc.state); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"--kubeconfig", filepath.Join(root, KubeconfigPath), "--request-timeout=10s", "auth", "can-i", tc.verb, tc.resource}, tc.extra...)
			cmd := exec.Command(filepath.Join(root, KubectlPath), append(args, "--as=system:kube-proxy")...)
			cmd.Env = []string{"PATH=/usr/bin:/bin", "FLEET_AUDIT_ROOT=" + root}
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			err := cmd.Run()
			rc := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				rc = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			want, wantRC := "yes\n", 0
			if !tc.allowed {
				want, wantRC = "no\n", 1
			}
			if out.String() != want || rc != wantRC || errb.Len() != 0 {
				t.Errorf("can-i %s %s %v = %q exit %d (stderr %q), want %q exit %d", tc.verb, tc.resource, tc.extra, out.String(), rc, errb.String(), want, wantRC)
			}
		})
	}
	if got := KubectlCanIFor("get", "nodes"); got != KubectlCanI {
		t.Errorf("KubectlCanIFor(get, nodes) = %q, want KubectlCanI %q", got, KubectlCanI)
	}
}
