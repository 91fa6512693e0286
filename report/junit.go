package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/fleet-audit/fleet-audit/audit"
)

var _ Formatter = (*JUnit)(nil)

// JUnit writes JUnit XML for CI (Jenkins junit, GitLab artifacts:reports:junit).
//
// There is one <testsuite> per node, not per check: Jenkins and GitLab group
// results by suite, and an operator fixes one node at a time, so "what is
// wrong with worker-2" must be one click. Each suite holds one <testcase
// classname="<node>" name="<check>"> per check result of that node.
//
// Outcomes map as follows (after kube-bench, but a warning is a real
// problem here, so it fails the test case rather than hiding as skipped):
//
//	fail, critical/warning/unknown → <failure type="<severity>">
//	fail, info                     → <skipped message="info: ...">
//	skip                           → <skipped>
//	node not ok                    → an extra test case with <error>
//
// JUnit only shows what the report says; the exit code stays the gate's.
type JUnit struct{}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Hostname   string          `xml:"hostname,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
	SystemOut  *junitText      `xml:"system-out,omitempty"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",cdata"`
}

// junitText is multi-line element text. CDATA keeps it readable in the raw
// file (chardata would write every newline as &#xA;); encoding/xml splits a
// "]]>" in the text, so node data cannot end the section.
type junitText struct {
	Text string `xml:",cdata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr,omitempty"`
}

func (j *JUnit) Format(w io.Writer, r *audit.Report) error {
	doc := junitSuites{Name: "fleet-audit", Time: "0.000"}
	if !r.StartedAt.IsZero() && !r.FinishedAt.Before(r.StartedAt) {
		doc.Time = fmt.Sprintf("%.3f", r.FinishedAt.Sub(r.StartedAt).Seconds())
	}
	names := map[string]bool{}
	for _, n := range r.Nodes {
		names[n.Name] = true
	}
	for _, n := range r.Nodes {
		s := junitSuite{
			Name:     xmlText(n.Name, false),
			Time:     fmt.Sprintf("%.3f", n.DurationSeconds),
			Hostname: xmlText(n.Address, false),
			Properties: []junitProperty{
				{Name: "status", Value: n.Status.String()},
				{Name: "roles", Value: xmlText(strings.Join(n.Roles, ","), false)},
			},
		}
		if !r.StartedAt.IsZero() {
			// The JUnit schema's timestamp has no zone; it is UTC.
			s.Timestamp = r.StartedAt.UTC().Format("2006-01-02T15:04:05")
		}
		if n.Status != audit.StatusOK {
			name := "connect"
			if len(n.Facts) > 0 {
				// Partial: the facts that arrived were judged below, but
				// the node must not look green.
				name = "probes"
			}
			msg := n.Status.String()
			if n.Message != "" {
				msg += ": " + n.Message
			}
			s.Cases = append(s.Cases, junitCase{
				Name: name, Classname: s.Name,
				Error: &junitProblem{Message: xmlText(msg, false), Type: n.Status.String(), Text: xmlText(n.Error, true)},
			})
			s.Errors++
		}
		for _, c := range r.Checks {
			if c.Node != n.Name {
				continue
			}
			tc := junitCase{Name: xmlText(c.Check, false), Classname: s.Name}
			switch c.Outcome {
			case audit.OutcomePass:
			case audit.OutcomeFail:
				msg, text := failureText(r, c, names)
				if c.Severity == audit.SeverityInfo {
					tc.Skipped = &junitSkipped{Message: xmlText("info: "+msg, false)}
					s.Skipped++
				} else {
					tc.Failure = &junitProblem{Message: xmlText(msg, false), Type: c.Severity.String(), Text: xmlText(text, true)}
					s.Failures++
				}
			default:
				// skip, and any outcome this version does not know:
				// not judged, so neither passed nor failed.
				tc.Skipped = &junitSkipped{Message: xmlText(c.Detail, false)}
				s.Skipped++
			}
			s.Cases = append(s.Cases, tc)
		}
		s.Tests = len(s.Cases)
		var out strings.Builder
		for _, k := range sortedKeys(n.Facts) {
			out.WriteString(k + "=" + n.Facts[k] + "\n")
		}
		for _, p := range n.Probes {
			if p.Stderr != "" {
				fmt.Fprintf(&out, "# probe %s %s (exit %d) stderr: %s\n", p.ID, p.Status, p.ExitCode, p.Stderr)
			}
		}
		if out.Len() > 0 {
			s.SystemOut = &junitText{Text: xmlText(out.String(), true)}
		}
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		doc.Skipped += s.Skipped
		doc.Suites = append(doc.Suites, s)
	}
	var b bytes.Buffer
	b.WriteString(xml.Header)
	enc := xml.NewEncoder(&b)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("encode junit: %w", err)
	}
	b.WriteString("\n")
	_, err := w.Write(b.Bytes())
	return err
}

// failureText is the failure message (the finding's summary, or the check's
// detail when no finding names this node) and its body: what was seen, the
// probable cause, the evidence about this node and the fix.
func failureText(r *audit.Report, c audit.CheckResult, nodes map[string]bool) (msg, text string) {
	var f *audit.Finding
	var cause *audit.Finding
	for i := range r.Findings {
		fi := &r.Findings[i]
		if !contains(fi.Nodes, c.Node) {
			continue
		}
		if fi.Check == c.Check && f == nil {
			f = fi
		}
		if fi.Cause != nil && fi.Cause.Symptom == c.Check && cause == nil {
			cause = fi
		}
	}
	var b strings.Builder
	if c.Detail != "" {
		b.WriteString(c.Detail + "\n")
	}
	if cause != nil {
		fmt.Fprintf(&b, "%s\n  %s\n", causeHead(cause.Cause), causeStats(cause.Cause))
	}
	msg = c.Detail
	if f == nil {
		return msg, b.String()
	}
	if f.Summary != "" {
		msg = f.Summary
	}
	if ev := nodeEvidence(f.Evidence, c.Node, nodes); len(ev) > 0 {
		b.WriteString("evidence:\n")
		for _, e := range ev {
			b.WriteString("  " + e + "\n")
		}
	}
	if f.Remediation != "" {
		b.WriteString("remediation: " + f.Remediation + "\n")
	}
	return msg, b.String()
}

// nodeEvidence keeps the evidence lines about this node and those about the
// fleet, dropping "other-node: ..." lines: a test case is about one node.
func nodeEvidence(lines []string, node string, nodes map[string]bool) []string {
	var out []string
	for _, l := range lines {
		if name, _, ok := strings.Cut(l, ": "); ok && name != node && nodes[name] {
			continue
		}
		out = append(out, l)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// xmlText makes s safe to carry in XML 1.0. encoding/xml escapes markup but
// replaces the control characters XML 1.0 forbids with U+FFFD, losing what
// they were; they are made visible instead (\x1b), like in the terminal.
// Newlines and tabs are legal and kept in element text (multiline) and
// escaped in attributes, where parsers would normalise them to spaces.
func xmlText(s string, multiline bool) string {
	if multiline {
		return visible(s, "\n\t")
	}
	return visible(s, "")
}
