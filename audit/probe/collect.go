package probe

import (
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/fleet-audit/fleet-audit/internal/yamlx"
	"github.com/fleet-audit/fleet-audit/result"
	"gopkg.in/yaml.v3"
)

// collect.yaml says how an operator reads each fact by hand, with the
// commands the field write-ups typed. It belongs to the facts, not to the
// checks: many checks read one fact, and the probes that emit the facts
// live here too. `fleet-audit explain` prints it for every fact a check or
// a finding built in Go reads.
//
//go:embed collect.yaml
var collectYAML []byte

// Collect is one entry of collect.yaml: the facts it covers and the
// commands that show them on a node.
type Collect struct {
	// Facts are fact keys, or a family written as a prefix ending in "*"
	// ("kubeproxy.metrics.*"). An exact key wins over a family, and a
	// longer family over a shorter one.
	Facts []string `yaml:"facts"`
	// On is where the commands run: "node" (the node the fact is about,
	// the default), "server" (any RKE2 server node, for the cluster's
	// view) or "workstation" (facts fleet-audit is given, not read).
	On string `yaml:"on"`
	// Commands are typed as they are, one per line of a shell; a "#"
	// starts a comment saying what to look for.
	Commands []string `yaml:"commands"`
}

// Where Collect.On may say the commands run: the model's words, since
// explain reports them.
const (
	CollectOnNode        = result.CollectOnNode
	CollectOnServer      = result.CollectOnServer
	CollectOnWorkstation = result.CollectOnWorkstation
)

var (
	collectOnce  sync.Once
	collectTable []Collect
	collectErr   error
)

// CollectTable returns the embedded collect.yaml, parsed once.
func CollectTable() ([]Collect, error) {
	collectOnce.Do(func() { collectTable, collectErr = ParseCollect("collect.yaml", collectYAML) })
	return collectTable, collectErr
}

// ParseCollect decodes a collect table, rejecting unknown fields, entries
// without facts or commands, and a fact or family listed twice.
func ParseCollect(name string, data []byte) ([]Collect, error) {
	list, err := yamlx.List(name, data, "entries")
	if list == nil || err != nil {
		return nil, err
	}
	var out []Collect
	var errs []error
	seen := map[string]int{}
	for _, item := range list.Content {
		var c Collect
		var buf strings.Builder
		enc := yaml.NewEncoder(&buf)
		if err := enc.Encode(item); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, item.Line, err)
		}
		dec := yaml.NewDecoder(strings.NewReader(buf.String()))
		dec.KnownFields(true)
		if err := dec.Decode(&c); err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %s", name, item.Line+yamlx.ErrLine(err)-1, yamlx.ErrText(err)))
			continue
		}
		if c.On == "" {
			c.On = CollectOnNode
		}
		switch {
		case len(c.Facts) == 0:
			errs = append(errs, fmt.Errorf("%s:%d: facts: is required", name, item.Line))
		case len(c.Commands) == 0:
			errs = append(errs, fmt.Errorf("%s:%d: commands: is required", name, item.Line))
		case c.On != CollectOnNode && c.On != CollectOnServer && c.On != CollectOnWorkstation:
			errs = append(errs, fmt.Errorf("%s:%d: on: want node, server or workstation, got %q", name, item.Line, c.On))
		}
		for _, f := range c.Facts {
			if prev, dup := seen[f]; dup {
				errs = append(errs, fmt.Errorf("%s:%d: facts: %q is already listed at line %d", name, yamlx.FieldLine(item, "facts"), f, prev))
			}
			seen[f] = item.Line
		}
		out = append(out, c)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// CollectFor returns the entry that covers fact: the one listing it
// exactly, else the one with the longest family prefix of it.
func CollectFor(table []Collect, fact string) (Collect, bool) {
	var best Collect
	bestLen := -1
	for _, c := range table {
		for _, f := range c.Facts {
			if f == fact {
				return c, true
			}
			if p, ok := strings.CutSuffix(f, "*"); ok && strings.HasPrefix(fact, p) && len(p) > bestLen {
				best, bestLen = c, len(p)
			}
		}
	}
	return best, bestLen >= 0
}
