package catalog

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/internal/textdist"
	"github.com/fleet-audit/fleet-audit/result"
)

// UnknownIDError is an id that names no check and no finding built in Go.
type UnknownIDError struct {
	ID string
	// Closest are the known ids nearest to ID, best first.
	Closest []string
}

func (e *UnknownIDError) Error() string {
	msg := fmt.Sprintf("no check or finding %q", e.ID)
	if len(e.Closest) > 0 {
		msg += " (did you mean " + strings.Join(e.Closest, ", ") + "?)"
	}
	return msg + "; fleet-audit explain with no id lists them all"
}

// ExplainableIDs lists every id explain knows, sorted: the checks, the
// correlation finding of each symptom check and the other findings built
// in Go.
func (c *Catalog) ExplainableIDs() []string {
	ids := check.IDs(c.Checks)
	for _, ch := range c.Checks {
		if ch.Symptom {
			ids = append(ids, CorrelationPrefix+ch.ID)
		}
	}
	for _, f := range GoFindings {
		if !strings.HasPrefix(f.ID, CorrelationPrefix) {
			ids = append(ids, f.ID)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// explainer holds what explaining needs, gathered once for many ids.
type explainer struct {
	*Catalog
	facts factSources
}

// factSources say where a fact comes from: the collect table's commands
// and the probe that emits it.
type factSources struct {
	table   []probe.Collect
	probeOf map[string]string // fact → probe id
}

func (c *Catalog) explainer() (*explainer, error) {
	collect, err := probe.CollectTable()
	if err != nil {
		return nil, fmt.Errorf("embedded collect table: %w", err)
	}
	x := &explainer{Catalog: c, facts: factSources{table: collect, probeOf: map[string]string{}}}
	for _, p := range c.Probes {
		for _, f := range slices.Concat(p.Facts, p.NodeFacts) {
			x.facts.probeOf[f] = p.ID
		}
	}
	return x, nil
}

// Explain explains id among the catalogue's checks and the findings built
// in Go, naming the probe that emits each fact it reads.
func (c *Catalog) Explain(id string) (result.Explanation, error) {
	x, err := c.explainer()
	if err != nil {
		return result.Explanation{}, err
	}
	return x.explain(id)
}

// ExplainAll explains every id ExplainableIDs lists, in its order: the
// listing of `fleet-audit explain`, gathered once.
func (c *Catalog) ExplainAll() ([]result.Explanation, error) {
	x, err := c.explainer()
	if err != nil {
		return nil, err
	}
	var out []result.Explanation
	for _, id := range c.ExplainableIDs() {
		e, err := x.explain(id)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

func (x *explainer) explain(id string) (result.Explanation, error) {
	for _, c := range x.Checks {
		if c.ID == id {
			return x.explainCheck(c), nil
		}
	}
	if sym, ok := strings.CutPrefix(id, CorrelationPrefix); ok {
		for _, c := range x.Checks {
			if c.ID == sym && c.Symptom {
				return explainCorrelation(c, x.facts), nil
			}
		}
	}
	for _, f := range GoFindings {
		if f.ID == id && !strings.HasPrefix(f.ID, CorrelationPrefix) {
			return explainGo(f, x.facts), nil
		}
	}
	return result.Explanation{}, &UnknownIDError{ID: id, Closest: closestIDs(id, x.ExplainableIDs())}
}

func (x *explainer) explainCheck(c check.Check) result.Explanation {
	src := x.CheckSource(c)
	return result.Explanation{
		ID: c.ID, Kind: "check", Title: c.Title, Severity: c.Severity.String(), Area: c.Area, Scope: c.Scope, Symptom: c.Symptom,
		Summary: c.Summary, Why: c.Why, Facts: howTo(c.Facts(), x.facts), Remediation: c.Remediation,
		References: orEmpty(c.References), Source: src,
	}
}

// explainCorrelation explains one symptom's correlation finding: the Go
// row for every correlation, about this symptom and reading its facts.
func explainCorrelation(sym check.Check, table factSources) result.Explanation {
	e := explainGo(GoFindings[slices.IndexFunc(GoFindings, func(f GoFinding) bool {
		return strings.HasPrefix(f.ID, CorrelationPrefix)
	})], table)
	e.ID = CorrelationPrefix + sym.ID
	e.Title = "the probable cause of " + sym.ID + ": " + sym.Title
	e.Area = sym.Area
	e.Facts = howTo(sym.Facts(), table)
	return e
}

func explainGo(f GoFinding, table factSources) result.Explanation {
	sev := ""
	if f.Severity != result.SeverityUnknown {
		sev = f.Severity.String()
	}
	return result.Explanation{
		ID: f.ID, Kind: "finding", Severity: sev, Area: f.Area, Scope: "fleet", Summary: f.About, Why: f.Why,
		Facts: howTo(f.Facts, table), Remediation: f.Fix, References: orEmpty(f.References), Source: "builtin (Go)",
	}
}

// howTo groups the facts, each once and in order of first reading, by the
// collect entry that covers them and the probe that emits them, so that
// commands shared by several facts (ufw's status for ufw.active and
// ufw.status) are printed once. A fact no entry covers (a user's own) gets
// a group of its own with no commands, naming its probe.
func howTo(facts []string, src factSources) []result.FactHow {
	out := []result.FactHow{}
	type key struct {
		entry int
		probe string
	}
	group := map[key]int{} // → index in out
	var seen []string
	for _, f := range facts {
		if slices.Contains(seen, f) {
			continue
		}
		seen = append(seen, f)
		c, ok := probe.CollectFor(src.table, f)
		if !ok {
			out = append(out, result.FactHow{Facts: []string{f}, Probe: src.probeOf[f], Commands: []string{}})
			continue
		}
		k := key{slices.IndexFunc(src.table, func(t probe.Collect) bool { return slices.Equal(t.Facts, c.Facts) }), src.probeOf[f]}
		if i, ok := group[k]; ok {
			out[i].Facts = append(out[i].Facts, f)
			continue
		}
		group[k] = len(out)
		out = append(out, result.FactHow{Facts: []string{f}, On: c.On, Probe: k.probe, Commands: c.Commands})
	}
	return out
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// closestIDs are up to three ids an operator most likely meant: those
// within a few edits (typos), else those sharing the id's first word
// ("kubeproxy.nope" → the kubeproxy.* checks).
func closestIDs(id string, ids []string) []string {
	if near := textdist.Closest(id, ids, 3); len(near) > 0 {
		return near
	}
	type scored struct {
		id string
		d  int
	}
	var near []scored
	prefix, _, _ := strings.Cut(id, ".")
	for _, k := range ids {
		if strings.Contains(k, id) || (prefix != "" && strings.HasPrefix(k, prefix+".")) {
			near = append(near, scored{k, textdist.Distance(id, k)})
		}
	}
	slices.SortStableFunc(near, func(a, b scored) int { return a.d - b.d })
	var out []string
	for _, s := range near[:min(3, len(near))] {
		out = append(out, s.id)
	}
	return out
}

// ExplainFindings explains every finding of r whose id a built-in check or
// Go finding has, for the report formats that explain a finding. Only the
// built-in ones: `fleet-audit report` and `merge` re-render a saved run
// without its --probes, and must render it as the run did; a user's check
// has no why or references to show anyway.
func ExplainFindings(r *result.Report) (map[string]result.Explanation, error) {
	c, err := Builtin()
	if err != nil {
		return nil, err
	}
	x, err := c.explainer()
	if err != nil {
		return nil, err
	}
	out := map[string]result.Explanation{}
	for _, f := range r.Findings {
		if _, done := out[f.Check]; done {
			continue
		}
		e, err := x.explain(f.Check)
		var unknown *UnknownIDError
		if errors.As(err, &unknown) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[f.Check] = e
	}
	return out, nil
}
