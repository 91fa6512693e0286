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

func writeDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const okProbe = "# id: site\n# description: d\n# needs_root: false\n# timeout: 5s\n# facts: site.a site.b\nfact site.a 1\nfact site.b 2\n"

const okCheck = `- id: site.a-zero
  title: t
  severity: warning
  when:
    - {fact: site.a, op: eq, value: "0"}
  summary: s
  remediation: r
`

func TestLoadProbeDir(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		err   []string
		// probes and checks: ids loaded, comma-joined.
		probes, checks string
	}{
		{name: "probe and check", files: map[string]string{"site.sh": okProbe, "site.yaml": okCheck}, probes: "site", checks: "site.a-zero"},
		{name: "check on builtin and global facts only", files: map[string]string{"c.yml": `- id: site.kernel-old
  title: t
  severity: info
  when:
    - {fact: os.kernel, op: version_lt, value: "5.10"}
    - {fact: rke2.version, op: version_lt, ref: target.version}
  summary: s
  remediation: r
`}, checks: "site.kernel-old"},
		{name: "other files are ignored", files: map[string]string{"site.sh": okProbe, "README.md": "# notes", ".site.sh.swp": "x"}, probes: "site"},
		{name: "empty dir", files: map[string]string{"README": "x"}, err: []string{"no *.sh probe or *.yaml checks file"}},
		{name: "probe over the size cap", files: map[string]string{"big.sh": okProbe + strings.Repeat("# padding\n", probe.MaxProbeScriptBytes/10+1)},
			err: []string{"big.sh: ", "bytes, more than the 1048576"}},
		{name: "probe with a NUL byte", files: map[string]string{"nul.sh": okProbe + "echo a\x00b\n"},
			err: []string{"nul.sh:8: a NUL byte"}},
		{name: "probe id of a builtin", files: map[string]string{"fw.sh": strings.Replace(okProbe, "id: site", "id: firewall", 1)},
			err: []string{"fw.sh:1: id: probe \"firewall\" is already defined by builtin probe firewall"}},
		{name: "fact key of a builtin", files: map[string]string{"site.sh": strings.Replace(okProbe, "site.b", "ufw.active", 1)},
			err: []string{"site.sh:5: facts: \"ufw.active\" is already emitted by builtin probe firewall"}},
		{name: "two user probes with one id", files: map[string]string{"a.sh": okProbe, "b.sh": strings.Replace(okProbe, "site.a site.b", "site.c", 1)},
			err: []string{"b.sh:1: id: probe \"site\" is already defined by", "a.sh"}},
		{name: "two user probes with one fact", files: map[string]string{"a.sh": okProbe, "b.sh": strings.Replace(okProbe, "id: site", "id: other", 1)},
			err: []string{"b.sh:5: facts: \"site.a\" is already emitted by", "a.sh"}},
		{name: "bad header names file and line", files: map[string]string{"site.sh": strings.Replace(okProbe, "timeout: 5s", "timeout: soon", 1)},
			err: []string{"site.sh:4: timeout"}},
		{name: "check id of a builtin", files: map[string]string{"site.sh": okProbe, "c.yaml": strings.Replace(okCheck, "site.a-zero", "firewall.ufw-active", 1)},
			err: []string{"c.yaml:1: id: \"firewall.ufw-active\" is already defined at checks/firewall.yaml:"}},
		{name: "check on a fact no probe emits", files: map[string]string{"site.sh": okProbe, "c.yaml": strings.Replace(okCheck, "fact: site.a", "fact: site.z", 1)},
			err: []string{"c.yaml:1: check \"site.a-zero\": fact \"site.z\" is emitted by no probe"}},
		{name: "median peers by a builtin fact", files: map[string]string{"site.sh": okProbe, "c.yaml": `- id: site.a-low
  title: t
  severity: info
  when:
    - {fact: site.a, op: pct_of_median_lt, value: "50", peers: kubeproxy.mode}
  summary: s
  remediation: r
`}, probes: "site", checks: "site.a-low"},
		{name: "median peers by a fact no probe emits", files: map[string]string{"site.sh": okProbe, "c.yaml": `- id: site.a-low
  title: t
  severity: info
  when:
    - {fact: site.a, op: pct_of_median_lt, value: "50", peers: kubeproxy.mdoe}
  summary: s
  remediation: r
`}, err: []string{"c.yaml:1: check \"site.a-low\": peers: fact \"kubeproxy.mdoe\" is emitted by no probe"}},
		{name: "bad check names file and line", files: map[string]string{"c.yaml": strings.Replace(okCheck, "op: eq", "op: equals", 1)},
			err: []string{"c.yaml:4: check \"site.a-zero\": when: condition 1: unknown op \"equals\""}},
		{name: "unknown check field", files: map[string]string{"c.yaml": okCheck + "  owner: me\n"}, err: []string{"c.yaml:8:", "owner"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeDir(t, tt.files)
			probes, checks, err := LoadProbeDir(dir)
			if tt.err != nil {
				if err == nil {
					t.Fatalf("no error, want %q", tt.err)
				}
				for _, e := range tt.err {
					if !strings.Contains(err.Error(), e) {
						t.Errorf("error %q lacks %q", err, e)
					}
				}
				if !strings.Contains(err.Error(), dir) {
					t.Errorf("error %q does not name the file's path", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var pids []string
			for _, p := range probes {
				pids = append(pids, p.ID)
				if want := filepath.Join(dir, p.ID+".sh"); p.Source != want {
					t.Errorf("probe %s: Source %q, want %q", p.ID, p.Source, want)
				}
			}
			if got := strings.Join(pids, ","); got != tt.probes {
				t.Errorf("probes %q, want %q", got, tt.probes)
			}
			if got := strings.Join(check.IDs(checks), ","); got != tt.checks {
				t.Errorf("checks %q, want %q", got, tt.checks)
			}
			for _, c := range checks {
				if !strings.HasPrefix(c.Source, dir+"/") {
					t.Errorf("check %s: Source %q not in %s", c.ID, c.Source, dir)
				}
			}
		})
	}
	if _, _, err := LoadProbeDir(filepath.Join(t.TempDir(), "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing dir: err = %v", err)
	}
}

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
	probes, checks, err := LoadProbeDir(exampleProbes)
	if err != nil {
		t.Fatal(err)
	}
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
	_, checks, err := LoadProbeDir(exampleProbes)
	if err != nil {
		t.Fatal(err)
	}
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
	user, userChecks, err := LoadProbeDir(writeDir(t, map[string]string{"site.sh": failing, "site.yaml": checkYAML}))
	if err != nil {
		t.Fatal(err)
	}
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
		Probes: ps, Checks: cs, Gate: GatePolicy{FailOn: result.SeverityCritical}})
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
