package audit

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"
	"time"
)

//go:embed probes/*.sh
var probeFS embed.FS

// libFile is prepended to every probe; it is not a probe itself.
const libFile = "probes/_lib.sh"

// Probe is one read-only POSIX sh script and its metadata, parsed from the
// script's comment header. Probes are immutable once loaded.
type Probe struct {
	ID          string
	Description string
	NeedsRoot   bool
	Timeout     time.Duration
	// Facts are the keys the probe may emit; any other key it prints is
	// dropped, so one probe cannot forge another's facts.
	Facts []string
	// Volatile facts differ between healthy nodes by nature (counters,
	// timestamps, hostnames) and are left out of drift and correlation.
	Volatile []string
	// RoleScoped facts differ by role by design (rke2-server on servers,
	// rke2-agent on agents); they are compared only within a role.
	RoleScoped []string
	// Script is the probe body without the shared library.
	Script string
}

var factKeyRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_.\-]*$`)

// ParseProbe reads the header of one probe script.
func ParseProbe(name, text string) (Probe, error) {
	p := Probe{Script: text}
	seen := map[string]bool{}
	for i, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "#") {
			break
		}
		key, val, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(line, "#")), ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		key = strings.TrimSpace(key)
		if seen[key] {
			return Probe{}, fmt.Errorf("%s:%d: header %q given twice", name, i+1, key)
		}
		seen[key] = true
		switch key {
		case "id":
			p.ID = val
		case "description":
			p.Description = val
		case "needs_root":
			switch val {
			case "true":
				p.NeedsRoot = true
			case "false":
			default:
				return Probe{}, fmt.Errorf("%s:%d: needs_root: want true or false, got %q", name, i+1, val)
			}
		case "timeout":
			d, err := time.ParseDuration(val)
			if err != nil || d <= 0 {
				return Probe{}, fmt.Errorf("%s:%d: timeout: want a positive duration such as 10s, got %q", name, i+1, val)
			}
			p.Timeout = d
		case "facts":
			p.Facts = strings.Fields(val)
		case "volatile":
			p.Volatile = strings.Fields(val)
		case "role_scoped":
			p.RoleScoped = strings.Fields(val)
		default:
			return Probe{}, fmt.Errorf("%s:%d: unknown header %q", name, i+1, key)
		}
	}
	switch {
	case p.ID == "":
		return Probe{}, fmt.Errorf("%s: missing header: id", name)
	case !factKeyRe.MatchString(p.ID):
		return Probe{}, fmt.Errorf("%s: id %q: want lowercase letters, digits, '.', '_' or '-'", name, p.ID)
	case p.Description == "":
		return Probe{}, fmt.Errorf("%s: missing header: description", name)
	case p.Timeout == 0:
		return Probe{}, fmt.Errorf("%s: missing header: timeout", name)
	case len(p.Facts) == 0:
		return Probe{}, fmt.Errorf("%s: missing header: facts", name)
	case !seen["needs_root"]:
		return Probe{}, fmt.Errorf("%s: missing header: needs_root", name)
	}
	for _, f := range append(append([]string{}, p.Facts...), p.Volatile...) {
		if !factKeyRe.MatchString(f) {
			return Probe{}, fmt.Errorf("%s: fact key %q: want lowercase letters, digits, '.', '_' or '-'", name, f)
		}
	}
	for _, v := range append(append([]string{}, p.Volatile...), p.RoleScoped...) {
		if !contains(p.Facts, v) {
			return Probe{}, fmt.Errorf("%s: fact %q is marked volatile or role_scoped but is not in facts", name, v)
		}
	}
	return p, nil
}

// Library is the shared shell helpers every probe runs with.
func Library() string {
	b, err := probeFS.ReadFile(libFile)
	if err != nil {
		panic(fmt.Sprintf("embedded %s missing: %v", libFile, err)) // a build defect, not input
	}
	return string(b)
}

// BuiltinProbes returns the embedded probes sorted by id.
func BuiltinProbes() ([]Probe, error) {
	names, err := fs.Glob(probeFS, "probes/*.sh")
	if err != nil {
		return nil, fmt.Errorf("list embedded probes: %w", err)
	}
	var probes []Probe
	ids := map[string]string{}
	for _, n := range names {
		if n == libFile {
			continue
		}
		b, err := probeFS.ReadFile(n)
		if err != nil {
			return nil, fmt.Errorf("read embedded probe %s: %w", n, err)
		}
		p, err := ParseProbe(path.Base(n), string(b))
		if err != nil {
			return nil, err
		}
		if other, dup := ids[p.ID]; dup {
			return nil, fmt.Errorf("%s: probe id %q already used by %s", n, p.ID, other)
		}
		ids[p.ID] = n
		probes = append(probes, p)
	}
	sort.Slice(probes, func(i, j int) bool { return probes[i].ID < probes[j].ID })
	return probes, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
