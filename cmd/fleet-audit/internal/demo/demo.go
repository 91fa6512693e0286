// Package demo stands up a simulated fleet on loopback: one in-process SSH
// server (internal/sshfleet) per node, each running the real probe bundle
// with /bin/sh against a node root built by internal/nodesim. It writes an
// inventory, a client key and a known_hosts file for that fleet, so the
// audit that follows goes through exactly the code path of `fleet-audit run`.
package demo

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/sshfleet"
	"golang.org/x/crypto/ssh"
)

// Target is the release `fleet-audit demo` audits the upgrade to
// (nodesim.DemoTarget). It and Members are handed on here so that the
// command's non-test code reaches the simulators only through this
// package, as internal/archtest holds.
const Target = nodesim.DemoTarget

// Members is the fleet `fleet-audit demo` audits (nodesim.Demo).
func Members() []nodesim.Member { return nodesim.Demo() }

// Fleet is a running simulated fleet.
type Fleet struct {
	// InventoryPath is an inventory file that reaches every node.
	InventoryPath string
	// AnsibleInventoryPath is the same fleet as an Ansible INI inventory,
	// the way an operator of rancherfederal/rke2-ansible would write it,
	// with the client key in group_vars/all.yml beside it.
	AnsibleInventoryPath string
	servers              *sshfleet.Fleet
}

// Options tweak the simulated fleet for tests.
type Options struct {
	// Faults puts a node into a fault mode (refuse, silent, …).
	Faults map[string]sshfleet.Fault
	// WrongHostKey lists nodes whose known_hosts entry is of another key, as
	// after a reinstall.
	WrongHostKey map[string]bool
	// Replay, when set, memoises each node's probe bundles (sshfleet.Replay),
	// for a fleet whose node files are never changed.
	Replay *sshfleet.Replay
}

// Start builds the node roots under dir, starts the servers and writes
// dir/inventory.yaml. Close stops everything.
func Start(ctx context.Context, dir string, members []nodesim.Member, o Options) (*Fleet, error) {
	signer, keyPEM, err := sshfleet.NewClientKey()
	if err != nil {
		return nil, fmt.Errorf("demo client key: %w", err)
	}
	keyPath := filepath.Join(dir, "id_ed25519")
	if err := os.WriteFile(keyPath, keyPEM, 0o600); err != nil {
		return nil, fmt.Errorf("demo client key: %w", err)
	}
	var cfgs []sshfleet.NodeConfig
	for _, m := range members {
		root := filepath.Join(dir, "nodes", m.Name)
		if err := nodesim.Build(root, m.State); err != nil {
			return nil, err
		}
		cfgs = append(cfgs, sshfleet.NodeConfig{
			Name:           m.Name,
			AuthorizedKeys: []ssh.PublicKey{signer.PublicKey()},
			Env:            nodesim.SessionEnv(root),
			Dir:            root,
			Fault:          o.Faults[m.Name],
			Replay:         o.Replay,
		})
	}
	servers, err := sshfleet.Start(ctx, cfgs)
	if err != nil {
		return nil, fmt.Errorf("start simulated fleet: %w", err)
	}
	f := &Fleet{servers: servers, InventoryPath: filepath.Join(dir, "inventory.yaml"), AnsibleInventoryPath: filepath.Join(dir, "inventory.ini")}
	known, err := knownHosts(servers, o.WrongHostKey)
	if err != nil {
		servers.Close()
		return nil, err
	}
	knownPath := filepath.Join(dir, "known_hosts")
	sshConfig := filepath.Join(dir, "ssh_config")
	inv := inventoryYAML(members, servers, keyPath, knownPath, sshConfig)
	ini := inventoryINI(members, servers, knownPath, sshConfig)
	if err := os.MkdirAll(filepath.Join(dir, "group_vars"), 0o755); err != nil {
		servers.Close()
		return nil, fmt.Errorf("demo: %w", err)
	}
	for p, b := range map[string][]byte{knownPath: known, sshConfig: []byte("# the demo reads no user ssh_config\n"), f.InventoryPath: []byte(inv), f.AnsibleInventoryPath: []byte(ini),
		filepath.Join(dir, "group_vars", "all.yml"): []byte(ansibleGroupVars(keyPath))} {
		if err := os.WriteFile(p, b, 0o600); err != nil {
			servers.Close()
			return nil, fmt.Errorf("demo: %w", err)
		}
	}
	return f, nil
}

// Close stops the servers.
func (f *Fleet) Close() error { return f.servers.Close() }

func knownHosts(servers *sshfleet.Fleet, wrong map[string]bool) ([]byte, error) {
	var b strings.Builder
	for _, n := range servers.Nodes() {
		key := n.HostKey
		if wrong[n.Config.Name] {
			other, _, err := sshfleet.NewClientKey()
			if err != nil {
				return nil, err
			}
			key = other.PublicKey()
		}
		fmt.Fprintf(&b, "[%s]:%d %s", n.Host, n.Port, ssh.MarshalAuthorizedKey(key))
	}
	return []byte(b.String()), nil
}

func inventoryYAML(members []nodesim.Member, servers *sshfleet.Fleet, key, known, sshConfig string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by fleet-audit demo: a simulated fleet on loopback.\nname: demo-cluster\ndefaults:\n")
	fmt.Fprintf(&b, "  identity_files: [%q]\n  known_hosts: [%q]\n  ssh_config: %q\n", key, known, sshConfig)
	order, groups := byGroup(members, servers, func(role string) string { return role }, func(m nodesim.Member, n *sshfleet.Node) string {
		return fmt.Sprintf("      %s: {address: %s, port: %d}\n", m.Name, n.Host, n.Port)
	})
	b.WriteString("groups:\n")
	for _, g := range order {
		fmt.Fprintf(&b, "  %s:\n    roles: [%s]\n    hosts:\n%s", g, g, strings.Join(groups[g], ""))
	}
	return b.String()
}

// byGroup puts each member's inventory line under the group its first role
// names, the groups in the order they first appear.
func byGroup(members []nodesim.Member, servers *sshfleet.Fleet, group func(role string) string, line func(nodesim.Member, *sshfleet.Node) string) ([]string, map[string][]string) {
	lines := map[string][]string{}
	var order []string
	for i, m := range members {
		g := group(m.Roles[0])
		if _, ok := lines[g]; !ok {
			order = append(order, g)
		}
		lines[g] = append(lines[g], line(m, servers.Nodes()[i]))
	}
	return order, lines
}

// inventoryINI is the fleet as an Ansible INI inventory: one group per
// role, named as the RKE2 playbooks name them, and the connection in
// ansible_ variables and ssh options.
func inventoryINI(members []nodesim.Member, servers *sshfleet.Fleet, known, sshConfig string) string {
	groupOf := map[string]string{"etcd": "etcd", "control-plane": "control_plane", "worker": "workers"}
	var b strings.Builder
	b.WriteString("# Written by fleet-audit demo: a simulated fleet on loopback, as an Ansible inventory.\n")
	order, groups := byGroup(members, servers, func(role string) string { return cmp.Or(groupOf[role], role) }, func(m nodesim.Member, n *sshfleet.Node) string {
		return fmt.Sprintf("%s ansible_host=%s ansible_port=%d\n", m.Name, n.Host, n.Port)
	})
	for _, g := range order {
		fmt.Fprintf(&b, "[%s]\n%s\n", g, strings.Join(groups[g], ""))
	}
	fmt.Fprintf(&b, "[rke2_cluster:children]\n%s\n\n", strings.Join(order, "\n"))
	fmt.Fprintf(&b, "[all:vars]\nansible_ssh_common_args='-F %s -o UserKnownHostsFile=%s'\n", sshConfig, known)
	return b.String()
}

// ansibleGroupVars is the group_vars/all.yml beside inventory.ini: the
// key lives there, as operators keep it out of the inventory file.
func ansibleGroupVars(key string) string {
	return fmt.Sprintf("ansible_ssh_private_key_file: %q\n", key)
}
