package check

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unique"

	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/result"
)

// Judge runs every check. Node checks run on every node, seeing the node's
// facts, the cluster facts and the globals (target.version); nodes without
// facts get a skip for each so that JUnit still shows them. Cluster checks
// run once on the cluster facts and the globals.
func Judge(nodes []result.Node, cluster *result.Cluster, checks []Check, globals map[string]string) []result.CheckResult {
	clusterFacts := map[string]string{}
	for k, v := range globals {
		clusterFacts[k] = v
	}
	if cluster != nil {
		for k, v := range cluster.Facts {
			clusterFacts[k] = v
		}
	}
	// One result per cluster check and per node and node check, sized
	// once: grown by doubling, the slice kept up to twice the report's
	// results for the rest of the run.
	clusterChecks := 0
	for _, c := range checks {
		if c.Scope == probe.ScopeCluster {
			clusterChecks++
		}
	}
	out := make([]result.CheckResult, 0, clusterChecks+len(nodes)*(len(checks)-clusterChecks))
	for _, c := range checks {
		if c.Scope != probe.ScopeCluster {
			continue
		}
		r := result.CheckResult{Check: c.ID, Node: result.ClusterNode, Severity: c.Severity}
		if cluster != nil && len(cluster.Facts) > 0 {
			r.Outcome, r.Detail = c.Evaluate(clusterFacts)
		} else {
			r.Outcome, r.Detail = result.OutcomeSkip, "no cluster facts: "+clusterWhy(cluster)
		}
		out = append(out, r)
	}
	medians := peerMedians(nodes, checks)
	for _, n := range nodes {
		view := n.Facts
		if len(clusterFacts)+len(medians[n.Name]) > 0 {
			view = make(map[string]string, len(n.Facts)+len(clusterFacts)+len(medians[n.Name]))
			for k, v := range clusterFacts {
				view[k] = v
			}
			for k, v := range medians[n.Name] {
				view[k] = v
			}
			for k, v := range n.Facts {
				view[k] = v
			}
		}
		for _, c := range checks {
			if c.Scope == probe.ScopeCluster {
				continue
			}
			r := result.CheckResult{Check: c.ID, Node: n.Name, Severity: c.Severity}
			switch {
			case !n.Status.HasFacts():
				r.Outcome, r.Detail = result.OutcomeSkip, "node not audited: "+n.Status.String()
			case len(c.When) == 0:
				r.Outcome = result.OutcomeFail // selected; JudgeUniform decides
			default:
				r.Outcome, r.Detail = c.Evaluate(view)
				// Most nodes' details read alike (the same value
				// compared with the same limit): one copy for all.
				r.Detail = unique.Make(r.Detail).Value()
				if r.Outcome == result.OutcomeSkip {
					if f := c.missingClusterFact(view); f != "" && (cluster == nil || cluster.Status != result.ClusterOK) {
						r.Detail = f + " not collected: " + clusterViewWhy(cluster)
					}
				}
			}
			if c.Uniform != "" && r.Outcome == result.OutcomeFail {
				v, ok := n.Facts[c.Uniform]
				why, unreadable := probe.Unjudgeable[v]
				switch {
				case !ok:
					r.Outcome, r.Detail = result.OutcomeSkip, c.Uniform+" not collected"
				case unreadable:
					// Compared with readable values it would be drift, and
					// on every node alike "the same on all": neither is seen.
					r.Outcome, r.Detail = result.OutcomeUnjudged, fmt.Sprintf("%s=%s: %s", c.Uniform, v, why)
				}
			}
			out = append(out, r)
		}
	}
	judgeUniform(nodes, checks, out)
	return out
}

// peerMedians computes, for every pct_of_median_lt condition, the median
// of its fact over the audited nodes where it is numeric: over all of them,
// or over each group of nodes sharing a value of the condition's peers
// fact. It returns, per node, the median that node is compared with, under
// medianKey; a group of fewer than 3 numeric values gives none.
func peerMedians(nodes []result.Node, checks []Check) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, c := range checks {
		for _, cond := range c.When {
			if knownOps[cond.Op] != opMedian {
				continue
			}
			vals := map[string][]float64{} // peer value → numeric facts
			members := map[string][]string{}
			for _, n := range nodes {
				if !n.Status.HasFacts() {
					continue
				}
				peer, ok := "", true
				if cond.Peers != "" {
					peer, ok = n.Facts[cond.Peers]
				}
				if !ok {
					continue // no peers: Evaluate says so
				}
				members[peer] = append(members[peer], n.Name)
				if f, err := strconv.ParseFloat(n.Facts[cond.Fact], 64); err == nil {
					vals[peer] = append(vals[peer], f)
				}
			}
			for peer, vs := range vals {
				if len(vs) < 3 {
					continue // too few peers to call one of them an outlier
				}
				med := strconv.FormatFloat(median(vs), 'f', -1, 64)
				for _, name := range members[peer] {
					if out[name] == nil {
						out[name] = map[string]string{}
					}
					out[name][medianKey(cond)] = med
				}
			}
		}
	}
	return out
}

func median(vs []float64) float64 {
	vs = slices.Clone(vs)
	sort.Float64s(vs)
	if len(vs)%2 == 0 {
		return (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
	}
	return vs[len(vs)/2]
}

// MajorityOf returns the most common value and whether another value is as
// common (then no value has a majority).
func MajorityOf(count map[string]int) (majority string, tie bool) {
	best := 0
	for _, v := range slices.Sorted(maps.Keys(count)) {
		switch {
		case count[v] > best:
			majority, best, tie = v, count[v], false
		case count[v] == best:
			tie = true
		}
	}
	return majority, tie
}

// missingClusterFact names the first fact from the cluster view (its own or
// a node's) that a condition reads and view lacks, or "".
func (c Check) missingClusterFact(view map[string]string) string {
	for _, cond := range c.When {
		for _, f := range []string{cond.Fact, cond.Ref, cond.Peers} {
			if _, ok := view[f]; f != "" && !ok && probe.FromClusterView(f) {
				return f
			}
		}
	}
	return ""
}

// clusterViewWhy says why the cluster view gave no facts, e.g. "the
// cluster view failed: no server answered: ...".
func clusterViewWhy(c *result.Cluster) string {
	switch {
	case c == nil:
		return clusterWhy(c)
	case c.Status == result.ClusterNoServer:
		return "no server to ask for the cluster view: " + clusterWhy(c)
	}
	return "the cluster view failed: " + clusterWhy(c)
}

func clusterWhy(c *result.Cluster) string {
	if c == nil {
		return "the cluster probes did not run"
	}
	return c.Message
}

// judgeUniform finishes uniform checks: of the nodes their conditions
// selected (provisionally failed), those holding the majority value pass.
func judgeUniform(nodes []result.Node, checks []Check, results []result.CheckResult) {
	byName := map[string]result.Node{}
	for _, n := range nodes {
		byName[n.Name] = n
	}
	for _, c := range checks {
		if c.Uniform == "" {
			continue
		}
		var selected []int
		count := map[string]int{}
		for i, r := range results {
			if r.Check == c.ID && r.Outcome == result.OutcomeFail {
				selected = append(selected, i)
				count[byName[r.Node].Facts[c.Uniform]]++
			}
		}
		majority, tie := MajorityOf(count)
		var groups []string
		for _, v := range slices.Sorted(maps.Keys(count)) {
			groups = append(groups, fmt.Sprintf("%s on %d", v, count[v]))
		}
		split := strings.Join(groups, ", ")
		for _, i := range selected {
			v := byName[results[i].Node].Facts[c.Uniform]
			switch {
			case len(count) == 1:
				results[i].Outcome, results[i].Detail = result.OutcomePass, c.Uniform+"="+v+" (the same on all)"
			case tie:
				results[i].Detail = fmt.Sprintf("%s=%s; no value has a majority (%s)", c.Uniform, v, split)
			case v == majority:
				results[i].Outcome, results[i].Detail = result.OutcomePass, fmt.Sprintf("%s=%s (the majority: %s)", c.Uniform, v, split)
			default:
				results[i].Detail = fmt.Sprintf("%s=%s, the others %s (%s)", c.Uniform, v, majority, split)
			}
		}
	}
}

// CheckFindings folds the failing results of each check into one finding
// naming all the nodes it fails on.
func CheckFindings(checks []Check, results []result.CheckResult) []result.Finding {
	// The failures by check, found in one pass: scanning every node's
	// results for each check cost checks × checks × nodes.
	failed := map[string][]int{}
	for i, r := range results {
		if r.Outcome == result.OutcomeFail {
			failed[r.Check] = append(failed[r.Check], i)
		}
	}
	var out []result.Finding
	for _, c := range checks {
		f := result.Finding{Check: c.ID, Kind: result.KindCheck, Title: c.Title, Severity: c.Severity, Summary: c.Summary, Remediation: c.Remediation}
		for _, i := range failed[c.ID] {
			r := results[i]
			if r.Node != result.ClusterNode {
				f.Nodes = append(f.Nodes, r.Node)
			}
			f.Evidence = append(f.Evidence, r.Node+": "+r.Detail)
		}
		if len(f.Evidence) == 0 {
			continue
		}
		sort.Strings(f.Nodes)
		sort.Strings(f.Evidence)
		if f.Nodes == nil {
			f.Nodes = []string{}
		} else {
			f.Summary = fmt.Sprintf("%s (%d %s: %s)", c.Summary, len(f.Nodes), result.Plural(len(f.Nodes), "node"), strings.Join(f.Nodes, ", "))
		}
		out = append(out, f)
	}
	return out
}
