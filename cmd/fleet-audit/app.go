package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/fleet-audit/fleet-audit/result"
)

type exitCode int

const (
	exitOK          exitCode = result.ExitOK
	exitGateFailed  exitCode = result.ExitGateFailed
	exitUsage       exitCode = result.ExitUsage
	exitUnaudited   exitCode = result.ExitUnaudited
	exitInternal    exitCode = result.ExitInternal
	exitInterrupted exitCode = result.ExitInterrupted
)

// usageError is a bad flag, argument or input file: exit 2.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// hintedError is an error with the one concrete fix that exitFor prints
// after it, as "fleet-audit: hint: ...".
type hintedError struct {
	err  error
	hint string
}

func (e *hintedError) Error() string { return e.err.Error() }
func (e *hintedError) Unwrap() error { return e.err }

// internalError is a failure that is not the user's input (a report that
// cannot be written, an audit that cannot start): exit 4, so that CI can
// tell a broken run from a bad flag.
type internalError struct{ err error }

func (e *internalError) Error() string { return e.err.Error() }
func (e *internalError) Unwrap() error { return e.err }

// internal marks what a command's action returns as an internal failure,
// unless it already says what it is. Errors from before an action runs
// are urfave's flag parsing, which stays usage.
func internal(err error) error {
	var ue *usageError
	var ge *gateError
	var ie *internalError
	if err == nil || errors.As(err, &ue) || errors.As(err, &ge) || errors.As(err, &ie) || errors.Is(err, context.Canceled) {
		return err
	}
	return &internalError{err}
}

// gateError carries the exit code of a finished audit whose gate failed.
type gateError struct{ code exitCode }

func (e *gateError) Error() string { return fmt.Sprintf("gate failed (exit %d)", e.code) }

const exitStatusHelp = `EXIT STATUS:
   0    the gate passed
   1    a finding at or above --fail-on (default critical)
   2    usage or input error (bad flag, unexpected argument, bad inventory); nothing was contacted
   3    no finding failed, but some node could not be audited (unless --allow-unreachable),
        or some check could not be judged on a node: status partial (unless --allow-partial)
   4    internal failure (a report could not be written, the audit could not start)
   130  interrupted (SIGINT, SIGTERM or SIGHUP: Ctrl-C, a stop, the terminal or
        session closed); the probes were stopped and reports were still written
        for what finished`

// run is main without the process: it maps every error to an exit code in
// one place.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	app := newApp(stdout, stderr, commandActions)
	return exitFor(runApp(ctx, app, args), stderr)
}

// exitFor is the exit code of a command's error, which it prints.
func exitFor(err error, stderr io.Writer) int {
	var ue *usageError
	var ge *gateError
	var ie *internalError
	switch {
	case err == nil:
		return int(exitOK)
	case errors.As(err, &ge):
		return int(ge.code)
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "fleet-audit: error: %s\n", indentJoined(ue.err))
		var he *hintedError
		if errors.As(ue.err, &he) {
			fmt.Fprintf(stderr, "fleet-audit: hint: %s\n", he.hint)
		}
		return int(exitUsage)
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "fleet-audit: error: interrupted")
		return int(exitInterrupted)
	case errors.As(err, &ie):
		fmt.Fprintf(stderr, "fleet-audit: error: %s\n", indentJoined(ie.err))
		return int(exitInternal)
	default:
		fmt.Fprintf(stderr, "fleet-audit: error: %s\n", indentJoined(err))
		return int(exitUsage)
	}
}

// indentJoined prints an errors.Join of several problems one per line.
func indentJoined(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", "\n  ")
}

// streams are a command's standard output and error.
type streams struct{ out, err io.Writer }

func streamsOf(c *cli.Context) streams { return streams{out: c.App.Writer, err: c.App.ErrWriter} }

// actions are what each command does once its flags are parsed into its
// options; a test swaps them to check the parsing alone.
type actions struct {
	run       func(context.Context, runOptions, streams) error
	demo      func(context.Context, demoOptions, streams) error
	report    func(context.Context, reportOptions, streams) error
	diff      func(context.Context, diffOptions, streams) error
	probes    func(context.Context, probesOptions, streams) error
	explain   func(context.Context, explainOptions, streams) error
	inventory func(context.Context, inventoryOptions, streams) error
	discover  func(context.Context, discoverOptions, streams) error
	merge     func(context.Context, mergeOptions, streams) error
}

var commandActions = actions{
	run: runAudit, demo: runDemo, report: runReport, diff: runDiff, probes: runProbes, explain: runExplain, inventory: runInventory,
	discover: runDiscover, merge: runMerge,
}

// urfave/cli v2 keeps the version flag and printer in package variables,
// so they are set once here rather than by each newApp, which tests call
// many times.
func init() {
	cli.VersionPrinter = func(c *cli.Context) {
		info, _ := debug.ReadBuildInfo()
		fmt.Fprintln(c.App.Writer, versionLine(c.App.Version, info))
	}
	// urfave's --version has the short form -v, which run, demo and report
	// already give --verbose (as ssh -v is verbose): "fleet-audit -v run"
	// and "fleet-audit run -v" must not mean two things.
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Usage: "print the version", DisableDefaultText: true}
}

func newApp(stdout, stderr io.Writer, act actions) *cli.App {
	app := &cli.App{
		Name:    "fleet-audit",
		Usage:   "compare every node of an RKE2/Kubernetes fleet over SSH before an upgrade",
		Version: buildVersion,
		Description: `fleet-audit opens one SSH connection to each node of an inventory, runs
read-only probe scripts embedded in the binary, compares the facts across
nodes, and reports the drift that breaks upgrades: host firewalls fighting
kube-proxy, iptables backends, sysctls, kernel modules, conntrack pressure,
kube-proxy health and versions. Its exit status is a CI gate.

EXAMPLES:
   fleet-audit demo --out demo-out
   fleet-audit inventory -i inventory.yaml
   fleet-audit run -i inventory.yaml --html report.html --json results.json
   fleet-audit merge shard-*.json --html report.html   # the reports of run --shard K/N
   fleet-audit discover -o inventory.yaml

` + exitStatusHelp,
		Writer:    stdout,
		ErrWriter: stderr,
		// The help command is helpCommand, not urfave's, so that it refuses
		// stray arguments as every command does; with a command of that
		// name urfave no longer adds --help to the app, so it is here.
		HideHelpCommand:      true,
		Flags:                []cli.Flag{cli.HelpFlag},
		EnableBashCompletion: false,
		Action:               noCommand,
		OnUsageError: func(c *cli.Context, err error, isSubcommand bool) error {
			return flagError(c.App.Flags, "", err)
		},
		// urfave would call os.Exit on ExitCoder errors; we never return one,
		// and this keeps it from printing errors on its own.
		ExitErrHandler: func(*cli.Context, error) {},
		Commands: []*cli.Command{
			runCommand(act.run),
			inventoryCommand(act.inventory),
			discoverCommand(act.discover),
			demoCommand(act.demo),
			probesCommand(act.probes),
			explainCommand(act.explain),
			reportCommand(act.report),
			mergeCommand(act.merge),
			diffCommand(act.diff),
			completionCommand(),
			helpCommand(),
			manCommand(),
		},
	}
	// Every command, one added later too, refuses the positional arguments
	// its ArgsUsage does not name.
	for _, cmd := range app.Commands {
		cmd.Before = refuseStrayArgs
		// Without this urfave gives each command a "help" subcommand, and
		// "report help" would show help instead of reading a file named so.
		cmd.HideHelpCommand = true
		// Without this urfave prints the whole help on stdout after a
		// flag error: a screenful that hides the one line that matters.
		cmd.OnUsageError = func(c *cli.Context, err error, _ bool) error {
			return flagError(c.Command.Flags, c.Command.Name, err)
		}
	}
	return app
}

// noCommand is the app without a command: its help on stderr and exit 2,
// since a script that runs a bare fleet-audit has a mistake in it; or a
// word that names no command.
func noCommand(c *cli.Context) error {
	var names []string
	for _, cmd := range c.App.VisibleCommands() {
		names = append(names, cmd.Name)
	}
	if c.NArg() > 0 {
		return &usageError{fmt.Errorf("unknown command %q: want one of %s (see fleet-audit --help)", c.Args().First(), strings.Join(names, ", "))}
	}
	cli.HelpPrinter(c.App.ErrWriter, cli.AppHelpTemplate, c.App)
	return &usageError{fmt.Errorf("no command given: want one of %s", strings.Join(names, ", "))}
}

// helpCommand is "fleet-audit help [COMMAND]", the same text as "COMMAND
// --help" (or --help alone) on stdout.
func helpCommand() *cli.Command {
	return &cli.Command{
		Name:      "help",
		Usage:     "show the help of COMMAND, the same as COMMAND --help",
		UsageText: "fleet-audit help [COMMAND]",
		ArgsUsage: "[COMMAND]",
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return cli.ShowAppHelp(c)
			}
			name := c.Args().First()
			if cmd := c.App.Command(name); cmd == nil || cmd.Hidden {
				return &usageError{fmt.Errorf("help: no command %q (see fleet-audit --help)", name)}
			}
			return cli.ShowCommandHelp(c, name)
		},
	}
}
