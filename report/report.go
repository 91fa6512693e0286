package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/fleet-audit/fleet-audit/audit"
)

// Formatter writes one rendering of a finished report. Format must not
// modify r and must not decide anything r already decided (the gate, the
// findings, the drift); it returns only write errors and errors of its own
// encoding.
type Formatter interface {
	Format(w io.Writer, r *audit.Report) error
}

// Options tune the human formats. The machine formats (json, junit) ignore
// them so that their output depends on the report alone.
type Options struct {
	// Color enables ANSI colour in the terminal format. The caller decides
	// (TTY, NO_COLOR); a formatter never looks at the environment.
	Color bool
	// Width is the terminal width tables are fitted to; 0 means 100.
	Width int
	// MaxDriftRows caps the terminal drift table; 0 shows every row. The
	// other formats always show all drift: they are read, not scrolled past.
	MaxDriftRows int
}

// formats is the registry. It is an explicit map rather than init-time
// self-registration so that the full set is visible in one place and --help
// can list it.
var formats = map[string]func(Options) Formatter{
	"html":     func(o Options) Formatter { return &HTML{} },
	"json":     func(o Options) Formatter { return &JSON{} },
	"junit":    func(o Options) Formatter { return &JUnit{} },
	"markdown": func(o Options) Formatter { return &Markdown{} },
	"terminal": func(o Options) Formatter { return &Terminal{Options: o} },
}

// Names returns the format names New accepts, sorted, for --help and errors.
func Names() []string {
	names := make([]string, 0, len(formats))
	for n := range formats {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// New returns the formatter registered under name.
func New(name string, o Options) (Formatter, error) {
	mk, ok := formats[name]
	if !ok {
		return nil, fmt.Errorf("unknown report format %q (want one of %s)", name, strings.Join(Names(), ", "))
	}
	return mk(o), nil
}

// The helpers below are shared by several formats; each returns fresh data
// and never reorders a slice of the report in place.

// orderFindings returns the findings with correlation findings first: the
// probable cause is the headline, the checks it explains come after. The
// report's own order (severity, then check id) is kept otherwise.
func orderFindings(fs []audit.Finding) []audit.Finding {
	out := make([]audit.Finding, len(fs))
	copy(out, fs)
	sort.SliceStable(out, func(i, j int) bool {
		return out[i].Kind == audit.KindCorrelation && out[j].Kind != audit.KindCorrelation
	})
	return out
}

// severityOrder is the order findings are grouped in. A finding without a
// severity is shown right after the critical ones: the model's zero value
// exists so that a forgotten severity never reads as harmless.
var severityOrder = []audit.Severity{audit.SeverityCritical, audit.SeverityUnknown, audit.SeverityWarning, audit.SeverityInfo}

// counts says how many nodes delivered facts. Partial statuses
// (probe_timeout and the like) count as audited: their facts were judged.
func counts(r *audit.Report) (audited, notAudited int) {
	for _, n := range r.Nodes {
		if n.Status.HasFacts() {
			audited++
		} else {
			notAudited++
		}
	}
	return audited, notAudited
}

// Verdict is the gate in one line, e.g. "FAILED (exit 1): 3 critical findings".
// It prints the gate; it never recomputes it.
func Verdict(g audit.Gate) string {
	if g.Passed {
		return "passed"
	}
	s := fmt.Sprintf("FAILED (exit %d)", g.ExitCode)
	if len(g.Reasons) > 0 {
		s += ": " + strings.Join(g.Reasons, "; ")
	}
	return s
}

// causeHead is "probable cause of <symptom>: <fact>=<value>", in the words
// package audit uses for the finding's title; a split that is not exact is
// only a likely cause.
func causeHead(c *audit.Cause) string {
	if !c.Exact {
		return fmt.Sprintf("likely cause of %s: %s=%s (near match)", c.Symptom, c.Fact, c.Value)
	}
	return fmt.Sprintf("probable cause of %s: %s=%s", c.Symptom, c.Fact, c.Value)
}

// causeStats explains how well the cause splits the fleet, in the words an
// SRE would use to a change board.
func causeStats(c *audit.Cause) string {
	failing := c.Matched + c.Missed
	s := fmt.Sprintf("on %d of %d failing nodes and %d of %d healthy ones", c.Matched, failing, c.Extra, c.Healthy)
	if c.Exact {
		s += " (exact match)"
	}
	if len(c.Also) > 0 {
		s += "; equally explained by " + strings.Join(c.Also, ", ")
	}
	return s
}

// runTime is FinishedAt-StartedAt rounded for people, or "" when unknown.
func runTime(r *audit.Report) string {
	if r.StartedAt.IsZero() || r.FinishedAt.Before(r.StartedAt) {
		return ""
	}
	return r.FinishedAt.Sub(r.StartedAt).Round(100 * time.Millisecond).String()
}

// ranAt is the start time in UTC: reports are compared across time zones.
func ranAt(r *audit.Report) string {
	if r.StartedAt.IsZero() {
		return ""
	}
	return r.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC")
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// outliers maps fact → node → the scopes in which that node's value is not
// the majority, e.g. "fleet majority: inactive". Nodes in the majority group
// are absent.
func outliers(drift []audit.Drift) map[string]map[string][]string {
	out := map[string]map[string][]string{}
	for _, d := range drift {
		for _, g := range d.Groups {
			if g.Value == d.Majority {
				continue
			}
			if out[d.Fact] == nil {
				out[d.Fact] = map[string][]string{}
			}
			for _, n := range g.Nodes {
				out[d.Fact][n] = append(out[d.Fact][n], fmt.Sprintf("%s majority: %s", d.Scope, d.Majority))
			}
		}
	}
	return out
}

// majorityCount is the size of the majority group of d.
func majorityCount(d audit.Drift) int {
	for _, g := range d.Groups {
		if g.Value == d.Majority {
			return len(g.Nodes)
		}
	}
	return 0
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
