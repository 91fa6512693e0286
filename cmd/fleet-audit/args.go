package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/fleet-audit/fleet-audit/internal/textdist"
)

// runApp runs the app on argv as a user typed it: flags may come after a
// command's positional arguments (interspersed). Every way into the app goes
// through here, so the commands and the tests parse alike.
func runApp(ctx context.Context, app *cli.App, argv []string) error {
	return app.RunContext(ctx, interspersed(app, argv))
}

// interspersed moves a command's flags, each with its value, before its
// positional arguments, which it puts behind "--". urfave/cli v2 stops
// parsing flags at the first positional (Go's flag package does), so
// "run -i inv.yaml node-1 --json out.json" used to run without --json at
// all: in CI the reports silently never appeared. Which flags take a value
// is read from the command's own definitions, so a flag added later is
// covered as it is. Everything after a "--" stays positional; an unknown
// flag stays a flag, for urfave to refuse; argv that names no command is
// left as it is.
func interspersed(app *cli.App, argv []string) []string {
	if len(argv) < 2 {
		return argv
	}
	rootFlags := append(append([]cli.Flag{}, app.Flags...), cli.HelpFlag, cli.VersionFlag)
	takes := valueFlags(rootFlags)
	i := 1
	for i < len(argv) {
		n := flagTokens(takes, argv[i:])
		if n == 0 {
			break
		}
		i += n
	}
	if i >= len(argv) || argv[i] == "--" {
		return argv
	}
	cmd := app.Command(argv[i])
	if cmd == nil || cmd.SkipFlagParsing || len(cmd.Subcommands) > 0 {
		return argv
	}
	defs := cmd.Flags
	if !cmd.HideHelp && cli.HelpFlag != nil {
		defs = append(append([]cli.Flag{}, defs...), cli.HelpFlag)
	}
	takes = valueFlags(defs)
	flagArgs, positionals, complete := splitArgs(takes, argv[i+1:])
	out := append(append([]string{}, argv[:i+1]...), flagArgs...)
	// A flag missing its value is left last, so urfave says so rather
	// than taking "--" or a file for it. With --help, the help is all
	// that runs, and urfave would take a positional for a help topic.
	if !complete || asksHelp(takes, flagArgs) || len(positionals) == 0 {
		return out
	}
	return append(append(out, "--"), positionals...)
}

// splitArgs separates a command's arguments into its flags (each followed
// by its value when it takes one from the next argument) and its
// positional arguments, in their order. complete is false when the last
// flag takes a value and none follows.
func splitArgs(takes map[string]bool, args []string) (flagArgs, positionals []string, complete bool) {
	for i := 0; i < len(args); {
		if args[i] == "--" {
			return flagArgs, append(positionals, args[i+1:]...), true
		}
		n := flagTokens(takes, args[i:])
		switch {
		case n == 0:
			positionals = append(positionals, args[i])
			i++
		case i+n > len(args):
			return append(flagArgs, args[i:]...), positionals, false
		default:
			flagArgs = append(flagArgs, args[i:i+n]...)
			i += n
		}
	}
	return flagArgs, positionals, true
}

// flagTokens is how many arguments from args[0] make one flag, as Go's
// flag package reads them: 0 when args[0] is no flag ("x", "-", "--"),
// 2 for "--name VALUE" when the flag takes a value, else 1 ("--name=VALUE",
// a boolean, or a flag the command does not define).
func flagTokens(takes map[string]bool, args []string) int {
	a := args[0]
	if len(a) < 2 || a[0] != '-' || a == "--" {
		return 0
	}
	name, _, hasValue := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
	if !hasValue && takes[name] {
		return 2
	}
	return 1
}

// valueFlags maps every name and alias of defs to whether that flag takes
// a value.
func valueFlags(defs []cli.Flag) map[string]bool {
	takes := map[string]bool{}
	for _, f := range defs {
		if f == nil {
			continue
		}
		// Every flag type of urfave/cli v2 says; a type that does not
		// is taken to want a value, as most do.
		v := true
		if d, ok := f.(cli.DocGenerationFlag); ok {
			v = d.TakesValue()
		}
		for _, n := range f.Names() {
			takes[n] = v
		}
	}
	return takes
}

// asksHelp reports whether flagArgs, as splitArgs gave them, hold
// urfave's help flag (as a flag, not as another flag's value).
func asksHelp(takes map[string]bool, flagArgs []string) bool {
	if cli.HelpFlag == nil {
		return false
	}
	for i := 0; i < len(flagArgs); i += max(1, flagTokens(takes, flagArgs[i:])) {
		name, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(flagArgs[i], "-"), "-"), "=")
		if slices.Contains(cli.HelpFlag.Names(), name) {
			return true
		}
	}
	return false
}

// refuseStrayArgs refuses (exit 2) a positional argument a command does not
// take, naming it: a word left in a command line is a mistake (a value
// without its flag, a flag's value given twice), never something to
// ignore. A command takes the arguments its ArgsUsage names, one per word
// ("RESULTS.json", "BEFORE.json AFTER.json", "[COMMAND]"), any number for
// a last word ending in "..." ("SHARD.json..."); a command without one
// takes none. Fewer than named is the command's own check, since only it
// can say what is missing.
func refuseStrayArgs(c *cli.Context) error {
	takes := strings.Fields(c.Command.ArgsUsage)
	if c.NArg() <= len(takes) || (len(takes) > 0 && strings.HasSuffix(takes[len(takes)-1], "...")) {
		return nil
	}
	what := "takes no arguments, only flags"
	if len(takes) > 0 {
		what = "takes only " + strings.Trim(strings.Join(takes, " "), "[]") + " and flags"
	}
	return &usageError{fmt.Errorf("%s: unexpected argument %q: %s %s (see fleet-audit %s --help)",
		c.Command.Name, c.Args().Get(len(takes)), c.Command.Name, what, c.Command.Name)}
}

// undefinedFlag is how Go's flag package, under urfave, words an unknown
// flag (flag.FlagSet.parseOne: "flag provided but not defined: -%s"),
// whether it was typed with one dash or two.
const undefinedFlag = "flag provided but not defined: -"

// flagError is a flag parsing error of command (the app when "") as one
// line naming the flag, with the nearest flag the command has when the
// name looks like a typo of it, and a hint to read the command's help.
func flagError(defs []cli.Flag, command string, err error) error {
	help := "fleet-audit --help"
	if command != "" {
		help = "fleet-audit " + command + " --help"
	}
	where := ""
	if command != "" {
		where = command + ": "
	}
	name, unknown := strings.CutPrefix(err.Error(), undefinedFlag)
	if !unknown {
		return &usageError{&hintedError{fmt.Errorf("%s%w", where, err), "see " + help}}
	}
	typed := map[string]string{}
	var long []string
	for _, f := range append(append([]cli.Flag{}, defs...), cli.HelpFlag) {
		if f == nil {
			continue
		}
		for i, n := range f.Names() {
			if len(n) > 1 {
				long = append(long, n)
				typed[n] = dashed(n, i > 0)
			}
		}
	}
	msg := fmt.Sprintf("%sunknown flag %s", where, dashed(name, false))
	// A one-letter flag is as near every other one-letter flag: no guess.
	if len(name) > 1 {
		if near := textdist.Closest(name, long, 1); len(near) > 0 {
			msg += fmt.Sprintf(": did you mean %s?", typed[near[0]])
		}
	}
	return &usageError{&hintedError{errors.New(msg), "see " + help + " for its flags"}}
}
