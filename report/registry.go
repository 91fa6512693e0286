package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/fleet-audit/fleet-audit/result"
)

// The registry of what this package writes, two kinds of document: a
// run's report (result.Report) in the formats below, and the comparison of
// two runs (result.Diff) in diffFormats. Both are explicit lists rather
// than init-time self-registration, so that each full set is visible in
// one place; the CLI builds its flags, --help and the demo's files from
// them, so a format added here is offered by every command.

// Formatter writes one rendering of a finished report. Format must not
// modify r and must not decide anything r already decided (the gate, the
// findings, the drift); it returns only write errors and errors of its own
// encoding.
type Formatter interface {
	Format(w io.Writer, r *result.Report) error
}

// Options tune the human formats. The machine formats (json, junit) ignore
// them so that their output depends on the report alone.
type Options struct {
	// Color enables ANSI colour in the terminal format. The caller decides
	// (TTY, NO_COLOR); a formatter never looks at the environment.
	Color bool
	// Width is the terminal width the report is fitted to; 0 means
	// DefaultWidth.
	Width int
	// MaxDriftRows caps the terminal drift table; 0 shows every row. The
	// other formats always show all drift: they are read, not scrolled past.
	MaxDriftRows int
	// Verbose makes the terminal format print each finding's summary,
	// evidence and fix under its line, and every drift scope as its own
	// row. The other formats always carry all of it.
	Verbose bool
	// FullReport names the full report written by the same run, for the
	// Markdown summary's pointer to it; "" when there is none.
	FullReport string
	// Explain holds the explanation of each finding id the HTML report
	// explains in a collapsed section (catalog.ExplainFindings); nil for
	// none. It is about the checks, not the run, so it is not in the JSON.
	Explain map[string]result.Explanation
	// Plan is the remediation runbook the plan formats write
	// (audit.PlanFindings); like Explain it is about the checks as well as
	// the run, so it is not in the JSON and every command that writes a
	// report builds it. nil makes the plan formats refuse to write.
	Plan *result.Plan
}

// formats are the formats of a run's report.
var formats = []struct {
	name string
	// file says what a file of this format holds, for the CLI's flag; ""
	// for a format that is only printed (terminal).
	file string
	// demoFile is the name the demo writes it under.
	demoFile string
	new      func(Options) Formatter
}{
	{"json", "the machine-readable results", "results.json", func(o Options) Formatter { return &JSON{} }},
	{"markdown", "a Markdown report", "report.md", func(o Options) Formatter { return &Markdown{} }},
	{"markdown-summary", "a Markdown summary for a merge-request comment (under 60,000 characters, pointing to the --html report)", "summary.md",
		func(o Options) Formatter { return &MarkdownSummary{FullReport: o.FullReport} }},
	{"html", "a self-contained HTML report", "report.html", func(o Options) Formatter { return &HTML{Explain: o.Explain} }},
	{"junit", "JUnit XML (a failing testcase per finding the gate fails on)", "junit.xml", func(o Options) Formatter { return &JUnit{} }},
	{"plan", "the remediation runbook in Markdown: per fix, in rollout order, each node's commands, checks and stop condition (fleet-audit never runs it)", "plan.md",
		func(o Options) Formatter { return &PlanMarkdown{Plan: o.Plan} }},
	{"plan-ansible", "the remediation runbook as an Ansible playbook, one node at a time (fleet-audit never runs it)", "plan.yml",
		func(o Options) Formatter { return &PlanAnsible{Plan: o.Plan} }},
	{"prom", "a Prometheus textfile for node_exporter's textfile collector (name it *.prom)", "fleet-audit.prom", func(o Options) Formatter { return &Prom{} }},
	{"terminal", "", "", func(o Options) Formatter { return &Terminal{Options: o} }},
}

// FileFormat is a format a report can be written to a file in.
type FileFormat struct {
	// Name is the format's name, and the CLI's flag.
	Name string
	// Holds is what the file holds ("a Markdown report").
	Holds string
	// DemoFile is the file name the demo writes it under.
	DemoFile string
}

// FileFormats are the formats written to files, in the order the CLI
// offers them.
func FileFormats() []FileFormat {
	var out []FileFormat
	for _, f := range formats {
		if f.file != "" {
			out = append(out, FileFormat{Name: f.name, Holds: f.file, DemoFile: f.demoFile})
		}
	}
	return out
}

// Names returns the format names New accepts, sorted, for --help and errors.
func Names() []string {
	names := make([]string, 0, len(formats))
	for _, f := range formats {
		names = append(names, f.name)
	}
	sort.Strings(names)
	return names
}

// New returns the formatter registered under name.
func New(name string, o Options) (Formatter, error) {
	for _, f := range formats {
		if f.name == name {
			return f.new(o), nil
		}
	}
	return nil, fmt.Errorf("unknown report format %q (want one of %s)", name, strings.Join(Names(), ", "))
}

// diffFormats are the formats `fleet-audit diff` writes: the terminal view
// on stdout, Markdown for the change ticket, JSON for machines. Every node
// value is escaped as in the run reports: a fact value is untrusted node
// output.
var diffFormats = []struct {
	name   string
	render func(b *bytes.Buffer, d *result.Diff, width int) error
}{
	{"terminal", func(b *bytes.Buffer, d *result.Diff, width int) error { diffText(b, d, width); return nil }},
	{"markdown", func(b *bytes.Buffer, d *result.Diff, _ int) error { diffMarkdown(b, d); return nil }},
	{"json", func(b *bytes.Buffer, d *result.Diff, _ int) error {
		out, err := json.MarshalIndent(d, "", "  ")
		if err != nil {
			return fmt.Errorf("encode diff: %w", err)
		}
		b.Write(append(out, '\n'))
		return nil
	}},
}

// DiffFormats are the names FormatDiff accepts, in diffFormats' order.
func DiffFormats() []string {
	names := make([]string, len(diffFormats))
	for i, f := range diffFormats {
		names[i] = f.name
	}
	return names
}

// FormatDiff renders d in one of DiffFormats, the terminal view fitted to
// width (0 means DefaultWidth).
func FormatDiff(w io.Writer, format string, d *result.Diff, width int) error {
	for _, f := range diffFormats {
		if f.name != format {
			continue
		}
		var b bytes.Buffer
		if err := f.render(&b, d, width); err != nil {
			return err
		}
		_, err := w.Write(b.Bytes())
		return err
	}
	return fmt.Errorf("unknown diff format %q (want %s)", format, strings.Join(DiffFormats(), ", "))
}
