package audit

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/fleet-audit/fleet-audit/audit/catalog"
	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/result"
)

// strongMatch is the least Jaccard similarity between a symptom's node set
// and a fact value's node set for the fact to be called a probable cause.
// 0.75 tolerates one stray node in a fleet split of four.
const strongMatch = 0.75

// maxRanked is how many candidate causes a correlation finding lists.
const maxRanked = 3

// symptomOutcome is one symptom check's split of the judged nodes.
type symptomOutcome struct {
	check         check.Check
	sick, healthy []string
}

// Correlate looks, for every symptom check that fails on some nodes, for the
// fact values whose set of nodes best matches the failing set, and returns
// one finding per distinct split: the probable cause when the match is
// strong, otherwise a note that nothing explains it, or that every node
// fails (cluster-wide configuration rather than node drift). Symptoms that
// fail on the same nodes and point at the same cause (healthz 503 and pod
// CrashLoopBackOff) share one finding.
func Correlate(nodes []result.Node, checks []check.Check, results []result.CheckResult, probes []probe.Probe) []result.Finding {
	meta := newFactMeta(probes)
	byName := map[string]result.Node{}
	for _, n := range nodes {
		byName[n.Name] = n
	}
	checkByID := map[string]check.Check{}
	for _, c := range checks {
		checkByID[c.ID] = c
	}
	// failingFacts marks fact=value pairs that some non-symptom check
	// already flags on a node: such a value is a likelier cause than an
	// incidental one.
	failingFacts := map[string]bool{}
	for _, r := range results {
		if r.Outcome != result.OutcomeFail || checkByID[r.Check].Symptom {
			continue
		}
		for _, f := range checkByID[r.Check].JudgedFacts() {
			failingFacts[f+"="+byName[r.Node].Facts[f]] = true
		}
	}
	excluded := effectFacts(checks, meta)
	var outcomes []symptomOutcome
	for _, c := range checks {
		if !c.Symptom || c.Scope == probe.ScopeCluster {
			continue
		}
		o := symptomOutcome{check: c}
		for _, r := range results {
			if r.Check != c.ID {
				continue
			}
			switch r.Outcome {
			case result.OutcomeFail:
				o.sick = append(o.sick, r.Node)
			case result.OutcomePass:
				o.healthy = append(o.healthy, r.Node)
			}
		}
		if len(o.sick) == 0 {
			continue
		}
		sort.Strings(o.sick)
		sort.Strings(o.healthy)
		outcomes = append(outcomes, o)
	}
	var out []result.Finding
	merged := map[string]int{} // split+cause → index in out
	for _, o := range outcomes {
		c := o.check
		symptom := describeSymptom(c, o.sick, byName)
		if len(o.healthy) == 0 {
			out = append(out, result.Finding{
				Check: catalog.CorrelationPrefix + c.ID, Kind: result.KindCorrelation, Severity: result.SeverityInfo,
				Title:       c.ID + " fails on every judged node: suspect cluster-wide configuration",
				Nodes:       o.sick,
				Summary:     fmt.Sprintf("%s on all %d nodes that could be judged; when every node fails the same way, suspect a cluster-wide configuration issue rather than node drift.", symptom, len(o.sick)),
				Evidence:    []string{symptom},
				Remediation: "Compare the cluster-wide configuration (kube-proxy DaemonSet or static pod manifest, RKE2 config, the release notes of the new version) with the last working one.",
			})
			continue
		}
		cands := rankCauses(o.sick, o.healthy, byName, meta, excluded, failingFacts)
		if len(cands) == 0 || cands[0].Score < strongMatch {
			f := result.Finding{
				Check: catalog.CorrelationPrefix + c.ID, Kind: result.KindCorrelation, Severity: result.SeverityInfo,
				Title:       "no fact explains " + c.ID,
				Nodes:       o.sick,
				Summary:     fmt.Sprintf("%s, and no collected fact splits the fleet along the same line (the best match covers less than %.0f%%).", symptom, strongMatch*100),
				Evidence:    append([]string{symptom}, rankedLines("closest", cands, len(o.sick), len(o.healthy))...),
				Remediation: "Test a failing node directly and compare it with a healthy one beyond what fleet-audit collects (add a probe with --probes for what you find).",
			}
			out = append(out, f)
			continue
		}
		best := cands[0]
		key := strings.Join(o.sick, ",") + "|" + best.Fact + "=" + best.Value
		if i, ok := merged[key]; ok {
			f := &out[i]
			f.Cause.Symptoms = append(f.Cause.Symptoms, c.ID)
			f.Evidence = append(f.Evidence[:1:1], append([]string{symptom}, f.Evidence[1:]...)...)
			f.Title = f.Cause.Headline()
			if c.Severity.Compare(f.Severity) > 0 {
				f.Severity = c.Severity
			}
			continue
		}
		cause := best.Cause
		cause.Symptom = c.ID
		cause.Symptoms = []string{c.ID}
		for _, other := range cands[1:] {
			if other.Score == best.Score && other.Matched == best.Matched && other.Extra == best.Extra {
				cause.Also = append(cause.Also, other.Fact+"="+other.Value)
			}
		}
		for i, cd := range cands {
			if i == maxRanked {
				break
			}
			cause.Ranked = append(cause.Ranked, result.Candidate{Fact: cd.Fact, Value: cd.Value, Matched: cd.Matched, Extra: cd.Extra, Missed: cd.Missed, Score: cd.Score})
		}
		evidence := fmt.Sprintf("%s; %s on %s and on %s", symptom, best.Fact+"="+best.Value,
			sameCount(best.Matched, len(o.sick)), healthyCount(best.Extra, len(o.healthy)))
		remediation := fmt.Sprintf("Make %s on these nodes match the healthy nodes.", best.Fact)
		for _, ch := range checks {
			if !ch.Symptom && slices.Contains(ch.JudgedFacts(), best.Fact) && failingFacts[best.Fact+"="+best.Value] {
				remediation = ch.Remediation
				break
			}
		}
		ev := append([]string{evidence}, alsoLines(cause.Also)...)
		// The next candidates are those with a different split: the equal
		// ones are already listed as the same split.
		var next []candidate
		for _, cd := range cands[1:] {
			if cd.Score != best.Score || cd.Matched != best.Matched || cd.Extra != best.Extra {
				next = append(next, cd)
			}
		}
		ev = append(ev, rankedLines("next candidates", next, len(o.sick), len(o.healthy))...)
		merged[key] = len(out)
		out = append(out, result.Finding{
			Check: catalog.CorrelationPrefix + c.ID, Kind: result.KindCorrelation, Severity: c.Severity,
			Title:       cause.Headline(),
			Nodes:       o.sick,
			Summary:     fmt.Sprintf("%s: %s=%s splits the fleet along the same line as %s.", cause.Verdict(), best.Fact, best.Value, c.Title),
			Evidence:    ev,
			Remediation: remediation,
			Cause:       &cause,
		})
	}
	for i := range out {
		if out[i].Cause != nil {
			out[i].Evidence = append(out[i].Evidence, perNodeLines(out[i].Nodes, out[i].Cause, outcomes, byName)...)
		}
	}
	return out
}

// effectFacts are the facts that can never be offered as a cause: those a
// symptom check reads and every other fact of the probes that emit them
// (kube-proxy's pod state is an effect of its health, not its cause).
func effectFacts(checks []check.Check, meta factMeta) map[string]bool {
	probes := map[string]bool{}
	out := map[string]bool{}
	for _, c := range checks {
		if !c.Symptom {
			continue
		}
		for _, f := range c.JudgedFacts() {
			out[f] = true
			if p := meta.probeOf[f]; p != "" {
				probes[p] = true
			}
		}
	}
	for f, p := range meta.probeOf {
		if probes[p] {
			out[f] = true
		}
	}
	return out
}

// rankedLines lists further candidates with their evidence counts.
func rankedLines(label string, cands []candidate, sick, healthy int) []string {
	var parts []string
	for i, c := range cands {
		if i == maxRanked-1 {
			break
		}
		parts = append(parts, fmt.Sprintf("%s=%s (%d of %d failing, %d of %d healthy)", c.Fact, c.Value, c.Matched, sick, c.Extra, healthy))
	}
	if len(parts) == 0 {
		return nil
	}
	return []string{label + ": " + strings.Join(parts, "; ")}
}

// perNodeLines joins, per failing node, every symptom it shows (with the
// facts its check reads only as evidence) and the cause's value there: "etcd-1: kube-proxy.pod.reason=CrashLoopBackOff ·
// kubeproxy.healthz.code=503 · ufw.active=active".
func perNodeLines(names []string, cause *result.Cause, outcomes []symptomOutcome, byName map[string]result.Node) []string {
	// Each symptom's failing nodes as a set: looking a name up in the list
	// made this failing × failing.
	sick := make([]map[string]bool, len(outcomes))
	for i, o := range outcomes {
		sick[i] = make(map[string]bool, len(o.sick))
		for _, n := range o.sick {
			sick[i][n] = true
		}
	}
	var out []string
	for _, name := range names {
		n := byName[name]
		var parts []string
		for i, o := range outcomes {
			if sick[i][name] {
				f := o.check.When[0].Fact
				if o.check.Uniform != "" {
					f = o.check.Uniform
				}
				parts = append(parts, f+"="+n.Facts[f])
				for _, e := range o.check.EvidenceFacts() {
					if v, ok := n.Facts[e]; ok {
						parts = append(parts, e+"="+v)
					}
				}
			}
		}
		parts = append(parts, cause.Fact+"="+n.Facts[cause.Fact])
		out = append(out, name+": "+strings.Join(parts, " · "))
	}
	return out
}

type candidate struct {
	result.Cause
	flagged bool
}

func rankCauses(sick, healthy []string, byName map[string]result.Node, meta factMeta, excluded, failingFacts map[string]bool) []candidate {
	isSick := map[string]bool{}
	for _, n := range sick {
		isSick[n] = true
	}
	judged := append(append([]string{}, sick...), healthy...)
	keys := map[string]bool{}
	for _, n := range judged {
		for k := range byName[n].Facts {
			if !meta.volatile[k] && !excluded[k] {
				keys[k] = true
			}
		}
	}
	var cands []candidate
	type tally struct{ matched, extra int }
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		// Counted in one pass over the nodes: one pass per value made a
		// fact with a value per node quadratic in the fleet.
		values := map[string]*tally{}
		var absent tally
		for _, n := range judged {
			v, ok := byName[n].Facts[k]
			t := values[v]
			if !ok {
				t = &absent
			}
			if t == nil {
				t = &tally{}
				values[v] = t
			}
			if isSick[n] {
				t.matched++
			} else {
				t.extra++
			}
		}
		// A node without the fact reads as its empty value, as it always
		// has: it counts with those that report "".
		if t := values[""]; t != nil {
			t.matched += absent.matched
			t.extra += absent.extra
		}
		for _, v := range slices.Sorted(maps.Keys(values)) {
			matched, extra := values[v].matched, values[v].extra
			if matched == 0 {
				continue
			}
			missed := len(sick) - matched
			cands = append(cands, candidate{
				Cause: result.Cause{Fact: k, Value: v, Matched: matched, Extra: extra, Missed: missed, Healthy: len(healthy),
					Score: float64(matched) / float64(len(sick)+extra), Exact: extra == 0 && missed == 0},
				flagged: failingFacts[k+"="+v],
			})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		if a.flagged != b.flagged {
			return a.flagged
		}
		return a.Fact < b.Fact
	})
	return cands
}

func describeSymptom(c check.Check, sick []string, byName map[string]result.Node) string {
	fact := c.When[0].Fact
	var vals []string
	for _, g := range groupBy(nodesNamed(sick, byName), fact) {
		vals = append(vals, g.Value)
	}
	return fmt.Sprintf("%s %s on %d %s (%s)", fact, strings.Join(vals, "/"), len(sick), result.Plural(len(sick), "node"), strings.Join(sick, ", "))
}

func sameCount(matched, sick int) string {
	if matched == sick {
		return fmt.Sprintf("the same %d", sick)
	}
	return fmt.Sprintf("%d of those %d", matched, sick)
}

func healthyCount(extra, healthy int) string {
	if extra == 0 {
		return fmt.Sprintf("none of the %d healthy ones", healthy)
	}
	return fmt.Sprintf("%d of the %d healthy ones", extra, healthy)
}

func alsoLines(also []string) []string {
	if len(also) == 0 {
		return nil
	}
	return []string{"the same split: " + strings.Join(also, ", ")}
}

func nodesNamed(names []string, byName map[string]result.Node) []result.Node {
	out := make([]result.Node, 0, len(names))
	for _, n := range names {
		out = append(out, byName[n])
	}
	return out
}
