package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/fleet-audit/fleet-audit/internal/testtools"
)

// appWords walks the app as a user sees it: each visible command with
// every spelling of each of its flags (a name with two dashes, a
// one-letter name or an alias with one), --help included as urfave adds it.
func appWords(t *testing.T) (commands []string, flagsOf map[string][]string) {
	t.Helper()
	flagsOf = map[string][]string{}
	for _, cmd := range newApp(io.Discard, io.Discard, commandActions).Commands {
		if cmd.Hidden {
			continue
		}
		commands = append(commands, cmd.Name)
		for _, f := range append(slices.Clone(cmd.Flags), cli.HelpFlag) {
			for i, n := range f.Names() {
				spelled := "--" + n
				if i > 0 || len(n) == 1 {
					spelled = "-" + n
				}
				if !slices.Contains(flagsOf[cmd.Name], spelled) {
					flagsOf[cmd.Name] = append(flagsOf[cmd.Name], spelled)
				}
			}
		}
	}
	if len(commands) < 8 || len(flagsOf["run"]) < 20 {
		t.Fatalf("the walk found too little to prove anything: %d commands, run has %d flags", len(commands), len(flagsOf["run"]))
	}
	return commands, flagsOf
}

func completionOf(t *testing.T, shell string) string {
	t.Helper()
	code, script, stderr := runOut("completion", shell)
	if code != 0 || script == "" {
		t.Fatalf("completion %s: exit %d, stderr %q", shell, code, stderr)
	}
	path := filepath.Join(t.TempDir(), "fleet-audit."+shell)
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// completionQueries are the command lines a user completes: the command
// after "fleet-audit ", every flag after "fleet-audit CMD -", a shell
// after "fleet-audit completion ".
type completionQuery struct {
	words []string
	want  []string
}

func completionQueries(t *testing.T) []completionQuery {
	commands, flagsOf := appWords(t)
	queries := []completionQuery{
		{words: []string{"fleet-audit", ""}, want: commands},
		{words: []string{"fleet-audit", "completion", ""}, want: completionShells},
		{words: []string{"fleet-audit", "help", ""}, want: commands},
	}
	for _, c := range commands {
		queries = append(queries, completionQuery{words: []string{"fleet-audit", c, "-"}, want: flagsOf[c]})
	}
	return queries
}

// checkAnswers holds each query's candidates, one line per query as the
// shell printed them, to the words the app has.
func checkAnswers(t *testing.T, queries []completionQuery, out string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(queries) {
		t.Fatalf("%d answers for %d queries:\n%s", len(lines), len(queries), out)
	}
	for i, q := range queries {
		got := strings.Fields(lines[i])
		for _, w := range q.want {
			if !slices.Contains(got, w) {
				t.Errorf("%q completes without %q; it offers %q", strings.Join(q.words, " "), w, got)
			}
		}
		if slices.Contains(got, "man") {
			t.Errorf("%q offers the hidden man command", strings.Join(q.words, " "))
		}
	}
}

// TestBashCompletion: bash, with the script loaded, offers every visible
// command, every spelling of every flag of each, and the shells.
func TestBashCompletion(t *testing.T) {
	bash := testtools.Find(t, "bash")
	queries := completionQueries(t)
	var driver strings.Builder
	driver.WriteString("source \"$1\"\nask() { COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _fleet_audit; printf '%s\\n' \"${COMPREPLY[*]}\"; }\n")
	for _, q := range queries {
		driver.WriteString("ask")
		for _, w := range q.words {
			driver.WriteString(" '" + w + "'")
		}
		driver.WriteString("\n")
	}
	out, err := exec.Command(bash, "--norc", "--noprofile", "-c", driver.String(), "bash", completionOf(t, "bash")).CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	checkAnswers(t, queries, string(out))
}

// TestFishCompletion: fish's own `complete -C` offers every visible
// command, every spelling of every flag of each, and the shells.
func TestFishCompletion(t *testing.T) {
	fish := testtools.Find(t, "fish")
	queries := completionQueries(t)
	var driver strings.Builder
	driver.WriteString("source $argv[1]\n")
	for _, q := range queries {
		// echo of an empty list still prints its line.
		driver.WriteString("echo (complete -C " + fishQuote(strings.Join(q.words, " ")) + " | string replace -r '\\t.*' '')\n")
	}
	out, err := exec.Command(fish, "--no-config", "-c", driver.String(), completionOf(t, "fish")).CombinedOutput()
	if err != nil {
		t.Fatalf("fish: %v\n%s", err, out)
	}
	checkAnswers(t, queries, string(out))
}

// TestZshCompletion: the script parses (zsh -n), and each command's branch
// gives _arguments every spelling of every flag of that command.
func TestZshCompletion(t *testing.T) {
	zsh := testtools.Find(t, "zsh")
	path := completionOf(t, "zsh")
	if out, err := exec.Command(zsh, "-n", path).CombinedOutput(); err != nil {
		t.Fatalf("zsh -n: %v\n%s", err, out)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	script := string(data)
	commands, flagsOf := appWords(t)
	for _, c := range commands {
		if !strings.Contains(script, "'"+c+":") {
			t.Errorf("no command %q among the commands", c)
		}
		_, branch, ok := strings.Cut(script, "\n        "+c+")\n")
		branch, _, _ = strings.Cut(branch, "\n            ;;")
		if !ok {
			t.Errorf("no branch for %q", c)
			continue
		}
		for _, f := range flagsOf[c] {
			if !strings.Contains(branch, "'"+f+"[") {
				t.Errorf("%s's branch has no %s", c, f)
			}
		}
	}
}

// TestManPage: the hidden man command prints a roff page with a section
// for each visible command, the hidden one left out.
func TestManPage(t *testing.T) {
	code, page, stderr := runOut("man")
	if code != 0 || !strings.HasPrefix(page, ".nh\n.TH fleet-audit 1\n") {
		t.Fatalf("man: exit %d, stderr %q, page starts %q", code, stderr, page[:min(len(page), 40)])
	}
	commands, _ := appWords(t)
	for _, c := range commands {
		if !strings.Contains(page, "\n.SH "+c+"\n") {
			t.Errorf("the man page has no section for %s", c)
		}
	}
	if strings.Contains(page, "\n.SH man\n") {
		t.Error("the man page has a section for the hidden man command")
	}
}
