package probe

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

//go:embed probes/*.sh
var probeFS embed.FS

// libFile is prepended to every probe; it is not a probe itself.
const libFile = "probes/_lib.sh"

// Unjudgeable are the values a probe gives a fact it could not look at,
// each with why and the fix: "unreadable" (a file, directory or socket the
// probe's user may not read, such as RKE2's 0700 pod-manifests) and
// "not-root" (a root probe that ran as the login user, without become).
// Neither says whether the thing is there, so a check whose condition
// reads one, and names it not, is "could not judge" on that node
// (result.OutcomeUnjudged) unless another condition clears the node.
var Unjudgeable = map[string]string{
	"unreadable": "not readable by the user the probe ran as, so neither present nor absent",
	NotRoot:      "the probe needs root and ran as the login user; connect as root, or add `become: sudo` to the inventory (or run with -b)",
}

// NotRoot is the value of a fact a root probe could not look at because it
// ran as the login user; audit also gives it to the facts such a probe left
// out.
const NotRoot = "not-root"

// Scopes of probes and checks.
const (
	// ScopeNode probes run on every node; ScopeNode checks judge every
	// audited node's facts.
	ScopeNode = "node"
	// ScopeCluster probes run once, through one server's kubectl; their
	// facts start with ClusterFactPrefix, and ScopeCluster checks judge
	// those.
	ScopeCluster = "cluster"
)

// Prefixes of the facts the cluster view gives: its own, and those it
// reports for each node (node_facts), which are joined to that node's.
const (
	ClusterFactPrefix = "cluster."
	NodeFactPrefix    = "k8s."
)

// FromClusterView says whether fact comes from the cluster view, so that
// a check reading it is not judged when the view failed.
func FromClusterView(fact string) bool {
	return strings.HasPrefix(fact, ClusterFactPrefix) || strings.HasPrefix(fact, NodeFactPrefix)
}

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
	// ServerOnly facts read a setting that only RKE2 servers honour (a flag
	// of `rke2 server` that `rke2 agent` does not have, such as cni: an
	// agent skips that config.yaml key). They are kept only on nodes that
	// run RKE2 as a server (see audit.isServer) and dropped from every other
	// node's facts when it is audited, so checks, correlation and drift
	// compare servers with servers and never read an agent's leftover.
	ServerOnly []string
	// Scope is ScopeNode (run on every node) or ScopeCluster (run once, on
	// one reachable server node, through RKE2's node-local kubectl).
	Scope string
	// NodeFacts are the per-node facts a cluster probe may report, printed
	// as "@<kubernetes-node-name> key=value" and joined to the inventory
	// node of that name.
	NodeFacts []string
	// Script is the probe body without the shared library.
	Script string
	// Source is where the probe came from: "builtin" or the file's path.
	Source string
}

// MaxProbeScriptBytes caps one probe's text. The bundle carries every probe
// to every node in one session and each shell holds a probe's text in
// memory; a probe larger than this is a mistake (a data file pasted in), and
// is refused when loaded rather than sent to a whole fleet.
const MaxProbeScriptBytes = 1 << 20

var headerKeyRe = regexp.MustCompile(`^[a-z_]+$`)

var FactKeyPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_.\-]*$`)

// ParseProbe reads the header of one probe script.
func ParseProbe(name, text string) (Probe, error) {
	p := Probe{Script: text, Scope: ScopeNode, Source: name}
	if len(text) > MaxProbeScriptBytes {
		return Probe{}, fmt.Errorf("%s: %d bytes, more than the %d a probe may have", name, len(text), MaxProbeScriptBytes)
	}
	// A shell drops NUL bytes from the text it reads: the probe that ran
	// would not be the one that was written.
	if i := strings.IndexByte(text, 0); i >= 0 {
		return Probe{}, fmt.Errorf("%s:%d: a NUL byte: a probe is shell text", name, strings.Count(text[:i], "\n")+1)
	}
	seen := map[string]bool{}
	for i, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "#") {
			break
		}
		key, val, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(line, "#")), ":")
		key = strings.TrimSpace(key)
		if !ok || !headerKeyRe.MatchString(key) {
			// The header is the leading run of "# key: value" lines; the
			// first comment that is prose ends it.
			break
		}
		val = strings.TrimSpace(val)
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
		case "server_only":
			p.ServerOnly = strings.Fields(val)
		case "scope":
			if val != ScopeNode && val != ScopeCluster {
				return Probe{}, fmt.Errorf("%s:%d: scope: want node or cluster, got %q", name, i+1, val)
			}
			p.Scope = val
		case "node_facts":
			p.NodeFacts = strings.Fields(val)
		default:
			return Probe{}, fmt.Errorf("%s:%d: unknown header %q", name, i+1, key)
		}
	}
	switch {
	case p.ID == "":
		return Probe{}, fmt.Errorf("%s: missing header: id", name)
	case !FactKeyPattern.MatchString(p.ID):
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
	if len(p.NodeFacts) > 0 && p.Scope != ScopeCluster {
		return Probe{}, fmt.Errorf("%s: node_facts: only a probe with scope: cluster reports facts for other nodes", name)
	}
	for _, f := range p.Facts {
		if (p.Scope == ScopeCluster) != strings.HasPrefix(f, ClusterFactPrefix) {
			return Probe{}, fmt.Errorf("%s: fact key %q: cluster probes name their facts cluster.*, and only they do", name, f)
		}
	}
	for _, f := range p.NodeFacts {
		if !strings.HasPrefix(f, NodeFactPrefix) {
			//lint:ignore ST1005 the final dot is the prefix k8s., not punctuation
			return Probe{}, fmt.Errorf("%s: node_facts key %q: want a name starting with k8s.", name, f)
		}
	}
	for _, f := range append(append(append([]string{}, p.Facts...), p.Volatile...), p.NodeFacts...) {
		if !FactKeyPattern.MatchString(f) {
			return Probe{}, fmt.Errorf("%s: fact key %q: want lowercase letters, digits, '.', '_' or '-'", name, f)
		}
	}
	for _, v := range append(append([]string{}, p.Volatile...), p.RoleScoped...) {
		if !slices.Contains(p.Facts, v) && !slices.Contains(p.NodeFacts, v) {
			return Probe{}, fmt.Errorf("%s: fact %q is marked volatile or role_scoped but is not in facts", name, v)
		}
	}
	for _, v := range p.ServerOnly {
		if !slices.Contains(p.Facts, v) || p.Scope == ScopeCluster {
			return Probe{}, fmt.Errorf("%s: fact %q is marked server_only but is not in facts of a node probe", name, v)
		}
	}
	return p, nil
}

// Library is the shared shell helpers every probe runs with.
func Library() string { return library() }

// library reads the embedded file once: BuildBundle asks for it for every
// node, and each read copied it twice (embed.FS.ReadFile, then string).
var library = sync.OnceValue(func() string {
	b, err := probeFS.ReadFile(libFile)
	if err != nil {
		panic(fmt.Sprintf("embedded %s missing: %v", libFile, err)) // a build defect, not input
	}
	return string(b)
})

// SplitScope separates node probes from cluster probes, keeping order.
func SplitScope(probes []Probe) (node, cluster []Probe) {
	for _, p := range probes {
		if p.Scope == ScopeCluster {
			cluster = append(cluster, p)
		} else {
			node = append(node, p)
		}
	}
	return node, cluster
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
		p.Source = "builtin"
		if other, dup := ids[p.ID]; dup {
			return nil, fmt.Errorf("%s: probe id %q already used by %s", n, p.ID, other)
		}
		ids[p.ID] = n
		probes = append(probes, p)
	}
	sort.Slice(probes, func(i, j int) bool { return probes[i].ID < probes[j].ID })
	return probes, nil
}
