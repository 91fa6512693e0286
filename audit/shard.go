package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fleet-audit/fleet-audit/audit/catalog"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/result"
)

// Sharding: run --shard K/N audits a share of the fleet, and Merge joins
// the N shard reports into the report one run of the whole fleet would
// have made, judged again as a whole (drift, correlation and skew need
// every node at once).

// ParseShard reads --shard K/N: 1 ≤ K ≤ N.
func ParseShard(s string) (k, n int, err error) {
	ks, ns, ok := strings.Cut(strings.TrimSpace(s), "/")
	k, kerr := strconv.Atoi(ks)
	n, nerr := strconv.Atoi(ns)
	switch {
	case !ok || kerr != nil || nerr != nil:
		return 0, 0, fmt.Errorf("want K/N, such as 2/5 (shard 2 of 5), got %q", s)
	case n < 1:
		return 0, 0, fmt.Errorf("%q: the number of shards N must be at least 1", s)
	case k < 1 || k > n:
		return 0, 0, fmt.Errorf("%q: the shard K must be from 1 to %d", s, n)
	}
	return k, n, nil
}

// ShardOf is the shard (1..n) a host belongs to: the 32-bit FNV-1a hash of
// its inventory name, modulo n, plus one. It reads the name alone, so a
// host stays in its shard however the inventory is ordered or grows, and
// FNV-1a is fixed by its definition (hash/fnv), so every release and
// platform shares the hosts out alike. This function is the definition of
// the assignment; the README and the schema describe it.
func ShardOf(name string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(name))
	return int(h.Sum32()%uint32(n)) + 1
}

// SelectShard is shard k of n of the fleet: its targets whose ShardOf is
// k, in fleet order, and the record the report carries (Report.Shard).
// runID names the run (--run-id), rulesDigest is Rules.Digest of what will
// judge it.
func SelectShard(f *Fleet, k, n int, runID, rulesDigest string) (*Fleet, *result.Shard) {
	out := &Fleet{Name: f.Name, Targets: []Target{}}
	s := &result.Shard{Index: k, Count: n, RunID: runID, Hosts: []string{}, InventoryDigest: fleetDigest(f), RulesDigest: rulesDigest}
	for _, t := range f.Targets {
		s.Hosts = append(s.Hosts, t.Name)
		if ShardOf(t.Name, n) == k {
			out.Targets = append(out.Targets, t)
		}
	}
	return out, s
}

// fleetDigest identifies how every host of the fleet resolved, for
// Shard.InventoryDigest.
func fleetDigest(f *Fleet) string {
	return digest(f.Targets)
}

// Digest identifies what judges a run, for Shard.RulesDigest: the probes
// (their scripts and the facts they declare volatile, role-scoped...), the
// selected checks, the selection and the waivers. The gate policy and
// --target-version are in every report as they are, and compared so.
func (r Rules) Digest() string {
	return digest(struct {
		Probes    []probe.Probe
		Checks    any
		Selection any
		Waivers   []result.Waiver
	}{r.Probes, r.Checks, r.Selection, r.Waivers})
}

func digest(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		// Plain data of this package's own types: it cannot fail.
		panic(fmt.Sprintf("audit: digest: %v", err))
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// thresholdFlags says t as the flags that give it.
func thresholdFlags(t *result.Thresholds) string {
	t = thresholdsOrDefault(t)
	return fmt.Sprintf("--etcd-snapshot-max-age %ds --ca-horizon %dd", t.EtcdSnapshotMaxAgeSeconds, t.CAHorizonDays)
}

// ShardFile is one shard report given to Merge, with the file it was read
// from, which Merge's errors name.
type ShardFile struct {
	Path   string
	Report *result.Report
}

// MergeOptions are what Merge judges the merged nodes with: the rules and
// --target-version merge was given, which must be the ones the shards ran
// with, and the release doing the merge, which must be theirs.
type MergeOptions struct {
	Rules         Rules
	TargetVersion string
	// Thresholds are merge's --etcd-snapshot-max-age and --ca-horizon;
	// nil is DefaultThresholds.
	Thresholds  *result.Thresholds
	ToolVersion string
	// RunID is merge's --run-id: when set, every shard must be of that
	// run, so a pipeline's merge cannot judge another pipeline's shards.
	RunID string
	// Change is merge's --change-id, --title and --requested-by; nil keeps
	// the first shard's.
	Change *result.Change
}

// MergeError is a set of shard reports Merge refuses to join: of different
// inventories, releases or rules, overlapping, or not shards at all.
type MergeError struct{ msg string }

func (e *MergeError) Error() string { return e.msg }

func mergeErrorf(format string, args ...any) error {
	return &MergeError{fmt.Sprintf(format, args...)}
}

// Merge joins shard reports of one inventory into the report of one run:
// the nodes of every shard in inventory order, the cluster view that run
// would have kept (askServers over the shards' records), then Analyze over
// the union, so that N shards are judged exactly as one run. The hosts of
// a shard that was not given are nodes with StatusShardMissing, which the
// gate counts as not audited. It refuses (MergeError) shards of different
// inventories, releases or rules, the same shard twice and overlapping
// nodes, and shards judged otherwise than o says.
func Merge(shards []ShardFile, o MergeOptions) (*result.Report, error) {
	if len(shards) == 0 {
		return nil, errors.New("audit.Merge: no shards")
	}
	if err := checkShards(shards, o); err != nil {
		return nil, err
	}
	ref := shards[0].Report
	n := ref.Shard.Count
	owner := map[string]*result.Report{}
	given := map[int]bool{}
	for _, s := range shards {
		given[s.Report.Shard.Index] = true
		for _, node := range s.Report.Nodes {
			owner[node.Name] = s.Report
		}
	}
	// The per-node facts a shard joined from its own cluster view are
	// taken off, and the view one run would have had is joined instead.
	joinedKeys := []string{catalog.NodeRegisteredFact}
	for _, p := range o.Rules.Probes {
		joinedKeys = append(joinedKeys, p.NodeFacts...)
	}
	nodes := make([]result.Node, 0, len(ref.Shard.Hosts))
	missing := map[int][]string{}
	for _, h := range ref.Shard.Hosts {
		r, ok := owner[h]
		if !ok {
			k := ShardOf(h, n)
			missing[k] = append(missing[k], h)
			nodes = append(nodes, result.Node{Name: h, Roles: []string{}, Status: result.StatusShardMissing,
				Message: fmt.Sprintf("%s (shard %d/%d)", result.StatusShardMissing.Meaning(), k, n),
				Facts:   map[string]string{}, Probes: []result.ProbeRun{}})
			continue
		}
		i := slices.IndexFunc(r.Nodes, func(x result.Node) bool { return x.Name == h })
		node := r.Nodes[i]
		facts := make(map[string]string, len(node.Facts))
		for k, v := range node.Facts {
			if !slices.Contains(joinedKeys, k) {
				facts[k] = v
			}
		}
		node.Facts = facts
		nodes = append(nodes, node)
	}
	merged := &result.Report{
		SchemaVersion: result.SchemaVersion,
		Tool:          ref.Tool,
		Inventory:     ref.Inventory,
		StartedAt:     ref.StartedAt,
		FinishedAt:    ref.FinishedAt,
		Nodes:         nodes,
		TargetVersion: ref.TargetVersion,
		Thresholds:    ref.Thresholds,
		Change:        ref.Change,
		Limit:         ref.Limit,
	}
	if o.Change != nil {
		merged.Change = o.Change
	}
	for _, s := range shards {
		r := s.Report
		merged.Interrupted = merged.Interrupted || r.Interrupted
		merged.StartedAt = earliest(merged.StartedAt, r.StartedAt)
		if r.FinishedAt.After(merged.FinishedAt) {
			merged.FinishedAt = r.FinishedAt
		}
		// Each shard has the inventory's warnings; one run has them once.
		for _, w := range r.Warnings {
			if !slices.Contains(merged.Warnings, w) {
				merged.Warnings = append(merged.Warnings, w)
			}
		}
	}
	for k := 1; k <= n; k++ {
		if hosts := missing[k]; len(hosts) > 0 && !given[k] {
			verb := "are"
			if len(hosts) == 1 {
				verb = "is"
			}
			merged.Warnings = append(merged.Warnings, fmt.Sprintf("shard %d/%d was not given to fleet-audit merge: its %s %s not audited (%s)",
				k, n, result.Count(len(hosts), "host"), verb, strings.Join(hosts, ", ")))
		}
	}
	merged.Cluster = mergeCluster(shards, owner, nodes)
	Analyze(merged, o.Rules)
	return merged, nil
}

// earliest is the earlier of two start times, a zero one ignored.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// mergeCluster is the cluster view one run over the merged nodes would
// have had. One run asks the server candidates in inventory order and
// keeps the first that answers; each shard asked its own candidates in the
// same order. So every server the one run would have asked before it
// stopped was asked by its shard too (the shard's earlier candidates are
// among the run's, and failed there as well), and its shard's record of it
// stands in for asking it again. A server whose shard did not ask it (an
// interrupted shard) ends the asking, as an interrupted run does.
func mergeCluster(shards []ShardFile, owner map[string]*result.Report, nodes []result.Node) *result.Cluster {
	if !slices.ContainsFunc(shards, func(s ShardFile) bool { return s.Report.Cluster != nil }) {
		return nil
	}
	c, perNode := askServers(serverCandidates(nodes), func(name string) (clusterTry, bool) {
		r := owner[name]
		if r == nil || r.Cluster == nil {
			return clusterTry{}, false
		}
		i := slices.IndexFunc(r.Cluster.Attempts, func(a result.ClusterAttempt) bool { return a.Node == name })
		if i < 0 {
			return clusterTry{}, false
		}
		try := clusterTry{why: r.Cluster.Attempts[i].Reason}
		if r.Cluster.Attempts[i].Outcome == result.ClusterOK {
			try.why = ""
		}
		// A shard keeps the facts of the server that answered, else of the
		// first that gave any: the only server whose facts one run keeps.
		if r.Cluster.Node == name {
			try.facts, try.runs, try.nodeFacts = r.Cluster.Facts, r.Cluster.Probes, r.Cluster.NodeFacts
		}
		return try, true
	})
	if c.Status == result.ClusterOK {
		joinNodeFacts(c, perNode, nodes)
	}
	return c
}

// describeShard names a shard file with its run's identity, for Merge's
// refusals: "s1.json (run 4711, shard 1/2, started 2025-05-01T02:00:00Z)".
func describeShard(s ShardFile) string {
	r := s.Report
	return fmt.Sprintf("%s (run %s, shard %d/%d, started %s)", s.Path, r.Shard.RunID, r.Shard.Index, r.Shard.Count, r.StartedAt.UTC().Format(time.RFC3339))
}

// checkShards refuses what must not be merged, naming the files.
func checkShards(shards []ShardFile, o MergeOptions) error {
	for _, s := range shards {
		sh := s.Report.Shard
		switch {
		case sh == nil:
			return mergeErrorf("%s: not a shard (written by run without --shard)", s.Path)
		// ShardOf divides by the count: a hand-edited file must not panic.
		case sh.Count < 1 || sh.Index < 1 || sh.Index > sh.Count:
			return mergeErrorf("%s: shard %d/%d is no shard run --shard writes", s.Path, sh.Index, sh.Count)
		case sh.RunID == "":
			return mergeErrorf("%s: the shard names no run (written before run --shard took --run-id): run every shard again with one --run-id", s.Path)
		}
	}
	ref, rs := shards[0], shards[0].Report
	for _, s := range shards[1:] {
		r := s.Report
		switch {
		// First: shards of two runs can agree on everything else, and
		// yesterday's clean shard says nothing about today's hosts.
		case r.Shard.RunID != rs.Shard.RunID:
			return mergeErrorf("%s and %s are shards of different runs: merge the shards of one run --shard K/N --run-id ID", describeShard(ref), describeShard(s))
		case r.Tool.Version != rs.Tool.Version:
			return mergeErrorf("%s was written by fleet-audit %s, %s by %s: run every shard with one release", ref.Path, rs.Tool.Version, s.Path, r.Tool.Version)
		case r.Shard.Count != rs.Shard.Count:
			return mergeErrorf("%s is a shard of %d, %s of %d: merge the shards of one run --shard K/N", ref.Path, rs.Shard.Count, s.Path, r.Shard.Count)
		case r.Inventory != rs.Inventory || !slices.Equal(r.Shard.Hosts, rs.Shard.Hosts) ||
			r.Shard.InventoryDigest != rs.Shard.InventoryDigest || !reflect.DeepEqual(r.Limit, rs.Limit):
			return mergeErrorf("%s and %s are shards of different inventories (%s, %s; or their hosts, --limit or how the hosts resolved differ)", ref.Path, s.Path, rs.Inventory, r.Inventory)
		case r.Shard.RulesDigest != rs.Shard.RulesDigest:
			return mergeErrorf("%s and %s were judged by different probes, checks, --only/--skip or --waivers: run every shard with the same", ref.Path, s.Path)
		case r.TargetVersion != rs.TargetVersion:
			return mergeErrorf("%s ran with --target-version %q, %s with %q: run every shard with the same", ref.Path, rs.TargetVersion, s.Path, r.TargetVersion)
		case *thresholdsOrDefault(r.Thresholds) != *thresholdsOrDefault(rs.Thresholds):
			return mergeErrorf("%s ran with %s, %s with %s: run every shard with the same", ref.Path, thresholdFlags(rs.Thresholds), s.Path, thresholdFlags(r.Thresholds))
		case r.Gate.FailOn != rs.Gate.FailOn || r.Gate.AllowUnreachable != rs.Gate.AllowUnreachable:
			return mergeErrorf("%s ran with --fail-on %s --allow-unreachable=%t, %s with --fail-on %s --allow-unreachable=%t: run every shard with the same",
				ref.Path, rs.Gate.FailOn, rs.Gate.AllowUnreachable, s.Path, r.Gate.FailOn, r.Gate.AllowUnreachable)
		case r.Gate.AllowPartial != rs.Gate.AllowPartial:
			return mergeErrorf("%s ran with --allow-partial=%t, %s with --allow-partial=%t: run every shard with the same",
				ref.Path, rs.Gate.AllowPartial, s.Path, r.Gate.AllowPartial)
		}
	}
	switch {
	case o.RunID != "" && rs.Shard.RunID != o.RunID:
		return mergeErrorf("%s is a shard of run %s, merge was given --run-id %s: merge the shards of this run", describeShard(ref), rs.Shard.RunID, o.RunID)
	case rs.Tool.Version != o.ToolVersion:
		return mergeErrorf("the shards were written by fleet-audit %s, this is %s: merge with the release that ran them", rs.Tool.Version, o.ToolVersion)
	case rs.Shard.RulesDigest != o.Rules.Digest():
		return mergeErrorf("the shards (%s...) were judged by other probes, checks, --only/--skip or --waivers than merge was given: give merge the --probes, --only, --skip and --waivers the shards ran with", ref.Path)
	case rs.TargetVersion != o.TargetVersion:
		return mergeErrorf("the shards ran with --target-version %q, merge was given %q: give merge the same", rs.TargetVersion, o.TargetVersion)
	case *thresholdsOrDefault(rs.Thresholds) != *thresholdsOrDefault(o.Thresholds):
		return mergeErrorf("the shards ran with %s, merge was given %s: give merge the same", thresholdFlags(rs.Thresholds), thresholdFlags(o.Thresholds))
	case rs.Gate.FailOn != o.Rules.Gate.FailOn || rs.Gate.AllowUnreachable != o.Rules.Gate.AllowUnreachable:
		return mergeErrorf("the shards ran with --fail-on %s --allow-unreachable=%t, merge was given --fail-on %s --allow-unreachable=%t: give merge the same",
			rs.Gate.FailOn, rs.Gate.AllowUnreachable, o.Rules.Gate.FailOn, o.Rules.Gate.AllowUnreachable)
	case rs.Gate.AllowPartial != o.Rules.Gate.AllowPartial:
		return mergeErrorf("the shards ran with --allow-partial=%t, merge was given --allow-partial=%t: give merge the same",
			rs.Gate.AllowPartial, o.Rules.Gate.AllowPartial)
	}
	byIndex := map[int]string{}
	byNode := map[string]string{}
	for _, s := range shards {
		sh := s.Report.Shard
		if prev, ok := byIndex[sh.Index]; ok {
			return mergeErrorf("%s and %s are both shard %d/%d: give each shard once", prev, s.Path, sh.Index, sh.Count)
		}
		byIndex[sh.Index] = s.Path
		for _, node := range s.Report.Nodes {
			if prev, ok := byNode[node.Name]; ok {
				return mergeErrorf("%s and %s both hold node %s: shards must not overlap", prev, s.Path, node.Name)
			}
			byNode[node.Name] = s.Path
			if !slices.Contains(sh.Hosts, node.Name) || ShardOf(node.Name, sh.Count) != sh.Index {
				return mergeErrorf("%s: node %s is not one of shard %d/%d's hosts", s.Path, node.Name, sh.Index, sh.Count)
			}
		}
	}
	return nil
}
