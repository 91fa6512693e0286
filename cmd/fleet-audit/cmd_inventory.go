package main

import (
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/urfave/cli/v2"

	"github.com/fleet-audit/fleet-audit/inventory"
)

func inventoryCommand() *cli.Command {
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
			inv, err := inventory.Load(c.String("inventory"), inventory.LoadOptions{UserSSHConfig: c.String("ssh-config")})
			if err != nil {
				return &usageError{err}
			}
			t := tablewriter.NewTable(c.App.Writer)
			t.Header("host", "address", "port", "user", "roles", "become", "connection", "address from")
			for _, h := range inv.Hosts {
				if err := t.Append(h.Name, h.Address, strconv.Itoa(h.Port), h.User, strings.Join(h.Roles, ","), h.Become, h.Connection, h.Source["address"]); err != nil {
					return err
				}
			}
			return t.Render()
		},
	}
}
