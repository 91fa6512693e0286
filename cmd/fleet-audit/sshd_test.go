package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/sshdtest"
	"github.com/fleet-audit/fleet-audit/internal/sshfleet"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/report"
	"github.com/fleet-audit/fleet-audit/result"
)

// realFleet starts one OpenSSH sshd per member on loopback, each with its own
// simulated node root (through sshd_config SetEnv), and writes an inventory.
// down names members whose address is a closed port; wrongKey members get a
// known_hosts entry of another key.
func realFleet(t *testing.T, members []nodesim.Member, down, wrongKey map[string]bool) string {
	t.Helper()
	dir := t.TempDir()
	signer, key := clientKeyFile(t, dir)
	var known, hosts strings.Builder
	for _, m := range members {
		root := filepath.Join(dir, "nodes", m.Name)
		if err := nodesim.Build(root, m.State); err != nil {
			t.Fatal(err)
		}
		port := 0
		if down[m.Name] {
			fd, p, err := sshfleet.BoundPort()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { syscall.Close(fd) })
			port = p
		} else {
			env := map[string]string{}
			for _, kv := range nodesim.SessionEnv(root) {
				k, v, _ := strings.Cut(kv, "=")
				env[k] = v
			}
			srv := sshdtest.Start(t, sshdtest.Options{
				Env:            env,
				AuthorizedKeys: []ssh.PublicKey{signer.PublicKey()},
			})
			port = srv.Port
			line := srv.KnownHostsLine()
			if wrongKey[m.Name] {
				other, _, _ := sshfleet.NewClientKey()
				line = fmt.Sprintf("[127.0.0.1]:%d %s", port, strings.TrimSpace(string(ssh.MarshalAuthorizedKey(other.PublicKey()))))
			}
			fmt.Fprintln(&known, strings.TrimSpace(line))
		}
		fmt.Fprintf(&hosts, "  %s: {address: 127.0.0.1, port: %d, roles: [%s]}\n", m.Name, port, strings.Join(m.Roles, ", "))
	}
	knownPath := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(knownPath, []byte(known.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "ssh_config")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	inv := fmt.Sprintf("name: real-sshd\ndefaults:\n  identity_files: [%q]\n  known_hosts: [%q]\n  ssh_config: %q\nhosts:\n%s", key, knownPath, empty, hosts.String())
	invPath := filepath.Join(dir, "inventory.yaml")
	if err := os.WriteFile(invPath, []byte(inv), 0o600); err != nil {
		t.Fatal(err)
	}
	return invPath
}

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), append([]string{"fleet-audit"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

func readResults(t *testing.T, path string) *result.Report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r result.Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// TestRealSSHD audits fleets of real OpenSSH servers: a clean one passes, one
// with planted drift fails with 1, one with a node down exits 3, and a
// changed host key is that node's own status.
func TestRealSSHD(t *testing.T) {
	testtools.SkipShort(t, "audits through a real sshd")
	if _, ok := sshdtest.Available(); !ok {
		testtools.Require(t, "sshd")
	}
	t.Parallel()
	drifted := nodesim.Clean(3)
	drifted[2].State = nodesim.WithUFWActive(drifted[2].State)
	drifted[1].State.Sysctls = map[string]string{"net.ipv4.ip_forward": "0", "net.bridge.bridge-nf-call-iptables": "1",
		"net.bridge.bridge-nf-call-ip6tables": "1", "net.netfilter.nf_conntrack_count": "10", "net.netfilter.nf_conntrack_max": "131072"}
	tests := []struct {
		name     string
		members  []nodesim.Member
		down     map[string]bool
		wrongKey map[string]bool
		want     int
		check    func(t *testing.T, r *result.Report)
	}{
		{name: "clean", members: nodesim.Clean(3), want: 0},
		{name: "drift", members: drifted, want: 1, check: func(t *testing.T, r *result.Report) {
			got := map[string]string{}
			for _, f := range r.Findings {
				got[f.Check] = strings.Join(f.Nodes, ",")
			}
			if got["firewall.ufw-active"] != "node-3" || got["sysctl.ip-forward"] != "node-2" {
				t.Errorf("findings = %v", got)
			}
		}},
		{name: "down", members: nodesim.Clean(3), down: map[string]bool{"node-2": true}, want: 3, check: func(t *testing.T, r *result.Report) {
			if r.Nodes[1].Status != result.StatusUnreachable || r.Nodes[0].Status != result.StatusOK {
				t.Errorf("statuses %s %s", r.Nodes[0].Status, r.Nodes[1].Status)
			}
		}},
		{name: "hostkey", members: nodesim.Clean(3), wrongKey: map[string]bool{"node-1": true}, want: 3, check: func(t *testing.T, r *result.Report) {
			if r.Nodes[0].Status != result.StatusHostKeyMismatch || r.Nodes[2].Status != result.StatusOK {
				t.Errorf("statuses %s %s: %s", r.Nodes[0].Status, r.Nodes[2].Status, r.Nodes[0].Message)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			inv := realFleet(t, tt.members, tt.down, tt.wrongKey)
			results := filepath.Join(t.TempDir(), "results.json")
			code, stdout, stderr := runProcess(context.Background(), t, t.TempDir(), nil, "run", "-i", inv, "--json", results, "--connect-timeout", "5s")
			if code != tt.want {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.want, stdout, stderr)
			}
			r := readResults(t, results)
			for _, n := range r.Nodes {
				if n.Status == result.StatusOK && n.Facts["os.kernel"] != "6.1.0-28-amd64" {
					t.Errorf("%s: facts did not come from the simulated root: %v", n.Name, n.Facts)
				}
			}
			if tt.check != nil {
				tt.check(t, r)
			}
		})
	}
}

// clientKeyFile writes a fresh client key to dir/id_ed25519, as a user's
// identity file, and returns its signer (for the servers' authorized keys)
// and its path.
func clientKeyFile(t *testing.T, dir string) (ssh.Signer, string) {
	t.Helper()
	signer, pemBytes, err := sshfleet.NewClientKey()
	if err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(dir, "id_ed25519")
	if err := os.WriteFile(key, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	return signer, key
}

// everyReport is the flags that write every file format of the report
// registry into dir, under the names the demo uses ("--json DIR/results.json",
// …), so a test that must see every report never misses a new format.
func everyReport(dir string) []string {
	var args []string
	for _, f := range report.FileFormats() {
		args = append(args, "--"+f.Name, filepath.Join(dir, f.DemoFile))
	}
	return args
}
