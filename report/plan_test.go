package report

import (
	"bytes"
	stdcontext "context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fleet-audit/fleet-audit/audit/catalog"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

// shellHostile are node names that would run something if a plan spliced
// them into a command, break out of a comment, or address other hosts in an
// Ansible pattern, besides the report's usual hostile text.
var shellHostile = []string{
	"n`id`", "n$(touch /tmp/pwned)", "n\nrm -rf /", "n'\"q", "{{ lookup('pipe', 'id') }}",
	"a:b", "web*", "x\r- hosts: all", "```", "all", "!etcd-1", "etcd-1,worker-9", "~.*",
}

// hostilePlanReport is a report whose nodes have hostile names and a plan
// over them built by hand, as `fleet-audit report` could be given one from
// an edited results file: a built-in fix's steps (the UFW plan) and a fix
// whose title, remediation and manual step are hostile text.
func hostilePlanReport(t *testing.T) (*result.Report, *result.Plan) {
	t.Helper()
	r := newReport(hostile[0] + hostile[5])
	r.Change = &result.Change{ID: hostile[13], Title: hostile[1] + hostile[9], RequestedBy: hostile[2]}
	r.TargetVersion = hostile[6]
	names := append([]string{"etcd-1", "worker-9"}, append(slices.Clone(shellHostile), hostile...)...)
	for _, n := range names {
		r.Nodes = append(r.Nodes, result.Node{Name: n, Status: result.StatusOK, Roles: []string{"worker"}, Facts: map[string]string{}})
	}
	rules, err := catalog.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	var ufw result.FixSteps
	for _, c := range rules.Checks {
		if c.ID == "firewall.ufw-active" {
			ufw = c.Plan.Steps()
		}
	}
	plan := &result.Plan{
		Fixes: []result.Fix{
			{Check: "firewall.ufw-active", Title: "UFW", Severity: result.SeverityCritical, Resolves: []string{hostile[4], "firewall.ufw-active"},
				Rollout:     []result.RolloutStep{{Class: result.ClassEtcd, Nodes: names[:1], OneAtATime: true}, {Class: result.ClassWorker, Nodes: names[1:]}},
				Remediation: hostile[12], Steps: ufw},
			{Check: hostile[7], Title: hostile[0] + " {{ x }}", Severity: result.SeverityWarning, Resolves: []string{hostile[10]},
				Rollout: []result.RolloutStep{{Class: result.ClassWorker, Nodes: names[1:4]}}, Remediation: hostile[11],
				Steps: result.FixSteps{Manual: []string{hostile[1] + "{% raw %}" + hostile[9]}, Stop: hostile[8]}},
		},
		Waived: []string{hostile[3]},
	}
	return r, plan
}

// The runbook's command blocks, as GFM renders them, are each node's name
// as a comment and then exactly the fix's commands: a hostile name stays on
// its comment line, whatever it holds; and no markup comes from node text.
func TestPlanMarkdownHostile(t *testing.T) {
	r, plan := hostilePlanReport(t)
	md := string(render(t, "plan", Options{Plan: plan}, r))
	// Tags are judged on GFM's rendering below: in a code block they are text.
	for _, bad := range []string{"\x1b", "\x00", "\r", "\b"} {
		if strings.Contains(md, bad) {
			t.Errorf("plan.md contains raw %q", bad)
		}
	}
	out := cmark(t, md, true)
	doc, problems := parseRendered(out)
	reportProblems(t, "hostile plan", problems)
	// Headings, the code blocks and their language class are ours.
	for _, p := range checkOwnMarkup(doc) {
		if !strings.HasPrefix(p, "tag <h3>") && !strings.HasPrefix(p, "tag <h4>") && !strings.HasPrefix(p, "tag <pre>") &&
			!strings.HasPrefix(p, `attribute class="language-sh" on <code>`) {
			t.Error(p)
		}
	}
	var blocks []string
	for _, pre := range doc.find("pre") {
		blocks = append(blocks, pre.textContent())
	}
	fx := plan.Fixes[0]
	var want []string
	for _, s := range fx.Rollout {
		for _, n := range s.Nodes {
			want = append(want, strings.Join(append([]string{"# node: " + visible(n, "")}, fx.Steps.Commands...), "\n")+"\n")
		}
	}
	if len(blocks) != len(want) {
		t.Fatalf("%d command blocks, want %d (one per node of the fix with commands)", len(blocks), len(want))
	}
	for i := range want {
		if blocks[i] != want[i] {
			t.Errorf("command block %d =\n%q\nwant\n%q", i, blocks[i], want[i])
		}
	}
	text := doc.textContent()
	for _, shown := range []string{"n$(touch /tmp/pwned)", "{{ lookup('pipe', 'id') }}", "<script>alert(1)</script> {{ x }}", "# heading"} {
		if !strings.Contains(text, shown) {
			t.Errorf("%q is not shown as text", shown)
		}
	}
}

// The playbook keeps every hostile name out of its plays but the plain
// host names, puts a refusing play first when some node cannot be named,
// tags every text from the run !unsafe so Ansible never templates it, and
// still parses: as YAML here, and with ansible-playbook --syntax-check
// where Ansible is installed.
func TestPlanAnsibleHostile(t *testing.T) {
	r, plan := hostilePlanReport(t)
	out := render(t, "plan-ansible", Options{Plan: plan}, r)
	var doc yaml.Node
	if err := yaml.Unmarshal(out, &doc); err != nil {
		t.Fatalf("the playbook is not YAML: %v\n%s", err, out)
	}
	plays := doc.Content[0]
	if plays.Kind != yaml.SequenceNode {
		t.Fatalf("the playbook is not a list of plays")
	}
	var hosts []string
	for i, play := range plays.Content {
		for j := 0; j+1 < len(play.Content); j += 2 {
			k, v := play.Content[j].Value, play.Content[j+1]
			switch k {
			case "hosts":
				for _, h := range v.Content {
					hosts = append(hosts, h.Value)
				}
			case "name":
				if v.Tag != "!unsafe" {
					t.Errorf("play %d: name %q is not tagged !unsafe", i, v.Value)
				}
			}
		}
	}
	if len(plays.Content) != 4 {
		t.Errorf("%d plays, want a refusing play and one per step with a plain host name (3)", len(plays.Content))
	}
	if first := plays.Content[0].Content[1].Value; !strings.HasPrefix(first, "refuse") {
		t.Errorf("first play is %q, want the refusal", first)
	}
	for _, h := range hosts {
		if h != "localhost" && !ansibleHost(h) {
			t.Errorf("host %q is in a play", h)
		}
	}
	if want := []string{"localhost", "etcd-1", "worker-9", "worker-9"}; !slices.Equal(hosts, want) {
		t.Errorf("hosts %v, want %v", hosts, want)
	}
	// Every text from the run or a check is data, never a template.
	var walk func(n *yaml.Node, key string)
	walk = func(n *yaml.Node, key string) {
		if n.Kind == yaml.ScalarNode && key != "" && slices.Contains([]string{"name", "cmd", "msg", "prompt", "url", "want_output", "want_status"}, key) && n.Tag != "!unsafe" {
			t.Errorf("%s %q is not tagged !unsafe", key, n.Value)
		}
		for i, k := range n.Content {
			if n.Kind == yaml.MappingNode && i%2 == 0 {
				continue
			}
			child := ""
			if n.Kind == yaml.MappingNode {
				child = n.Content[i-1].Value
			}
			walk(k, child)
		}
	}
	walk(plays, "")
	// Comments hold the names that are not in any play, one per line:
	// no line of the file outside a comment starts with what a name holds.
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "rm -rf") || strings.HasPrefix(line, "- hosts: all") {
			t.Errorf("a node name broke out of its comment: %q", line)
		}
	}
	syntaxCheck(t, out, []string{"etcd-1", "worker-9"})
}

// syntaxCheck runs ansible-playbook --syntax-check on a playbook with an
// inventory of the given hosts.
func syntaxCheck(t *testing.T, playbook []byte, hosts []string) {
	t.Helper()
	bin := testtools.Find(t, "ansible-playbook")
	dir := t.TempDir()
	pb, inv := filepath.Join(dir, "plan.yml"), filepath.Join(dir, "hosts.ini")
	if err := os.WriteFile(pb, playbook, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inv, []byte("[nodes]\n"+strings.Join(hosts, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := stdcontext.WithTimeout(stdcontext.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-i", inv, "--syntax-check", pb)
	cmd.Env = append(os.Environ(), "ANSIBLE_NOCOLOR=1", "ANSIBLE_LOCAL_TEMP="+t.TempDir(), "ANSIBLE_HOME="+t.TempDir())
	if got, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("ansible-playbook --syntax-check: %v\n%s", err, got)
	}
}

// The playbook of the incident fixture has one play per rollout step of
// each fix, in the plan's order, with the step's nodes in order, one at a
// time, stopping at the first failure; and it passes --syntax-check.
func TestPlanAnsiblePlays(t *testing.T) {
	r := incidentReport()
	o := withPlan(Options{}, r)
	out := render(t, "plan-ansible", o, r)
	plays := testtools.ReadPlays(t, out)
	var want [][]string
	var all []string
	for _, fx := range o.Plan.Fixes {
		for _, s := range fx.Rollout {
			want = append(want, s.Nodes)
			all = append(all, s.Nodes...)
		}
	}
	if len(want) == 0 {
		t.Fatal("the incident fixture's plan has no step")
	}
	var got [][]string
	for _, p := range plays {
		got = append(got, p.Hosts)
		if p.Serial != 1 || !p.AnyErrorsFatal || p.MaxFailPercentage == nil || *p.MaxFailPercentage != 0 || !p.Become || p.GatherFacts {
			t.Errorf("play %q: want serial 1, any_errors_fatal, max_fail_percentage 0, become, no facts; got %+v", p.Name, p)
		}
		if len(p.Tasks) == 0 || p.Tasks[0]["ansible.builtin.shell"] == nil {
			t.Errorf("play %q does not start with the fix's commands: %v", p.Name, p.Tasks)
		}
	}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("plays' hosts = %v, want the rollout %v", got, want)
	}
	syntaxCheck(t, out, all)
}

// The plan formats refuse to write without a plan rather than say there is
// nothing to fix.
func TestPlanFormatsNeedAPlan(t *testing.T) {
	for _, format := range []string{"plan", "plan-ansible"} {
		f, err := New(format, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := f.Format(&b, incidentReport()); err == nil || b.Len() != 0 {
			t.Errorf("%s without a plan: err %v, wrote %d bytes", format, err, b.Len())
		}
	}
}

// The playbook does what the plan says when Ansible runs it: the texts
// tagged !unsafe reach the shell untemplated, each kind of check passes
// against a live answer, and a node whose check never passes stops the
// playbook before the next step. Run on this machine with the local
// connection and become off (-e ansible_become=false overrides the play's
// become: https://docs.ansible.com/ansible/latest/reference_appendices/general_precedence.html), in
// a temporary directory.
func TestPlanAnsibleRunsLocally(t *testing.T) {
	testtools.SkipShort(t, "runs ansible-playbook")
	bin := testtools.Find(t, "ansible-playbook")
	dir := t.TempDir()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") }))
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
	file := func(name string) string { return q(filepath.Join(dir, name)) }
	steps := func(marker, want string) result.FixSteps {
		return result.FixSteps{
			Commands: []string{`echo '{{ lookup("pipe", "id") }}' > ` + file(marker), "echo 2 > " + file("n")},
			Verify: []result.Verification{
				{What: "{{ x }} printed", Command: "cat " + file("n"), Expect: want, Retries: 2, Delay: 1},
				{What: "exits 0", Command: "test -s " + file(marker), Retries: 1, Delay: 1},
				{What: "http", HTTP: srv.URL + "/healthz", Status: 200, Retries: 2, Delay: 1},
				{What: "port", Port: port, Retries: 2, Delay: 1},
			},
			Stop: "never",
		}
	}
	run := func(plan *result.Plan) error {
		pb := filepath.Join(dir, "plan.yml")
		if err := os.WriteFile(pb, render(t, "plan-ansible", Options{Plan: plan}, newReport("local")), 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := stdcontext.WithTimeout(stdcontext.Background(), 3*time.Minute)
		defer cancel()
		// The node is named node-1 (a plan never puts localhost in a
		// play), run here through -c local.
		cmd := exec.CommandContext(ctx, bin, "-i", "node-1,", "-c", "local", "-e", "ansible_become=false", pb)
		cmd.Env = append(os.Environ(), "ANSIBLE_NOCOLOR=1", "ANSIBLE_LOCAL_TEMP="+t.TempDir(), "ANSIBLE_HOME="+t.TempDir(), "ANSIBLE_RETRY_FILES_ENABLED=0")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%w\n%s", err, out)
		}
		return nil
	}
	fix := func(check string, st result.FixSteps) result.Fix {
		return result.Fix{Check: check, Title: check, Steps: st, Rollout: []result.RolloutStep{{Class: result.ClassWorker, Nodes: []string{"node-1"}}}}
	}
	if err := run(&result.Plan{Fixes: []result.Fix{fix("a", steps("first", "2"))}}); err != nil {
		t.Fatalf("a plan whose checks pass failed: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "first")); string(got) != "{{ lookup(\"pipe\", \"id\") }}\n" {
		t.Errorf("the command reached the shell as %q: Ansible templated it", got)
	}
	// A check that never passes stops the playbook: the next fix's
	// commands never run.
	err = run(&result.Plan{Fixes: []result.Fix{fix("a", steps("second", "3")), fix("b", steps("third", "2"))}})
	if err == nil {
		t.Error("a plan whose check never passes succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, "third")); err == nil {
		t.Error("the play after a failed check ran")
	}
	// A manual step nobody confirms (stdin is not a terminal here) stops
	// the node before its commands.
	manual := steps("fourth", "2")
	manual.Manual = []string{"decide {{ x }}"}
	if err := run(&result.Plan{Fixes: []result.Fix{fix("c", manual)}}); err == nil || !strings.Contains(err.Error(), "not confirmed") {
		t.Errorf("an unconfirmed manual step did not stop the playbook: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "fourth")); err == nil {
		t.Error("the commands after an unconfirmed manual step ran")
	}
}

// A node named as Ansible names the control machine (its implicit
// localhost: ansible/ansible lib/ansible/inventory/manager.py gives a
// pattern in C.LOCALHOST, constants.py ('127.0.0.1', 'localhost', '::1'),
// the implicit localhost when the inventory has no such host) or as the
// resolver does (a loopback address) is in no play that changes anything:
// the fix would run on the control machine with become. ansible-playbook
// --list-hosts, with an inventory of the other node only, shows every
// play that changes something targets that node alone.
func TestPlanAnsibleNeverTargetsTheControlMachine(t *testing.T) {
	for _, n := range []string{"localhost", "LocalHost", "127.0.0.1", "127.1.2.3", "::1", "all", "ungrouped", "etcd-1"} {
		if got, want := ansibleHost(n), n == "etcd-1"; got != want {
			t.Errorf("ansibleHost(%q) = %v, want %v", n, got, want)
		}
	}
	names := []string{"localhost", "127.0.0.1", "etcd-1"}
	r := newReport("local")
	for _, n := range names {
		r.Nodes = append(r.Nodes, result.Node{Name: n, Status: result.StatusOK, Roles: []string{"worker"}, Facts: map[string]string{}})
	}
	plan := &result.Plan{Fixes: []result.Fix{{Check: "a", Title: "a", Steps: result.FixSteps{Commands: []string{"true"}},
		Rollout: []result.RolloutStep{{Class: result.ClassWorker, Nodes: names}}}}}
	out := render(t, "plan-ansible", Options{Plan: plan}, r)
	for _, p := range testtools.ReadPlays(t, out) {
		if p.Become && !slices.Equal(p.Hosts, []string{"etcd-1"}) {
			t.Errorf("play %q becomes root on %v", p.Name, p.Hosts)
		}
	}
	bin := testtools.Find(t, "ansible-playbook")
	dir := t.TempDir()
	pb, inv := filepath.Join(dir, "plan.yml"), filepath.Join(dir, "hosts.ini")
	if err := os.WriteFile(pb, out, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inv, []byte("[nodes]\netcd-1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := stdcontext.WithTimeout(stdcontext.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-i", inv, "--list-hosts", pb)
	cmd.Env = append(os.Environ(), "ANSIBLE_NOCOLOR=1", "ANSIBLE_LOCAL_TEMP="+t.TempDir(), "ANSIBLE_HOME="+t.TempDir())
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ansible-playbook --list-hosts: %v\n%s", err, got)
	}
	// Output: "  play #N (PATTERN): NAME ..." then "    hosts (K):" and
	// one host per line.
	plays := strings.Split(string(got), "  play #")[1:]
	if len(plays) == 0 {
		t.Fatalf("--list-hosts listed no play:\n%s", got)
	}
	for _, p := range plays {
		_, hostsPart, _ := strings.Cut(p, "hosts (")
		_, hostLines, _ := strings.Cut(hostsPart, "\n")
		hosts := strings.Fields(hostLines)
		header, _, _ := strings.Cut(p, "\n")
		if strings.Contains(header, ": refuse") {
			continue // become: false, and only ansible.builtin.fail
		}
		if !slices.Equal(hosts, []string{"etcd-1"}) {
			t.Errorf("play %s targets %v, want [etcd-1]\n%s", header, hosts, got)
		}
	}
}
