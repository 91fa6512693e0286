package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/internal/testtools"
)

// TestRunLocalReadsThisMachine audits the machine the test runs on through
// `fleet-audit run` with a connection: local host, and compares what the
// report says with what the kernel says: nf_conntrack_max read under the
// system /bin/sh (dash on Debian, where a byte-at-a-time read once reported
// 262144 as "2"), ip_forward, the kernel release. The audit package's
// ground-truth test covers every fact and shell; this one holds the whole
// path from the command line to the JSON report.
func TestRunLocalReadsThisMachine(t *testing.T) {
	testtools.SkipShort(t, "runs the whole probe bundle on this machine")
	dir := t.TempDir()
	inv := filepath.Join(dir, "inventory.yaml")
	if err := os.WriteFile(inv, []byte("name: local\nhosts:\n  this-machine:\n    connection: local\n    roles: [worker]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "results.json")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"fleet-audit", "run", "-i", inv, "--json", out, "-q"}, &stdout, &stderr)
	if code == int(exitUsage) {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("exit %d, no report: %v\n%s", code, err, stderr.String())
	}
	var rep struct {
		Nodes []struct {
			Name   string            `json:"name"`
			Status string            `json:"status"`
			Facts  map[string]string `json:"facts"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Nodes) != 1 || rep.Nodes[0].Status != "ok" {
		t.Fatalf("nodes = %+v, want this machine audited", rep.Nodes)
	}
	facts := rep.Nodes[0].Facts
	for fact, file := range map[string]string{
		"conntrack.max":              "/proc/sys/net/netfilter/nf_conntrack_max",
		"sysctl.net.ipv4.ip_forward": "/proc/sys/net/ipv4/ip_forward",
		"os.kernel":                  "/proc/sys/kernel/osrelease",
	} {
		want := "absent"
		if b, err := os.ReadFile(file); err == nil {
			want = strings.TrimSpace(string(b))
		}
		if facts[fact] != want {
			t.Errorf("%s = %q, cat %s says %q", fact, facts[fact], file, want)
		}
	}
}
