package audit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

const exampleProbes = "../examples/probes"

// runUserProbe runs a probe loaded from a --probes directory as runProbe
// runs an embedded one.
func runUserProbe(t *testing.T, p probe.Probe, s nodesim.State) map[string]string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "node")
	if err := nodesim.Build(root, s); err != nil {
		t.Fatal(err)
	}
	nonce := probe.NewNonce()
	res, err := (&shSession{root: root}).Exec(context.Background(), scriptFor(t, []probe.Probe{p}, probe.Become{}, nonce, p.Timeout+5e9))
	if err != nil {
		t.Fatalf("probe %s: %v", p.ID, err)
	}
	parsed := probe.ParseOutput(res.Stdout, nonce, []probe.Probe{p})
	if r := parsed.Runs[0]; r.Status != result.ProbeOK {
		t.Fatalf("probe %s: status %s exit %d, stderr %q", p.ID, r.Status, r.ExitCode, res.Stderr)
	}
	return parsed.Facts
}

func TestExampleHostsProbe(t *testing.T) {
	probes, checks := userRules(t, exampleProbes)
	if len(probes) != 1 || probes[0].ID != "hosts" || len(checks) != 1 || checks[0].ID != "hosts.self-missing" {
		t.Fatalf("examples: probes %+v checks %+v", probes, checks)
	}
	const debianHosts = "127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\nff02::1\t\tip6-allnodes\n"
	tests := []struct {
		name     string
		hostname string
		hosts    *string
		want     string
	}{
		{"no /etc/hosts", "worker-1", nil, "absent"},
		{"debian default only", "worker-1", ptr(debianHosts), "missing"},
		{"short name", "worker-1", ptr(debianHosts + "127.0.1.1\tworker-1\n"), "present"},
		{"fqdn and short", "worker-1", ptr(debianHosts + "10.0.0.5 worker-1.example.com worker-1 # managed\n"), "present"},
		{"fqdn hostname, short entry", "worker-1.example.com", ptr(debianHosts + "10.0.0.5 worker-1\n"), "present"},
		{"short hostname, fqdn entry only", "worker-1", ptr("10.0.0.5 worker-1.example.com\n"), "present"},
		{"case differs", "Worker-1", ptr("10.0.0.5 worker-1\n"), "present"},
		{"commented out", "worker-1", ptr(debianHosts + "# 10.0.0.5 worker-1\n"), "missing"},
		{"after a comment on the line", "worker-1", ptr("10.0.0.5 other # worker-1\n"), "missing"},
		{"prefix is not a match", "worker-1", ptr("10.0.0.5 worker-10 worker-1x\n"), "missing"},
		{"address is not a name", "10.0.0.5", ptr("10.0.0.5 worker-1\n"), "missing"},
		{"empty file", "worker-1", ptr(""), "missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := nodesim.Healthy(tt.hostname, false)
			s.Files = map[string]string{}
			if tt.hosts != nil {
				s.Files["etc/hosts"] = *tt.hosts
			}
			got := runUserProbe(t, probes[0], s)
			if got["hosts.self"] != tt.want || len(got) != 1 {
				t.Errorf("facts %v, want hosts.self=%s", got, tt.want)
			}
		})
	}
	t.Run("unknown hostname", func(t *testing.T) {
		s := nodesim.Healthy("", false)
		s.Files = map[string]string{"etc/hosts": "10.0.0.5 worker-1\n"}
		if got := runUserProbe(t, probes[0], s)["hosts.self"]; got != "unknown" {
			t.Errorf("hosts.self = %q, want unknown", got)
		}
	})
	t.Run("healthy baseline passes", func(t *testing.T) {
		got := runUserProbe(t, probes[0], nodesim.Healthy("node-1", true))
		res := check.Judge([]result.Node{{Name: "node-1", Status: result.StatusOK, Facts: got}}, nil, checks, nil)
		if len(res) != 1 || res[0].Outcome != result.OutcomePass {
			t.Errorf("healthy node: facts %v, results %+v", got, res)
		}
	})
}

func TestExampleHostsCheck(t *testing.T) {
	_, checks := userRules(t, exampleProbes)
	nodes := []result.Node{
		{Name: "present", Status: result.StatusOK, Facts: map[string]string{"hosts.self": "present"}},
		{Name: "missing", Status: result.StatusOK, Facts: map[string]string{"hosts.self": "missing"}},
		{Name: "absent", Status: result.StatusOK, Facts: map[string]string{"hosts.self": "absent"}},
		{Name: "unknown", Status: result.StatusOK, Facts: map[string]string{"hosts.self": "unknown"}},
		{Name: "not-collected", Status: result.StatusOK, Facts: map[string]string{}},
	}
	want := map[string]result.Outcome{"present": result.OutcomePass, "missing": result.OutcomeFail, "absent": result.OutcomePass, "unknown": result.OutcomePass, "not-collected": result.OutcomeSkip}
	for _, r := range check.Judge(nodes, nil, checks, nil) {
		if r.Outcome != want[r.Node] {
			t.Errorf("%s on %s: %s (%s), want %s", r.Check, r.Node, r.Outcome, r.Detail, want[r.Node])
		}
	}
	fs := check.CheckFindings(checks, check.Judge(nodes, nil, checks, nil))
	if len(fs) != 1 || fs[0].Severity != result.SeverityWarning || strings.Join(fs[0].Nodes, ",") != "missing" {
		t.Errorf("findings %+v", fs)
	}
}

func ptr(s string) *string { return &s }

// TestLargeProbeRuns runs probes larger than one exec argument may be
// (Linux MAX_ARG_STRLEN, 32 pages: 128 KiB) under every shell the probes
// must support: the text is never an exec argument (the probe runs in a
// subshell of the session's shell), and the probe reads an empty stdin, not
// the rest of the bundle.
func TestLargeProbeRuns(t *testing.T) {
	const argMax = 32 * 4096
	probeOfSize := func(size int) probe.Probe {
		text := "# id: big\n# description: d\n# needs_root: false\n# timeout: 10s\n# facts: big.tail big.stdin\n" +
			strings.Repeat("# padding to make the probe large\n", size/34+1) +
			"fact big.stdin \"$(cat | wc -c | tr -d ' ')\"\nfact big.tail reached\n"
		p, err := probe.ParseProbe("big.sh", text)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, size := range []int{1 << 10, argMax + 1, probe.MaxProbeScriptBytes - 4<<10} {
		for _, sh := range probeShells {
			t.Run(fmt.Sprintf("%d bytes under %s", size, strings.Join(sh, " ")), func(t *testing.T) {
				p := []probe.Probe{probeOfSize(size)}
				root := filepath.Join(t.TempDir(), "node")
				if err := nodesim.Build(root, nodesim.Healthy("n", false)); err != nil {
					t.Fatal(err)
				}
				nonce := probe.NewNonce()
				shell := append([]string{testtools.Find(t, sh[0])}, sh[1:]...)
				res, err := (&shSession{root: root, shell: shell}).Exec(context.Background(), scriptFor(t, p, probe.Become{}, nonce, 30*time.Second))
				if err != nil {
					t.Fatal(err)
				}
				parsed := probe.ParseOutput(res.Stdout, nonce, p)
				if r := parsed.Runs[0]; r.Status != result.ProbeOK || parsed.Facts["big.tail"] != "reached" || parsed.Facts["big.stdin"] != "0" {
					t.Fatalf("status %s exit %d, facts %v; stderr %q", r.Status, r.ExitCode, parsed.Facts, res.Stderr)
				}
			})
		}
	}
}

// TestFailedProbeIsNotAPass runs a fleet where one user probe fails (a
// non-zero exit, as a shell that cannot run it exits 126) and one prints
// no end marker: the node is probe_failed or error, never ok, the check
// that reads the failed probe's fact is skipped, and the gate does not pass
// silently: exit 3, as for any node not fully audited, unless
// --allow-unreachable lets it through with the reason said.
func TestFailedProbeIsNotAPass(t *testing.T) {
	failing := "# id: site\n# description: d\n# needs_root: false\n# timeout: 5s\n# facts: site.a site.b\nfact site.a 1\nexit 126\n"
	checkYAML := "- id: site.b-zero\n  title: t\n  severity: critical\n  when:\n    - {fact: site.b, op: eq, value: \"0\"}\n  summary: s\n  remediation: r\n"
	probes, err := probe.BuiltinProbes()
	if err != nil {
		t.Fatal(err)
	}
	checks, err := check.BuiltinChecks()
	if err != nil {
		t.Fatal(err)
	}
	user, userChecks := userRules(t, testtools.WriteDir(t, map[string]string{"site.sh": failing, "site.yaml": checkYAML}))
	tests := []struct {
		name    string
		allow   bool
		code    int
		reasons string
	}{
		{"gate", false, result.ExitUnaudited, "1 of 2 nodes not fully audited"},
		{"--allow-unreachable", true, result.ExitOK, "1 of 2 nodes not fully audited (allowed by --allow-unreachable)"},
	}
	// The fleet runs once; each gate policy judges what it gave.
	fleet := nodesim.Clean(2)
	inv, tr := simulate(t, fleet)
	// The probe fails on node-2 only: node-1's site.sh is
	// replaced below by one that succeeds.
	good := filepath.Join(tr.roots["node-1"], "bin", ".site-ok")
	if err := os.WriteFile(good, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ps := append(append([]probe.Probe{}, probes...), user...)
	for i, p := range ps {
		if p.ID == "site" {
			p.Script = strings.Replace(p.Script, "exit 126", `[ -e "$R/bin/.site-ok" ] && { fact site.b 1; exit 0; }; exit 126`, 1)
			ps[i] = p
		}
	}
	cs := append(append([]check.Check{}, checks...), userChecks...)
	run, err := Run(context.Background(), RunOptions{Fleet: inv, Transport: tr, Forks: 2, NodeTimeout: time.Minute,
		Rules: Rules{Probes: ps, Checks: cs, Gate: GatePolicy{FailOn: result.SeverityCritical}}})
	if err != nil {
		t.Fatal(err)
	}
	nodeProbes, clusterProbes := probe.SplitScope(ps)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &result.Report{Nodes: run.Nodes, Cluster: run.Cluster, StartedAt: run.StartedAt}
			Analyze(r, Rules{Probes: append(nodeProbes, clusterProbes...), Checks: cs,
				Gate: GatePolicy{FailOn: result.SeverityCritical, AllowUnreachable: tc.allow}})
			byName := map[string]result.Node{}
			for _, n := range r.Nodes {
				byName[n.Name] = n
			}
			if n := byName["node-1"]; n.Status != result.StatusOK {
				t.Errorf("node-1: %s %q, want ok", n.Status, n.Message)
			}
			n := byName["node-2"]
			if n.Status != result.StatusProbeFailed || !strings.Contains(n.Message, "probe site (exit 126)") {
				t.Errorf("node-2: %s %q, want probe_failed naming site (exit 126)", n.Status, n.Message)
			}
			if n.Facts["site.a"] != "1" || n.Facts["os.kernel"] == "" {
				t.Errorf("node-2 lost the facts it did report: %v", n.Facts)
			}
			if r.Gate.ExitCode != tc.code || !slices.Contains(r.Gate.Reasons, tc.reasons) {
				t.Errorf("gate = %+v, want exit %d with %q", r.Gate, tc.code, tc.reasons)
			}
		})
	}
	if run.Gate.ExitCode != tests[0].code {
		t.Errorf("Run's own gate = %+v, want exit %d", run.Gate, tests[0].code)
	}
}
