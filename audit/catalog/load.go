package catalog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/audit/probe"
)

// loadDir reads a --probes directory: every *.sh is a probe (same
// header format as the embedded ones, Source set to its path) and every
// *.yaml a checks file. User probes and checks join the builtin ones, so
// an id or a fact key that a builtin already uses is an error: the later
// definition would silently replace or forge the builtin's result. A user
// check may read the facts of any probe, builtin or user, and a fact that
// no probe emits is an error, since such a check would skip on every node
// and look like a pass. Every error names the file (and line where known).
func loadDir(dir string, builtinProbes []probe.Probe, builtinChecks []check.Check) ([]probe.Probe, []check.Check, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("--probes: %w", err)
	}
	probeBy := map[string]string{} // probe id → where defined
	factBy := map[string]string{}  // fact key → probe that emits it
	for _, p := range builtinProbes {
		probeBy[p.ID] = "builtin probe " + p.ID
		for _, f := range append(append([]string{}, p.Facts...), p.NodeFacts...) {
			factBy[f] = "builtin probe " + p.ID
		}
	}
	var probes []probe.Probe
	var checks []check.Check
	var errs []error
	files := 0
	for _, e := range entries {
		name := e.Name()
		file := filepath.Join(dir, name)
		if e.IsDir() || strings.HasPrefix(name, ".") {
			continue
		}
		switch filepath.Ext(name) {
		case ".sh":
			files++
			b, err := os.ReadFile(file)
			if err != nil {
				errs = append(errs, fmt.Errorf("--probes: %w", err))
				continue
			}
			p, err := probe.ParseProbe(file, string(b))
			if err != nil {
				errs = append(errs, err)
				continue
			}
			p.Source = file
			if other, dup := probeBy[p.ID]; dup {
				errs = append(errs, fmt.Errorf("%s:%d: id: probe %q is already defined by %s", file, headerLine(p.Script, "id"), p.ID, other))
				continue
			}
			probeBy[p.ID] = file
			bad := false
			for _, f := range append(append([]string{}, p.Facts...), p.NodeFacts...) {
				if other, dup := factBy[f]; dup {
					errs = append(errs, fmt.Errorf("%s:%d: facts: %q is already emitted by %s; name your facts after your probe id (%s.*)", file, headerLine(p.Script, "facts"), f, other, p.ID))
					bad = true
				}
			}
			if bad {
				continue
			}
			for _, f := range append(append([]string{}, p.Facts...), p.NodeFacts...) {
				factBy[f] = file
			}
			probes = append(probes, p)
		case ".yaml", ".yml":
			files++
			b, err := os.ReadFile(file)
			if err != nil {
				errs = append(errs, fmt.Errorf("--probes: %w", err))
				continue
			}
			cs, err := check.ParseChecks(file, b)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			checks = append(checks, cs...)
		}
	}
	if files == 0 && len(errs) == 0 {
		return nil, nil, fmt.Errorf("--probes %s: no *.sh probe or *.yaml checks file in the directory", dir)
	}
	if err := check.CheckIDsUnique(append(append([]check.Check{}, builtinChecks...), checks...)); err != nil {
		errs = append(errs, err)
	}
	for _, f := range CheckableGoFacts() {
		factBy[f] = "fleet-audit"
	}
	for _, c := range checks {
		for _, f := range c.JudgedFacts() {
			if _, ok := factBy[f]; !ok {
				errs = append(errs, fmt.Errorf("%s: check %q: fact %q is emitted by no probe, builtin or in %s", c.Source, c.ID, f, dir))
			}
		}
		// A misspelt peers fact would leave every node without peers, so
		// the check would skip everywhere and look like a pass.
		for _, cond := range c.When {
			if _, ok := factBy[cond.Peers]; cond.Peers != "" && !ok {
				errs = append(errs, fmt.Errorf("%s: check %q: peers: fact %q is emitted by no probe, builtin or in %s", c.Source, c.ID, cond.Peers, dir))
			}
		}
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	sort.Slice(probes, func(i, j int) bool { return probes[i].ID < probes[j].ID })
	return probes, checks, nil
}

// headerLine is the 1-based line of a probe header key, for error messages;
// 1 when it is not found.
func headerLine(script, key string) int {
	for i, line := range strings.Split(script, "\n") {
		if !strings.HasPrefix(line, "#") {
			break
		}
		k, _, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(line, "#")), ":")
		if ok && strings.TrimSpace(k) == key {
			return i + 1
		}
	}
	return 1
}
