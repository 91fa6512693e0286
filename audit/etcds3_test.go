package audit

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

// TestEtcdS3SnapshotsJudged plants S3 upload problems on etcd-2 of a fleet
// whose three etcd servers all ship snapshots to S3: each is found on
// etcd-2 only, from the ETCDSnapshotFiles the cluster lists, and a longer
// --etcd-snapshot-max-age clears the old-snapshot finding.
func TestEtcdS3SnapshotsJudged(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(nodesim.State) nodesim.State
		want  map[string][]string
		// wantAt48h is the findings with --etcd-snapshot-max-age 48h.
		wantAt48h map[string][]string
	}{
		{"healthy", func(s nodesim.State) nodesim.State { return s }, map[string][]string{}, map[string][]string{}},
		{"uploads stopped 30 h ago", func(s nodesim.State) nodesim.State { return nodesim.WithEtcdS3UploadsFailing(s, 30*time.Hour) },
			map[string][]string{"etcd-2": {"warning etcd.s3-snapshot-old"}}, map[string][]string{}},
		{"no upload ever", func(s nodesim.State) nodesim.State { s = nodesim.WithEtcdS3(s); s.EtcdS3Ages = nil; return s },
			map[string][]string{"etcd-2": {"warning etcd.s3-no-snapshot"}}, map[string][]string{"etcd-2": {"warning etcd.s3-no-snapshot"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var fleet []nodesim.Member
			for i := 1; i <= 3; i++ {
				name := fmt.Sprintf("etcd-%d", i)
				s := nodesim.WithEtcdS3(nodesim.Healthy(name, true))
				if name == "etcd-2" {
					s = tc.plant(nodesim.Healthy(name, true))
				}
				fleet = append(fleet, nodesim.Member{Name: name, Roles: []string{"etcd"}, State: s})
			}
			fleet = append(fleet, nodesim.Member{Name: "worker-1", Roles: []string{"worker"}, State: nodesim.Healthy("worker-1", false)})
			inv, tr := simulate(t, nodesim.WithCluster(fleet))
			r := runSim(t, inv, tr)
			if got := warningsByNode(t, r); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("findings by node =\n%v\nwant\n%v", got, tc.want)
			}
			r.Thresholds = &result.Thresholds{EtcdSnapshotMaxAgeSeconds: 48 * 3600, CAHorizonDays: 365}
			Analyze(r, simRules(t, GatePolicy{FailOn: result.SeverityCritical}))
			if got := warningsByNode(t, r); !reflect.DeepEqual(got, tc.wantAt48h) {
				t.Errorf("with --etcd-snapshot-max-age 48h, findings by node =\n%v\nwant\n%v", got, tc.wantAt48h)
			}
		})
	}
}

// TestEtcdS3ProbeSources pins the cluster probe's reading of the S3
// snapshots: ETCDSnapshotFiles where the API has them (local ones left
// out, counted per node that took them), the rke2-etcd-snapshots
// ConfigMap of older releases where it has not (failed uploads left out),
// neither when neither exists, and unknown when kubectl fails otherwise.
func TestEtcdS3ProbeSources(t *testing.T) {
	fleet := nodesim.WithCluster([]nodesim.Member{
		{Name: "etcd-1", Roles: []string{"etcd"}, State: nodesim.WithEtcdS3(nodesim.Healthy("etcd-1", true))},
		{Name: "etcd-2", Roles: []string{"etcd"}, State: nodesim.Healthy("etcd-2", true)},
	})
	noCRD := nodesim.Command{Name: "kubectl", Path: nodesim.KubectlPath, Args: nodesim.KubectlETCDSnapshotFiles, RC: 1,
		Out: `error: the server doesn't have a resource type "etcdsnapshotfiles"` + "\n"}
	cm := "* -n kube-system get configmap rke2-etcd-snapshots -o jsonpath=*"
	// kubectl prints .data as compact JSON, each value the JSON of k3s's
	// snapshotFile as a string.
	created := time.Now().Add(-5 * time.Hour).UTC().Format(time.RFC3339)
	older := time.Now().Add(-17 * time.Hour).UTC().Format(time.RFC3339)
	entry := func(name, loc, status, at string) string {
		return fmt.Sprintf(`"%s":"{\"name\":\"%s\",\"location\":\"%s\",\"nodeName\":\"cluster-a-etcd-2\",\"createdAt\":\"%s\",\"size\":12,\"status\":\"%s\",\"s3\":{\"endpoint\":\"s3.amazonaws.com\",\"bucket\":\"b\"}}"`, name, name, loc, at, status)
	}
	cmData := "{" + strings.Join([]string{
		entry("s3-a", "s3://b/s3-a", "successful", older),
		entry("s3-b", "s3://b/s3-b", "successful", created),
		entry("s3-c", "s3://b/s3-c", "failed", time.Now().UTC().Format(time.RFC3339)),
		entry("local-a", "file:///var/lib/rancher/rke2/server/db/snapshots/local-a", "successful", created),
	}, ",") + "}"
	for _, tc := range []struct {
		name   string
		answer []nodesim.Command
		source string
		want   map[string][2]string // node → snapshots, ~newest age
	}{
		{"CRD", nil, "crd", map[string][2]string{"cluster-a-etcd-1": {"5", "7200"}, "cluster-a-etcd-2": {"0", "none"}}},
		{"ConfigMap", []nodesim.Command{noCRD, {Name: "kubectl", Path: nodesim.KubectlPath, Args: cm, Out: cmData}}, "configmap",
			map[string][2]string{"cluster-a-etcd-1": {"0", "none"}, "cluster-a-etcd-2": {"2", "18000"}}},
		{"neither", []nodesim.Command{noCRD, {Name: "kubectl", Path: nodesim.KubectlPath, Args: cm, RC: 1,
			Out: `Error from server (NotFound): configmaps "rke2-etcd-snapshots" not found` + "\n"}}, "none",
			map[string][2]string{"cluster-a-etcd-1": {"0", "none"}}},
		{"kubectl fails", []nodesim.Command{{Name: "kubectl", Path: nodesim.KubectlPath, Args: nodesim.KubectlETCDSnapshotFiles, RC: 1,
			Out: "error: You must be logged in to the server (Unauthorized)\n"}}, "unknown",
			map[string][2]string{"cluster-a-etcd-1": {"unknown", "unknown"}}},
	} {
		for _, sh := range probeShells {
			t.Run(tc.name+"/"+strings.Join(sh, "-"), func(t *testing.T) {
				s := fleet[0].State
				for _, c := range tc.answer {
					s.SetCommand(c)
				}
				shell := append([]string{testtools.Find(t, sh[0])}, sh[1:]...)
				p, _ := runProbeOn(t, "cluster", s, nil, shell)
				if got := p.Facts["cluster.etcd.s3.source"]; got != tc.source {
					t.Errorf("cluster.etcd.s3.source = %q, want %q", got, tc.source)
				}
				for node, w := range tc.want {
					f := p.NodeFacts[node]
					if f["k8s.etcd.s3.snapshots"] != w[0] {
						t.Errorf("%s: k8s.etcd.s3.snapshots = %q, want %q", node, f["k8s.etcd.s3.snapshots"], w[0])
					}
					age := f["k8s.etcd.s3.newest_age_seconds"]
					var g, wa int
					if _, err := fmt.Sscan(w[1], &wa); err != nil {
						if age != w[1] {
							t.Errorf("%s: k8s.etcd.s3.newest_age_seconds = %q, want %q", node, age, w[1])
						}
						continue
					}
					if _, err := fmt.Sscan(age, &g); err != nil || g < wa-120 || g > wa+120 {
						t.Errorf("%s: k8s.etcd.s3.newest_age_seconds = %q, want about %d", node, age, wa)
					}
				}
			})
		}
	}
}
