package catalog

import (
	"errors"
	"fmt"
	"os"

	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/result"
)

// Catalog is every probe and check one run may use: those the binary
// embeds and, with --probes, a user's. What is built in Go (the findings
// and facts no file declares) is the same for every catalogue and lives in
// builtin.go. A Catalog answers every question about ids that a command
// asks before it contacts a node: which ids a waiver or --only may name,
// what an id means (explain), which checks a selection keeps.
type Catalog struct {
	// Probes are node and cluster probes: the embedded ones sorted by id,
	// then the user's sorted by id.
	Probes []probe.Probe
	// Checks are the embedded checks in file order, then the user's.
	Checks []check.Check
	// embedded are the Sources (file:line) of the embedded checks, shown
	// as "builtin": that path exists only inside the binary.
	embedded map[string]bool
}

// ErrEmbedded marks an error in the files the binary embeds, which is the
// binary's fault, never the operator's input.
var ErrEmbedded = errors.New("the embedded catalogue")

// Builtin is the catalogue the binary embeds. `fleet-audit report` and
// merge judge and explain a saved run with it: a run's --probes are not
// saved with it.
func Builtin() (*Catalog, error) {
	probes, err := probe.BuiltinProbes()
	if err != nil {
		return nil, fmt.Errorf("%w: probes: %w", ErrEmbedded, err)
	}
	checks, err := check.BuiltinChecks()
	if err != nil {
		return nil, fmt.Errorf("%w: checks: %w", ErrEmbedded, err)
	}
	c := &Catalog{Probes: probes, Checks: checks, embedded: map[string]bool{}}
	for _, ch := range checks {
		c.embedded[ch.Source] = true
	}
	return c, nil
}

// Load is the embedded catalogue joined by the probes and checks of the
// --probes directory dir ("" for none). A problem with the embedded files
// is the binary's; one with dir's is the operator's, and names the file and
// line (see loadDir).
func Load(dir string) (*Catalog, error) {
	c, err := Builtin()
	if err != nil || dir == "" {
		return c, err
	}
	probes, checks, err := loadDir(dir, c.Probes, c.Checks)
	if err != nil {
		return nil, err
	}
	c.Probes = append(c.Probes, probes...)
	c.Checks = append(c.Checks, checks...)
	return c, nil
}

// CheckSource is where ch is defined, as `explain` and `probes` show it:
// "builtin" for an embedded check, whose file:line exists only inside the
// binary, else its file:line.
func (c *Catalog) CheckSource(ch check.Check) string {
	if c.embedded[ch.Source] {
		return "builtin"
	}
	return ch.Source
}

// Select is the checks --only and --skip keep, in file order; a pattern
// may also name a finding built in Go, and one matching nothing is an
// error.
func (c *Catalog) Select(sel check.Selection) ([]check.Check, error) {
	return check.SelectChecks(c.Checks, sel, GoSelectableIDs())
}

// WaivableIDs lists every finding id a waiver may name, sorted: the checks,
// the correlation finding of each symptom check, and the operator's
// findings built in Go. Waivers are held against all of them, not only the
// selected checks, so one waivers file serves runs with different --skip
// lists.
func (c *Catalog) WaivableIDs() []string {
	return waivableIDs(c.Checks)
}

// LoadWaivers reads a --waivers file against this catalogue's ids; see
// ParseWaivers.
func (c *Catalog) LoadWaivers(file string) ([]result.Waiver, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("waivers: %w", err)
	}
	return c.ParseWaivers(file, b)
}

// ParseWaivers decodes a waivers file named name against this catalogue's
// ids (WaivableIDs); see parseWaivers.
func (c *Catalog) ParseWaivers(name string, data []byte) ([]result.Waiver, error) {
	return parseWaivers(name, data, c.WaivableIDs())
}
