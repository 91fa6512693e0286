package catalog

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/internal/yamlx"
	"github.com/fleet-audit/fleet-audit/result"
)

// waiverYAML is the file format; Waiver itself is the report's model and
// carries Source, which a file must not set.
type waiverYAML struct {
	Check   string   `yaml:"check"`
	Nodes   []string `yaml:"nodes"`
	Roles   []string `yaml:"roles"`
	Reason  string   `yaml:"reason"`
	Expires string   `yaml:"expires"`
}

// parseWaivers decodes a waivers file: a YAML list of {check, nodes, roles,
// reason, expires}. known is the set of finding ids (WaivableIDs); a check
// pattern matching none of them is almost always a typo, and a typo in a
// waiver would silently waive nothing, so it is an error. Every problem is
// reported at once as "file:line: waiver N: field: why".
func parseWaivers(name string, data []byte, known []string) ([]result.Waiver, error) {
	list, err := yamlx.List(name, data, "waivers (- check: ..., reason: ..., expires: YYYY-MM-DD)")
	if list == nil || err != nil {
		return nil, err
	}
	var out []result.Waiver
	var errs []error
	for i, item := range list.Content {
		w, err := parseWaiver(name, i+1, item, known)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, w)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

func parseWaiver(file string, n int, item *yaml.Node, known []string) (result.Waiver, error) {
	if item.Kind != yaml.MappingNode {
		return result.Waiver{}, fmt.Errorf("%s:%d: waiver %d: want a mapping with check, reason and expires", file, item.Line, n)
	}
	var y waiverYAML
	var buf bytes.Buffer
	// Re-encoded so KnownFields can reject a misspelt field, as in parseCheck.
	if err := yaml.NewEncoder(&buf).Encode(item); err != nil {
		return result.Waiver{}, fmt.Errorf("%s:%d: waiver %d: %w", file, item.Line, n, err)
	}
	dec := yaml.NewDecoder(&buf)
	dec.KnownFields(true)
	if err := dec.Decode(&y); err != nil {
		return result.Waiver{}, fmt.Errorf("%s:%d: waiver %d: %s", file, item.Line+yamlx.ErrLine(err)-1, n, yamlx.ErrText(err))
	}
	line := func(field string) int {
		for i := 0; i+1 < len(item.Content); i += 2 {
			if item.Content[i].Value == field {
				return item.Content[i].Line
			}
		}
		return item.Line
	}
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: waiver %d: %s: %s", file, line(field), n, field, fmt.Sprintf(format, args...)))
	}
	w := result.Waiver{Check: strings.TrimSpace(y.Check), Nodes: y.Nodes, Roles: y.Roles, Reason: strings.TrimSpace(y.Reason),
		Expires: strings.TrimSpace(y.Expires), Source: fmt.Sprintf("%s:%d", file, item.Line)}
	switch {
	case w.Check == "":
		bad("check", "is required (a check id or a glob such as firewall.*)")
	case strings.HasPrefix(w.Check, "waiver."):
		bad("check", "the waiver findings themselves cannot be waived; fix or remove the waiver they name")
	default:
		if _, err := path.Match(w.Check, ""); err != nil {
			bad("check", "bad glob %q: %v", w.Check, err)
		} else if !check.MatchesAny(w.Check, known) {
			bad("check", "%q matches no known check (see fleet-audit probes)", w.Check)
		}
	}
	if w.Reason == "" {
		bad("reason", "is required: say who accepted the risk and why")
	}
	if w.Expires == "" {
		bad("expires", "is required (YYYY-MM-DD, the last day the waiver applies)")
	} else if _, err := time.Parse(result.WaiverDate, w.Expires); err != nil {
		bad("expires", "want a date YYYY-MM-DD, got %q", w.Expires)
	}
	for _, list := range []struct {
		field string
		vals  []string
	}{{"nodes", w.Nodes}, {"roles", w.Roles}} {
		for _, v := range list.vals {
			if strings.TrimSpace(v) == "" {
				bad(list.field, "empty name in the list")
			}
		}
	}
	if len(errs) > 0 {
		return result.Waiver{}, errors.Join(errs...)
	}
	return w, nil
}
