package audit

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

//go:embed checks.yaml
var checksYAML []byte

// Check is one expectation, declared in checks.yaml. A check fails on a node
// when every condition in When holds there.
type Check struct {
	ID          string      `yaml:"id"`
	Title       string      `yaml:"title"`
	Severity    Severity    `yaml:"severity"`
	When        []Condition `yaml:"when"`
	Summary     string      `yaml:"summary"`
	Remediation string      `yaml:"remediation"`
	// Symptom marks a check whose failure is an effect to be explained: the
	// comparator looks for facts that split the fleet the same way.
	Symptom bool `yaml:"symptom"`
}

// Condition compares one fact with a value. The operators are a closed set:
//
//	eq, ne          string equality
//	in, not_in      Value is a comma-separated list of strings
//	ge, gt, le, lt  numeric comparison; a non-numeric fact makes the check skip
//	pct_of_ge       Fact * 100 / Ref >= Value, all numeric (e.g. conntrack use)
type Condition struct {
	Fact  string `yaml:"fact"`
	Op    string `yaml:"op"`
	Value string `yaml:"value"`
	Ref   string `yaml:"ref"`
}

var knownOps = map[string]bool{"eq": true, "ne": true, "in": true, "not_in": true, "ge": true, "gt": true, "le": true, "lt": true, "pct_of_ge": true}

// BuiltinChecks returns the checks shipped in the binary.
func BuiltinChecks() ([]Check, error) { return ParseChecks("checks.yaml", checksYAML) }

// ParseChecks decodes and validates a checks file, rejecting unknown fields.
func ParseChecks(name string, data []byte) ([]Check, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var checks []Check
	if err := dec.Decode(&checks); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var errs []error
	seen := map[string]bool{}
	for i, c := range checks {
		where := fmt.Sprintf("%s: check %d (%s)", name, i+1, c.ID)
		if c.ID == "" || c.Title == "" || c.Summary == "" || c.Remediation == "" {
			errs = append(errs, fmt.Errorf("%s: id, title, summary and remediation are required", where))
		}
		if seen[c.ID] {
			errs = append(errs, fmt.Errorf("%s: duplicate id", where))
		}
		seen[c.ID] = true
		if c.Severity == SeverityUnknown {
			errs = append(errs, fmt.Errorf("%s: severity is required", where))
		}
		if len(c.When) == 0 {
			errs = append(errs, fmt.Errorf("%s: when needs at least one condition", where))
		}
		for _, cond := range c.When {
			if !knownOps[cond.Op] {
				errs = append(errs, fmt.Errorf("%s: unknown op %q", where, cond.Op))
			}
			if cond.Fact == "" {
				errs = append(errs, fmt.Errorf("%s: condition without fact", where))
			}
			if (cond.Op == "pct_of_ge") != (cond.Ref != "") {
				errs = append(errs, fmt.Errorf("%s: ref is required by pct_of_ge and only by it", where))
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return checks, nil
}

// Facts lists every fact the check reads.
func (c Check) Facts() []string {
	var out []string
	for _, cond := range c.When {
		out = append(out, cond.Fact)
		if cond.Ref != "" {
			out = append(out, cond.Ref)
		}
	}
	return out
}

// Evaluate judges the check against one node's facts. It returns the
// outcome and a detail line saying what was seen.
func (c Check) Evaluate(facts map[string]string) (outcome, detail string) {
	var seen []string
	for _, cond := range c.When {
		v, ok := facts[cond.Fact]
		if !ok {
			return OutcomeSkip, cond.Fact + " not collected"
		}
		holds, known := cond.holds(v, facts)
		if !known {
			return OutcomeSkip, fmt.Sprintf("%s=%s is not comparable with %s %s", cond.Fact, v, cond.Op, cond.Value)
		}
		seen = append(seen, cond.Fact+"="+v)
		if !holds {
			return OutcomePass, strings.Join(seen, ", ")
		}
	}
	return OutcomeFail, strings.Join(seen, ", ")
}

func (cond Condition) holds(v string, facts map[string]string) (holds, known bool) {
	switch cond.Op {
	case "eq":
		return v == cond.Value, true
	case "ne":
		return v != cond.Value, true
	case "in", "not_in":
		in := false
		for _, want := range strings.Split(cond.Value, ",") {
			if strings.TrimSpace(want) == v {
				in = true
			}
		}
		return in == (cond.Op == "in"), true
	case "ge", "gt", "le", "lt":
		a, err1 := strconv.ParseFloat(v, 64)
		b, err2 := strconv.ParseFloat(cond.Value, 64)
		if err1 != nil || err2 != nil {
			return false, false
		}
		switch cond.Op {
		case "ge":
			return a >= b, true
		case "gt":
			return a > b, true
		case "le":
			return a <= b, true
		default:
			return a < b, true
		}
	case "pct_of_ge":
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
