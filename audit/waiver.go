package audit

import (
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/fleet-audit/fleet-audit/audit/catalog"
	"github.com/fleet-audit/fleet-audit/result"
)

// ApplyWaivers marks the findings that waivers accept and returns the new
// finding list. A finding whose nodes are all covered is waived whole; one
// only partly covered is split into an unwaived finding for the other nodes
// and a waived one, so the gate still sees the nodes nobody accepted. The
// (check, node) results of waived pairs become OutcomeWaived. Waivers past
// their expiry do not apply and are reported as a warning, so an expired
// waiver shows up in CI instead of an old finding silently failing again;
// waivers that matched nothing are reported as info.
func ApplyWaivers(r *result.Report, waivers []result.Waiver, now time.Time) []result.Finding {
	findings := r.Findings
	if len(waivers) == 0 {
		return findings
	}
	byName := map[string]result.Node{}
	for _, n := range r.Nodes {
		byName[n.Name] = n
	}
	var expired, unused []result.Waiver
	for _, w := range waivers {
		if w.Expired(now) {
			expired = append(expired, w)
			continue
		}
		used := false
		var next []result.Finding
		for _, f := range findings {
			if f.Waived != nil || strings.HasPrefix(f.Check, "waiver.") {
				next = append(next, f)
				continue
			}
			if ok, _ := path.Match(w.Check, f.Check); !ok {
				next = append(next, f)
				continue
			}
			var in, out []string
			for _, name := range f.Nodes {
				if w.Covers(byName[name]) {
					in = append(in, name)
				} else {
					out = append(out, name)
				}
			}
			switch {
			case len(f.Nodes) == 0 && len(w.Nodes) == 0 && len(w.Roles) == 0:
				next = append(next, waive(f, w))
				markWaived(r.Checks, f.Check, []string{result.ClusterNode}, w)
			case len(in) == 0:
				next = append(next, f)
				continue
			case len(out) == 0:
				next = append(next, waive(f, w))
				markWaived(r.Checks, f.Check, in, w)
			default:
				next = append(next, restrict(f, out), waive(restrict(f, in), w))
				markWaived(r.Checks, f.Check, in, w)
			}
			used = true
		}
		findings = next
		if !used {
			unused = append(unused, w)
		}
	}
	if len(expired) > 0 {
		findings = append(findings, waiverFinding(catalog.WaiverExpiredID, expired,
			"waiver has expired and no longer applies",
			"A waiver past its expiry date no longer hides its finding; the finding counts against the gate again. It is reported on its own so that CI says why a gate that passed yesterday fails today."))
	}
	if len(unused) > 0 {
		findings = append(findings, waiverFinding(catalog.WaiverUnusedID, unused,
			"waiver matched no finding in this run",
			"A waiver that matches nothing is either fixed debt, a check skipped in this run, or a waiver already covered by another; stale waivers hide the next regression."))
	}
	return findings
}

func waiverFinding(id string, ws []result.Waiver, title, summary string) result.Finding {
	f := result.Finding{Check: id, Kind: result.KindCheck, Severity: catalog.GoFindingOf(id).Severity, Title: title, Nodes: []string{}, Remediation: catalog.GoFindingOf(id).Fix}
	for _, w := range ws {
		f.Evidence = append(f.Evidence, w.Describe())
	}
	f.Summary = fmt.Sprintf("%s (%d %s)", summary, len(ws), result.Plural(len(ws), "waiver"))
	return f
}

// waive returns f marked as accepted by w, with the acceptance in its
// evidence so every report format shows who accepted it and until when.
func waive(f result.Finding, w result.Waiver) result.Finding {
	wc := w
	wc.Nodes = append([]string(nil), w.Nodes...)
	wc.Roles = append([]string(nil), w.Roles...)
	f.Waived = &wc
	f.Evidence = append(append([]string{}, f.Evidence...),
		fmt.Sprintf("waived until %s by %s: %s", w.Expires, w.Source, w.Reason))
	return f
}

// restrict returns f narrowed to nodes: evidence lines of other nodes
// ("<node>: ...") are dropped, lines about no node in particular are kept,
// and the node list in a check finding's summary and the rollout follow.
func restrict(f result.Finding, nodes []string) result.Finding {
	keep := map[string]bool{}
	for _, n := range nodes {
		keep[n] = true
	}
	named := map[string]bool{}
	for _, n := range f.Nodes {
		named[n] = true
	}
	var ev []string
	for _, line := range f.Evidence {
		// The owner is the longest node named before a ": "; looking the
		// prefixes up instead of trying every node made it lines × nodes.
		owner := ""
		for i := strings.Index(line, ": "); i >= 0; {
			if named[line[:i]] {
				owner = line[:i]
			}
			j := strings.Index(line[i+1:], ": ")
			if j < 0 {
				break
			}
			i += 1 + j
		}
		if owner == "" || keep[owner] {
			ev = append(ev, line)
		}
	}
	old := fmt.Sprintf(" (%d %s: %s)", len(f.Nodes), result.Plural(len(f.Nodes), "node"), strings.Join(f.Nodes, ", "))
	if strings.HasSuffix(f.Summary, old) {
		f.Summary = strings.TrimSuffix(f.Summary, old) +
			fmt.Sprintf(" (%d %s: %s)", len(nodes), result.Plural(len(nodes), "node"), strings.Join(nodes, ", "))
	}
	var steps []result.RolloutStep
	for _, s := range f.Rollout {
		var in []string
		for _, n := range s.Nodes {
			if keep[n] {
				in = append(in, n)
			}
		}
		if len(in) > 0 {
			s.Nodes = in
			steps = append(steps, s)
		}
	}
	f.Rollout = steps
	f.Nodes = append([]string{}, nodes...)
	f.Evidence = ev
	return f
}

func markWaived(results []result.CheckResult, check string, nodes []string, w result.Waiver) {
	waived := map[string]bool{}
	for _, n := range nodes {
		waived[n] = true
	}
	for i := range results {
		r := &results[i]
		if r.Check == check && r.Outcome == result.OutcomeFail && waived[r.Node] {
			r.Outcome = result.OutcomeWaived
			r.Detail += fmt.Sprintf(" (waived until %s by %s)", w.Expires, w.Source)
		}
	}
}
