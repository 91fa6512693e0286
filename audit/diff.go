package audit

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/result"
)

// DiffOptions tune Compare.
type DiffOptions struct {
	// Volatile facts are skipped unless IncludeVolatile is set.
	Volatile        map[string]bool
	IncludeVolatile bool
	// ProbeOf maps a fact to its probe, so facts of a probe that did not
	// finish on one side are not reported as removed.
	ProbeOf map[string]string
	// FailOn is the least severity of a new finding that fails the diff.
	FailOn           result.Severity
	AllowUnreachable bool
}

// DiffOptionsFor derives the fact metadata from the probes that produced
// the runs (the saved JSON does not carry it).
func DiffOptionsFor(probes []probe.Probe) DiffOptions {
	meta := newFactMeta(probes)
	return DiffOptions{Volatile: meta.volatile, ProbeOf: meta.probeOf, FailOn: result.SeverityCritical}
}

// Compare computes what changed from before to after. Its gate fails (exit
// 1) when a finding at or above FailOn is new or escalated, and exits 3 when
// a node audited before could not be audited after, since then the diff
// cannot say that nothing broke there.
func Compare(before, after *result.Report, o DiffOptions) *result.Diff {
	if o.FailOn == result.SeverityUnknown {
		o.FailOn = result.SeverityCritical
	}
	d := &result.Diff{
		SchemaVersion: result.DiffSchemaVersion,
		Before:        diffRun(before), After: diffRun(after),
		NodesAdded: []string{}, NodesRemoved: []string{}, StatusChanges: []result.StatusChange{},
		FactChanges: []result.FactChange{}, NewFindings: []result.DiffFinding{}, ResolvedFindings: []result.DiffFinding{},
		VolatileIncluded: o.IncludeVolatile,
	}
	if before.Inventory != after.Inventory {
		d.Warnings = append(d.Warnings, fmt.Sprintf("the runs are of different inventories (%q before, %q after): nodes added and removed may be the inventories' difference, not the fleet's", before.Inventory, after.Inventory))
	}
	for _, w := range before.Warnings {
		d.Warnings = append(d.Warnings, "before: "+w)
	}
	for _, w := range after.Warnings {
		d.Warnings = append(d.Warnings, "after: "+w)
	}
	bn, an := nodesByName(before), nodesByName(after)
	for _, n := range after.Nodes {
		if _, ok := bn[n.Name]; !ok {
			d.NodesAdded = append(d.NodesAdded, n.Name)
		}
	}
	for _, n := range before.Nodes {
		if _, ok := an[n.Name]; !ok {
			d.NodesRemoved = append(d.NodesRemoved, n.Name)
		}
	}
	var lost []string
	facts := map[[3]string][]string{} // fact, before, after -> nodes
	kinds := map[[3]string]string{}
	for _, b := range before.Nodes {
		a, ok := an[b.Name]
		if !ok {
			continue
		}
		if a.Status != b.Status {
			d.StatusChanges = append(d.StatusChanges, result.StatusChange{Node: b.Name, Before: b.Status, After: a.Status, Message: a.Message})
			if b.Status.HasFacts() && !a.Status.HasFacts() {
				lost = append(lost, b.Name)
			}
		}
		if b.Status.HasFacts() && a.Status.HasFacts() {
			diffFacts(b.Name, b.Facts, a.Facts, finishedProbes(b.Probes), finishedProbes(a.Probes), o, facts, kinds)
		}
	}
	if before.Cluster != nil && after.Cluster != nil && before.Cluster.Status == result.ClusterOK && after.Cluster.Status == result.ClusterOK {
		diffFacts(result.ClusterNode, before.Cluster.Facts, after.Cluster.Facts,
			finishedProbes(before.Cluster.Probes), finishedProbes(after.Cluster.Probes), o, facts, kinds)
	}
	for k, nodes := range facts {
		d.FactChanges = append(d.FactChanges, result.FactChange{Fact: k[0], Change: kinds[k], Before: k[1], After: k[2], Nodes: nodes})
	}
	sort.Slice(d.FactChanges, func(i, j int) bool {
		x, y := d.FactChanges[i], d.FactChanges[j]
		if x.Fact != y.Fact {
			return x.Fact < y.Fact
		}
		if len(x.Nodes) != len(y.Nodes) {
			return len(x.Nodes) > len(y.Nodes)
		}
		return x.Before+"\x00"+x.After < y.Before+"\x00"+y.After
	})

	// Only nodes audited in both runs can gain or lose a finding; a node new
	// to the inventory brings all of its findings as new.
	audited := func(r map[string]result.Node, name string) bool { n, ok := r[name]; return ok && n.Status.HasFacts() }
	comparable := func(node string) bool {
		if node == result.ClusterNode {
			return true
		}
		_, inBefore := bn[node]
		return audited(an, node) && (!inBefore || audited(bn, node))
	}
	bf, af := activeFindings(before), activeFindings(after)
	d.NewFindings = changedFindings(af, bf, comparable, false)
	d.ResolvedFindings = changedFindings(bf, af, comparable, true)
	d.Gate = diffGate(d, lost, o)
	return d
}

func diffRun(r *result.Report) result.DiffRun {
	run := result.DiffRun{Inventory: r.Inventory, ToolVersion: r.Tool.Version, Gate: r.Gate}
	if !r.StartedAt.IsZero() {
		run.StartedAt = r.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	return run
}

func nodesByName(r *result.Report) map[string]result.Node {
	m := make(map[string]result.Node, len(r.Nodes))
	for _, n := range r.Nodes {
		m[n.Name] = n
	}
	return m
}

func finishedProbes(runs []result.ProbeRun) map[string]bool {
	ok := map[string]bool{}
	for _, p := range runs {
		ok[p.ID] = p.Status == "ok" || p.Status == "failed"
	}
	return ok
}

func diffFacts(node string, before, after map[string]string, bOK, aOK map[string]bool, o DiffOptions,
	out map[[3]string][]string, kinds map[[3]string]string) {
	// A fact absent on one side only counts when its probe finished there;
	// a probe that timed out says nothing about the facts it never printed.
	finished := func(ok map[string]bool, fact string) bool {
		p, known := o.ProbeOf[fact]
		if !known {
			return true
		}
		done, ran := ok[p]
		return !ran || done
	}
	keys := map[string]bool{}
	for k := range before {
		keys[k] = true
	}
	for k := range after {
		keys[k] = true
	}
	for k := range keys {
		if o.Volatile[k] && !o.IncludeVolatile {
			continue
		}
		bv, inB := before[k]
		av, inA := after[k]
		var kind string
		switch {
		case inB && inA && bv != av:
			kind = result.FactChanged
		case inB && !inA && finished(aOK, k):
			kind = result.FactRemoved
		case !inB && inA && finished(bOK, k):
			kind = result.FactAdded
		default:
			continue
		}
		key := [3]string{k, bv, av}
		out[key] = append(out[key], node)
		kinds[key] = kind
	}
}

type findingKey struct{ check, node string }

type activeFinding struct {
	f   result.Finding
	sev result.Severity
}

// activeFindings maps every (check, node) pair of the unwaived findings;
// fleet-wide findings without nodes use ClusterNode.
func activeFindings(r *result.Report) map[findingKey]activeFinding {
	m := map[findingKey]activeFinding{}
	for _, f := range r.Findings {
		if f.Waived != nil {
			continue
		}
		nodes := f.Nodes
		if len(nodes) == 0 {
			nodes = []string{result.ClusterNode}
		}
		for _, n := range nodes {
			k := findingKey{f.Check, n}
			if cur, ok := m[k]; !ok || f.Severity.Compare(cur.sev) > 0 {
				m[k] = activeFinding{f, f.Severity}
			}
		}
	}
	return m
}

// changedFindings lists the pairs of now that are absent from then or were
// there at a lower severity, grouped back into one entry per check.
func changedFindings(now, then map[findingKey]activeFinding, comparable func(string) bool, resolved bool) []result.DiffFinding {
	type group struct {
		check string
		sev   result.Severity
		was   result.Severity
	}
	byGroup := map[group]*result.DiffFinding{}
	for k, cur := range now {
		if !comparable(k.node) {
			continue
		}
		prev, ok := then[k]
		if ok && prev.sev.Compare(cur.sev) >= 0 {
			continue
		}
		g := group{k.check, cur.sev, prev.sev}
		df := byGroup[g]
		if df == nil {
			df = &result.DiffFinding{Check: k.check, Title: cur.f.Title, Severity: cur.sev, Summary: cur.f.Summary}
			if resolved {
				df.Now = prev.sev
			} else {
				df.Was = prev.sev
			}
			byGroup[g] = df
		}
		df.Nodes = append(df.Nodes, k.node)
	}
	out := make([]result.DiffFinding, 0, len(byGroup))
	for _, df := range byGroup {
		sort.Strings(df.Nodes)
		out = append(out, *df)
	}
	sort.Slice(out, func(i, j int) bool {
		if c := out[i].Severity.Compare(out[j].Severity); c != 0 {
			return c > 0
		}
		if out[i].Check != out[j].Check {
			return out[i].Check < out[j].Check
		}
		return strings.Join(out[i].Nodes, ",") < strings.Join(out[j].Nodes, ",")
	})
	return out
}

func diffGate(d *result.Diff, lost []string, o DiffOptions) result.Gate {
	g := result.Gate{FailOn: o.FailOn, AllowUnreachable: o.AllowUnreachable, Passed: true, Reasons: []string{}}
	n := 0
	for _, f := range d.NewFindings {
		if f.Severity.AtLeast(o.FailOn) {
			n += len(f.Nodes)
		}
	}
	if n > 0 {
		g.Passed, g.ExitCode = false, result.ExitGateFailed
		if o.FailOn == result.SeverityCritical {
			g.Reasons = append(g.Reasons, fmt.Sprintf("%d new critical %s", n, result.Plural(n, "finding")))
		} else {
			g.Reasons = append(g.Reasons, fmt.Sprintf("%d new %s at %s or worse", n, result.Plural(n, "finding"), o.FailOn))
		}
	}
	if len(lost) > 0 && !o.AllowUnreachable {
		if g.Passed {
			g.Passed, g.ExitCode = false, result.ExitUnaudited
		}
		sort.Strings(lost)
		g.Reasons = append(g.Reasons, fmt.Sprintf("%d %s audited before but not after: %s", len(lost), result.Plural(len(lost), "node"), strings.Join(lost, ", ")))
	}
	return g
}
