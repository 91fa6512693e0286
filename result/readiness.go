package result

import (
	"fmt"
	"strings"
)

// Area is one part of the change board's question "is it safe to start
// this upgrade now?": the network half fleet-audit was built for and the
// other half every upgrade runbook checks by hand first. Each check and
// each finding built in Go belongs to one.
type Area string

const (
	AreaNetwork      Area = "network"
	AreaControlPlane Area = "control-plane"
	AreaEtcd         Area = "etcd"
	AreaCertificates Area = "certificates"
	AreaRemovedAPIs  Area = "removed-apis"
	AreaDrain        Area = "drain"
	AreaNodes        Area = "nodes"
	AreaVersions     Area = "versions"
	// AreaOther holds a user's checks that name no area and the waivers'
	// own bookkeeping: listed only when something in it was judged.
	AreaOther Area = "other"
)

// Areas is the order every format lists the readiness in: what the seed
// incident was, then what an upgrade runbook walks through.
var Areas = []Area{AreaNetwork, AreaControlPlane, AreaEtcd, AreaCertificates, AreaRemovedAPIs, AreaDrain, AreaNodes, AreaVersions, AreaOther}

var areaTitles = map[Area]string{
	AreaNetwork:      "network and kube-proxy",
	AreaControlPlane: "control plane",
	AreaEtcd:         "etcd",
	AreaCertificates: "certificates",
	AreaRemovedAPIs:  "removed APIs",
	AreaDrain:        "drain",
	AreaNodes:        "node health",
	AreaVersions:     "versions",
	AreaOther:        "other checks",
}

// Title is the area in words, for the human formats.
func (a Area) Title() string {
	if t, ok := areaTitles[a]; ok {
		return t
	}
	return string(a)
}

// ParseArea accepts an area's name; "" is AreaOther (a user's check that
// names none).
func ParseArea(s string) (Area, error) {
	if s == "" {
		return AreaOther, nil
	}
	for _, a := range Areas {
		if string(a) == s {
			return a, nil
		}
	}
	return "", fmt.Errorf("unknown area %q (want one of %s)", s, strings.Join(areaNames(), ", "))
}

func areaNames() []string {
	out := make([]string, len(Areas))
	for i, a := range Areas {
		out[i] = string(a)
	}
	return out
}

// Verdict is an area's answer, in the order of how much it asks of the
// board: the first that holds wins.
type Verdict string

const (
	// VerdictBlocked: a finding the gate fails on.
	VerdictBlocked Verdict = "blocked"
	// VerdictWarnings: unwaived findings below the gate (info aside).
	VerdictWarnings Verdict = "warnings"
	// VerdictNotJudged: no finding, but some of the area's checks could
	// not be judged on audited nodes (a fact read "unknown"), or every
	// check that ran was skipped (--target-version not given, the cluster
	// view failed): a skip is not a pass.
	VerdictNotJudged Verdict = "not_judged"
	// VerdictNotChecked: none of the area's checks ran on any node
	// (none selected, none applies, or no node audited).
	VerdictNotChecked Verdict = "not_checked"
	// VerdictReady: every check of the area that applies passed.
	VerdictReady Verdict = "ready"
)

// Verdicts are every verdict, in the order above.
var Verdicts = []Verdict{VerdictBlocked, VerdictWarnings, VerdictNotJudged, VerdictNotChecked, VerdictReady}

// Mark is the verdict's sign in the human formats, the Tone marks'
// family.
func (v Verdict) Mark() string {
	switch v {
	case VerdictBlocked:
		return "✘"
	case VerdictWarnings:
		return "⚠"
	case VerdictReady:
		return "✔"
	}
	return "?"
}

// Words is the verdict as a report's reader says it.
func (v Verdict) Words() string {
	switch v {
	case VerdictNotJudged:
		return "NOT fully judged"
	case VerdictNotChecked:
		return "not checked"
	case VerdictBlocked:
		return "BLOCKED"
	}
	return string(v)
}

// AreaReadiness is one area's answer and what it rests on. The counts are
// check results (a check on a node, or on the cluster) on audited nodes;
// Passed counts an info-severity failure too, a note and not a fault, as
// the node states count it.
type AreaReadiness struct {
	Area    Area    `json:"area"`
	Verdict Verdict `json:"verdict"`
	Passed  int     `json:"passed"`
	Failed  int     `json:"failed"`
	// Unjudged counts results that could not be judged (a fact read
	// "unknown"), Skipped those skipped for a fact not reported.
	Unjudged      int `json:"unjudged"`
	Skipped       int `json:"skipped"`
	NotApplicable int `json:"not_applicable"`
	// Findings are the ids of the area's unwaived findings above info,
	// gate failures first.
	Findings []string `json:"findings"`
	// NotJudged are the checks that made the verdict not_judged, each
	// "id on node: why" for the first node it was not judged on.
	NotJudged []string `json:"not_judged"`
	// NotAudited are the nodes not audited that the area's checks would
	// have judged: the area is not judged for them.
	NotAudited []string `json:"not_audited"`
}

// Summary is the line after the area's title, unescaped: what decided
// its verdict.
func (a AreaReadiness) Summary() string {
	switch a.Verdict {
	case VerdictBlocked, VerdictWarnings:
		s := strings.Join(a.Findings, ", ")
		if n := a.Unjudged + a.Skipped; n > 0 {
			s += fmt.Sprintf("; %d not judged", n)
		}
		return s
	case VerdictNotJudged:
		why := a.NotJudged
		if len(a.NotAudited) > 0 {
			why = append([]string{"not audited: " + strings.Join(a.NotAudited, ", ")}, why...)
		}
		return fmt.Sprintf("%d passed, %d not judged: %s", a.Passed, a.Unjudged+a.Skipped, strings.Join(why, "; "))
	case VerdictNotChecked:
		if a.NotApplicable > 0 {
			return fmt.Sprintf("no check applies here (%d not applicable)", a.NotApplicable)
		}
		return "no check of this area ran"
	}
	if a.Skipped > 0 {
		return fmt.Sprintf("%d passed, %d skipped (a fact they read was not reported)", a.Passed, a.Skipped)
	}
	return fmt.Sprintf("%d passed", a.Passed)
}
