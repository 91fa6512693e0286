package probe

import (
	"bytes"
	"os"
	"os/exec"
	"testing"

	"github.com/fleet-audit/fleet-audit/internal/testtools"
)

// TestBundleHonoursSimulatedRootOnlyWhenEnabled: the bundle of a process
// without simulated nodes (the shipped tool auditing real nodes) ignores
// FLEET_AUDIT_ROOT even beside this process's own key, and one with them
// honours it only beside that key.
func TestBundleHonoursSimulatedRootOnlyWhenEnabled(t *testing.T) {
	testtools.SkipShort(t, "runs the bundle in a shell")
	was := simEnabled.Load()
	t.Cleanup(func() { simEnabled.Store(was) })
	dir := t.TempDir()
	p, err := ParseProbe("root.sh", "# id: root\n# description: d\n# needs_root: false\n# timeout: 5s\n# facts: root.r\nfact root.r \"${R:-none}\"\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		enabled bool
		env     []string
		want    string
	}{
		{"tool without simulated nodes, node sets the key too", false, []string{"FLEET_AUDIT_ROOT=" + dir, SimulatedNodeKeyEnv + "=" + simKey()}, "none"},
		{"tool without simulated nodes, root alone", false, []string{"FLEET_AUDIT_ROOT=" + dir}, "none"},
		{"simulating, root alone", true, []string{"FLEET_AUDIT_ROOT=" + dir}, "none"},
		{"simulating, wrong key", true, []string{"FLEET_AUDIT_ROOT=" + dir, SimulatedNodeKeyEnv + "=" + NewNonce()}, "none"},
		{"simulating, SimulatedNodeEnv", true, SimulatedNodeEnv(dir), dir},
	} {
		t.Run(tc.name, func(t *testing.T) {
			simEnabled.Store(tc.enabled)
			nonce := NewNonce()
			b, err := BuildBundle([]Probe{p}, Become{}, nonce)
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("/bin/sh", "-s")
			cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, tc.env...)
			cmd.Stdin = bytes.NewReader(b)
			out, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			if got := ParseOutput(out, nonce, []Probe{p}).Facts["root.r"]; got != tc.want {
				t.Errorf("the probe's root is %q, want %q", got, tc.want)
			}
		})
	}
}
