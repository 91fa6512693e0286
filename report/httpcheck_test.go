package report

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

// The runbook's HTTP checks (kube-proxy-healthy's /healthz) pass on a
// healthy node of every address family and with a proxy in the login
// environment: run on simulated nodes whose kube-proxy listens on
// 127.0.0.1 or, IPv6-primary, on ::1 (k3s kubeProxyArgs), in the session
// environment their /etc/environment gives.
func TestHTTPCheckOnEveryAddressFamily(t *testing.T) {
	testtools.SkipShort(t, "runs the check in a shell on simulated nodes")
	v := result.Verification{HTTP: "http://127.0.0.1:10256/healthz", Status: 200}
	shapes := map[string]func(nodesim.State) nodesim.State{
		"IPv4":         func(s nodesim.State) nodesim.State { return s },
		"dual-stack":   nodesim.WithDualStack,
		"IPv6-primary": nodesim.WithIPv6Primary,
	}
	for name, shape := range shapes {
		for _, proxied := range []bool{false, true} {
			s := shape(nodesim.Healthy("n", false))
			if proxied {
				s = nodesim.WithHTTPProxyEnv(s)
			}
			root := filepath.Join(t.TempDir(), "node")
			if err := nodesim.Build(root, s); err != nil {
				t.Fatal(err)
			}
			cmdline, want := verifyShell(v)
			cmd := exec.Command("/bin/sh", "-c", cmdline)
			cmd.Env = append([]string{"PATH=" + filepath.Join(root, "bin")}, nodesim.SessionEnv(root)...)
			out, err := cmd.Output()
			if got := "prints " + strings.TrimSpace(string(out)); err != nil || got != want {
				t.Errorf("%s, proxy %v: %s %s (%v), want it to %s", name, proxied, cmdline, got, err, want)
			}
		}
	}
}
