package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/urfave/cli/v2"

	"github.com/fleet-audit/fleet-audit/inventory"
)

// inventoryOptions is what the inventory command's flags fill in.
type inventoryOptions struct {
	Path      string
	SSHConfig string
}

func inventoryCommand(act func(context.Context, inventoryOptions, streams) error) *cli.Command {
	return &cli.Command{
		Name:      "inventory",
		Usage:     "print the hosts of an inventory as resolved (defaults, groups, ssh_config)",
		UsageText: "fleet-audit inventory -i FILE [-F ssh_config]",
		Description: `Loads and validates the inventory exactly as run does, contacts nothing,
and prints one row per host with its address, port, user, roles and where the
address came from. Exits 2 with every problem (file:line: field: why) on bad input.

EXAMPLES:
   fleet-audit inventory -i examples/inventory.yaml`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "inventory", Aliases: []string{"i"}, Required: true, Usage: "inventory `FILE` (YAML)"},
			&cli.StringFlag{Name: "ssh-config", Aliases: []string{"F"}, Usage: "ssh_config `FILE` for bare host names (default ~/.ssh/config)"},
		},
		Action: func(c *cli.Context) error {
			return internal(act(c.Context, inventoryOptions{Path: c.String("inventory"), SSHConfig: c.String("ssh-config")}, streamsOf(c)))
		},
	}
}

// runInventory loads the inventory as run would and prints it.
func runInventory(_ context.Context, o inventoryOptions, s streams) error {
	inv, err := inventory.Load(o.Path, inventory.LoadOptions{UserSSHConfig: o.SSHConfig})
	if err != nil {
		return &usageError{err}
	}
	out := &errWriter{w: s.out}
	t := tablewriter.NewTable(out)
	t.Header("host", "address", "port", "user", "roles", "become", "connection", "via", "host keys", "address from")
	for _, h := range inv.Hosts {
		via := "-"
		if len(h.Jumps) > 0 {
			var hops []string
			for _, j := range h.Jumps {
				hops = append(hops, j.Name)
			}
			via = strings.Join(hops, " → ")
		}
		policy := h.HostKeyPolicy
		if policy == "" {
			policy = "default"
		}
		become := h.Become
		if h.BecomeUser != "" {
			become += " -u " + h.BecomeUser
		}
		if err := t.Append(h.Name, h.Address, strconv.Itoa(h.Port), h.User, strings.Join(h.Roles, ","), become, h.Connection, via, policy, h.Source["address"]); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	if out.err != nil {
		return out.err
	}
	return printHostDetails(s.out, inv)
}

// printHostDetails lists, under the table, the settings most hosts leave
// alone (one line per host that sets any) and every jump host as it will
// be dialled. Only the name of a passphrase variable is shown, never its
// value.
func printHostDetails(w io.Writer, inv *inventory.Inventory) error {
	var b strings.Builder
	for _, h := range inv.Hosts {
		var opts []string
		add := func(key, value string) {
			opts = append(opts, fmt.Sprintf("%s=%s (%s)", key, value, h.Source[key]))
		}
		if h.IdentitiesOnly {
			add("identities_only", "true")
		}
		if h.PassphraseEnv != "" {
			add("passphrase_env", h.PassphraseEnv)
		}
		if h.ConnectTimeout > 0 {
			add("connect_timeout", h.ConnectTimeout.String())
		}
		if h.ServerAliveInterval > 0 {
			add("server_alive_interval", h.ServerAliveInterval.String())
		}
		if h.ServerAliveCountMax > 0 {
			add("server_alive_count_max", strconv.Itoa(h.ServerAliveCountMax))
		}
		if len(opts) > 0 {
			fmt.Fprintf(&b, "%s: %s\n", h.Name, strings.Join(opts, " "))
		}
		for _, j := range h.Jumps {
			fmt.Fprintf(&b, "%s via %s = %s@%s keys=[%s] known_hosts=[%s]\n", h.Name, j.Name,
				j.User, net.JoinHostPort(j.Address, strconv.Itoa(j.Port)), strings.Join(j.IdentityFiles, " "), strings.Join(j.KnownHostsFiles, " "))
		}
		if h.HostKeyPolicy == "insecure-ignore" {
			fmt.Fprintf(&b, "warning: %s: host keys will NOT be verified (host_key_policy insecure-ignore, from %s)\n", h.Name, h.Source["host_key_policy"])
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
