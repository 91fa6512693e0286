package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/fleet-audit/fleet-audit/result"
)

// ExplainSection is one heading of an explanation and its paragraphs. A
// paragraph that is a Command is typed at a shell as it is, never wrapped.
type ExplainSection struct {
	Title string
	Items []ExplainItem
	// List: the items are a list (the references), not paragraphs.
	List bool
}

// ExplainItem is a paragraph of prose, a list entry or a command.
type ExplainItem struct {
	Text    string
	Command bool
	Bullet  bool
}

// ExplainSections lays out an explanation in the order a change board
// reads it: what it means, why it matters for an upgrade, the facts and
// how to collect them by hand, the remediation and the references. Every
// format that prints an explanation takes its sections from here, so they
// say the same; each escapes the text for its own medium.
func ExplainSections(e result.Explanation) []ExplainSection {
	prose := func(title, text string) ExplainSection {
		if strings.TrimSpace(text) == "" {
			text = "(not given)"
		}
		return ExplainSection{Title: title, Items: []ExplainItem{{Text: text}}}
	}
	facts := ExplainSection{Title: "Facts it reads, and how to collect them by hand"}
	if len(e.Facts) == 0 {
		facts.Items = append(facts.Items, ExplainItem{Text: "none of its own: it is built from the run as a whole (waivers, the inventory)"})
	}
	for _, f := range e.Facts {
		where := map[string]string{
			result.CollectOnNode: "on the node", result.CollectOnServer: "on any RKE2 server node",
			result.CollectOnWorkstation: "given to fleet-audit",
		}[f.On]
		if where == "" {
			where = "no command known for this fact"
		}
		if f.Probe != "" {
			where += "; probe " + f.Probe
		}
		facts.Items = append(facts.Items, ExplainItem{Text: strings.Join(f.Facts, ", ") + " (" + where + ")", Bullet: true})
		for _, c := range f.Commands {
			facts.Items = append(facts.Items, ExplainItem{Text: c, Command: true})
		}
	}
	refs := ExplainSection{Title: "References", List: true}
	for _, r := range e.References {
		refs.Items = append(refs.Items, ExplainItem{Text: r, Bullet: true})
	}
	if len(refs.Items) == 0 {
		refs = ExplainSection{Title: "References", Items: []ExplainItem{{Text: "(not given)"}}}
	}
	return []ExplainSection{
		prose("What it means", e.Summary),
		prose("Why it matters for an upgrade", e.Why),
		facts,
		prose("Remediation", e.Remediation),
		refs,
	}
}

// ExplainHeading is an explanation's first line and the line under it:
// the id and title, then severity, scope, kind and source.
func ExplainHeading(e result.Explanation) (head, meta string) {
	head = e.ID
	if e.Title != "" {
		head += ": " + e.Title
	}
	parts := []string{}
	if e.Severity != "" {
		parts = append(parts, "severity "+e.Severity)
	} else {
		parts = append(parts, "severity: its symptom's when a fact explains it, info otherwise")
	}
	if e.Area != "" {
		parts = append(parts, "area "+e.Area.Title())
	}
	parts = append(parts, "scope "+e.Scope, e.Kind+" ("+e.Source+")")
	if e.Symptom {
		parts = append(parts, "symptom: its probable cause is looked for")
	}
	return head, strings.Join(parts, " · ")
}

// WriteExplanation prints an explanation as text (fleet-audit explain),
// every line but a command fitted to width (0 means DefaultWidth): prose
// wraps at words, a list item hangs under its first line. Every value is
// escaped as in the terminal report: a --probes check is the operator's
// file, not ours.
func WriteExplanation(w io.Writer, e result.Explanation, width int) error {
	if width <= 0 {
		width = DefaultWidth
	}
	width = max(width, minWidth)
	var b strings.Builder
	put := func(indent, hang int, s string) {
		pad := strings.Repeat(" ", indent)
		for _, line := range wrapUnits(oneLine(s), width-indent, hang, wrapTiers[modeWords]) {
			b.WriteString(pad + line + "\n")
		}
	}
	head, meta := ExplainHeading(e)
	put(0, 3, head)
	put(3, 2, meta)
	for _, s := range ExplainSections(e) {
		fmt.Fprintf(&b, "\n%s\n", strings.ToUpper(s.Title))
		for _, it := range s.Items {
			switch {
			case it.Command:
				// Whole, even past the width: a command is copied into a
				// shell, where a line break ends it.
				b.WriteString("      $ " + oneLine(it.Text) + "\n")
			case s.List:
				put(3, 2, "- "+it.Text)
			case it.Bullet:
				put(3, 2, it.Text)
			default:
				put(3, 0, it.Text)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
