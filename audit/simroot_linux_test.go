//go:build linux

package audit

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
)

// TestLoginEnvCannotSimulateRoot: a login environment (pam_env,
// ~/.ssh/environment, AcceptEnv) that names FLEET_AUDIT_ROOT must not make
// a real node a simulated one: the login's bin/ must never head root's PATH
// (a login-owned iptables-save ran as uid 0) and root probes must not read
// the login's files as the node's. Only the key this process hands its
// simulated nodes (probe.SimulatedNodeEnv) opens the hook; a wrong one is
// as good as none.
func TestLoginEnvCannotSimulateRoot(t *testing.T) {
	testtools.SkipShort(t, "runs probes in a shell as an unprivileged login")
	login := testtools.SudoLogin(t)
	for _, tc := range []struct {
		name string
		env  func(dir string) []string
	}{
		{"FLEET_AUDIT_ROOT alone", func(dir string) []string { return []string{"FLEET_AUDIT_ROOT=" + dir} }},
		{"with a guessed key", func(dir string) []string {
			return []string{"FLEET_AUDIT_ROOT=" + dir, probe.SimulatedNodeKeyEnv + "=" + probe.NewNonce()}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := testtools.PublicDir(t)
			if err := os.Chown(dir, int(login.UID), int(login.GID)); err != nil {
				t.Fatal(err)
			}
			ran := filepath.Join(dir, "ran-as")
			// What the login plants: an iptables-save that says who ran it,
			// and an os-release that would be read in place of the node's.
			for name, body := range map[string]string{
				"bin/iptables-save": "#!/bin/sh\nid -u >>" + ran + "\n",
				"etc/os-release":    "ID=planted\n",
			} {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			p, err := probe.ParseProbe("whoruns.sh", "# id: whoruns\n# description: runs iptables-save as root\n# needs_root: true\n# timeout: 10s\n# facts: whoruns.uid whoruns.root\n"+
				"iptables-save >/dev/null 2>&1\nfact whoruns.uid \"$(id -u)\"\nfact whoruns.root \"${R:-none}\"\n")
			if err != nil {
				t.Fatal(err)
			}
			probes := []probe.Probe{p}
			nonce := probe.NewNonce()
			sess := &shSession{attr: &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: login.UID, Gid: login.GID}}, env: tc.env(dir)}
			res, err := sess.Exec(context.Background(), scriptFor(t, probes, probe.Become{Method: "sudo"}, nonce, time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			parsed := probe.ParseOutput(res.Stdout, nonce, probes)
			if parsed.Meta[probe.MetaSudo] != "ok" || parsed.Facts["whoruns.uid"] != "0" {
				t.Fatalf("the probe did not run as root through sudo: meta.sudo %q, uid %q (stderr %s)", parsed.Meta[probe.MetaSudo], parsed.Facts["whoruns.uid"], res.Stderr)
			}
			if b, err := os.ReadFile(ran); err == nil {
				t.Errorf("the login's iptables-save ran, as uid %s", strings.Join(strings.Fields(string(b)), ", "))
			}
			if got := parsed.Facts["whoruns.root"]; got != "none" {
				t.Errorf("root probes read the node's files under %q", got)
			}
		})
	}
}
