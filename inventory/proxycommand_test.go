package inventory_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/internal/testtools"
)

// TestRouteAgreesWithSSH holds the choice between ProxyJump and
// ProxyCommand to OpenSSH's own: for each host, ssh -G (which prints the
// options ssh would use) must name the same kind of route as Load chose.
func TestRouteAgreesWithSSH(t *testing.T) {
	sshBin := testtools.Find(t, "ssh")
	e := newEnv(t)
	const config = `Host jump-first
  ProxyJump gw
  ProxyCommand nc %h %p
Host command-first
  ProxyCommand nc %h %p
  ProxyJump gw
Host jump-none-first
  ProxyJump none
  ProxyCommand nc %h %p
Host command-none-first
  ProxyCommand none
  ProxyJump gw
Host command-then-jump-none
  ProxyCommand nc %h %p
  ProxyJump none
Host split-*
  ProxyCommand nc %h %p
Host split-jump
  ProxyJump gw
Host *
  User tester
`
	cfg := e.write(t, "ssh_config.for-ssh", config)
	hosts := []string{"jump-first", "command-first", "jump-none-first", "command-none-first", "command-then-jump-none", "split-jump", "plain"}
	var yaml strings.Builder
	yaml.WriteString("hosts:\n")
	for _, h := range hosts {
		yaml.WriteString("  " + h + ":\n")
	}
	for _, h := range hosts {
		t.Run(h, func(t *testing.T) {
			out, err := exec.Command(sshBin, "-G", "-F", cfg, h).Output()
			if err != nil {
				t.Fatalf("ssh -G: %v", err)
			}
			want := "direct"
			for _, line := range strings.Split(string(out), "\n") {
				switch {
				case strings.HasPrefix(line, "proxyjump "):
					want = "jump"
				case strings.HasPrefix(line, "proxycommand ") && want == "direct":
					want = "command"
				}
			}
			got := "direct"
			host := loadOne(t, e, yaml.String(), config, h)
			switch {
			case len(host.Jumps) > 0:
				got = "jump"
			case host.ProxyCommand != "":
				got = "command"
			}
			if got != want {
				t.Errorf("Load reaches %s by %s, ssh -G by %s:\n%s", h, got, want, out)
			}
		})
	}
}
