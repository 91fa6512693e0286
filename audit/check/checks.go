package check

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/internal/yamlx"
	"github.com/fleet-audit/fleet-audit/result"
	"gopkg.in/yaml.v3"
)

//go:embed checks/*.yaml
var checksFS embed.FS

// Check is one expectation, declared in a checks/*.yaml file. A check fails
// on a node when every condition in When holds there.
type Check struct {
	ID    string `yaml:"id"`
	Title string `yaml:"title"`
	// Why says why the failure matters for an upgrade, and References
	// where its claims are written upstream (Kubernetes and RKE2 sources
	// and docs, man pages): `fleet-audit explain` prints both for a change
	// board. Optional in a user's checks; every built-in check has them.
	Why        string          `yaml:"why"`
	References []string        `yaml:"references"`
	Severity   result.Severity `yaml:"severity"`
	// Area is the part of the board's question the check answers
	// (result.Areas); a user's check without one is in result.AreaOther.
	// Every built-in check names one.
	Area result.Area `yaml:"area"`
	When []Condition `yaml:"when"`
	// Uniform names a fact that must have one value across the nodes the
	// check applies to (those where When holds, or all audited nodes when
	// When is empty). It fails on the nodes outside the majority value, or
	// on all of them when no value has a strict majority.
	Uniform     string `yaml:"uniform"`
	Scope       string `yaml:"scope"`
	Summary     string `yaml:"summary"`
	Remediation string `yaml:"remediation"`
	// Symptom marks a check whose failure is an effect to be explained: the
	// comparator looks for facts that split the fleet the same way, and its
	// facts are never offered as the cause of another symptom.
	Symptom bool `yaml:"symptom"`
	// Plan is how to apply the fix on one node and know it worked, for
	// the runbook. Every built-in check whose finding gets a rollout (not
	// a symptom, warning or worse, on nodes) has one; optional in a
	// user's checks.
	Plan *Plan `yaml:"plan"`
	// Source is "file:line" of the check's definition, for error messages
	// and `fleet-audit probes`.
	Source string `yaml:"-"`
}

// Condition compares one fact with a value or with another fact (Ref). The
// operators are a closed set:
//
//	eq, ne                 string equality with Value (or the Ref fact's value)
//	in, not_in             Value is a comma-separated list of strings
//	ge, gt, le, lt         numeric comparison with Value or Ref; a
//	                       non-numeric side makes the check skip
//	version_lt, version_le, version_ge, version_gt
//	                       dotted-version comparison ("v1.31.4+rke2r1",
//	                       "6.1.0-28-amd64", "1.8.10"), with Value or Ref
//	pct_of_ge              Fact * 100 / Ref >= Value, all numeric (e.g. conntrack use)
//	pct_of_median_lt       Fact * 100 / (median of Fact over the audited
//	                       nodes where it is numeric) < Value: a node far
//	                       below its peers (e.g. kube-proxy rule counts);
//	                       judged only when at least 3 peers report Fact
//
// Peers, allowed only with pct_of_median_lt, names a fact that decides who a
// node's peers are: the median is then taken over the nodes with the same
// value of that fact as the node judged, and the 3-node minimum holds per
// value. It is for counts that differ by design between kinds of node, such
// as KUBE- rules between kube-proxy modes ("peers: kubeproxy.mode": an IPVS
// node keeps a constant handful of iptables rules, an iptables node some
// per Service). A node without the peers fact has no peers and skips.
//
// Unknown lists values of Fact by which its probe says it looked and could
// not tell (kube-proxy's health read "unknown" from an answer that is
// neither kube-proxy's 200 nor its 503: a proxy's 403, a 500): on such a
// value the check is "could not judge" on that node, as on an unreadable
// value (probe.Unjudgeable), never a pass. Evidence names the fact that
// says why (the HTTP code), which the detail quotes. Unknown is declared
// per condition, not for every fact: many facts read "unknown" on healthy
// nodes where nothing depends on them.
type Condition struct {
	Fact     string `yaml:"fact"`
	Op       string `yaml:"op"`
	Value    string `yaml:"value"`
	Ref      string `yaml:"ref"`
	Peers    string `yaml:"peers"`
	Unknown  string `yaml:"unknown"`
	Evidence string `yaml:"evidence"`
}

type opKind int

const (
	opString opKind = iota
	opList
	opNumber
	opVersion
	opPercent
	opMedian
)

var knownOps = map[string]opKind{
	"eq": opString, "ne": opString, "in": opList, "not_in": opList,
	"ge": opNumber, "gt": opNumber, "le": opNumber, "lt": opNumber,
	"version_lt": opVersion, "version_le": opVersion, "version_ge": opVersion, "version_gt": opVersion,
	"pct_of_ge": opPercent, "pct_of_median_lt": opMedian,
}

// medianKey is where Judge puts the median a pct_of_median_lt condition
// compares a node with into the node's fact view; no probe can emit a key
// with a space. Conditions on one fact with other peers get other keys.
func medianKey(cond Condition) string {
	if cond.Peers != "" {
		return "median " + cond.Fact + " among " + cond.Peers
	}
	return "median " + cond.Fact
}

// BuiltinChecks returns the checks shipped in the binary, in file order.
// They are parsed once per process: a command wants them several times (the
// run, the explanations, the plan), and parsing them is most of a short
// command's CPU (about 13 ms, 160 ms in a -race test binary, where every
// command a test runs paid it three times). The slice is the caller's; the
// checks it holds are shared and must not be changed.
func BuiltinChecks() ([]Check, error) {
	all, err := builtinChecks()
	if err != nil {
		return nil, err
	}
	return slices.Clone(all), nil
}

var builtinChecks = sync.OnceValues(parseBuiltinChecks)

func parseBuiltinChecks() ([]Check, error) {
	names, err := fs.Glob(checksFS, "checks/*.yaml")
	if err != nil {
		return nil, fmt.Errorf("list embedded checks: %w", err)
	}
	var all []Check
	for _, n := range names {
		b, err := checksFS.ReadFile(n)
		if err != nil {
			return nil, fmt.Errorf("read embedded checks %s: %w", n, err)
		}
		cs, err := ParseChecks(n, b)
		if err != nil {
			return nil, err
		}
		all = append(all, cs...)
	}
	if err := CheckIDsUnique(all); err != nil {
		return nil, err
	}
	return all, nil
}

// CheckIDsUnique reports checks that share an id, naming both definitions.
func CheckIDsUnique(checks []Check) error {
	seen := map[string]string{}
	var errs []error
	for _, c := range checks {
		if other, dup := seen[c.ID]; dup {
			errs = append(errs, fmt.Errorf("%s: id: %q is already defined at %s", c.Source, c.ID, other))
			continue
		}
		seen[c.ID] = c.Source
	}
	return errors.Join(errs...)
}

// ParseChecks decodes and validates a checks file, rejecting unknown fields.
// Every error names the file, the line and the field.
func ParseChecks(name string, data []byte) ([]Check, error) {
	list, err := yamlx.List(name, data, "checks")
	if list == nil || err != nil {
		return nil, err
	}
	var checks []Check
	var errs []error
	for _, item := range list.Content {
		c, err := parseCheck(name, item)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		checks = append(checks, c)
	}
	if err := CheckIDsUnique(checks); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return checks, nil
}

func parseCheck(file string, item *yaml.Node) (Check, error) {
	var c Check
	var buf bytes.Buffer
	// Re-encode the one item so KnownFields can reject a misspelt field;
	// yaml.Node.Decode has no strict mode.
	if err := yaml.NewEncoder(&buf).Encode(item); err != nil {
		return Check{}, fmt.Errorf("%s:%d: %w", file, item.Line, err)
	}
	dec := yaml.NewDecoder(&buf)
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		line := item.Line + yamlx.ErrLine(err) - 1
		var se *result.SeverityError
		if errors.As(err, &se) {
			// TextUnmarshaler errors carry no position: point at the field.
			line = yamlx.FieldLine(item, "severity")
			return Check{}, fmt.Errorf("%s:%d: severity: %w", file, line, err)
		}
		return Check{}, fmt.Errorf("%s:%d: %s", file, line, yamlx.ErrText(err))
	}
	c.Source = fmt.Sprintf("%s:%d", file, item.Line)
	line := func(field string) int { return yamlx.FieldLine(item, field) }
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: check %q: %s: %s", file, line(field), c.ID, field, fmt.Sprintf(format, args...)))
	}
	if c.ID == "" {
		bad("id", "is required")
	} else if !probe.FactKeyPattern.MatchString(c.ID) {
		bad("id", "want lowercase letters, digits, '.', '_' or '-', got %q", c.ID)
	}
	for field, v := range map[string]string{"title": c.Title, "summary": c.Summary, "remediation": c.Remediation} {
		if strings.TrimSpace(v) == "" {
			bad(field, "is required")
		}
	}
	if c.Severity == result.SeverityUnknown {
		bad("severity", "is required (one of %s)", strings.Join(result.SeverityNames(), ", "))
	}
	if a, err := result.ParseArea(string(c.Area)); err != nil {
		bad("area", "%v", err)
	} else {
		c.Area = a
	}
	switch c.Scope {
	case "":
		c.Scope = probe.ScopeNode
	case probe.ScopeNode, probe.ScopeCluster:
	default:
		bad("scope", "want node or cluster, got %q", c.Scope)
	}
	if len(c.When) == 0 && c.Uniform == "" {
		bad("when", "needs at least one condition (or give uniform)")
	}
	if c.Uniform != "" && c.Scope == probe.ScopeCluster {
		bad("uniform", "compares nodes, so it needs scope node")
	}
	for i, cond := range c.When {
		where := fmt.Sprintf("condition %d", i+1)
		kind, ok := knownOps[cond.Op]
		switch {
		case !ok:
			bad("when", "%s: unknown op %q", where, cond.Op)
		case cond.Fact == "":
			bad("when", "%s: fact is required", where)
		case kind == opPercent && (cond.Ref == "" || cond.Value == ""):
			bad("when", "%s: pct_of_ge needs both ref and value", where)
		case kind == opMedian && (cond.Ref != "" || !comparable(opNumber, cond.Value)):
			bad("when", "%s: pct_of_median_lt needs a numeric value and no ref", where)
		case cond.Peers != "" && kind != opMedian:
			bad("when", "%s: peers applies only to pct_of_median_lt, not %s", where, cond.Op)
		case cond.Peers != "" && !probe.FactKeyPattern.MatchString(cond.Peers):
			bad("when", "%s: peers: want a fact key, got %q", where, cond.Peers)
		case kind == opList && cond.Ref != "":
			bad("when", "%s: %s takes a value list, not ref", where, cond.Op)
		case kind != opPercent && cond.Ref != "" && cond.Value != "":
			bad("when", "%s: give value or ref, not both", where)
		case (kind == opNumber || kind == opVersion) && cond.Ref == "" && !comparable(kind, cond.Value):
			bad("when", "%s: %s needs a %s value, got %q", where, cond.Op, map[opKind]string{opNumber: "numeric", opVersion: "version"}[kind], cond.Value)
		case cond.Evidence != "" && cond.Unknown == "":
			bad("when", "%s: evidence says why a value is unknown, so it needs unknown", where)
		case cond.Evidence != "" && !probe.FactKeyPattern.MatchString(cond.Evidence):
			bad("when", "%s: evidence: want a fact key, got %q", where, cond.Evidence)
		}
		for _, u := range cond.unknowns() {
			if cond.names(u) {
				bad("when", "%s: unknown value %q is also the value the condition compares with", where, u)
			}
		}
	}
	if c.Plan != nil {
		validatePlan(c.Plan, fieldNode(item, "plan"), line("plan"), func(at int, format string, args ...any) {
			errs = append(errs, fmt.Errorf("%s:%d: check %q: %s", file, at, c.ID, fmt.Sprintf(format, args...)))
		})
	}
	if len(errs) > 0 {
		return Check{}, errors.Join(errs...)
	}
	return c, nil
}

func comparable(kind opKind, v string) bool {
	if kind == opNumber {
		_, err := strconv.ParseFloat(v, 64)
		return err == nil
	}
	_, ok := ParseVersion(v)
	return ok
}

// Facts lists every fact the check reads, including those that only choose
// a median's peers.
func (c Check) Facts() []string {
	out := c.JudgedFacts()
	for _, cond := range c.When {
		if cond.Peers != "" {
			out = append(out, cond.Peers)
		}
		if cond.Evidence != "" {
			out = append(out, cond.Evidence)
		}
	}
	return out
}

// EvidenceFacts lists the facts of the conditions that hold whatever the
// value ("ne" with an empty value: no fact is ever empty), which a check
// has only to put those facts into its finding's evidence, such as the
// liveness events behind a crash-looping kube-proxy.
func (c Check) EvidenceFacts() []string {
	var out []string
	for _, cond := range c.When {
		if cond.Op == "ne" && cond.Value == "" && cond.Ref == "" {
			out = append(out, cond.Fact)
		}
	}
	return out
}

// JudgedFacts lists the facts whose values the check passes or fails on. A
// peers fact is not among them: it only picks whom a node is compared
// with, so a failure never flags its value.
func (c Check) JudgedFacts() []string {
	var out []string
	if c.Uniform != "" {
		out = append(out, c.Uniform)
	}
	for _, cond := range c.When {
		out = append(out, cond.Fact)
		if cond.Ref != "" {
			out = append(out, cond.Ref)
		}
	}
	return out
}

// Evaluate judges the When conditions against one node's facts. It returns
// the outcome and a detail line saying what was seen. A uniform check's
// conditions only select the nodes it compares; JudgeUniform finishes it.
// A condition on a value that could not be read (probe.Unjudgeable) that
// it does not name decides nothing: the check passes if another condition
// clears the node, and is otherwise unjudged there, never passed blind.
func (c Check) Evaluate(facts map[string]string) (outcome result.Outcome, detail string) {
	var seen, unjudged []string
	for _, cond := range c.When {
		v, ok := facts[cond.Fact]
		if !ok {
			return result.OutcomeSkip, cond.Fact + " not collected"
		}
		if cond.Ref != "" {
			if _, ok := facts[cond.Ref]; !ok {
				return result.OutcomeSkip, cond.Ref + " not collected"
			}
		}
		if knownOps[cond.Op] == opMedian {
			if skip, why := cond.medianMissing(facts); skip {
				return result.OutcomeSkip, why
			}
		}
		if why, bad := UnjudgeableValue(cond, v, facts); bad {
			unjudged = append(unjudged, why)
			continue
		}
		if slices.Contains(cond.unknowns(), v) {
			why := fmt.Sprintf("%s=%s: %s", cond.Fact, v, UnknownWhy)
			if cond.Evidence != "" {
				why += " (" + cond.Evidence + "=" + facts[cond.Evidence] + ")"
			}
			unjudged = append(unjudged, why)
			continue
		}
		holds, known := cond.holds(v, facts)
		if !known {
			return result.OutcomeSkip, fmt.Sprintf("%s=%s is not comparable with %s %s", cond.Fact, v, cond.Op, cond.operand(facts))
		}
		seen = append(seen, cond.Fact+"="+v)
		if knownOps[cond.Op] == opMedian {
			seen[len(seen)-1] += fmt.Sprintf(" (median %s of the %s)", facts[medianKey(cond)], cond.peerGroup(facts))
		}
		if cond.Ref != "" {
			seen = append(seen, cond.Ref+"="+facts[cond.Ref])
		}
		if !holds {
			return result.OutcomePass, strings.Join(seen, ", ")
		}
	}
	if len(unjudged) > 0 {
		return result.OutcomeUnjudged, unjudgedDetail(unjudged)
	}
	return result.OutcomeFail, strings.Join(seen, ", ")
}

// unjudgedDetail joins "fact=value: why" lines, each why once:
// "a=not-root, b=not-root: why".
func unjudgedDetail(lines []string) string {
	var whys []string
	facts := map[string][]string{}
	for _, l := range lines {
		fv, why, _ := strings.Cut(l, ": ")
		if _, ok := facts[why]; !ok {
			whys = append(whys, why)
		}
		facts[why] = append(facts[why], fv)
	}
	out := make([]string, len(whys))
	for i, why := range whys {
		out[i] = strings.Join(facts[why], ", ") + ": " + why
	}
	return strings.Join(out, "; ")
}

// UnjudgeableValue says whether the condition reads, as its fact v or its
// Ref fact, a value that could not be read and that the condition does
// not name, and why ("fact=value: reason").
func UnjudgeableValue(cond Condition, v string, facts map[string]string) (string, bool) {
	if why, ok := probe.Unjudgeable[v]; ok && !cond.names(v) {
		return fmt.Sprintf("%s=%s: %s", cond.Fact, v, why), true
	}
	if cond.Ref != "" {
		rv := facts[cond.Ref]
		if why, ok := probe.Unjudgeable[rv]; ok {
			return fmt.Sprintf("%s=%s: %s", cond.Ref, rv, why), true
		}
	}
	return "", false
}

// medianMissing says why a pct_of_median_lt condition cannot be judged on
// a node with a numeric fact: no peers fact, or too few peers for a median.
func (cond Condition) medianMissing(facts map[string]string) (bool, string) {
	if cond.Peers != "" {
		if _, ok := facts[cond.Peers]; !ok {
			return true, cond.Peers + " not collected: no peers to compare " + cond.Fact + " with"
		}
	}
	if _, err := strconv.ParseFloat(facts[cond.Fact], 64); err != nil {
		return false, "" // not numeric: holds says so
	}
	if _, ok := facts[medianKey(cond)]; !ok {
		return true, fmt.Sprintf("fewer than 3 %s report %s", cond.peerGroup(facts), cond.Fact)
	}
	return false, ""
}

// peerGroup names the nodes a pct_of_median_lt condition compares a node
// with, for details.
func (cond Condition) peerGroup(facts map[string]string) string {
	if cond.Peers == "" {
		return "audited nodes"
	}
	return "nodes with " + cond.Peers + "=" + facts[cond.Peers]
}

// UnknownWhy is the reason an Unknown value gives in a check's detail.
const UnknownWhy = "its probe looked and could not tell"

// unknowns are the condition's Unknown values.
func (cond Condition) unknowns() []string {
	if cond.Unknown == "" {
		return nil
	}
	var out []string
	for _, u := range strings.Split(cond.Unknown, ",") {
		out = append(out, strings.TrimSpace(u))
	}
	return out
}

// names says whether the condition itself mentions value v: its Value, or
// one of its list's words.
func (cond Condition) names(v string) bool {
	if knownOps[cond.Op] == opList {
		for _, w := range strings.Split(cond.Value, ",") {
			if strings.TrimSpace(w) == v {
				return true
			}
		}
		return false
	}
	return cond.Ref == "" && cond.Value == v
}

// operand is what the fact is compared with: the Ref fact's value or Value.
func (cond Condition) operand(facts map[string]string) string {
	if cond.Ref != "" && knownOps[cond.Op] != opPercent {
		return facts[cond.Ref]
	}
	return cond.Value
}

func (cond Condition) holds(v string, facts map[string]string) (holds, known bool) {
	want := cond.operand(facts)
	switch knownOps[cond.Op] {
	case opString:
		return (v == want) == (cond.Op == "eq"), true
	case opList:
		in := false
		for _, w := range strings.Split(cond.Value, ",") {
			if strings.TrimSpace(w) == v {
				in = true
			}
		}
		return in == (cond.Op == "in"), true
	case opNumber:
		a, err1 := strconv.ParseFloat(v, 64)
		b, err2 := strconv.ParseFloat(want, 64)
		if err1 != nil || err2 != nil {
			return false, false
		}
		return compareOrdered(cond.Op, cmpFloat(a, b)), true
	case opVersion:
		a, ok1 := ParseVersion(v)
		b, ok2 := ParseVersion(want)
		if !ok1 || !ok2 {
			return false, false
		}
		return compareOrdered(strings.TrimPrefix(cond.Op, "version_"), CompareVersions(a, b)), true
	case opMedian:
		a, err1 := strconv.ParseFloat(v, 64)
		med, err2 := strconv.ParseFloat(facts[medianKey(cond)], 64)
		pct, err3 := strconv.ParseFloat(cond.Value, 64)
		if err1 != nil || err2 != nil || err3 != nil || med <= 0 {
			return false, false
		}
		return a*100/med < pct, true
	case opPercent:
		a, err1 := strconv.ParseFloat(v, 64)
		ref, err2 := strconv.ParseFloat(facts[cond.Ref], 64)
		pct, err3 := strconv.ParseFloat(cond.Value, 64)
		if err1 != nil || err2 != nil || err3 != nil || ref <= 0 {
			return false, false
		}
		return a*100/ref >= pct, true
	}
	return false, false
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func compareOrdered(op string, c int) bool {
	switch op {
	case "ge":
		return c >= 0
	case "gt":
		return c > 0
	case "le":
		return c <= 0
	default: // lt
		return c < 0
	}
}

// ParseVersion reads the leading dotted numbers of a version string: an
// optional "v", then digits and dots, stopping at the first other character
// ("v1.31.4+rke2r1" → [1 31 4], "6.1.0-28-amd64" → [6 1 0]).
func ParseVersion(s string) ([]int, bool) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "v")
	end := 0
	for end < len(s) && (s[end] == '.' || (s[end] >= '0' && s[end] <= '9')) {
		end++
	}
	parts := strings.Split(strings.TrimRight(s[:end], "."), ".")
	var out []int
	for _, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return nil, false
		}
		out = append(out, n)
	}
	return out, len(out) > 0
}

// CompareVersions compares component-wise; a missing component counts as 0.
func CompareVersions(a, b []int) int {
	for i := 0; i < len(a) || i < len(b); i++ {
		var x, y int
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return cmpFloat(float64(x), float64(y))
		}
	}
	return 0
}
