package audit

import (
	"slices"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/result"
)

// TestThresholdsChangeTheVerdict: the same facts (a newest etcd snapshot
// 30 h old, a CA with 200 days left) are judged against the run's
// thresholds, the defaults when a report has none (one written before they
// were flags), and the evidence names the threshold used.
func TestThresholdsChangeTheVerdict(t *testing.T) {
	for _, tc := range []struct {
		name       string
		thresholds *result.Thresholds
		want       []string
		evidence   []string
	}{
		{"defaults", nil, []string{"certs.ca-expires-soon", "etcd.snapshot-old"},
			[]string{"run.ca_horizon_days=365", "run.etcd_snapshot_max_age_seconds=86400"}},
		{"older snapshots allowed", &result.Thresholds{EtcdSnapshotMaxAgeSeconds: 48 * 3600, CAHorizonDays: 365}, []string{"certs.ca-expires-soon"},
			[]string{"run.ca_horizon_days=365"}},
		{"a shorter horizon", &result.Thresholds{EtcdSnapshotMaxAgeSeconds: 86400, CAHorizonDays: 100}, []string{"etcd.snapshot-old"},
			[]string{"run.etcd_snapshot_max_age_seconds=86400"}},
		{"a stricter snapshot age", &result.Thresholds{EtcdSnapshotMaxAgeSeconds: 3600, CAHorizonDays: 730}, []string{"certs.ca-expires-soon", "etcd.snapshot-old"},
			[]string{"run.ca_horizon_days=730", "run.etcd_snapshot_max_age_seconds=3600"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &result.Report{Thresholds: tc.thresholds, Nodes: []result.Node{{
				Name: "etcd-1", Roles: []string{"etcd"}, Status: result.StatusOK,
				Facts: map[string]string{
					"etcd.snapshot.disabled": "no", "etcd.snapshot.newest_age_seconds": "108000",
					"certs.ca.days_left": "200",
				},
			}}}
			Analyze(r, simRules(t, GatePolicy{FailOn: result.SeverityCritical}))
			var got, evidence []string
			for _, f := range r.Findings {
				if f.Check != "etcd.snapshot-old" && f.Check != "certs.ca-expires-soon" {
					continue
				}
				got = append(got, f.Check)
				for _, e := range f.Evidence {
					for _, w := range strings.Split(e, ", ") {
						if strings.HasPrefix(w, "run.") {
							evidence = append(evidence, w)
						}
					}
				}
			}
			slices.Sort(got)
			slices.Sort(evidence)
			if !slices.Equal(got, tc.want) || !slices.Equal(evidence, tc.evidence) {
				t.Errorf("findings %v with evidence %v, want %v with %v", got, evidence, tc.want, tc.evidence)
			}
		})
	}
}

// TestMergeKeepsThresholds: the merged report is judged with, and records,
// the thresholds its shards ran with; a shard written before they were
// flags was judged with the defaults, which merge given none matches.
func TestMergeKeepsThresholds(t *testing.T) {
	th := &result.Thresholds{EtcdSnapshotMaxAgeSeconds: 7200, CAHorizonDays: 30}
	for _, tc := range []struct {
		name   string
		shards [2]*result.Thresholds
		merge  *result.Thresholds
	}{
		{"given", [2]*result.Thresholds{th, th}, th},
		{"none is the defaults", [2]*result.Thresholds{nil, {EtcdSnapshotMaxAgeSeconds: 86400, CAHorizonDays: 365}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newMergeFixture()
			o := f.options()
			for i := range f.shards {
				f.shards[i].Report.Thresholds = tc.shards[i]
			}
			o.Thresholds = tc.merge
			r, err := Merge(f.shards, o)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := *thresholdsOrDefault(r.Thresholds), *thresholdsOrDefault(tc.merge); got != want {
				t.Errorf("merged thresholds %+v, want %+v", got, want)
			}
		})
	}
}
