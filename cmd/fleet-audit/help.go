package main

import (
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/fleet-audit/fleet-audit/report"
)

func init() {
	cli.HelpPrinter = printHelp
}

// helpTables replaces urfave's flag and command lists, which align with a
// tabwriter and never wrap (run's options ran to 300 columns), with the
// report's column engine.
var helpTables = strings.NewReplacer(
	`{{template "visibleFlagCategoryTemplate" .}}`, `{{helpFlags .VisibleFlags}}`,
	`{{template "visibleFlagTemplate" .}}`, `{{helpFlags .VisibleFlags}}`,
	`{{template "visibleCommandCategoryTemplate" .}}`, `{{helpCommands .VisibleCommands}}`,
)

// printHelp is urfave's help printer fitted to the width of w (COLUMNS,
// the terminal, or report.DefaultWidth): the prose wraps at words under
// its own indentation and the flag and command lists are two-column
// tables, as the terminal report's lists are.
func printHelp(w io.Writer, templ string, data any) {
	width := terminalWidth(w, os.Getenv)
	cli.HelpPrinterCustom(w, helpTables.Replace(templ), data, map[string]any{
		"wrap": func(s string, offset int) string { return wrapHelp(s, offset, width) },
		"helpFlags": func(flags []cli.Flag) string {
			var rows [][]string
			for _, f := range flags {
				names, usage, _ := strings.Cut(f.String(), "\t")
				rows = append(rows, []string{names, usage})
			}
			return helpTable(rows, width)
		},
		"helpCommands": func(cmds []*cli.Command) string {
			var rows [][]string
			for _, c := range cmds {
				rows = append(rows, []string{strings.Join(c.Names(), ", "), c.Usage})
			}
			return helpTable(rows, width)
		},
	})
}

// helpTable is a two-column list (names, what they do) indented as
// urfave indents its lists, each row on its own line after a newline.
func helpTable(rows [][]string, width int) string {
	lines := report.Table(width, 3, []report.Column{
		{Min: 12, Fit: report.Words},
		{Min: 24, Fit: report.Words},
	}, rows)
	return "\n" + strings.Join(lines, "\n")
}

// hangAfter is the head of a line laid out as "TERM  text" (the exit
// status lists): its continuation lines start under the text.
var hangAfter = regexp.MustCompile(`^\S+ {2,}`)

// commandLine is a usage line: fleet-audit, a command, then its flags,
// upper-case arguments or a|b choices; prose that starts with the name
// goes on with lower-case words.
var commandLine = regexp.MustCompile(`^fleet-audit [a-z]+( [-\[A-Z]| \S*\||$)`)

// helpLine is one logical line of a help text: a paragraph, a list item
// or an example, with its indentation and where its continuation lines
// start.
type helpLine struct {
	indent, hang int
	text         string
}

// helpLines joins the lines of a help text, written wrapped for about 80
// columns, into logical lines that can be wrapped to any width: a line
// continues the one above when it has the same indentation (prose) or
// starts under the text of a "TERM  text" item. An empty line, a line
// ending in ":", a command line (fleet-audit ...) and every line of an
// EXAMPLES: section end the line above, since a command is never joined to
// the next.
func helpLines(s string) []helpLine {
	var out []helpLine
	examples, open := false, false
	for _, line := range strings.Split(s, "\n") {
		content := strings.TrimLeft(line, " ")
		indent := len(line) - len(content)
		if content == "" {
			out = append(out, helpLine{})
			open = false
			continue
		}
		item := hangAfter.FindString(content)
		command := examples || commandLine.MatchString(content)
		if open && !command && item == "" {
			last := &out[len(out)-1]
			// hang is 0 for prose, so both tests agree there.
			if indent == last.indent || indent == last.indent+last.hang {
				last.text += " " + content
				continue
			}
		}
		// Prose continues flush, a command two columns in (it is one
		// command line, not two), an item under its text.
		hang := 0
		switch {
		case item != "":
			hang = len(item)
		case command:
			hang = 2
		}
		out = append(out, helpLine{indent: indent, hang: hang, text: content})
		if strings.HasSuffix(content, ":") {
			examples = content == "EXAMPLES:"
			open = false
			continue
		}
		open = true
	}
	return out
}

// wrapHelp is the template's wrap: s reflowed (helpLines) and wrapped at
// words to width, the first line starting at column offset and the others
// indented by offset.
func wrapHelp(s string, offset, width int) string {
	pad := strings.Repeat(" ", offset)
	var out []string
	lead := ""
	for _, hl := range helpLines(s) {
		if hl.text == "" {
			out = append(out, "")
			lead = pad
			continue
		}
		indent := strings.Repeat(" ", hl.indent)
		for _, l := range report.Wrap(hl.text, width-offset-hl.indent, hl.hang) {
			out = append(out, lead+indent+l)
			lead = pad
		}
	}
	return strings.Join(out, "\n")
}
