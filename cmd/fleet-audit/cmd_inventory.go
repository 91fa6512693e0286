package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/fleet-audit/fleet-audit/inventory"
	"github.com/fleet-audit/fleet-audit/report"
	"github.com/fleet-audit/fleet-audit/result"
)

// inventoryOptions is what the inventory command's flags fill in.
type inventoryOptions struct {
	inventorySource
	// JSON prints the resolved hosts as JSON (inventoryJSON) instead of
	// the tables.
	JSON bool
}

func inventoryCommand(act func(context.Context, inventoryOptions, streams) error) *cli.Command {
	return &cli.Command{
		Name:      "inventory",
		Usage:     "print the hosts of an inventory as resolved (defaults, groups, Ansible variables, ssh_config)",
		UsageText: "fleet-audit inventory -i FILE [-F ssh_config] [--role-map GROUP=ROLE,...] [--json]",
		Description: `Loads and validates the inventory exactly as run does, contacts nothing,
and prints one row per host with its address, port, user, roles, become and
jump hosts, then the settings most hosts leave alone (connection, host key
policy, timeouts) and each host's groups and where every value came from
(host, group:NAME, group_vars/NAME.yml, host_vars/NAME.yml, defaults,
ssh_config). Exits 2 with every problem (file:line: field: why) on bad input.
--json prints the resolved hosts for a script instead: {"inventory", "format",
"hosts": [{"name", "address", "port", "user", "roles", "become", "become_user",
"connection", "groups"}]}, with "limit" when -l was given.

EXAMPLES:
   fleet-audit inventory -i examples/inventory.yaml
   fleet-audit inventory -i ~/rke2-ansible/inventory/prod/hosts.ini
   ansible-inventory -i aws_ec2.yml --list | fleet-audit inventory -i -
   fleet-audit inventory -i hosts.ini -l rke2_servers --json | jq -r '.hosts[].address'`,
		Flags: append(inventoryFlags(), &cli.BoolFlag{Name: "json", Usage: "print the resolved hosts as JSON for scripts, instead of the tables"}),
		Action: func(c *cli.Context) error {
			src, err := inventorySourceFrom(c)
			if err != nil {
				return err
			}
			return internal(act(c.Context, inventoryOptions{inventorySource: src, JSON: c.Bool("json")}, streamsOf(c)))
		},
	}
}

// runInventory loads the inventory as run would and prints it.
func runInventory(ctx context.Context, o inventoryOptions, s streams) error {
	inv, err := untilDone(ctx, o.load)
	if err != nil {
		return err
	}
	for _, w := range inv.Warnings {
		fmt.Fprintf(s.err, "fleet-audit: warning: %s\n", w)
	}
	if o.JSON {
		enc := json.NewEncoder(s.out)
		enc.SetIndent("", "  ")
		return enc.Encode(inventoryJSONOf(inv))
	}
	limited := ""
	if l := limitOf(inv); l != nil {
		limited = " (" + l.Describe() + ")"
	}
	width := terminalWidth(s.out, os.Getenv)
	head := fmt.Sprintf("%s: %s, %s%s\n", cmp.Or(inv.File, "host list"), formatName(inv.Format), result.Count(len(inv.Hosts), "host"), limited)
	// The change ticket the inventory names, as every report will print it
	// (the flags of a run override it field by field), so it can be
	// checked before the run.
	if parts := changeOf(inv.Change, nil).Parts(); len(parts) > 0 {
		head += strings.Join(parts, " · ") + "\n"
	}
	if err := writeWrapped(s.out, head, width); err != nil {
		return err
	}
	var rows [][]string
	for _, h := range inv.Hosts {
		via := "-"
		if h.ProxyCommand != "" {
			via = "ProxyCommand"
		}
		if len(h.Jumps) > 0 {
			var hops []string
			for _, j := range h.Jumps {
				hops = append(hops, j.Name)
			}
			via = strings.Join(hops, " → ")
		}
		become := h.Become
		if h.BecomeUser != "" {
			become += " -u " + h.BecomeUser
		}
		rows = append(rows, []string{h.Name, h.Address, strconv.Itoa(h.Port), h.User, strings.Join(h.Roles, ","), become, via})
	}
	// What most hosts leave alone (the connection, the host key policy,
	// where the address came from) is under the table, so that the table
	// fits a terminal.
	lines := report.Table(width, 0, []report.Column{
		{Title: "HOST", Min: 8, Fit: report.Ident},
		{Title: "ADDRESS", Min: 8, Fit: report.Ident},
		{Title: "PORT", Min: 4, Fit: report.Truncate},
		{Title: "USER", Min: 4, Fit: report.Ident},
		{Title: "ROLES", Min: 5, Fit: report.List},
		{Title: "BECOME", Min: 6, Fit: report.Words},
		{Title: "VIA", Min: 3, Fit: report.Words},
	}, rows)
	if _, err := io.WriteString(s.out, strings.Join(lines, "\n")+"\n"); err != nil {
		return err
	}
	if err := printHostDetails(s.out, inv, width); err != nil {
		return err
	}
	return printSources(s.out, inv, width)
}

// writeWrapped writes each line of text wrapped at spaces to width, its
// continuation lines indented: the listings under the inventory table are
// sentences, not columns.
func writeWrapped(w io.Writer, text string, width int) error {
	if text == "" {
		return nil
	}
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		for _, wl := range report.Wrap(l, width, 4) {
			b.WriteString(wl + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// inventoryJSON is what inventory --json prints: the hosts as run would
// contact them, for a script (a CI job's host list, a firewall rule), in
// snake_case as the results file. No key, password or ProxyCommand: only
// where and as whom.
type inventoryJSON struct {
	Inventory string              `json:"inventory"`
	Format    string              `json:"format"`
	Limit     *result.Limit       `json:"limit,omitempty"`
	Hosts     []inventoryHostJSON `json:"hosts"`
}

type inventoryHostJSON struct {
	Name       string   `json:"name"`
	Address    string   `json:"address"`
	Port       int      `json:"port"`
	User       string   `json:"user"`
	Roles      []string `json:"roles"`
	Become     string   `json:"become"`
	BecomeUser string   `json:"become_user"`
	Connection string   `json:"connection"`
	Groups     []string `json:"groups"`
}

func inventoryJSONOf(inv *inventory.Inventory) inventoryJSON {
	out := inventoryJSON{Inventory: inv.File, Format: inv.Format, Limit: limitOf(inv), Hosts: []inventoryHostJSON{}}
	for _, h := range inv.Hosts {
		out.Hosts = append(out.Hosts, inventoryHostJSON{
			Name: h.Name, Address: h.Address, Port: h.Port, User: h.User, Roles: nonNil(h.Roles),
			Become: h.Become, BecomeUser: h.BecomeUser, Connection: h.Connection, Groups: nonNil(h.Groups),
		})
	}
	return out
}

// nonNil keeps an empty list a JSON [] rather than null.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// formatName says what the file was read as, in the words of its tool.
func formatName(format string) string {
	switch format {
	case "ansible-ini":
		return "Ansible INI inventory"
	case "ansible-yaml":
		return "Ansible YAML inventory"
	case "ansible-dir":
		return "Ansible inventory directory"
	case "ansible-json":
		return "ansible-inventory --list JSON"
	case "host-list":
		return "host list"
	}
	return "fleet-audit inventory"
}

// printSources lists, per host, its groups and where each value that is
// not a built-in default came from, so an operator can see which file to
// edit.
func printSources(w io.Writer, inv *inventory.Inventory, width int) error {
	var b strings.Builder
	b.WriteString("\nwhere values came from:\n")
	for _, h := range inv.Hosts {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(h.Source)) {
			if src := h.Source[k]; src != "builtin" {
				parts = append(parts, k+"="+src)
			}
		}
		groups := "-"
		if len(h.Groups) > 0 {
			groups = strings.Join(h.Groups, ",")
		}
		fmt.Fprintf(&b, "%s [groups %s] %s\n", h.Name, groups, strings.Join(parts, " "))
	}
	return writeWrapped(w, b.String(), width)
}

// printHostDetails lists, under the table, the settings most hosts leave
// alone (one line per host that sets any) and every jump host as it will
// be dialled. Only the name of a passphrase variable is shown, never its
// value.
func printHostDetails(w io.Writer, inv *inventory.Inventory, width int) error {
	var b strings.Builder
	for _, h := range inv.Hosts {
		var opts []string
		add := func(key, value string) {
			opts = append(opts, fmt.Sprintf("%s=%s (%s)", key, value, h.Source[key]))
		}
		if h.Connection != "" && h.Connection != "ssh" {
			add("connection", h.Connection)
		}
		if h.HostKeyPolicy != "" {
			add("host_key_policy", h.HostKeyPolicy)
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
		if h.ProxyCommand != "" {
			fmt.Fprintf(&b, "%s via ProxyCommand: %s\n", h.Name, h.ProxyCommand)
		}
		for _, j := range h.Jumps {
			fmt.Fprintf(&b, "%s via %s = %s@%s keys=[%s] known_hosts=[%s]\n", h.Name, j.Name,
				j.User, net.JoinHostPort(j.Address, strconv.Itoa(j.Port)), strings.Join(j.IdentityFiles, " "), strings.Join(j.KnownHostsFiles, " "))
			if j.ProxyCommand != "" {
				fmt.Fprintf(&b, "%s via %s via ProxyCommand: %s\n", h.Name, j.Name, j.ProxyCommand)
			}
		}
		if h.HostKeyPolicy == "insecure-ignore" {
			fmt.Fprintf(&b, "warning: %s: host keys will NOT be verified (host_key_policy insecure-ignore, from %s)\n", h.Name, h.Source["host_key_policy"])
		}
	}
	return writeWrapped(w, b.String(), width)
}
