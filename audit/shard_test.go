package audit

import (
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/audit/catalog"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/result"
)

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in      string
		k, n    int
		wantErr string
	}{
		{"1/1", 1, 1, ""},
		{"2/5", 2, 5, ""},
		{" 5/5 ", 5, 5, ""},
		{"0/3", 0, 0, "the shard K must be from 1 to 3"},
		{"4/3", 0, 0, "the shard K must be from 1 to 3"},
		{"-1/3", 0, 0, "the shard K must be from 1 to 3"},
		{"1/0", 0, 0, "N must be at least 1"},
		{"3", 0, 0, "want K/N"},
		{"a/b", 0, 0, "want K/N"},
		{"1/2/3", 0, 0, "want K/N"},
		{"", 0, 0, "want K/N"},
	} {
		k, n, err := ParseShard(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseShard(%q) = %d, %d, %v; want an error with %q", tc.in, k, n, err, tc.wantErr)
			}
			continue
		}
		if err != nil || k != tc.k || n != tc.n {
			t.Errorf("ParseShard(%q) = %d, %d, %v; want %d, %d", tc.in, k, n, err, tc.k, tc.n)
		}
	}
}

// TestShardOf pins the assignment: FNV-1a of the name, so shard reports
// written by one release are merged by the next, and the test fleets'
// shards stay what their tests expect.
func TestShardOf(t *testing.T) {
	for _, tc := range []struct {
		name  string
		n     int
		shard int
	}{
		{"etcd-1", 3, 3}, {"etcd-3", 3, 2}, {"cp-1", 3, 1}, {"worker-4", 3, 3},
		{"etcd-1", 2, 2}, {"etcd-2", 2, 1}, {"node-1", 2, 2}, {"node-2", 2, 1},
		{"anything", 1, 1},
	} {
		if got := ShardOf(tc.name, tc.n); got != tc.shard {
			t.Errorf("ShardOf(%q, %d) = %d, want %d", tc.name, tc.n, got, tc.shard)
		}
	}
}

// TestSelectShard: the N shards hold every host once, each host in the
// same shard however the inventory is ordered, and every shard records
// the whole inventory in its order.
func TestSelectShard(t *testing.T) {
	names := []string{"etcd-1", "etcd-2", "etcd-3", "cp-1", "cp-2", "worker-1", "worker-2", "worker-3", "worker-4"}
	fleet := func(order []string) *Fleet {
		f := &Fleet{Name: "inv.yaml"}
		for _, n := range order {
			f.Targets = append(f.Targets, Target{Name: n, Address: n + ".example", Roles: []string{"worker"}})
		}
		return f
	}
	reversed := slices.Clone(names)
	slices.Reverse(reversed)
	const n = 3
	seen := map[string]int{}
	for k := 1; k <= n; k++ {
		f, s := SelectShard(fleet(names), k, n, "4711", "rules")
		rf, rs := SelectShard(fleet(reversed), k, n, "4711", "rules")
		var got, gotReversed []string
		for _, tg := range f.Targets {
			got = append(got, tg.Name)
			seen[tg.Name]++
		}
		for _, tg := range rf.Targets {
			gotReversed = append(gotReversed, tg.Name)
		}
		slices.Reverse(gotReversed)
		if !slices.Equal(got, gotReversed) {
			t.Errorf("shard %d/%d: %v, but %v when the inventory is reversed", k, n, got, gotReversed)
		}
		if s.Index != k || s.Count != n || !slices.Equal(s.Hosts, names) || s.RulesDigest != "rules" || s.RunID != "4711" || s.InventoryDigest == "" {
			t.Errorf("shard %d/%d: record %+v", k, n, s)
		}
		if rs.InventoryDigest == s.InventoryDigest {
			t.Errorf("shard %d/%d: the digest of the inventory does not see its order", k, n)
		}
	}
	for _, name := range names {
		if seen[name] != 1 {
			t.Errorf("%s is in %d shards, want 1", name, seen[name])
		}
	}
	other := fleet(names)
	other.Targets[0].Address = "10.0.0.99"
	if _, s := SelectShard(other, 1, n, "4711", ""); s.InventoryDigest == fleetDigest(fleet(names)) {
		t.Errorf("an inventory whose host resolves elsewhere has the same digest")
	}
}

// mergeFixture is a fleet of 2 shards: etcd-2 and worker-2 in shard 1,
// etcd-1 and worker-1 in shard 2 (ShardOf pins it). etcd-1, the first
// server, has no API; each shard got its cluster view from its own server
// that answered, etcd-2 and etcd-3, which disagree about worker-1.
type mergeFixture struct {
	hosts  []string
	rules  Rules
	shards []ShardFile
}

const clusterReasonFact = "k8s.kubeproxy.pod.reason"

func newMergeFixture() mergeFixture {
	hosts := []string{"etcd-1", "etcd-2", "etcd-3", "worker-1", "worker-2"}
	rules := Rules{
		Probes: []probe.Probe{{ID: "cluster", Scope: probe.ScopeCluster, NodeFacts: []string{clusterReasonFact, "k8s.kubeproxy.pod.restarts"}}},
		Gate:   GatePolicy{FailOn: result.SeverityCritical},
	}
	node := func(name string, server bool, facts map[string]string) result.Node {
		f := map[string]string{"os.kernel": "6.1.0"}
		roles := []string{"worker"}
		if server {
			f["rke2.server.active"] = "active"
			roles = []string{"etcd"}
		}
		maps.Copy(f, facts)
		return result.Node{Name: name, Address: name + ".example", Roles: roles, Status: result.StatusOK, Facts: f, Probes: []result.ProbeRun{}}
	}
	shard := func(k int, nodes []result.Node, c *result.Cluster) *result.Report {
		return &result.Report{
			SchemaVersion: result.SchemaVersion, Tool: result.Tool{Name: "fleet-audit", Version: "v1"}, Inventory: "inv.yaml",
			Gate: result.Gate{FailOn: result.SeverityCritical}, Nodes: nodes, Cluster: c,
			StartedAt: time.Date(2025, 5, 2, 9, 0, k, 0, time.UTC),
			Shard:     &result.Shard{Index: k, Count: 2, RunID: "4711", Hosts: hosts, InventoryDigest: "sha256:inv", RulesDigest: rules.Digest()},
		}
	}
	registered := map[string]string{catalog.NodeRegisteredFact: "yes"}
	one := shard(1, []result.Node{
		node("etcd-2", true, registered),
		node("worker-2", false, map[string]string{catalog.NodeRegisteredFact: "yes", clusterReasonFact: "Running"}),
	}, &result.Cluster{Node: "etcd-2", Status: result.ClusterOK,
		Attempts: []result.ClusterAttempt{{Node: "etcd-2", Outcome: result.ClusterOK}},
		Facts:    map[string]string{"cluster.api": "ok", "cluster.view": "etcd-2"}, Probes: []result.ProbeRun{{ID: "cluster", Status: result.ProbeOK}},
		Joined: map[string]string{"etcd-2": "etcd-2", "worker-2": "worker-2", "worker-1": "", "etcd-1": "", "etcd-3": ""},
		NodeFacts: map[string]map[string]string{
			"etcd-1": {}, "etcd-2": {}, "etcd-3": {},
			"worker-1": {clusterReasonFact: "Running"}, "worker-2": {clusterReasonFact: "Running"},
		}})
	two := shard(2, []result.Node{
		node("etcd-1", true, registered),
		node("etcd-3", true, registered),
		// etcd-3's view, older: worker-1 restarting.
		node("worker-1", false, map[string]string{catalog.NodeRegisteredFact: "yes", clusterReasonFact: "CrashLoopBackOff", "k8s.kubeproxy.pod.restarts": "9"}),
	}, &result.Cluster{Node: "etcd-3", Status: result.ClusterOK, Message: "cluster view from etcd-3; etcd-1: API unreachable (connection refused)",
		Attempts: []result.ClusterAttempt{{Node: "etcd-1", Outcome: result.ClusterFailed, Reason: "API unreachable (connection refused)"}, {Node: "etcd-3", Outcome: result.ClusterOK}},
		Facts:    map[string]string{"cluster.api": "ok", "cluster.view": "etcd-3"}, Probes: []result.ProbeRun{{ID: "cluster", Status: result.ProbeOK}},
		Joined: map[string]string{"etcd-1": "etcd-1", "etcd-3": "etcd-3", "worker-1": "worker-1", "etcd-2": "", "worker-2": ""},
		NodeFacts: map[string]map[string]string{
			"etcd-1": {}, "etcd-2": {}, "etcd-3": {},
			"worker-1": {clusterReasonFact: "CrashLoopBackOff", "k8s.kubeproxy.pod.restarts": "9"}, "worker-2": {clusterReasonFact: "Running"},
		}})
	return mergeFixture{hosts: hosts, rules: rules, shards: []ShardFile{{Path: "s1.json", Report: one}, {Path: "s2.json", Report: two}}}
}

func (f mergeFixture) options() MergeOptions {
	return MergeOptions{Rules: f.rules, ToolVersion: "v1"}
}

// TestMergeClusterView: merge keeps the view one run would have had: it
// asks etcd-1 first (no API, as shard 2 recorded), then etcd-2, which
// answered in shard 1, and joins etcd-2's facts to every node, replacing
// what shard 2 joined from etcd-3's.
func TestMergeClusterView(t *testing.T) {
	f := newMergeFixture()
	if ShardOf("etcd-1", 2) != 2 || ShardOf("etcd-2", 2) != 1 || ShardOf("etcd-3", 2) != 2 || ShardOf("worker-1", 2) != 2 || ShardOf("worker-2", 2) != 1 {
		t.Fatal("the fixture's hosts are no longer in the shards it says")
	}
	r, err := Merge(f.shards, f.options())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range r.Nodes {
		names = append(names, n.Name)
	}
	if !slices.Equal(names, f.hosts) {
		t.Errorf("nodes %v, want the inventory's order %v", names, f.hosts)
	}
	c := r.Cluster
	wantAttempts := []result.ClusterAttempt{{Node: "etcd-1", Outcome: result.ClusterFailed, Reason: "API unreachable (connection refused)"}, {Node: "etcd-2", Outcome: result.ClusterOK}}
	if c.Node != "etcd-2" || c.Status != result.ClusterOK || c.Facts["cluster.view"] != "etcd-2" || !reflect.DeepEqual(c.Attempts, wantAttempts) {
		t.Errorf("cluster from %s (%s, facts %v), attempts %+v; want etcd-2's after etcd-1 failed", c.Node, c.Status, c.Facts, c.Attempts)
	}
	if want := "cluster view from etcd-2; etcd-1: API unreachable (connection refused)"; c.Message != want {
		t.Errorf("message %q, want %q", c.Message, want)
	}
	if c.NodeFacts != nil {
		t.Errorf("the merged cluster keeps the per-node facts a shard's alone keeps: %v", c.NodeFacts)
	}
	w1 := r.Nodes[slices.IndexFunc(r.Nodes, func(n result.Node) bool { return n.Name == "worker-1" })].Facts
	if w1[clusterReasonFact] != "Running" || w1["k8s.kubeproxy.pod.restarts"] != "" || w1[catalog.NodeRegisteredFact] != "yes" {
		t.Errorf("worker-1's facts %v: want etcd-2's view (Running, registered) and nothing left of etcd-3's", w1)
	}
	if c.Joined["worker-1"] != "worker-1" || c.Joined["etcd-1"] != "etcd-1" {
		t.Errorf("joined %v: want every Kubernetes node joined to its host across the shards", c.Joined)
	}
	if !r.Gate.Passed || r.Shard != nil || len(r.Warnings) != 0 {
		t.Errorf("gate %+v, shard %+v, warnings %q: want a pass, no shard, no warning", r.Gate, r.Shard, r.Warnings)
	}
}

// TestMergeChange: the merged report keeps the shards' change ticket, or
// takes merge's own when it was given one.
func TestMergeChange(t *testing.T) {
	f := newMergeFixture()
	f.shards[0].Report.Change = &result.Change{ID: "CHG-1", Title: "shards"}
	r, err := Merge(f.shards, f.options())
	if err != nil {
		t.Fatal(err)
	}
	if r.Change == nil || *r.Change != (result.Change{ID: "CHG-1", Title: "shards"}) {
		t.Errorf("merged change %+v, want the shards'", r.Change)
	}
	o := f.options()
	o.Change = &result.Change{ID: "CHG-2"}
	if r, err = Merge(f.shards, o); err != nil {
		t.Fatal(err)
	}
	if r.Change == nil || *r.Change != (result.Change{ID: "CHG-2"}) {
		t.Errorf("merged change %+v, want merge's --change-id", r.Change)
	}
}

// TestMergeMissingShard: the hosts of a shard not given are nodes not
// audited, named with their shard, so the gate fails closed (3) unless
// --allow-unreachable.
func TestMergeMissingShard(t *testing.T) {
	for _, allow := range []bool{false, true} {
		f := newMergeFixture()
		o := f.options()
		o.Rules.Gate.AllowUnreachable = allow
		for _, s := range f.shards {
			s.Report.Gate.AllowUnreachable = allow
		}
		r, err := Merge(f.shards[:1], o)
		if err != nil {
			t.Fatal(err)
		}
		var missing []string
		for _, n := range r.Nodes {
			if n.Status == result.StatusShardMissing {
				missing = append(missing, n.Name)
				if !strings.Contains(n.Message, "shard 2/2") {
					t.Errorf("%s: message %q does not name its shard", n.Name, n.Message)
				}
				if !strings.HasPrefix(n.Message, result.StatusShardMissing.Meaning()) {
					t.Errorf("%s: message %q does not start with the status's meaning", n.Name, n.Message)
				}
			}
		}
		if want := []string{"etcd-1", "etcd-3", "worker-1"}; !slices.Equal(missing, want) {
			t.Errorf("shard_missing nodes %v, want %v", missing, want)
		}
		if want := "shard 2/2 was not given to fleet-audit merge: its 3 hosts are not audited (etcd-1, etcd-3, worker-1)"; !slices.Contains(r.Warnings, want) {
			t.Errorf("warnings %q lack %q", r.Warnings, want)
		}
		wantExit := result.ExitUnaudited
		if allow {
			wantExit = result.ExitOK
		}
		if r.Gate.ExitCode != wantExit {
			t.Errorf("allow-unreachable %t: gate %+v, want exit %d", allow, r.Gate, wantExit)
		}
		// etcd-1, which one run would have asked first, is not known: the
		// view comes from etcd-2, the first server merge has a record of.
		if r.Cluster.Node != "etcd-2" || len(r.Cluster.Attempts) != 1 {
			t.Errorf("cluster from %s after %+v, want etcd-2 first", r.Cluster.Node, r.Cluster.Attempts)
		}
	}
}

// TestMergeRefuses: what must not be merged is refused, naming the files.
func TestMergeRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(f *mergeFixture, o *MergeOptions)
		want   string
	}{
		{"not a shard", func(f *mergeFixture, o *MergeOptions) { f.shards[1].Report.Shard = nil }, "s2.json: not a shard (written by run without --shard)"},
		{"a count of 0", func(f *mergeFixture, o *MergeOptions) { f.shards[1].Report.Shard.Count = 0 }, "s2.json: shard 2/0 is no shard run --shard writes"},
		{"an index past the count", func(f *mergeFixture, o *MergeOptions) { f.shards[0].Report.Shard.Index = 3 }, "s1.json: shard 3/2 is no shard run --shard writes"},
		// Last night's clean shard 2 agrees with today's shard 1 in all
		// but its run and start.
		{"another run", func(f *mergeFixture, o *MergeOptions) {
			f.shards[1].Report.Shard.RunID = "4650"
			f.shards[1].Report.StartedAt = time.Date(2025, 5, 1, 2, 0, 0, 0, time.UTC)
		}, "s1.json (run 4711, shard 1/2, started 2025-05-02T09:00:01Z) and s2.json (run 4650, shard 2/2, started 2025-05-01T02:00:00Z) are shards of different runs"},
		{"no run", func(f *mergeFixture, o *MergeOptions) { f.shards[0].Report.Shard.RunID = "" },
			"s1.json: the shard names no run"},
		{"merge given another run", func(f *mergeFixture, o *MergeOptions) { o.RunID = "4712" },
			"s1.json (run 4711, shard 1/2, started 2025-05-02T09:00:01Z) is a shard of run 4711, merge was given --run-id 4712"},
		{"another release", func(f *mergeFixture, o *MergeOptions) { f.shards[1].Report.Tool.Version = "v2" },
			"s1.json was written by fleet-audit v1, s2.json by v2"},
		{"another count", func(f *mergeFixture, o *MergeOptions) { f.shards[1].Report.Shard.Count = 3 }, "s1.json is a shard of 2, s2.json of 3"},
		{"another inventory file", func(f *mergeFixture, o *MergeOptions) { f.shards[1].Report.Inventory = "other.yaml" },
			"s1.json and s2.json are shards of different inventories"},
		{"hosts resolved otherwise", func(f *mergeFixture, o *MergeOptions) { f.shards[1].Report.Shard.InventoryDigest = "sha256:other" },
			"s1.json and s2.json are shards of different inventories"},
		{"other hosts", func(f *mergeFixture, o *MergeOptions) { f.shards[1].Report.Shard.Hosts = f.hosts[1:] },
			"s1.json and s2.json are shards of different inventories"},
		{"another limit", func(f *mergeFixture, o *MergeOptions) {
			f.shards[1].Report.Limit = &result.Limit{Pattern: "etcd", Selected: 5, Inventory: 9}
		},
			"s1.json and s2.json are shards of different inventories"},
		{"other rules", func(f *mergeFixture, o *MergeOptions) { f.shards[1].Report.Shard.RulesDigest = "sha256:other" },
			"s1.json and s2.json were judged by different probes, checks, --only/--skip or --waivers"},
		{"another target version", func(f *mergeFixture, o *MergeOptions) { f.shards[1].Report.TargetVersion = "v1.32.5+rke2r1" },
			`s1.json ran with --target-version "", s2.json with "v1.32.5+rke2r1"`},
		{"other thresholds", func(f *mergeFixture, o *MergeOptions) {
			f.shards[1].Report.Thresholds = &result.Thresholds{EtcdSnapshotMaxAgeSeconds: 7200, CAHorizonDays: 365}
		}, "s1.json ran with --etcd-snapshot-max-age 86400s --ca-horizon 365d, s2.json with --etcd-snapshot-max-age 7200s --ca-horizon 365d"},
		{"merge given other thresholds", func(f *mergeFixture, o *MergeOptions) {
			o.Thresholds = &result.Thresholds{EtcdSnapshotMaxAgeSeconds: 86400, CAHorizonDays: 30}
		}, "the shards ran with --etcd-snapshot-max-age 86400s --ca-horizon 365d, merge was given --etcd-snapshot-max-age 86400s --ca-horizon 30d"},
		{"another fail-on", func(f *mergeFixture, o *MergeOptions) { f.shards[1].Report.Gate.FailOn = result.SeverityWarning },
			"s1.json ran with --fail-on critical --allow-unreachable=false, s2.json with --fail-on warning"},
		{"another allow-partial", func(f *mergeFixture, o *MergeOptions) { f.shards[1].Report.Gate.AllowPartial = true },
			"s1.json ran with --allow-partial=false, s2.json with --allow-partial=true"},
		{"merge given another allow-partial", func(f *mergeFixture, o *MergeOptions) { o.Rules.Gate.AllowPartial = true },
			"the shards ran with --allow-partial=false, merge was given --allow-partial=true"},
		{"merged by another release", func(f *mergeFixture, o *MergeOptions) { o.ToolVersion = "v2" },
			"the shards were written by fleet-audit v1, this is v2"},
		{"merge given other rules", func(f *mergeFixture, o *MergeOptions) { o.Rules.Selection.Skip = []string{"sysctl.*"} },
			"give merge the --probes, --only, --skip and --waivers the shards ran with"},
		{"merge given other waivers", func(f *mergeFixture, o *MergeOptions) {
			o.Rules.Waivers = []result.Waiver{{Check: "ufw.active", Reason: "r", Expires: "2099-01-01", Source: "w.yaml:1"}}
		}, "give merge the --probes, --only, --skip and --waivers the shards ran with"},
		{"merge given another target version", func(f *mergeFixture, o *MergeOptions) { o.TargetVersion = "v1.32.5+rke2r1" },
			`the shards ran with --target-version "", merge was given "v1.32.5+rke2r1"`},
		{"merge given another fail-on", func(f *mergeFixture, o *MergeOptions) { o.Rules.Gate.AllowUnreachable = true },
			"merge was given --fail-on critical --allow-unreachable=true"},
		{"the same shard twice", func(f *mergeFixture, o *MergeOptions) {
			f.shards = append(f.shards, ShardFile{Path: "s1-again.json", Report: f.shards[0].Report})
		}, "s1.json and s1-again.json are both shard 1/2: give each shard once"},
		{"overlapping nodes", func(f *mergeFixture, o *MergeOptions) {
			f.shards[1].Report.Nodes = append(f.shards[1].Report.Nodes, f.shards[0].Report.Nodes[0])
		}, "s1.json and s2.json both hold node etcd-2: shards must not overlap"},
		{"a node of another shard", func(f *mergeFixture, o *MergeOptions) {
			f.shards[0].Report.Nodes = f.shards[0].Report.Nodes[:1]
			f.shards[1].Report.Nodes = append(f.shards[1].Report.Nodes, result.Node{Name: "worker-2", Status: result.StatusOK})
		}, "s2.json: node worker-2 is not one of shard 2/2's hosts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newMergeFixture()
			o := f.options()
			tc.change(&f, &o)
			r, err := Merge(f.shards, o)
			var me *MergeError
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, &me) {
				t.Errorf("Merge = %v, %v; want a MergeError with %q", r != nil, err, tc.want)
			}
		})
	}
}
