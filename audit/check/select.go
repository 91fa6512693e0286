package check

import (
	"errors"
	"fmt"
	"path"
)

// SelectChecks narrows checks to those matching an --only pattern (all when
// only is empty), then drops those matching a --skip pattern. Patterns are
// path.Match globs on check ids ("firewall.*"). A pattern that matches no
// check at all is an error naming it: a misspelt --skip would otherwise
// leave the check it meant to silence running, and a misspelt --only would
// run nothing and pass the gate. Skip patterns are matched against every
// check, not only the ones --only kept, so one skip list can serve several
// pipelines. File order is kept.
func SelectChecks(checks []Check, only, skip []string) ([]Check, error) {
	var errs []error
	for _, set := range []struct {
		flag     string
		patterns []string
	}{{"--only", only}, {"--skip", skip}} {
		for _, p := range set.patterns {
			if _, err := path.Match(p, ""); err != nil {
				errs = append(errs, fmt.Errorf("%s %q: bad glob: %w", set.flag, p, err))
				continue
			}
			if !MatchesAny(p, IDs(checks)) {
				errs = append(errs, fmt.Errorf("%s %q: matches no check (see fleet-audit probes)", set.flag, p))
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	out := []Check{}
	for _, c := range checks {
		if len(only) > 0 && !matchesAnyPattern(only, c.ID) {
			continue
		}
		if matchesAnyPattern(skip, c.ID) {
			continue
		}
		out = append(out, c)
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
