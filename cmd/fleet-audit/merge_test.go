package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/cmd/fleet-audit/internal/demo"
	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/sshfleet"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/report"
	"github.com/fleet-audit/fleet-audit/result"
)

// TestMergeEqualsOneRun: the incident fleet audited once, and as 3 shards
// merged, gives the same report: findings, drift, gate and every format,
// byte for byte once the times (started, finished, durations) are zeroed.
// The shards split the fleet so that each holds servers (the cluster view
// of each is another server's) and every correlation's failing nodes span
// shards, so a merge that kept a shard's judgement, joined cluster facts
// from the wrong view or ordered nodes by shard fails here.
func TestMergeEqualsOneRun(t *testing.T) {
	testtools.SkipShort(t, "audits the incident fleet four times")
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	out := t.TempDir()
	// The shards run the bundles the whole run ran: replayed.
	fl, err := demo.Start(ctx, dir, nodesim.Incident(), demo.Options{Replay: &sshfleet.Replay{}})
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Close()
	cli := func(argv ...string) (int, string) {
		t.Helper()
		code, _, stderr := runProcess(ctx, t, dir, nil, argv...)
		return code, stderr
	}

	single := filepath.Join(out, "single.json")
	singleCode, stderr := cli("run", "-i", fl.InventoryPath, "--json", single)
	if singleCode != int(exitGateFailed) {
		t.Fatalf("the single run exited %d, want %d (UFW on four nodes): %s", singleCode, exitGateFailed, stderr)
	}
	const n = 3
	var shards []string
	servers := map[int]bool{}
	for k := 1; k <= n; k++ {
		p := filepath.Join(out, fmt.Sprintf("shard-%d.json", k))
		if code, stderr := cli("run", "-i", fl.InventoryPath, "--shard", fmt.Sprintf("%d/%d", k, n), "--run-id", "merge-test", "--json", p); code > int(exitUnaudited) {
			t.Fatalf("shard %d/%d exited %d: %s", k, n, code, stderr)
		}
		r := readResults(t, p)
		if r.Shard == nil || r.Shard.Index != k || len(r.Nodes) == 0 {
			t.Fatalf("shard %d/%d: shard record %+v with %d nodes", k, n, r.Shard, len(r.Nodes))
		}
		if r.Cluster != nil && r.Cluster.Status == result.ClusterOK {
			servers[k] = true
		}
		shards = append(shards, p)
	}
	if len(servers) < 2 {
		t.Fatalf("only shards %v had a cluster view: the test no longer shows merge choosing among them", servers)
	}

	mergedDir := filepath.Join(out, "merged")
	if err := os.Mkdir(mergedDir, 0o755); err != nil {
		t.Fatal(err)
	}
	code, stderr := cli(append(append([]string{"merge"}, shards...), everyReport(mergedDir)...)...)
	if code != singleCode {
		t.Errorf("merge exited %d, the single run %d: %s", code, singleCode, stderr)
	}
	for _, f := range report.FileFormats() {
		if st, err := os.Stat(filepath.Join(mergedDir, f.DemoFile)); err != nil || st.Size() == 0 {
			t.Errorf("merge did not write its %s report: %v", f.Name, err)
		}
	}
	want, got := untimed(readResults(t, single)), untimed(readResults(t, filepath.Join(mergedDir, "results.json")))
	if got.Shard != nil {
		t.Errorf("the merged report is marked as a shard: %+v", got.Shard)
	}
	for _, part := range []struct {
		name      string
		got, want any
	}{
		{"gate", got.Gate, want.Gate},
		{"findings", got.Findings, want.Findings},
		{"drift", got.Drift, want.Drift},
		{"nodes", got.Nodes, want.Nodes},
		{"cluster", got.Cluster, want.Cluster},
		{"checks", got.Checks, want.Checks},
	} {
		if !reflect.DeepEqual(part.got, part.want) {
			g, _ := json.MarshalIndent(part.got, "", " ")
			w, _ := json.MarshalIndent(part.want, "", " ")
			t.Errorf("merged %s differ from the single run's:\nmerged: %s\nsingle: %s", part.name, g, w)
		}
	}
	for _, f := range append(report.Names(), "terminal") {
		var a, b bytes.Buffer
		// Each report gets the plan the CLI builds for it.
		fa, err := report.New(f, report.Options{Plan: planOf(t, want)})
		if err != nil {
			t.Fatal(err)
		}
		fb, _ := report.New(f, report.Options{Plan: planOf(t, got)})
		if err := fa.Format(&a, want); err != nil {
			t.Fatal(err)
		}
		if err := fb.Format(&b, got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("%s: the merged report differs from the single run's", f)
		}
	}
}

// untimed is r with every time zeroed: when it ran, how long each node
// took. Nothing else of a run may differ between one run and merged shards.
func untimed(r *result.Report) *result.Report {
	r.StartedAt, r.FinishedAt = time.Time{}, time.Time{}
	for i := range r.Nodes {
		r.Nodes[i].DurationSeconds = 0
		// The shards and the single run read the nodes' clocks at other
		// seconds.
		for _, k := range nodesim.ClockFacts {
			if _, ok := r.Nodes[i].Facts[k]; ok {
				r.Nodes[i].Facts[k] = "(clock)"
			}
		}
	}
	// A check's detail quotes the facts it read, a clock fact among them
	// (etcd.snapshot-old's age of the newest snapshot).
	for i := range r.Checks {
		for _, k := range nodesim.ClockFacts {
			r.Checks[i].Detail = regexp.MustCompile(regexp.QuoteMeta(k)+`=[^,;]*`).ReplaceAllString(r.Checks[i].Detail, k+"=(clock)")
		}
	}
	return r
}
