package inventory

import (
	"fmt"
	"net/netip"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/fleet-audit/fleet-audit/internal/textdist"
)

// Limit keeps the hosts a --limit pattern selects, in Ansible's pattern
// language (lib/ansible/inventory/manager.py): terms separated by commas (or
// colons, where they cannot be a port or a range), each a host name, a group
// or role name, a glob (*, ?, [abc], [!abc]) or a regular expression after ~,
// optionally with a subscript (group[0], group[1:3]); a term after & keeps
// only hosts it also matches, a term after ! removes the hosts it matches.
// As Ansible's order_patterns, plain terms apply first, then the & terms,
// then the ! terms, and without a plain term the start is every host. A
// term @FILE reads one term per line from FILE (a --retry-file), with
// readFile. Selecting no host at all is an error, as in Ansible.
func (inv *Inventory) Limit(pattern string, readFile func(string) ([]byte, error)) (*Inventory, error) {
	terms, err := limitTerms(pattern, readFile)
	if err != nil {
		return nil, err
	}
	var plain, and, not []string
	for _, t := range terms {
		switch t[0] {
		case '&':
			and = append(and, t[1:])
		case '!':
			not = append(not, t[1:])
		default:
			plain = append(plain, t)
		}
	}
	if len(plain) == 0 {
		plain = []string{"all"}
	}
	selected := map[string]bool{}
	// The terms that matched nothing are what a person most likely
	// mistyped, when the whole pattern then selects nothing.
	var empty []string
	for _, t := range plain {
		hosts, err := inv.matchTerm(t)
		if err != nil {
			return nil, err
		}
		if len(hosts) == 0 {
			empty = append(empty, t)
		}
		for _, h := range hosts {
			selected[h] = true
		}
	}
	for _, t := range and {
		hosts, err := inv.matchTerm(t)
		if err != nil {
			return nil, err
		}
		if len(hosts) == 0 {
			empty = append(empty, t)
		}
		also := make(map[string]bool, len(hosts))
		for _, h := range hosts {
			also[h] = true
		}
		for name := range selected {
			if !also[name] {
				delete(selected, name)
			}
		}
	}
	for _, t := range not {
		hosts, err := inv.matchTerm(t)
		if err != nil {
			return nil, err
		}
		for _, h := range hosts {
			delete(selected, h)
		}
	}
	out := *inv
	out.Hosts = nil
	out.Subset = &Subset{Pattern: pattern, Of: len(inv.Hosts)}
	for _, h := range inv.Hosts {
		if selected[h.Name] {
			out.Hosts = append(out.Hosts, h)
		}
	}
	if len(out.Hosts) == 0 {
		return nil, fmt.Errorf("--limit %q selects none of the %d inventory hosts%s", pattern, len(inv.Hosts), inv.limitSuggestions(empty))
	}
	return &out, nil
}

// limitSuggestions is "; X matches no host or group (did you mean Y?)" for
// each term a typo of a host, group or role name most likely meant. A glob,
// a regular expression or a subscript is taken as meant: no guess.
func (inv *Inventory) limitSuggestions(terms []string) string {
	var names []string
	for _, h := range inv.Hosts {
		names = append(names, h.Name)
		for _, g := range slices.Concat(h.Groups, h.Roles) {
			if g != "all" && g != "ungrouped" {
				names = append(names, g)
			}
		}
	}
	var out strings.Builder
	for _, t := range terms {
		if strings.ContainsAny(t, "~?*[") {
			continue
		}
		if near := textdist.Closest(t, names, 3); len(near) > 0 {
			fmt.Fprintf(&out, "; %q matches no host or group (did you mean %s?)", t, strings.Join(near, ", "))
		}
	}
	return out.String()
}

// limitTerms splits a pattern as split_host_pattern does, expanding @FILE.
func limitTerms(pattern string, readFile func(string) ([]byte, error)) ([]string, error) {
	var raw []string
	switch {
	case strings.Contains(pattern, ","):
		raw = strings.Split(pattern, ",")
	case isOneAddress(pattern):
		raw = []string{pattern}
	default:
		raw = colonTerms.FindAllString(pattern, -1)
	}
	var terms []string
	for _, t := range raw {
		t = strings.TrimSpace(t)
		switch {
		case t == "":
		case strings.HasPrefix(t, "@"):
			if readFile == nil {
				return nil, fmt.Errorf("--limit %s: no file can be read here", t)
			}
			b, err := readFile(t[1:])
			if err != nil {
				return nil, fmt.Errorf("--limit %s: %w", t, err)
			}
			for _, line := range strings.Split(string(b), "\n") {
				if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
					terms = append(terms, line)
				}
			}
		default:
			terms = append(terms, t)
		}
	}
	if len(terms) == 0 {
		return nil, fmt.Errorf("--limit %q has no pattern in it", pattern)
	}
	for _, t := range terms {
		if t == "&" || t == "!" {
			return nil, fmt.Errorf("--limit %q: %s must be followed by a pattern", pattern, t)
		}
	}
	return terms, nil
}

// colonTerms is split_host_pattern's fallback: colon-separated terms, a
// bracketed expression counting as part of its term.
var colonTerms = regexp.MustCompile(`(?:[^\s:\[\]]|\[[^\]]*\])+`)

// isOneAddress is where split_host_pattern keeps a colon-holding pattern
// whole because parse_address takes it: host:PORT, [IPv6]:PORT or a bare
// IPv6 address.
func isOneAddress(p string) bool {
	if !strings.Contains(p, ":") {
		return true
	}
	if a, err := netip.ParseAddr(strings.Trim(p, "[]")); err == nil && a.Is6() {
		return true
	}
	if i := strings.LastIndex(p, ":"); i > 0 && !strings.ContainsAny(p[:i], ":&!") {
		_, err := strconv.Atoi(p[i+1:])
		return err == nil
	}
	if strings.HasPrefix(p, "[") {
		if i := strings.LastIndex(p, "]:"); i > 0 {
			_, err := strconv.Atoi(p[i+2:])
			return err == nil
		}
	}
	return false
}

// subscriptRE is PATTERN_WITH_SUBSCRIPT: name[3], name[1:4] (inclusive).
var subscriptRE = regexp.MustCompile(`^(.+)\[(?:(-?[0-9]+)|([0-9]+)([:-])([0-9]+)?)\]$`)

// matchTerm returns the names of the hosts one term matches, in inventory
// order: hosts in a group or role whose name matches, and, when no group
// did or the term is a glob or regex, hosts whose name matches.
func (inv *Inventory) matchTerm(term string) ([]string, error) {
	expr := term
	var sub []int
	if term[0] != '~' {
		if m := subscriptRE.FindStringSubmatch(term); m != nil {
			expr = m[1]
			if m[2] != "" {
				i, _ := strconv.Atoi(m[2])
				sub = []int{i}
			} else {
				start, _ := strconv.Atoi(m[3])
				end := -1
				if m[5] != "" {
					end, _ = strconv.Atoi(m[5])
				}
				sub = []int{start, end}
			}
		}
	}
	match, err := termMatcher(expr)
	if err != nil {
		return nil, fmt.Errorf("--limit term %q: %w", term, err)
	}
	var out []string
	if expr == "all" || expr == "*" {
		for _, h := range inv.Hosts {
			out = append(out, h.Name)
		}
	} else {
		// Membership by set: a pattern over a fleet of thousands must
		// not rescan the list for every host.
		inGroup := map[string]bool{}
		for _, h := range inv.Hosts {
			for _, g := range slices.Concat(h.Groups, h.Roles) {
				if g != "all" && g != "ungrouped" && match(g) {
					inGroup[h.Name] = true
					out = append(out, h.Name)
					break
				}
			}
		}
		if len(inGroup) == 0 || expr[0] == '~' || strings.ContainsAny(expr, ".?*[") {
			for _, h := range inv.Hosts {
				if match(h.Name) && !inGroup[h.Name] {
					out = append(out, h.Name)
				}
			}
		}
	}
	if sub == nil || len(out) == 0 {
		return out, nil
	}
	start := sub[0]
	if start < 0 {
		start += len(out)
	}
	if len(sub) == 1 {
		if start < 0 || start >= len(out) {
			return nil, fmt.Errorf("--limit term %q: no host at index %d of %d", term, sub[0], len(out))
		}
		return out[start : start+1], nil
	}
	end := sub[1]
	if end == -1 || end >= len(out) {
		end = len(out) - 1
	}
	if start > end {
		return nil, nil
	}
	return out[start : end+1], nil
}

// termMatcher is _match_list's test for one name: a regular expression
// after ~ matched at the start (Python's re.match), else an fnmatch glob
// of the whole name.
func termMatcher(expr string) (func(string) bool, error) {
	if strings.HasPrefix(expr, "~") {
		re, err := regexp.Compile("^(?:" + expr[1:] + ")")
		if err != nil {
			return nil, err
		}
		return re.MatchString, nil
	}
	glob := strings.ReplaceAll(expr, "[!", "[^")
	if _, err := path.Match(glob, ""); err != nil {
		return nil, fmt.Errorf("bad glob: %w", err)
	}
	return func(name string) bool {
		ok, _ := path.Match(glob, name)
		return ok
	}, nil
}
