package main

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/fleet-audit/fleet-audit/result"
)

// runOut runs the CLI on argv and gives its exit code, stdout and stderr.
func runOut(argv ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append([]string{"fleet-audit"}, argv...), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestHelpCommand: "help COMMAND" prints what "COMMAND --help" does, for
// every command of the app, and exits 0. (urfave answers "help --help"
// with the app's help, which is fair for help itself.)
func TestHelpCommand(t *testing.T) {
	for _, cmd := range newApp(io.Discard, io.Discard, commandActions).Commands {
		// help refuses a hidden command (man) as it refuses any other
		// word that names no command a user sees.
		if cmd.Name == "help" || cmd.Hidden {
			continue
		}
		t.Run(cmd.Name, func(t *testing.T) {
			code, got, stderr := runOut("help", cmd.Name)
			_, want, _ := runOut(cmd.Name, "--help")
			if code != 0 || got != want || !strings.Contains(got, "fleet-audit "+cmd.Name) {
				t.Errorf("help %s: exit %d, stderr %q\ngot  %q\nwant %q", cmd.Name, code, stderr, got, want)
			}
		})
	}
}

// TestUsageTraps: the command lines that used to surprise.
func TestUsageTraps(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		argv                 []string
		code                 int
		stdout, stderr       []string // each must appear
		notStdout, notStderr []string // none may appear
	}{
		{name: "bare prints help on stderr", argv: nil, code: 2,
			stderr: []string{"USAGE:", "COMMANDS:", "   run ", "fleet-audit: error: no command given"}, notStdout: []string{"USAGE:"}},
		{name: "unknown command", argv: []string{"nosuch"}, code: 2, stderr: []string{`unknown command "nosuch"`}},
		{name: "help alone is the app's", argv: []string{"help"}, code: 0, stdout: []string{"COMMANDS:", "   diff "}},
		{name: "help of no command", argv: []string{"help", "nosuch"}, code: 2, stderr: []string{`help: no command "nosuch"`}},
		{name: "--version", argv: []string{"--version"}, code: 0, stdout: []string{"fleet-audit v" + release + "-dev (" + runtime.Version() + ")\n"}},
		{name: "-v is not --version", argv: []string{"-v"}, code: 2, stderr: []string{"-v"}, notStdout: []string{"fleet-audit v"}},
		{name: "--version lists no -v", argv: []string{"--help"}, code: 0, stdout: []string{"--version "}, notStdout: []string{"--version, -v"}},
		{name: "run -v is --verbose", argv: []string{"run", "--help"}, code: 0, stdout: []string{"--verbose, -v"}},
		{name: "report's exit status", argv: []string{"report", "--help"}, code: 0,
			stdout: []string{"EXIT STATUS:", "the saved run's gate passed", "not what its own findings give"}, notStdout: []string{"at or above --fail-on (default critical)"}},
		{name: "diff's exit status", argv: []string{"diff", "--help"}, code: 0,
			stdout: []string{"EXIT STATUS:", "nothing got worse", "a node audited before could not be audited after"}, notStdout: []string{"the gate passed"}},
		{name: "completion of an unknown shell", argv: []string{"completion", "tcsh"}, code: 2, stderr: []string{`no completion for shell "tcsh": want one of bash, zsh, fish`}},
		{name: "completion without a shell", argv: []string{"completion"}, code: 2, stderr: []string{"no shell given"}},
		{name: "help hides man", argv: []string{"--help"}, code: 0, stdout: []string{"   completion "}, notStdout: []string{"   man "}},
		{name: "run's exit status", argv: []string{"run", "--help"}, code: 0, stdout: []string{"EXIT STATUS:", "the gate passed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runOut(tc.argv...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tc.code, stderr)
			}
			for _, w := range tc.stdout {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			for _, w := range tc.stderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			for _, w := range tc.notStdout {
				if strings.Contains(stdout, w) {
					t.Errorf("stdout has %q:\n%s", w, stdout)
				}
			}
			for _, w := range tc.notStderr {
				if strings.Contains(stderr, w) {
					t.Errorf("stderr has %q:\n%s", w, stderr)
				}
			}
		})
	}
}

// TestFailOnNamesTheSeverities: every --fail-on's usage lists the
// severities as result names them, most severe first, so a severity added
// or renamed there reaches the help without an edit here.
func TestFailOnNamesTheSeverities(t *testing.T) {
	want := strings.Join(result.SeverityNames(), ", ")
	if want != "critical, warning, info" {
		t.Errorf("result.SeverityNames() = %q, want the parseable severities most severe first", want)
	}
	seen := 0
	for _, cmd := range newApp(io.Discard, io.Discard, commandActions).Commands {
		for _, f := range cmd.Flags {
			sf, ok := f.(*cli.StringFlag)
			if !ok || sf.Name != "fail-on" {
				continue
			}
			seen++
			if !strings.Contains(sf.Usage, "`SEVERITY` ("+want) {
				t.Errorf("%s --fail-on: usage %q does not list %s", cmd.Name, sf.Usage, want)
			}
		}
	}
	if seen < 3 {
		t.Errorf("%d --fail-on flags, want run's, report's and diff's at least", seen)
	}
}
