package audit

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"time"

	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/internal/yamlx"
	"github.com/fleet-audit/fleet-audit/result"
	"gopkg.in/yaml.v3"
)

// LoadWaivers reads a --waivers file; see ParseWaivers.
func LoadWaivers(file string, known []string) ([]result.Waiver, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("waivers: %w", err)
	}
	return ParseWaivers(file, b, known)
}

// waiverYAML is the file format; Waiver itself is the report's model and
// carries Source, which a file must not set.
type waiverYAML struct {
	Check   string   `yaml:"check"`
	Nodes   []string `yaml:"nodes"`
	Roles   []string `yaml:"roles"`
	Reason  string   `yaml:"reason"`
	Expires string   `yaml:"expires"`
}

// ParseWaivers decodes a waivers file: a YAML list of {check, nodes, roles,
// reason, expires}. known is the set of finding ids (WaivableIDs); a check
// pattern matching none of them is almost always a typo, and a typo in a
// waiver would silently waive nothing, so it is an error. Every problem is
// reported at once as "file:line: waiver N: field: why".
func ParseWaivers(name string, data []byte, known []string) ([]result.Waiver, error) {
	list, err := yamlx.List(name, data, "waivers (- check: ..., reason: ..., expires: YYYY-MM-DD)")
	if list == nil || err != nil {
		return nil, err
	}
	var out []result.Waiver
	var errs []error
	for i, item := range list.Content {
		w, err := parseWaiver(name, i+1, item, known)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, w)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

func parseWaiver(file string, n int, item *yaml.Node, known []string) (result.Waiver, error) {
	if item.Kind != yaml.MappingNode {
		return result.Waiver{}, fmt.Errorf("%s:%d: waiver %d: want a mapping with check, reason and expires", file, item.Line, n)
	}
	var y waiverYAML
	var buf bytes.Buffer
	// Re-encoded so KnownFields can reject a misspelt field, as in parseCheck.
	if err := yaml.NewEncoder(&buf).Encode(item); err != nil {
		return result.Waiver{}, fmt.Errorf("%s:%d: waiver %d: %w", file, item.Line, n, err)
	}
	dec := yaml.NewDecoder(&buf)
	dec.KnownFields(true)
	if err := dec.Decode(&y); err != nil {
		return result.Waiver{}, fmt.Errorf("%s:%d: waiver %d: %s", file, item.Line+yamlx.ErrLine(err)-1, n, yamlx.ErrText(err))
	}
	line := func(field string) int {
		for i := 0; i+1 < len(item.Content); i += 2 {
			if item.Content[i].Value == field {
				return item.Content[i].Line
			}
		}
		return item.Line
	}
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: waiver %d: %s: %s", file, line(field), n, field, fmt.Sprintf(format, args...)))
	}
	w := result.Waiver{Check: strings.TrimSpace(y.Check), Nodes: y.Nodes, Roles: y.Roles, Reason: strings.TrimSpace(y.Reason),
		Expires: strings.TrimSpace(y.Expires), Source: fmt.Sprintf("%s:%d", file, item.Line)}
	switch {
	case w.Check == "":
		bad("check", "is required (a check id or a glob such as firewall.*)")
	case strings.HasPrefix(w.Check, "waiver."):
		bad("check", "the waiver findings themselves cannot be waived; fix or remove the waiver they name")
	default:
		if _, err := path.Match(w.Check, ""); err != nil {
			bad("check", "bad glob %q: %v", w.Check, err)
		} else if !check.MatchesAny(w.Check, known) {
			bad("check", "%q matches no known check (see fleet-audit probes)", w.Check)
		}
	}
	if w.Reason == "" {
		bad("reason", "is required: say who accepted the risk and why")
	}
	if w.Expires == "" {
		bad("expires", "is required (YYYY-MM-DD, the last day the waiver applies)")
	} else if _, err := time.Parse(result.WaiverDate, w.Expires); err != nil {
		bad("expires", "want a date YYYY-MM-DD, got %q", w.Expires)
	}
	for _, list := range []struct {
		field string
		vals  []string
	}{{"nodes", w.Nodes}, {"roles", w.Roles}} {
		for _, v := range list.vals {
			if strings.TrimSpace(v) == "" {
				bad(list.field, "empty name in the list")
			}
		}
	}
	if len(errs) > 0 {
		return result.Waiver{}, errors.Join(errs...)
	}
	return w, nil
}

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
		findings = append(findings, waiverFinding(WaiverExpiredID, expired,
			"waiver has expired and no longer applies",
			"A waiver past its expiry date no longer hides its finding; the finding counts against the gate again. It is reported on its own so that CI says why a gate that passed yesterday fails today."))
	}
	if len(unused) > 0 {
		findings = append(findings, waiverFinding(WaiverUnusedID, unused,
			"waiver matched no finding in this run",
			"A waiver that matches nothing is either fixed debt, a check skipped in this run, or a waiver already covered by another; stale waivers hide the next regression."))
	}
	return findings
}

func waiverFinding(id string, ws []result.Waiver, title, summary string) result.Finding {
	f := result.Finding{Check: id, Kind: result.KindCheck, Severity: goFinding(id).Severity, Title: title, Nodes: []string{}, Remediation: goFinding(id).Fix}
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
