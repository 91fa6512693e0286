package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fleet-audit/fleet-audit/cmd/fleet-audit/internal/demo"
	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/sshfleet"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/report"
)

// examplesCI holds the CI jobs and the systemd units users copy.
var examplesCI = filepath.Join("..", "..", "examples", "ci")

// exampleRun is what an example's fleet-audit command line did against
// the demo fleet: its exit status and the report files it wrote, by format.
type exampleRun struct {
	code    int
	outputs map[string]string
	argv    []string
}

// TestCIExamples reads each example of examples/ci as its tool would
// (YAML for the CI files, sections and keys for the systemd units), runs
// every fleet-audit command line in it, as written, against the demo's
// simulated fleet, and holds the rest of the file to what that command
// wrote: the artifact paths, the JUnit report, the Markdown comment, the
// textfile directory. Edit a command or a path in one place only and it
// fails.
func TestCIExamples(t *testing.T) {
	testtools.SkipShort(t, "audits the demo's simulated fleet once per example")
	// Absolute: each example runs in a directory of its own (t.Chdir).
	ci, err := filepath.Abs(examplesCI)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	fleetDir := t.TempDir()
	// Every example audits the same untouched fleet: the runs after the
	// first replay its bundles.
	fl, err := demo.Start(ctx, fleetDir, nodesim.Incident(), demo.Options{Replay: &sshfleet.Replay{}})
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Close()
	isolateClient(t, t.TempDir())

	// runLines runs the fleet-audit lines among lines in the current
	// directory, with the file's variables and the demo's inventory in
	// place of the production one; each must exit as want says.
	runLines := func(t *testing.T, lines []string, env map[string]string, want func(code int) bool) []exampleRun {
		t.Helper()
		env = maps.Clone(env)
		if env == nil {
			env = map[string]string{}
		}
		env["FLEET_AUDIT_INVENTORY"] = fl.InventoryPath
		var runs []exampleRun
		for _, line := range lines {
			if fields := strings.Fields(line); len(fields) == 0 || filepath.Base(fields[0]) != "fleet-audit" {
				continue
			}
			argv, err := shellFields(line, env)
			if err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			argv[0] = "fleet-audit"
			var stdout, stderr bytes.Buffer
			code := run(ctx, argv, &stdout, &stderr)
			if !want(code) {
				t.Errorf("%q exited %d\nstdout:\n%s\nstderr:\n%s", line, code, stdout.String(), stderr.String())
			}
			outputs := reportPaths(argv)
			for format, p := range outputs {
				if st, err := os.Stat(p); err != nil || st.Size() == 0 {
					t.Errorf("%q did not write its %s report %s: %v", line, format, p, err)
				}
			}
			runs = append(runs, exampleRun{code: code, outputs: outputs, argv: argv})
		}
		if len(runs) == 0 {
			t.Fatalf("no fleet-audit command line among %q", lines)
		}
		return runs
	}
	// The demo fleet's gate fails (UFW on four nodes): exit 1.
	gateFails := func(code int) bool { return code == int(exitGateFailed) }
	// runAll runs the lines in a directory of their own.
	runAll := func(t *testing.T, lines []string, env map[string]string) []exampleRun {
		t.Helper()
		t.Chdir(t.TempDir())
		return runLines(t, lines, env, gateFails)
	}
	// A shard's own gate sees part of the fleet: whatever it is, the shard
	// wrote its results.
	shardGate := func(code int) bool {
		return code == int(exitOK) || code == int(exitGateFailed) || code == int(exitUnaudited)
	}

	t.Run("gitlab-ci.yml", func(t *testing.T) {
		var doc map[string]gitlabJob
		readYAML(t, filepath.Join(ci, "gitlab-ci.yml"), &doc)
		job, ok := doc["fleet-audit"]
		if !ok || len(job.Script) == 0 {
			t.Fatalf("no fleet-audit job with a script in %v", doc)
		}
		lines := scriptLines(append(slices.Clone(job.BeforeScript), job.Script...))
		r := runAll(t, lines, job.Variables)[0]
		// GitLab reads artifacts:reports:junit into the merge request's
		// test widget (docs.gitlab.com/ee/ci/testing/unit_test_reports).
		if job.Artifacts.Reports.JUnit != r.outputs["junit"] {
			t.Errorf("reports:junit is %q, the job writes JUnit to %q", job.Artifacts.Reports.JUnit, r.outputs["junit"])
		}
		if !slices.Contains(job.Artifacts.Paths, r.outputs["html"]) || job.Artifacts.When != "always" {
			t.Errorf("artifacts %v (when %q) do not keep the HTML report %q whatever the gate", job.Artifacts.Paths, job.Artifacts.When, r.outputs["html"])
		}
		// TestGitLabNoteUpdatedInPlace runs the note step; here, it must
		// read the summary this job writes.
		if note := gitlabNoteStep(t, job); !strings.Contains(note, "cat "+r.outputs["markdown-summary"]) {
			t.Errorf("the note step does not post the Markdown summary %q:\n%s", r.outputs["markdown-summary"], note)
		}
	})

	t.Run("github-workflow.yml", func(t *testing.T) {
		var doc struct {
			On   map[string]any `yaml:"on"`
			Jobs map[string]struct {
				Env   map[string]string `yaml:"env"`
				Steps []githubStep      `yaml:"steps"`
			} `yaml:"jobs"`
		}
		readYAML(t, filepath.Join(ci, "github-workflow.yml"), &doc)
		job, ok := doc.Jobs["audit"]
		if !ok || len(job.Steps) == 0 || len(doc.On) == 0 {
			t.Fatalf("no audit job with steps, or no trigger: %+v", doc)
		}
		var runs []string
		for _, s := range job.Steps {
			runs = append(runs, s.Run)
		}
		r := runAll(t, scriptLines(runs), job.Env)[0]
		checkGitHubPublishes(t, job.Steps, r)
	})

	// The ids every job of one pipeline (GitLab's predefined
	// CI_PIPELINE_ID) or workflow run (GitHub's GITHUB_RUN_ID) sees.
	const gitlabPipeline, githubRun = "1024", "2048"
	t.Run("gitlab-ci-sharded.yml", func(t *testing.T) {
		var doc map[string]gitlabJob
		readYAML(t, filepath.Join(ci, "gitlab-ci-sharded.yml"), &doc)
		shard, merge := doc["fleet-audit-shard"], doc["fleet-audit-merge"]
		if shard.Parallel < 2 || len(shard.Script) == 0 || len(merge.Script) == 0 {
			t.Fatalf("want a fleet-audit-shard job with parallel: N and a fleet-audit-merge job: %+v", doc)
		}
		// One directory stands for the artifacts the jobs pass on.
		t.Chdir(t.TempDir())
		var shards []string
		for k := 1; k <= shard.Parallel; k++ {
			// GitLab numbers the parallel jobs CI_NODE_INDEX 1..CI_NODE_TOTAL
			// (docs.gitlab.com/ee/ci/yaml/#parallel).
			env := maps.Clone(shard.Variables)
			env["CI_NODE_INDEX"], env["CI_NODE_TOTAL"] = fmt.Sprint(k), fmt.Sprint(shard.Parallel)
			env["CI_PIPELINE_ID"] = gitlabPipeline
			r := runLines(t, scriptLines(append(slices.Clone(shard.BeforeScript), shard.Script...)), env, shardGate)[0]
			kept := slices.ContainsFunc(shard.Artifacts.Paths, func(p string) bool { return os.Expand(p, func(v string) string { return env[v] }) == r.outputs["json"] })
			if r.outputs["json"] == "" || !kept || shard.Artifacts.When != "always" {
				t.Errorf("shard %d writes %q, its artifacts %v (when %q) do not keep it whatever its gate", k, r.outputs["json"], shard.Artifacts.Paths, shard.Artifacts.When)
			}
			shards = append(shards, r.outputs["json"])
		}
		if !slices.ContainsFunc(merge.Needs, func(n struct {
			Job       string `yaml:"job"`
			Artifacts bool   `yaml:"artifacts"`
		}) bool {
			return n.Job == "fleet-audit-shard" && n.Artifacts
		}) {
			t.Errorf("the merge job does not need the shard jobs' artifacts: %+v", merge.Needs)
		}
		for _, rule := range merge.Rules {
			if rule.When != "always" {
				t.Errorf("merge rule %q is not when: always: a failed shard would leave no report", rule.If)
			}
		}
		mergeEnv := maps.Clone(merge.Variables)
		if mergeEnv == nil {
			mergeEnv = map[string]string{}
		}
		mergeEnv["CI_PIPELINE_ID"] = gitlabPipeline
		r := runLines(t, scriptLines(append(slices.Clone(merge.BeforeScript), merge.Script...)), mergeEnv, gateFails)[0]
		if got := positionals(r.argv); !slices.Equal(got, shards) {
			t.Errorf("merge reads %q, the shards wrote %q", got, shards)
		}
		if merge.Artifacts.Reports.JUnit != r.outputs["junit"] {
			t.Errorf("reports:junit is %q, merge writes JUnit to %q", merge.Artifacts.Reports.JUnit, r.outputs["junit"])
		}
		if !slices.Contains(merge.Artifacts.Paths, r.outputs["html"]) || merge.Artifacts.When != "always" {
			t.Errorf("artifacts %v (when %q) do not keep the HTML report %q whatever the gate", merge.Artifacts.Paths, merge.Artifacts.When, r.outputs["html"])
		}
	})

	t.Run("github-workflow-sharded.yml", func(t *testing.T) {
		var doc struct {
			Jobs map[string]struct {
				Needs    string            `yaml:"needs"`
				If       string            `yaml:"if"`
				Env      map[string]string `yaml:"env"`
				Strategy struct {
					FailFast *bool `yaml:"fail-fast"`
					Matrix   struct {
						Shard []int `yaml:"shard"`
					} `yaml:"matrix"`
				} `yaml:"strategy"`
				Steps []githubStep `yaml:"steps"`
			} `yaml:"jobs"`
		}
		readYAML(t, filepath.Join(ci, "github-workflow-sharded.yml"), &doc)
		shard, merge := doc.Jobs["shard"], doc.Jobs["merge"]
		n := len(shard.Strategy.Matrix.Shard)
		if n < 2 || !slices.Equal(shard.Strategy.Matrix.Shard, func() []int {
			var want []int
			for k := 1; k <= n; k++ {
				want = append(want, k)
			}
			return want
		}()) || shard.Strategy.FailFast == nil || *shard.Strategy.FailFast {
			t.Fatalf("want a shard job whose matrix is shard: [1..N] without fail-fast: %+v", shard.Strategy)
		}
		if merge.Needs != "shard" || !strings.Contains(merge.If, "!cancelled()") {
			t.Errorf("the merge job needs %q if %q: want it after every shard, also a failed one", merge.Needs, merge.If)
		}
		// The expressions of the matrix job, for shard k (docs.github.com
		// /actions/reference/contexts-reference: matrix, strategy).
		expr := func(s string, k int) string {
			return strings.NewReplacer("${{ matrix.shard }}", fmt.Sprint(k), "${{ strategy.job-total }}", fmt.Sprint(n)).Replace(s)
		}
		t.Chdir(t.TempDir())
		var shards, uploads []string
		for k := 1; k <= n; k++ {
			env := maps.Clone(shard.Env)
			env["GITHUB_RUN_ID"] = githubRun
			var runs []string
			for _, s := range shard.Steps {
				for key, v := range s.Env {
					env[key] = expr(v, k)
				}
				runs = append(runs, s.Run)
			}
			r := runLines(t, scriptLines(runs), env, shardGate)[0]
			uploaded := false
			for _, s := range shard.Steps {
				if strings.HasPrefix(s.Uses, "actions/upload-artifact@") && expr(s.With["path"], k) == r.outputs["json"] {
					uploaded = true
					uploads = append(uploads, expr(s.With["name"], k))
				}
			}
			if !uploaded {
				t.Errorf("shard %d writes %q, which no upload-artifact step keeps", k, r.outputs["json"])
			}
			shards = append(shards, r.outputs["json"])
		}
		var runs []string
		for _, s := range merge.Steps {
			runs = append(runs, s.Run)
			if strings.HasPrefix(s.Uses, "actions/download-artifact@") {
				for _, u := range uploads {
					if ok, _ := filepath.Match(s.With["pattern"], u); !ok || s.With["merge-multiple"] != "true" {
						t.Errorf("download-artifact (pattern %q, merge-multiple %q) does not bring %s into one directory", s.With["pattern"], s.With["merge-multiple"], u)
					}
				}
			}
		}
		mergeEnv := maps.Clone(merge.Env)
		if mergeEnv == nil {
			mergeEnv = map[string]string{}
		}
		mergeEnv["GITHUB_RUN_ID"] = githubRun
		r := runLines(t, scriptLines(runs), mergeEnv, gateFails)[0]
		if got := positionals(r.argv); !slices.Equal(got, shards) {
			t.Errorf("merge reads %q, the shards wrote %q", got, shards)
		}
		checkGitHubPublishes(t, merge.Steps, r)
	})

	t.Run("systemd", func(t *testing.T) {
		service := readUnit(t, filepath.Join(ci, "fleet-audit.service"))
		timer := readUnit(t, filepath.Join(ci, "fleet-audit.timer"))
		env := map[string]string{}
		for _, kv := range service["Service"]["Environment"] {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		textfiles := env["TEXTFILE_DIR"]
		// Debian's prometheus-node-exporter reads this directory
		// (/etc/default/prometheus-node-exporter).
		if textfiles != "/var/lib/prometheus/node-exporter" {
			t.Errorf("TEXTFILE_DIR=%q, want Debian's node_exporter textfile directory", textfiles)
		}
		env["TEXTFILE_DIR"] = t.TempDir()
		execStart := service["Service"]["ExecStart"]
		if len(execStart) != 1 || first(service["Service"]["Type"]) != "oneshot" {
			t.Fatalf("want one ExecStart in a Type=oneshot service: %v", service["Service"])
		}
		r := runAll(t, execStart, env)[0]
		prom := r.outputs["prom"]
		// The textfile collector reads only *.prom files of its directory
		// (node_exporter README, "Textfile Collector").
		if filepath.Dir(prom) != env["TEXTFILE_DIR"] || filepath.Ext(prom) != ".prom" {
			t.Errorf("the textfile %s is not a .prom file of TEXTFILE_DIR", prom)
		}
		// A failed gate is a result the textfile carries, not a failed
		// unit: SuccessExitStatus= (systemd.service(5)).
		ok := strings.Fields(strings.Join(service["Service"]["SuccessExitStatus"], " "))
		if !slices.Contains(ok, fmt.Sprint(r.code)) || !slices.Contains(ok, fmt.Sprint(int(exitUnaudited))) {
			t.Errorf("SuccessExitStatus=%v, want the gate's %d and %d", ok, r.code, exitUnaudited)
		}
		rw := strings.Fields(strings.Join(service["Service"]["ReadWritePaths"], " "))
		if !slices.Contains(rw, textfiles) || !slices.Contains(rw, first(service["Service"]["WorkingDirectory"])) {
			t.Errorf("ReadWritePaths=%v does not let it write %s and its working directory", rw, textfiles)
		}
		if first(timer["Timer"]["OnCalendar"]) == "" || first(timer["Install"]["WantedBy"]) != "timers.target" {
			t.Errorf("the timer has no OnCalendar or is not wanted by timers.target: %v", timer)
		}
		verifyUnits(t, ci)
	})
}

// gitlabJob is the part of a GitLab CI job the examples use (GitLab's
// .gitlab-ci.yml keywords), for the plain and the sharded example alike.
type gitlabJob struct {
	Parallel     int               `yaml:"parallel"`
	Variables    map[string]string `yaml:"variables"`
	BeforeScript []string          `yaml:"before_script"`
	Script       []string          `yaml:"script"`
	Needs        []struct {
		Job       string `yaml:"job"`
		Artifacts bool   `yaml:"artifacts"`
	} `yaml:"needs"`
	Artifacts struct {
		When    string   `yaml:"when"`
		Paths   []string `yaml:"paths"`
		Reports struct {
			JUnit string `yaml:"junit"`
		} `yaml:"reports"`
	} `yaml:"artifacts"`
	Rules []struct {
		If   string `yaml:"if"`
		When string `yaml:"when"`
	} `yaml:"rules"`
}

// githubStep is one step of a GitHub Actions job.
type githubStep struct {
	Name string            `yaml:"name"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	With map[string]string `yaml:"with"`
	Env  map[string]string `yaml:"env"`
}

// checkGitHubPublishes holds a GitHub job's steps to what its fleet-audit
// line r wrote: the test reporter reads its JUnit, an artifact keeps its
// HTML, the job summary is its Markdown summary; and every action is
// pinned.
func checkGitHubPublishes(t *testing.T, steps []githubStep, r exampleRun) {
	t.Helper()
	// A tag or a branch can be moved under the workflow; a release
	// number at least says which one was meant.
	pinned := regexp.MustCompile(`^[\w.-]+/[\w.-]+@(v\d+\.\d+\.\d+|[0-9a-f]{40})$`)
	var junit, artifact, summary bool
	for _, s := range steps {
		if s.Uses != "" && !pinned.MatchString(s.Uses) {
			t.Errorf("%s is not pinned to a release or a commit", s.Uses)
		}
		switch {
		case strings.HasPrefix(s.Uses, "dorny/test-reporter@"):
			junit = s.With["path"] == r.outputs["junit"] && s.With["reporter"] == "java-junit"
		case strings.HasPrefix(s.Uses, "actions/upload-artifact@"):
			artifact = artifact || slices.Contains(strings.Fields(s.With["path"]), r.outputs["html"])
		case strings.Contains(s.Run, `>> "$GITHUB_STEP_SUMMARY"`):
			summary = strings.Contains(s.Run, r.outputs["markdown-summary"])
		}
	}
	if !junit || !artifact || !summary {
		t.Errorf("test reporter reads %s: %v; artifact keeps %s: %v; job summary is %s: %v",
			r.outputs["junit"], junit, r.outputs["html"], artifact, r.outputs["markdown-summary"], summary)
	}
}

// positionals are the words after a command line's command up to its
// first flag: merge's shard files, as the examples give them first.
func positionals(argv []string) []string {
	end := slices.IndexFunc(argv[2:], func(a string) bool { return strings.HasPrefix(a, "-") })
	if end < 0 {
		return argv[2:]
	}
	return argv[2 : 2+end]
}

// verifyUnits has systemd itself load the example units: `systemd-analyze
// verify` reports unknown keys and bad values (systemd-analyze(1)), on
// stderr and, for some, with exit status 0, so any output fails. It checks
// that ExecStart's program exists, so the copies run this test binary in
// place of the one the packages install, which ExecStart must name.
func verifyUnits(t *testing.T, ci string) {
	installed := packagedBinary(t, filepath.Join(ci, "..", ".."))
	service, err := os.ReadFile(filepath.Join(ci, "fleet-audit.service"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(service, []byte("\nExecStart="+installed+" ")) {
		t.Errorf("fleet-audit.service's ExecStart does not run %s, where the .deb and .rpm install fleet-audit (nfpm.yaml)", installed)
	}
	analyze := testtools.Find(t, "systemd-analyze")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var units []string
	for _, name := range []string{"fleet-audit.service", "fleet-audit.timer"} {
		b, err := os.ReadFile(filepath.Join(ci, name))
		if err != nil {
			t.Fatal(err)
		}
		b = bytes.ReplaceAll(b, []byte("ExecStart="+installed+" "), []byte("ExecStart="+self+" "))
		units = append(units, filepath.Join(dir, name))
		if err := os.WriteFile(units[len(units)-1], b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command(analyze, append([]string{"verify"}, units...)...).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// packagedBinary is where the .deb and .rpm install the binary: the dst of
// nfpm.yaml's content whose src is the build's ${BINARY}.
func packagedBinary(t *testing.T, repo string) string {
	t.Helper()
	var cfg struct {
		Contents []struct{ Src, Dst string } `yaml:"contents"`
	}
	readYAML(t, filepath.Join(repo, "nfpm.yaml"), &cfg)
	for _, c := range cfg.Contents {
		if c.Src == "${BINARY}" {
			return c.Dst
		}
	}
	t.Fatal("nfpm.yaml: no content installs ${BINARY}")
	return ""
}

func first(values []string) string {
	if len(values) == 0 {
		return ""
	}
	return values[0]
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// gitlabNoteStep is the script entry of job that writes the merge
// request note.
func gitlabNoteStep(t *testing.T, job gitlabJob) string {
	t.Helper()
	for _, e := range job.Script {
		if strings.Contains(e, "/notes") {
			return e
		}
	}
	t.Fatalf("no script entry of the job writes a merge request note")
	return ""
}

// TestGitLabNoteUpdatedInPlace runs the note step of gitlab-ci.yml, as
// written, under sh with curl and jq against a stand-in for GitLab's
// notes API (docs.gitlab.com/ee/api/notes: GET and POST .../notes, PUT
// .../notes/:id; GET /user), twice, as two pipelines of one merge
// request would: the first posts one note, the second edits that note
// instead of adding another. A note of someone else that quotes the
// marker is left alone. The stand-in escapes < and > in its JSON as
// GitLab's encoder does, so the marker is never matched as raw text.
func TestGitLabNoteUpdatedInPlace(t *testing.T) {
	sh := testtools.Find(t, "sh")
	testtools.Find(t, "curl")
	testtools.Find(t, "jq")
	var doc map[string]gitlabJob
	readYAML(t, filepath.Join(examplesCI, "gitlab-ci.yml"), &doc)
	step := gitlabNoteStep(t, doc["fleet-audit"])

	type note struct {
		ID     int    `json:"id"`
		Body   string `json:"body"`
		Author struct {
			ID int `json:"id"`
		} `json:"author"`
	}
	const token, bot, project, mr = "glpat-test", 42, "7", "3"
	var (
		mu    sync.Mutex
		notes []note
		calls []string
	)
	human := note{ID: 1, Body: "<!-- fleet-audit report --> quoted by a reviewer"}
	human.Author.ID = 5
	notes = append(notes, human)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, r.Method+" "+r.URL.Path)
		if r.Header.Get("PRIVATE-TOKEN") != token {
			http.Error(w, "401 Unauthorized", http.StatusUnauthorized)
			return
		}
		base := "/api/v4/projects/" + project + "/merge_requests/" + mr + "/notes"
		switch {
		case r.Method == "GET" && r.URL.Path == "/api/v4/user":
			json.NewEncoder(w).Encode(map[string]any{"id": bot, "username": "project_7_bot"})
		case r.Method == "GET" && r.URL.Path == base:
			json.NewEncoder(w).Encode(notes) // escapes < and > as \u003c, \u003e
		case r.Method == "POST" && r.URL.Path == base:
			n := note{ID: len(notes) + 1, Body: r.PostFormValue("body")}
			n.Author.ID = bot
			notes = append(notes, n)
			json.NewEncoder(w).Encode(n)
		case r.Method == "PUT" && strings.HasPrefix(r.URL.Path, base+"/"):
			id, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, base+"/"))
			for i := range notes {
				if notes[i].ID == id {
					notes[i].Body = r.PostFormValue("body")
					json.NewEncoder(w).Encode(notes[i])
					return
				}
			}
			http.NotFound(w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()

	dir := t.TempDir()
	pipeline := func(summary string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "summary.md"), []byte(summary), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(sh, "-e", "-c", step)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "CI_API_V4_URL=" + srv.URL + "/api/v4",
			"CI_PROJECT_ID=" + project, "CI_MERGE_REQUEST_IID=" + mr, "FLEET_AUDIT_NOTE_TOKEN=" + token}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("the note step: %v\n%s", err, out)
		}
	}
	pipeline("**gate: FAILED** (exit 1)\n")
	pipeline("**gate: passed**\n")

	mu.Lock()
	defer mu.Unlock()
	if len(notes) != 2 || notes[0] != human {
		t.Fatalf("notes after two pipelines: %+v; want the reviewer's and one of the bot's", notes)
	}
	if want := "<!-- fleet-audit report -->\n**gate: passed**\n"; notes[1].Body != want {
		t.Errorf("the bot's note is %q; want the second pipeline's %q", notes[1].Body, want)
	}
	if !slices.Contains(calls, "POST /api/v4/projects/7/merge_requests/3/notes") || !slices.Contains(calls, "PUT /api/v4/projects/7/merge_requests/3/notes/2") {
		t.Errorf("calls %q: want one POST, then a PUT of note 2", calls)
	}
}

// readUnit reads a systemd unit file into section → key → values, as
// systemd.syntax(7) lays it out: [Section] headers, KEY=VALUE lines, # and
// ; comments, a trailing backslash continuing a line. A line that is none
// of these fails the test.
func readUnit(t *testing.T, path string) map[string]map[string][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string][]string{}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(bytes.ReplaceAll(b, []byte("\\\n"), []byte(" "))))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
			out[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s:%d: not a [Section] or KEY=VALUE line: %q", path, n, line)
			}
			out[section][strings.TrimSpace(k)] = append(out[section][strings.TrimSpace(k)], strings.TrimSpace(v))
		}
	}
	return out
}

// scriptLines splits CI script entries into shell command lines, joining
// backslash-continued lines.
func scriptLines(entries []string) []string {
	var out []string
	for _, e := range entries {
		out = append(out, strings.Split(strings.ReplaceAll(e, "\\\n", " "), "\n")...)
	}
	return out
}

// reportPaths maps each report format flag of argv to its path.
func reportPaths(argv []string) map[string]string {
	out := map[string]string{}
	for i := 1; i+1 < len(argv); i++ {
		for _, f := range report.FileFormats() {
			if argv[i] == "--"+f.Name {
				out[f.Name] = argv[i+1]
			}
		}
	}
	return out
}

// shellFields splits the first simple command of a POSIX shell line into
// words: blanks separate words, '...' is literal, "..." and bare words
// expand $VAR and ${VAR} from env, a backslash quotes the next character,
// and the command ends at an unquoted | & ; < > or a # starting a word
// (POSIX "Shell Command Language", 2.2-2.3, 2.6.2). A word with an unquoted
// * or ? is a pattern, replaced by the files it matches in the current
// directory, sorted, or kept as it is when none does (2.6.6, 2.13). systemd's ExecStart=
// quoting and ${VAR} expansion (systemd.service(5), "Command lines") read
// the lines of the examples the same way. What this reader does not do
// (command substitution, a variable env lacks) is an error, so an example
// cannot quietly run something else than it says.
func shellFields(line string, env map[string]string) ([]string, error) {
	var words []string
	var word strings.Builder
	inWord, pattern := false, false
	end := func() {
		matches, _ := filepath.Glob(word.String())
		switch {
		case pattern && len(matches) > 0:
			words = append(words, matches...)
		case inWord:
			words = append(words, word.String())
		}
		word.Reset()
		inWord, pattern = false, false
	}
	expand := func(s string, i int) (int, error) {
		name, next := "", i+1
		if strings.HasPrefix(s[next:], "{") {
			closing := strings.IndexByte(s[next:], '}')
			if closing < 0 {
				return 0, fmt.Errorf("unterminated ${")
			}
			name, next = s[next+1:next+closing], next+closing+1
		} else {
			m := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*`).FindString(s[next:])
			name, next = m, next+len(m)
		}
		v, ok := env[name]
		if name == "" || !ok {
			return 0, fmt.Errorf("$%s: not a variable this test knows", name)
		}
		word.WriteString(v)
		return next, nil
	}
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			end()
			i++
		case strings.IndexByte("|&;<>", c) >= 0 || (c == '#' && !inWord):
			end()
			return words, nil
		case c == '`':
			return nil, fmt.Errorf("command substitution")
		case c == '\\' && i+1 < len(line):
			word.WriteByte(line[i+1])
			inWord, i = true, i+2
		case c == '\'':
			closing := strings.IndexByte(line[i+1:], '\'')
			if closing < 0 {
				return nil, fmt.Errorf("unterminated '")
			}
			word.WriteString(line[i+1 : i+1+closing])
			inWord, i = true, i+closing+2
		case c == '"':
			inWord, i = true, i+1
			for ; i < len(line) && line[i] != '"'; i++ {
				switch {
				case line[i] == '\\' && i+1 < len(line) && strings.IndexByte("$`\"\\", line[i+1]) >= 0:
					i++
					word.WriteByte(line[i])
				case line[i] == '$':
					next, err := expand(line, i)
					if err != nil {
						return nil, err
					}
					i = next - 1
				case line[i] == '`':
					return nil, fmt.Errorf("command substitution")
				default:
					word.WriteByte(line[i])
				}
			}
			if i >= len(line) {
				return nil, fmt.Errorf(`unterminated "`)
			}
			i++
		case c == '$':
			if strings.HasPrefix(line[i:], "$(") {
				return nil, fmt.Errorf("command substitution")
			}
			next, err := expand(line, i)
			if err != nil {
				return nil, err
			}
			inWord, i = true, next
		default:
			word.WriteByte(c)
			inWord, i = true, i+1
			pattern = pattern || c == '*' || c == '?'
		}
	}
	end()
	return words, nil
}

func TestShellFields(t *testing.T) {
	env := map[string]string{"INV": "/tmp/inv.yaml", "DIR": "/var/lib/x"}
	// A pattern matches the files of the current directory.
	t.Chdir(t.TempDir())
	for _, f := range []string{"shard-2.json", "shard-1.json", "qq"} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		line    string
		want    []string
		wantErr bool
	}{
		{`fleet-audit run -i "$INV" --html report.html || gate=$?`, []string{"fleet-audit", "run", "-i", "/tmp/inv.yaml", "--html", "report.html"}, false},
		{`/usr/bin/fleet-audit run -i ${INV} --prom ${DIR}/fleet-audit.prom`, []string{"/usr/bin/fleet-audit", "run", "-i", "/tmp/inv.yaml", "--prom", "/var/lib/x/fleet-audit.prom"}, false},
		{`echo 'a $INV' "b \"c\" \$d" e\ f; rm -rf /`, []string{"echo", "a $INV", `b "c" $d`, "e f"}, false},
		{`fleet-audit run -i x # a comment`, []string{"fleet-audit", "run", "-i", "x"}, false},
		{`fleet-audit run -i x>out`, []string{"fleet-audit", "run", "-i", "x"}, false},
		{`exit "${gate:-0}"`, nil, true},
		{`fleet-audit run -i $UNSET`, nil, true},
		{`fleet-audit run -i $(pwd)/inv`, nil, true},
		{"fleet-audit run -i `pwd`", nil, true},
		{`fleet-audit run -i "unterminated`, nil, true},
		{`fleet-audit merge shard-*.json 'q*' --json all.json`, []string{"fleet-audit", "merge", "shard-1.json", "shard-2.json", "q*", "--json", "all.json"}, false},
		{`fleet-audit merge none-*.json`, []string{"fleet-audit", "merge", "none-*.json"}, false},
	} {
		got, err := shellFields(tc.line, env)
		if (err != nil) != tc.wantErr || (!tc.wantErr && !slices.Equal(got, tc.want)) {
			t.Errorf("shellFields(%q) = %q, %v; want %q, error %v", tc.line, got, err, tc.want, tc.wantErr)
		}
	}
}
