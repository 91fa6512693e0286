package catalog

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
)

const okProbe = "# id: site\n# description: d\n# needs_root: false\n# timeout: 5s\n# facts: site.a site.b\nfact site.a 1\nfact site.b 2\n"

const okCheck = `- id: site.a-zero
  title: t
  severity: warning
  when:
    - {fact: site.a, op: eq, value: "0"}
  summary: s
  remediation: r
`

// TestLoad: a --probes directory's probes and checks join the embedded
// ones, after them, each naming its file; every problem names the file and
// line, and nothing of a directory with errors is loaded.
func TestLoad(t *testing.T) {
	embedded := builtin(t)
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
			dir := testtools.WriteDir(t, tt.files)
			c, err := Load(dir)
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
			if !slices.EqualFunc(c.Probes[:len(embedded.Probes)], embedded.Probes, func(a, b probe.Probe) bool { return a.ID == b.ID }) ||
				!slices.Equal(check.IDs(c.Checks[:len(embedded.Checks)]), check.IDs(embedded.Checks)) {
				t.Fatal("the embedded probes and checks do not come first, in their order")
			}
			probes, checks := c.Probes[len(embedded.Probes):], c.Checks[len(embedded.Checks):]
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
	if _, err := Load(filepath.Join(t.TempDir(), "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing dir: err = %v", err)
	}
}

// TestLoadNothing: no --probes directory is the embedded catalogue.
func TestLoadNothing(t *testing.T) {
	c, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	if want := builtin(t); len(c.Probes) != len(want.Probes) || len(c.Checks) != len(want.Checks) {
		t.Errorf("Load(\"\") = %d probes, %d checks; want the embedded %d and %d", len(c.Probes), len(c.Checks), len(want.Probes), len(want.Checks))
	}
	if c.CheckSource(c.Checks[0]) != "builtin" {
		t.Errorf("an embedded check's source reads %q", c.CheckSource(c.Checks[0]))
	}
}

// TestUserCheckMayReadGoFacts: a --probes check on a fact fleet-audit
// computes in Go loads (k8s.node.registered was refused as "emitted by no
// probe", while a built-in check reads it), and one on a Go fact no check
// may read is still refused.
func TestUserCheckMayReadGoFacts(t *testing.T) {
	checkOn := func(fact string) string {
		return "- id: site.on-" + strings.ReplaceAll(fact, ".", "-") + "\n  title: t\n  severity: warning\n  when:\n    - {fact: " + fact + ", op: eq, value: \"no\"}\n  summary: s\n  remediation: r\n"
	}
	for _, tc := range []struct {
		fact string
		ok   bool
	}{
		{NodeRegisteredFact, true},
		{TargetVersionFact, true},
		{probe.MetaSudo, false},
		{"k8s.node.registred", false},
	} {
		t.Run(tc.fact, func(t *testing.T) {
			c, err := Load(testtools.WriteDir(t, map[string]string{"site.yaml": checkOn(tc.fact)}))
			if tc.ok && (err != nil || c.Checks[len(c.Checks)-1].ID != "site.on-"+strings.ReplaceAll(tc.fact, ".", "-")) {
				t.Fatalf("Load: %v; want the check loaded", err)
			}
			if !tc.ok && (err == nil || !strings.Contains(err.Error(), "emitted by no probe")) {
				t.Fatalf("Load error = %v, want it refused as emitted by no probe", err)
			}
		})
	}
}
