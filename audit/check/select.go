package check

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/fleet-audit/fleet-audit/internal/textdist"
)

// Selection is the operator's --only and --skip: path.Match globs on
// finding ids ("firewall.*"), of checks and of the findings built in Go.
// The zero Selection selects everything.
type Selection struct {
	Only, Skip []string
}

// Selects reports whether a finding id is selected: matched by an --only
// pattern (or no --only given) and by no --skip pattern. Skip patterns
// apply whatever --only kept, so one skip list can serve several pipelines.
func (s Selection) Selects(id string) bool {
	if len(s.Only) > 0 && !matchesAnyPattern(s.Only, id) {
		return false
	}
	return !matchesAnyPattern(s.Skip, id)
}

// SelectChecks validates the selection, then keeps the selected checks in
// file order. otherIDs are the other ids the patterns may name (the
// findings built in Go). A pattern that matches no id at all is an error
// naming it: a misspelt --skip would otherwise leave the check it meant to
// silence running, and a misspelt --only would run nothing and pass the
// gate.
func SelectChecks(checks []Check, sel Selection, otherIDs []string) ([]Check, error) {
	known := append(IDs(checks), otherIDs...)
	var errs []error
	for _, set := range []struct {
		flag     string
		patterns []string
	}{{"--only", sel.Only}, {"--skip", sel.Skip}} {
		for _, p := range set.patterns {
			if _, err := path.Match(p, ""); err != nil {
				errs = append(errs, fmt.Errorf("%s %q: bad glob: %w", set.flag, p, err))
				continue
			}
			if !MatchesAny(p, known) {
				errs = append(errs, fmt.Errorf("%s %q: matches no check and no finding built in%s (see fleet-audit probes)", set.flag, p, didYouMean(p, known)))
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	out := []Check{}
	for _, c := range checks {
		if sel.Selects(c.ID) {
			out = append(out, c)
		}
	}
	return out, nil
}

// IDs lists the checks' ids in order.
func IDs(checks []Check) []string {
	ids := make([]string, 0, len(checks))
	for _, c := range checks {
		ids = append(ids, c.ID)
	}
	return ids
}

func matchesAnyPattern(patterns []string, id string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, id); ok {
			return true
		}
	}
	return false
}

// MatchesAny reports whether the glob matches any of ids: how --only,
// --skip and a waiver's check name a set of findings.
func MatchesAny(pattern string, ids []string) bool {
	for _, id := range ids {
		if ok, _ := path.Match(pattern, id); ok {
			return true
		}
	}
	return false
}

// didYouMean is " (did you mean a, b?)" naming the ids a typo'd pattern
// most likely meant, or "" when none is near. A family glob ("firewal.*")
// is compared with the families, as a typo of its first word.
func didYouMean(pattern string, ids []string) string {
	var near []string
	if family, ok := strings.CutSuffix(pattern, ".*"); ok {
		var families []string
		for _, id := range ids {
			if f, _, ok := strings.Cut(id, "."); ok {
				families = append(families, f)
			}
		}
		for _, f := range textdist.Closest(family, families, 3) {
			near = append(near, f+".*")
		}
	} else {
		near = textdist.Closest(pattern, ids, 3)
	}
	if len(near) == 0 {
		return ""
	}
	return " (did you mean " + strings.Join(near, ", ") + "?)"
}
