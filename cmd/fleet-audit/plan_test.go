package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/audit"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

// demoPlan runs the demo in-process and returns the directory of its
// reports: the incident fleet, UFW active on etcd-1, etcd-2, worker-2 and
// worker-4 (nodesim.Incident).
func demoPlan(t *testing.T) string {
	t.Helper()
	testtools.SkipShort(t, "audits the demo fleet over SSH")
	out := t.TempDir()
	isolateClient(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	if code := run(ctx, []string{"fleet-audit", "demo", "--out", out, "--change-id", "CHG-18", "--target-version", "v1.32.5+rke2r1"}, &stdout, &stderr); code != 0 {
		t.Fatalf("demo exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	return out
}

// seedOrder is the recovery rollout of the seed incident: the etcd nodes one
// at a time, then the failing workers.
var seedOrder = []string{"etcd-1", "etcd-2", "worker-2", "worker-4"}

// The demo's runbook starts with the seed's: one fix (UFW), resolving the
// probable cause, on etcd-1 and etcd-2 one at a time, then worker-2 and
// worker-4; the demo's two warnings follow it, each its own fix (etcd-3's
// snapshots, worker-1's drain); and the playbook says the same, one node
// at a time, and passes ansible-playbook --syntax-check with an inventory
// of the demo's nodes.
func TestDemoPlan(t *testing.T) {
	out := demoPlan(t)
	// The demo's failing nodes are the seed's, so the order below is the
	// seed's and not one the demo happens to produce.
	var failing []string
	for _, f := range readResults(t, filepath.Join(out, "results.json")).Findings {
		if f.Kind == result.KindCorrelation && f.Cause != nil {
			failing = f.Nodes
		}
	}
	if want := slices.Sorted(slices.Values(seedOrder)); !slices.Equal(slices.Sorted(slices.Values(failing)), want) {
		t.Fatalf("the demo's probable cause is on %v, the seed's nodes are %v", failing, want)
	}
	md, err := os.ReadFile(filepath.Join(out, "plan.md"))
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, m := range regexp.MustCompile(`(?m)^# node: (.*)$`).FindAllStringSubmatch(string(md), -1) {
		order = append(order, m[1])
	}
	if want := append(slices.Clone(seedOrder), "etcd-3"); !slices.Equal(order, want) {
		t.Errorf("plan.md command blocks are for %v, want the seed's order, then etcd-3: %v", order, want)
	}
	var steps []string
	for _, m := range regexp.MustCompile(`(?m)^### Step (.*)$`).FindAllStringSubmatch(string(md), -1) {
		steps = append(steps, m[1])
	}
	if want := []string{"1.1: etcd, one at a time", "1.2: worker", "2.1: etcd, one at a time", "3.1: worker"}; !slices.Equal(steps, want) {
		t.Errorf("plan.md steps = %q, want the seed's fix (etcd one at a time, then worker), then etcd-3's and worker-1's: %q", steps, want)
	}
	for _, want := range []string{
		"# Remediation plan: CHG-18", "target version `v1.32.5+rke2r1`", "fleet-audit never runs this plan",
		"resolves `correlation.k8s.kubeproxy-crashloop`, `firewall.ufw-active`",
		"systemctl disable ufw", "curl -s --noproxy '*' -m 5 -o /dev/null -w '%{http_code}' http://$h:10256/healthz); [ \"$c\" != 000 ] && break; done; echo \"$c\"` prints 200",
		"**Stop the rollout if**",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("plan.md lacks %q", want)
		}
	}

	playbook := filepath.Join(out, "plan.yml")
	plays := readPlaybook(t, playbook)
	var hosts [][]string
	for _, p := range plays {
		hosts = append(hosts, p.Hosts)
		if p.Serial != 1 || !p.AnyErrorsFatal || p.MaxFailPercentage == nil || *p.MaxFailPercentage != 0 || !p.Become || p.GatherFacts {
			t.Errorf("play %q: serial %d, any_errors_fatal %v, max_fail_percentage %v, become %v, gather_facts %v; want 1, true, 0, true, false",
				p.Name, p.Serial, p.AnyErrorsFatal, p.MaxFailPercentage, p.Become, p.GatherFacts)
		}
	}
	if want := [][]string{seedOrder[:2], seedOrder[2:], {"etcd-3"}, {"worker-1"}}; !slices.EqualFunc(hosts, want, slices.Equal) {
		t.Errorf("playbook hosts = %v, want %v", hosts, want)
	}

	ansible := testtools.Find(t, "ansible-playbook")
	inv := filepath.Join(t.TempDir(), "hosts.ini")
	if err := os.WriteFile(inv, []byte("[demo]\n"+strings.Join(demoNodes, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"--syntax-check", "--list-hosts"} {
		cmd := exec.Command(ansible, "-i", inv, mode, playbook)
		cmd.Env = append(os.Environ(), "ANSIBLE_NOCOLOR=1", "ANSIBLE_LOCAL_TEMP="+t.TempDir(), "ANSIBLE_HOME="+t.TempDir())
		got, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("ansible-playbook %s: %v\n%s", mode, err, got)
		}
		// A host of a play that the inventory does not have is a warning,
		// not an error, to Ansible: the plan would skip that node.
		if strings.Contains(string(got), "Could not match supplied host pattern") {
			t.Errorf("ansible-playbook %s: a play names a host the demo's inventory lacks:\n%s", mode, got)
		}
	}
}

func readPlaybook(t *testing.T, path string) []testtools.AnsiblePlay {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return testtools.ReadPlays(t, data)
}

// planOf is the plan the CLI builds for r.
func planOf(t *testing.T, r *result.Report) *result.Plan {
	t.Helper()
	p, err := audit.PlanFindings(r)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
