package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

// TestEtcdPlantedFoundOnItsNodeOnly plants one etcd problem on each of six
// of seven etcd servers (an odd member count), beside a healthy member, a
// control-plane-only server (disable-etcd) and an agent: each problem is
// found on exactly its node, and nothing anywhere else.
func TestEtcdPlantedFoundOnItsNodeOnly(t *testing.T) {
	plants := []struct {
		apply func(nodesim.State) nodesim.State
		want  []string
	}{
		{nodesim.WithEtcdSnapshotsDisabled, []string{"warning etcd.snapshots-disabled"}},
		{nodesim.WithoutEtcdSnapshots, []string{"critical etcd.no-snapshot"}},
		{func(s nodesim.State) nodesim.State { return nodesim.WithEtcdSnapshotsAged(s, 30*time.Hour) }, []string{"warning etcd.snapshot-old"}},
		// /health is false without a leader (RAFT NO LEADER): both say so.
		{nodesim.WithEtcdNoLeader, []string{"critical etcd.no-leader", "critical etcd.unhealthy"}},
		{func(s nodesim.State) nodesim.State { return nodesim.WithEtcdDBUsed(s, 85) }, []string{"warning etcd.db-near-quota"}},
		{func(s nodesim.State) nodesim.State { return nodesim.WithEtcdDBUsed(s, 97) }, []string{"critical etcd.db-at-quota"}},
		{func(s nodesim.State) nodesim.State { return s }, nil},
	}
	var fleet []nodesim.Member
	want := map[string][]string{}
	for i, p := range plants {
		name := fmt.Sprintf("etcd-%d", i+1)
		fleet = append(fleet, nodesim.Member{Name: name, Roles: []string{"etcd"}, State: p.apply(nodesim.Healthy(name, true))})
		if p.want != nil {
			want[name] = p.want
		}
	}
	fleet = append(fleet,
		nodesim.Member{Name: "cp-1", Roles: []string{"control-plane"}, State: nodesim.WithoutEtcd(nodesim.Healthy("cp-1", true))},
		nodesim.Member{Name: "worker-1", Roles: []string{"worker"}, State: nodesim.Healthy("worker-1", false)})
	inv, tr := simulate(t, nodesim.WithCluster(fleet))
	r := runSim(t, inv, tr)
	if r.Cluster == nil || r.Cluster.Status != result.ClusterOK || r.Cluster.Facts["cluster.etcd.members"] != "7" {
		t.Fatalf("cluster = %+v", r.Cluster)
	}
	if got := warningsByNode(t, r); !reflect.DeepEqual(got, want) {
		t.Errorf("findings by node =\n%v\nwant\n%v", got, want)
	}
	// Nodes without etcd are never unjudged: not applicable on the agent
	// (its etcd facts are server_only), passed on the disable-etcd server.
	for _, c := range r.Checks {
		if !strings.HasPrefix(c.Check, "etcd.") || (c.Node != "cp-1" && c.Node != "worker-1") {
			continue
		}
		wantOutcome := map[string]result.Outcome{"cp-1": result.OutcomePass, "worker-1": result.OutcomeNotApplicable}[c.Node]
		if c.Outcome != wantOutcome {
			t.Errorf("%s on %s: %s (%s), want %s", c.Check, c.Node, c.Outcome, c.Detail, wantOutcome)
		}
	}
}

// TestEtcdEvenMembersIsAClusterFinding: the member count comes from the
// Nodes RKE2 labels node-role.kubernetes.io/etcd; 2 and 4 members are a
// warning, 1 and 3 are not, and a control-plane-only server is no member.
func TestEtcdEvenMembersIsAClusterFinding(t *testing.T) {
	for _, tc := range []struct {
		etcd, cpOnly int
		even         bool
	}{
		{1, 0, false}, {2, 0, true}, {3, 1, false}, {2, 1, true},
	} {
		t.Run(fmt.Sprintf("%d-etcd-%d-cp", tc.etcd, tc.cpOnly), func(t *testing.T) {
			var fleet []nodesim.Member
			for i := 1; i <= tc.etcd; i++ {
				name := fmt.Sprintf("etcd-%d", i)
				fleet = append(fleet, nodesim.Member{Name: name, Roles: []string{"etcd"}, State: nodesim.Healthy(name, true)})
			}
			for i := 1; i <= tc.cpOnly; i++ {
				name := fmt.Sprintf("cp-%d", i)
				fleet = append(fleet, nodesim.Member{Name: name, Roles: []string{"control-plane"}, State: nodesim.WithoutEtcd(nodesim.Healthy(name, true))})
			}
			inv, tr := simulate(t, nodesim.WithCluster(fleet))
			r := runSim(t, inv, tr)
			if got := r.Cluster.Facts["cluster.etcd.members"]; got != fmt.Sprint(tc.etcd) {
				t.Errorf("cluster.etcd.members = %q, want %d", got, tc.etcd)
			}
			var loudFindings []string
			found := false
			for _, f := range r.Findings {
				if f.Severity < result.SeverityWarning {
					continue
				}
				loudFindings = append(loudFindings, f.Check)
				found = found || f.Check == "etcd.members-even"
			}
			if found != tc.even || len(loudFindings) != map[bool]int{true: 1, false: 0}[tc.even] {
				t.Errorf("loud findings %v, want etcd.members-even: %v and nothing else", loudFindings, tc.even)
			}
		})
	}
}

// TestEtcdProbeFacts pins the probe's reading of a node's state: what it
// says on each kind of node, and that S3 in a config.yaml.d drop-in is
// seen without any other line of the files (the token, the S3 secret key)
// ever reaching its output, under every shell a probe must run under.
func TestEtcdProbeFacts(t *testing.T) {
	server := nodesim.Healthy("s1", true)
	for _, tc := range []struct {
		name  string
		state nodesim.State
		tweak func(root string)
		want  map[string]string
	}{
		{"healthy member", server, nil, map[string]string{
			"etcd.snapshot.count": "5", "etcd.snapshot.newest_age_seconds": "~7200", "etcd.snapshot.disabled": "no", "etcd.snapshot.s3": "no",
			"etcd.snapshot.dir": "/var/lib/rancher/rke2/server/db/snapshots", "etcd.health": "healthy", "etcd.metrics.status": "ok",
			"etcd.has_leader": "1", "etcd.leader_changes": "1", "etcd.db_size_bytes": "25165824", "etcd.quota_bytes": "2147483648",
			"etcd.db_quota_used_pct": "1.2", "etcd.snapshot.mount": "/", "etcd.snapshot.disk_used_pct": "40"}},
		{"agent", nodesim.Healthy("a1", false), nil, map[string]string{"etcd.snapshot.count": "absent", "etcd.health": "absent", "etcd.has_leader": "absent"}},
		{"server with disable-etcd", nodesim.WithoutEtcd(server), nil, map[string]string{"etcd.snapshot.count": "absent", "etcd.health": "absent", "etcd.db_quota_used_pct": "absent"}},
		{"S3 in a drop-in", nodesim.WithEtcdS3(server), nil, map[string]string{"etcd.snapshot.s3": "yes", "etcd.snapshot.disabled": "no"}},
		{"disabled snapshots", nodesim.WithEtcdSnapshotsDisabled(server), nil, map[string]string{"etcd.snapshot.disabled": "yes", "etcd.snapshot.newest_age_seconds": "~777600"}},
		{"no snapshot yet", nodesim.WithoutEtcdSnapshots(server), nil, map[string]string{"etcd.snapshot.count": "0", "etcd.snapshot.newest_age_seconds": "none"}},
		{"db near quota", nodesim.WithEtcdDBUsed(server, 85), nil, map[string]string{"etcd.db_quota_used_pct": "85.0", "etcd.health": "healthy"}},
		// etcd's listener down on an etcd node: could not read, not absent.
		{"metrics not answering", server, func(root string) {
			for _, f := range []string{"health", "metrics"} {
				for _, ext := range []string{".code", ".body"} {
					if err := os.Remove(filepath.Join(root, "state/http/127.0.0.1_2381_"+f+ext)); err != nil {
						t.Fatal(err)
					}
				}
			}
		}, map[string]string{"etcd.health": "not-answering", "etcd.metrics.status": "connect-failed", "etcd.has_leader": "unknown", "etcd.db_quota_used_pct": "unknown", "etcd.snapshot.count": "5"}},
	} {
		for _, sh := range probeShells {
			t.Run(tc.name+"/"+strings.Join(sh, "-"), func(t *testing.T) {
				shell := append([]string{testtools.Find(t, sh[0])}, sh[1:]...)
				p, out := runProbeOn(t, "etcd", tc.state, tc.tweak, shell)
				for k, v := range tc.want {
					got := p.Facts[k]
					if approx, ok := strings.CutPrefix(v, "~"); ok {
						var g, w int
						if _, err := fmt.Sscan(got, &g); err != nil {
							t.Errorf("%s = %q, want about %s", k, got, approx)
							continue
						}
						fmt.Sscan(approx, &w)
						if g < w-60 || g > w+60 {
							t.Errorf("%s = %d, want %d ± 60", k, g, w)
						}
						continue
					}
					if got != v {
						t.Errorf("%s = %q, want %q", k, got, v)
					}
				}
				for _, secret := range []string{"s3cr3t", "K10aaaa", "never read by a probe"} {
					if strings.Contains(out, secret) {
						t.Errorf("the probe's output holds %q:\n%s", secret, out)
					}
				}
			})
		}
	}
}

// TestEtcdChecksOnUnreadMetricsCouldNotJudge: on an etcd node whose
// 2381 answered nothing, every check on etcd's metrics is "could not
// judge" (the metrics status as evidence), never passed or skipped, and
// the health check fails: the listener is down.
func TestEtcdChecksOnUnreadMetricsCouldNotJudge(t *testing.T) {
	checks := builtinChecksByID(t)
	facts := map[string]string{
		"etcd.health": "not-answering", "etcd.metrics.status": "connect-failed", "etcd.has_leader": "unknown",
		"etcd.leader_changes": "unknown", "etcd.db_size_bytes": "unknown", "etcd.quota_bytes": "unknown", "etcd.db_quota_used_pct": "unknown",
	}
	for id, want := range map[string]result.Outcome{
		"etcd.no-leader":     result.OutcomeUnjudged,
		"etcd.db-near-quota": result.OutcomeUnjudged,
		"etcd.db-at-quota":   result.OutcomeUnjudged,
		"etcd.unhealthy":     result.OutcomeFail,
	} {
		c, ok := checks[id]
		if !ok {
			t.Fatalf("no check %s", id)
		}
		if got, detail := c.Evaluate(facts); got != want {
			t.Errorf("%s: %s (%s), want %s", id, got, detail, want)
		} else if want == result.OutcomeUnjudged && !strings.Contains(detail, "etcd.metrics.status=connect-failed") {
			t.Errorf("%s: detail %q does not say why", id, detail)
		}
	}
}
