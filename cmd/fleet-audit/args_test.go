package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestInterspersed: the argv the app parses, for the argv a user typed.
// Each flag keeps its value (which flags take one is read from the
// commands), what follows "--" stays positional, and argv the app cannot
// place is left as typed for urfave to judge.
func TestInterspersed(t *testing.T) {
	app := newApp(io.Discard, io.Discard, commandActions)
	for _, tc := range []struct {
		name     string
		in, want []string
	}{
		{"flags first already", []string{"run", "-i", "inv.yaml", "--json", "out.json"}, []string{"run", "-i", "inv.yaml", "--json", "out.json"}},
		{"stray positional before flags", []string{"run", "-i", "inv.yaml", "node-1", "--json", "out.json"},
			[]string{"run", "-i", "inv.yaml", "--json", "out.json", "--", "node-1"}},
		{"flags after the file", []string{"report", "saved.json", "--json", "out.json", "-q"},
			[]string{"report", "--json", "out.json", "-q", "--", "saved.json"}},
		{"flags between the files", []string{"diff", "a.json", "--markdown", "d.md", "b.json"},
			[]string{"diff", "--markdown", "d.md", "--", "a.json", "b.json"}},
		{"=value is one argument", []string{"report", "saved.json", "--json=-", "--html=h.html"},
			[]string{"report", "--json=-", "--html=h.html", "--", "saved.json"}},
		{"single-dash forms", []string{"run", "x", "-i=inv.yaml", "-forks", "3"}, []string{"run", "-i=inv.yaml", "-forks", "3", "--", "x"}},
		{"a boolean takes no value", []string{"run", "-i", "inv.yaml", "--no-agent", "node-1"},
			[]string{"run", "-i", "inv.yaml", "--no-agent", "--", "node-1"}},
		{"a value that looks like a flag", []string{"report", "saved.json", "--markdown", "-h", "--json", "--"},
			[]string{"report", "--markdown", "-h", "--json", "--", "--", "saved.json"}},
		{"after -- stays positional", []string{"report", "--", "-r.json", "--json", "x"}, []string{"report", "--", "-r.json", "--json", "x"}},
		{"after a file and --", []string{"report", "a.json", "-q", "--", "--html"}, []string{"report", "-q", "--", "a.json", "--html"}},
		{"- is a positional (stdin)", []string{"report", "-", "--json", "o.json"}, []string{"report", "--json", "o.json", "--", "-"}},
		{"an unknown flag stays a flag", []string{"run", "node-1", "--yaml", "f"}, []string{"run", "--yaml", "--", "node-1", "f"}},
		{"a value flag at the end keeps no positional after it", []string{"report", "saved.json", "--json"}, []string{"report", "--json"}},
		{"help drops the positionals", []string{"report", "saved.json", "--help"}, []string{"report", "--help"}},
		{"-h too", []string{"diff", "a.json", "b.json", "-h"}, []string{"diff", "-h"}},
		{"root flags before the command", []string{"--help"}, []string{"--help"}},
		{"an unknown command is left alone", []string{"nosuch", "x", "--json", "y"}, []string{"nosuch", "x", "--json", "y"}},
		{"no command", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := interspersed(app, append([]string{"fleet-audit"}, tc.in...))
			want := append([]string{"fleet-audit"}, tc.want...)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("interspersed(%q)\ngot  %q\nwant %q", tc.in, got, want)
			}
		})
	}
}

// TestEveryCommandRefusesStrayArgs: each command of the app, those added
// later included, exits 2 naming a positional argument it does not take,
// wherever it stands, without running; and parses the same command line
// without it. Each positional a command takes (its ArgsUsage) is filled
// with the command's own name, which suits "help [COMMAND]" as well as a
// file name.
func TestEveryCommandRefusesStrayArgs(t *testing.T) {
	for _, cmd := range newApp(io.Discard, io.Discard, commandActions).Commands {
		var flagArgs []string
		for _, f := range cmd.Flags {
			if r, ok := f.(cli.RequiredFlag); ok && r.IsRequired() {
				flagArgs = append(flagArgs, "--"+f.Names()[0])
				if valueFlags([]cli.Flag{f})[f.Names()[0]] {
					flagArgs = append(flagArgs, "x")
				}
			}
		}
		// run takes its hosts from -i or --from-cluster, a choice checked
		// after parsing, so neither flag is Required.
		if cmd.Name == "run" {
			flagArgs = append(flagArgs, "-i", "x")
		}
		var positionals []string
		for range strings.Fields(cmd.ArgsUsage) {
			positionals = append(positionals, cmd.Name)
		}
		// completion's one argument is a shell's name, not a file.
		if cmd.Name == "completion" {
			positionals = []string{completionShells[0]}
		}
		t.Run(cmd.Name, func(t *testing.T) {
			argv := append(append([]string{cmd.Name}, flagArgs...), positionals...)
			if _, code, stderr := parseArgs(argv...); code != 0 {
				t.Fatalf("%q: exit %d, %s; want 0 before adding a stray argument", argv, code, stderr)
			}
			// A last argument "FILE..." takes any number: none is stray.
			if strings.HasSuffix(cmd.ArgsUsage, "...") {
				argv = append(argv, "more")
				if got, code, stderr := parseArgs(argv...); code != 0 || got == nil {
					t.Errorf("%q: exit %d, %s; want %s to take any number of arguments", argv, code, stderr, cmd.ArgsUsage)
				}
				return
			}
			// The argument refused is the first one past those the
			// command takes, in the order they were typed.
			for _, tc := range []struct {
				argv    []string
				refused string
			}{
				{append(append([]string{cmd.Name, "stray"}, flagArgs...), positionals...), append([]string{"stray"}, positionals...)[len(positionals)]},
				{append(append([]string{cmd.Name}, flagArgs...), append(positionals, "stray")...), "stray"},
			} {
				got, code, stderr := parseArgs(tc.argv...)
				if want := fmt.Sprintf("unexpected argument %q", tc.refused); code != int(exitUsage) || got != nil || !strings.Contains(stderr, want) {
					t.Errorf("%q: exit %d, options %+v, stderr %q; want exit 2 with %s and no action", tc.argv, code, got, stderr, want)
				}
			}
		})
	}
}

// TestStrayArgContactsNothing: the CI command line with a stray word
// before its report flags exits 2 before any connection, and writes no
// report: not an audit without its reports.
func TestStrayArgContactsNothing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var dialled atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			dialled.Add(1)
			c.Close()
		}
	}()
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("SSH_AUTH_SOCK", "")
	// A key, so that a run that went ahead would dial rather than stop
	// for want of one.
	_, key := clientKeyFile(t, dir)
	inv := filepath.Join(dir, "inv.yaml")
	port := ln.Addr().(*net.TCPAddr).Port
	if err := os.WriteFile(inv, fmt.Appendf(nil, "name: ci\nhosts:\n  node-1:\n    address: 127.0.0.1\n    port: %d\n    user: ci\n    identity_files: [%s]\n", port, key), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.json")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"fleet-audit", "run", "-i", inv, "--connect-timeout", "2s", "node-1", "--json", out}, &stdout, &stderr)
	if code != int(exitUsage) || !strings.Contains(stderr.String(), `unexpected argument "node-1"`) {
		t.Errorf("exit %d, stderr %q; want exit 2 naming node-1", code, stderr.String())
	}
	if n := dialled.Load(); n != 0 {
		t.Errorf("%d connections to the inventory's node; want none", n)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("out.json: %v; want no report", err)
	}
}
