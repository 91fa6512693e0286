package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/internal/testtools"
)

// installVars are the variables every CI example's install step reads.
var installVars = []string{"FLEET_AUDIT_REPO", "FLEET_AUDIT_REF", "FLEET_AUDIT_SRC"}

// TestCIExamplesInstallFromCheckout: every CI example installs fleet-audit
// the same way, from a checkout built with make build, and that way works:
// the block runs here against this repository (FLEET_AUDIT_REPO, at
// HEAD) and leaves a fleet-audit that runs where the next line puts it on
// PATH. Before, all four started with go install ...@latest, which no
// published module answers, so every example job failed before it
// audited (issue 28 item 1).
func TestCIExamplesInstallFromCheckout(t *testing.T) {
	testtools.SkipShort(t, "clones this repository and runs make build")
	ci, err := filepath.Abs(examplesCI)
	if err != nil {
		t.Fatal(err)
	}
	type site struct{ where, block, path string }
	var sites []site
	for _, name := range []string{"github-workflow.yml", "github-workflow-sharded.yml"} {
		var doc struct {
			Jobs map[string]struct {
				Steps []githubStep `yaml:"steps"`
			} `yaml:"jobs"`
		}
		readYAML(t, filepath.Join(ci, name), &doc)
		for job, j := range doc.Jobs {
			found := false
			for _, s := range j.Steps {
				if s.Name != "Install fleet-audit" {
					continue
				}
				found = true
				for _, v := range installVars {
					if s.Env[v] == "" {
						t.Errorf("%s job %s: the install step does not set %s", name, job, v)
					}
				}
				block, path, _ := strings.Cut(strings.TrimSpace(s.Run), "\necho ")
				sites = append(sites, site{name + " " + job, block, "echo " + path})
			}
			if !found {
				t.Errorf("%s job %s: no step named Install fleet-audit", name, job)
			}
		}
	}
	for _, name := range []string{"gitlab-ci.yml", "gitlab-ci-sharded.yml"} {
		var doc map[string]gitlabJob
		readYAML(t, filepath.Join(ci, name), &doc)
		for job, j := range doc {
			found := false
			for i, line := range j.BeforeScript {
				if !strings.Contains(line, "make -C") {
					continue
				}
				found = true
				for _, v := range installVars {
					if j.Variables[v] == "" {
						t.Errorf("%s job %s: the variables do not set %s", name, job, v)
					}
				}
				next := ""
				if i+1 < len(j.BeforeScript) {
					next = j.BeforeScript[i+1]
				}
				sites = append(sites, site{name + " " + job, strings.TrimSpace(line), next})
			}
			if !found {
				t.Errorf("%s job %s: no before_script line builds fleet-audit", name, job)
			}
		}
	}
	if len(sites) != 6 {
		t.Fatalf("%d install sites, want 6 (one per job of the four examples)", len(sites))
	}
	for _, s := range sites[1:] {
		if s.block != sites[0].block {
			t.Errorf("%s installs differently from %s:\n%s\n---\n%s", s.where, sites[0].where, s.block, sites[0].block)
		}
	}
	for _, s := range sites {
		if !strings.Contains(s.path, `"$FLEET_AUDIT_SRC/bin`) {
			t.Errorf("%s: the line after the install, %q, does not put $FLEET_AUDIT_SRC/bin on PATH", s.where, s.path)
		}
	}
	for _, f := range []string{"github-workflow.yml", "github-workflow-sharded.yml", "gitlab-ci.yml", "gitlab-ci-sharded.yml"} {
		if b, err := os.ReadFile(filepath.Join(ci, f)); err != nil || strings.Contains(string(b), "go install") {
			t.Errorf("%s still installs with go install (%v)", f, err)
		}
	}

	repo := filepath.Join(ci, "..", "..")
	testtools.Find(t, "make")
	if err := exec.Command(testtools.Find(t, "git"), "-C", repo, "rev-parse", "HEAD").Run(); err != nil {
		t.Skipf("not a git checkout (%v): nothing to fetch the install from", err)
	}
	src := filepath.Join(t.TempDir(), "src")
	cmd := exec.Command("/bin/sh", "-ec", sites[0].block)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "FLEET_AUDIT_REPO="+repo, "FLEET_AUDIT_REF=HEAD", "FLEET_AUDIT_SRC="+src)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the examples' install block: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(src, "bin", "fleet-audit"), "--version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "fleet-audit v") {
		t.Errorf("the installed fleet-audit --version: %v: %s", err, out)
	}
}
