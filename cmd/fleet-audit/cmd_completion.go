package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"
)

func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print the shell completion script for bash, zsh or fish",
		UsageText: "fleet-audit completion bash|zsh|fish",
		ArgsUsage: "SHELL",
		Description: `Prints a script that completes fleet-audit's commands and flags, generated
from this binary's own, so it completes what this version has. The .deb
and .rpm install it; for a binary of your own, load it from your shell's
startup file or its completion directory. Contacts nothing.

EXAMPLES:
   source <(fleet-audit completion bash)
   fleet-audit completion zsh > "${fpath[1]}/_fleet-audit"
   fleet-audit completion fish > ~/.config/fish/completions/fleet-audit.fish`,
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return &usageError{fmt.Errorf("completion: no shell given: want one of %s", strings.Join(completionShells, ", "))}
			}
			script, err := completionScript(c.App, c.Args().First())
			if err != nil {
				return &usageError{fmt.Errorf("completion: %w", err)}
			}
			_, err = io.WriteString(c.App.Writer, script)
			return internal(err)
		},
	}
}

// manCommand prints the man page, generated from the same definitions as
// --help, for `make man` and the packages. It is hidden: a user reads the
// page with man(1), not from here.
func manCommand() *cli.Command {
	return &cli.Command{
		Name:   "man",
		Usage:  "print the man page (roff), generated from the commands' help",
		Hidden: true,
		Action: func(c *cli.Context) error {
			page, err := c.App.ToManWithSection(1)
			if err != nil {
				return internal(fmt.Errorf("man page: %w", err))
			}
			if page == "" {
				return internal(errors.New("man page: empty"))
			}
			_, err = io.WriteString(c.App.Writer, page)
			return internal(err)
		},
	}
}
