package audit

import (
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/result"
)

// RedactSaved runs a report read back from a file through today's
// redactor: every fact value (a node's, the cluster's, those quoted by
// drift and causes) by its key and value, and every free text that can
// quote a node (messages, errors, stderr, evidence, summaries, details,
// gate reasons, warnings). A results file written before a secret's shape
// was known still holds that secret; report, diff and merge render files,
// so each cleans what it read before anything is written. It changes no
// verdict: severities, statuses and outcomes are left as they are.
func RedactSaved(r *result.Report) {
	redactNodeText(r.Nodes, r.Cluster)
	for i := range r.Nodes {
		redactFacts(r.Nodes[i].Facts)
	}
	if c := r.Cluster; c != nil {
		redactFacts(c.Facts)
		for _, f := range c.NodeFacts {
			redactFacts(f)
		}
	}
	for i := range r.Findings {
		f := &r.Findings[i]
		f.Summary = probe.RedactText(f.Summary)
		for j := range f.Evidence {
			f.Evidence[j] = probe.RedactText(f.Evidence[j])
		}
		if c := f.Cause; c != nil {
			c.Value = probe.RedactFact(c.Fact, c.Value)
			for j := range c.Ranked {
				c.Ranked[j].Value = probe.RedactFact(c.Ranked[j].Fact, c.Ranked[j].Value)
			}
		}
	}
	for i := range r.Drift {
		d := &r.Drift[i]
		d.Majority = probe.RedactFact(d.Fact, d.Majority)
		for j := range d.Groups {
			d.Groups[j].Value = probe.RedactFact(d.Fact, d.Groups[j].Value)
		}
	}
	for i := range r.Checks {
		r.Checks[i].Detail = probe.RedactText(r.Checks[i].Detail)
	}
	for i := range r.Gate.Reasons {
		r.Gate.Reasons[i] = probe.RedactText(r.Gate.Reasons[i])
	}
	for i := range r.Warnings {
		r.Warnings[i] = probe.RedactText(r.Warnings[i])
	}
}

// redactFacts redacts a fact map in place.
func redactFacts(facts map[string]string) {
	for k, v := range facts {
		facts[k] = probe.RedactFact(k, v)
	}
}
