package report

import (
	stdcontext "context"
	"encoding/json"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

// playbookHostile is text a check or a node could put into a playbook:
// YAML's indicators at the start, inside and at the end of a scalar, the
// words and numbers YAML 1.1 (PyYAML, which Ansible reads with) resolves
// to other types, Jinja2, and every kind of character YAML escapes or
// refuses raw.
var playbookHostile = []string{
	`"dq" and 'sq'`, `'`, `"`, `\`, `\"`, "a: b", "a:", "key:value", "#", "# c", "x # c", "- a", "-", "--- a", "---", "...",
	"* x", "*alias", "&anchor x", "!unsafe x", "!!python/object:os.system", "|", ">", "? q", "[a, b]", "{a: b}", "%TAG", "@", "`x`",
	"{{ lookup('pipe', 'id') }}", "{% raw %}x{% endraw %}", "{# c #}", "$(id)",
	"", " ", " lead", "trail ", "yes", "No", "on", "null", "~", "0x1F", "017", "0b1", "1_000", "1e3", "1.", ".inf", "1:20", "2001-12-14",
	"line\nbreak", "\nlead break", "two\n\nbreaks", "end\n", "cr\rlf", "crlf\r\n- hosts: all", "tab\tx", "nul\x00x", "bell\a", "esc\x1b[31m",
	"del\x7f", "nel\u0085x", "c1\u009b2J", "ls\u2028ps\u2029", "bom\ufeff", "nbsp\u00a0", "\ufffe", "emoji 😀", "\u202eevil",
	"x\xffy",
}

// TestPlaybookCarriesHostileText: every text reaches the playbook as one
// double-quoted scalar tagged !unsafe that reads back as exactly that text
// (a byte that is not UTF-8 as U+FFFD); and Ansible's own loader reads the
// file as yaml.v3 does, where Ansible is installed.
func TestPlaybookCarriesHostileText(t *testing.T) {
	r := newReport("hostile")
	plan := &result.Plan{}
	for _, s := range playbookHostile {
		r.Nodes = append(r.Nodes, result.Node{Name: s, Status: result.StatusOK, Roles: []string{"worker"}, Facts: map[string]string{}})
		plan.Fixes = append(plan.Fixes, result.Fix{Check: "c", Title: s,
			Steps:   result.FixSteps{Manual: []string{s}, Commands: []string{s}, Verify: []result.Verification{{What: s, Command: s, Expect: s, Retries: 1, Delay: 1}}},
			Rollout: []result.RolloutStep{{Class: result.ClassWorker, Nodes: []string{"node-1", s}}}})
	}
	out := render(t, "plan-ansible", Options{Plan: plan}, r)
	plays := testtools.ReadPlays(t, out)
	if len(plays) != 1+len(playbookHostile) {
		t.Fatalf("%d plays, want the refusal and one per fix (%d)\n%s", len(plays), 1+len(playbookHostile), out)
	}
	for i, s := range playbookHostile {
		want := strings.ToValidUTF8(s, "\uFFFD")
		p := plays[1+i]
		hosts := []string{"node-1"}
		if ansibleHost(s) {
			hosts = append(hosts, s)
		}
		if p.Name != "c: "+want+" (step 1: worker)" || !slices.Equal(p.Hosts, hosts) || len(p.Tasks) != 4 {
			t.Errorf("%q: play %q on %v with %d tasks", s, p.Name, p.Hosts, len(p.Tasks))
			continue
		}
		pause, _ := p.Tasks[0]["ansible.builtin.pause"].(map[string]any)
		shell, _ := p.Tasks[2]["ansible.builtin.shell"].(map[string]any)
		check, _ := p.Tasks[3]["ansible.builtin.shell"].(map[string]any)
		vars, _ := p.Tasks[3]["vars"].(map[string]any)
		if prompt, _ := pause["prompt"].(string); !strings.HasPrefix(prompt, want+"\n\n") || p.Tasks[2]["name"] != want || shell["cmd"] != want ||
			p.Tasks[3]["name"] != "check: "+want || check["cmd"] != want || s != "" && vars["want_output"] != want {
			t.Errorf("%q came back as %#v", s, p.Tasks)
		}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(n *yaml.Node, key string)
	walk = func(n *yaml.Node, key string) {
		if n.Kind == yaml.ScalarNode && (n.Tag == "!!str" || n.Tag == "!unsafe") && n.Style&yaml.DoubleQuotedStyle == 0 {
			t.Errorf("%s %q is not double-quoted", key, n.Value)
		}
		if n.Kind == yaml.ScalarNode && slices.Contains([]string{"name", "cmd", "msg", "prompt", "want_output", "fail_msg"}, key) && n.Tag != "!unsafe" {
			t.Errorf("%s %q is not tagged !unsafe", key, n.Value)
		}
		for i, c := range n.Content {
			if n.Kind == yaml.MappingNode && i%2 == 0 {
				continue
			}
			if n.Kind == yaml.MappingNode {
				key = n.Content[i-1].Value
			}
			walk(c, key)
		}
	}
	walk(&doc, "")
	ansibleReadsAsYAMLv3(t, out, &doc)
	syntaxCheck(t, out, []string{"node-1"})
}

// ansibleReadsAsYAMLv3 decodes the playbook with Ansible's AnsibleLoader
// (ansible/ansible lib/ansible/parsing/yaml/loader.py, on PyYAML; !unsafe
// becomes an AnsibleUnsafe string: constructor.py, construct_yaml_unsafe)
// in the Python that runs ansible-playbook, and wants what yaml.v3 read.
func ansibleReadsAsYAMLv3(t *testing.T, playbook []byte, doc *yaml.Node) {
	t.Helper()
	bin := testtools.Find(t, "ansible-playbook")
	script, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(script), "\n")
	interp := strings.Fields(strings.TrimPrefix(first, "#!"))
	if len(interp) == 0 {
		t.Fatalf("%s has no #! line", bin)
	}
	const read = `
import json, sys
from ansible.parsing.yaml.loader import AnsibleLoader
from ansible.utils.unsafe_proxy import AnsibleUnsafe
def plain(x):
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, list):
        return [plain(v) for v in x]
    if isinstance(x, AnsibleUnsafe):
        return {"!unsafe": str(x)}
    return x
json.dump(plain(AnsibleLoader(sys.stdin.buffer.read().decode("utf-8")).get_single_data()), sys.stdout)
`
	ctx, cancel := stdcontext.WithTimeout(stdcontext.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, interp[0], append(interp[1:], "-c", read)...)
	cmd.Stdin = strings.NewReader(string(playbook))
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("Ansible's loader: %v", err)
	}
	var fromAnsible, fromV3 any
	if err := json.Unmarshal(got, &fromAnsible); err != nil {
		t.Fatal(err)
	}
	v3, err := json.Marshal(plainNode(doc.Content[0]))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(v3, &fromV3); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromAnsible, fromV3) {
		a, _ := json.MarshalIndent(fromAnsible, "", " ")
		b, _ := json.MarshalIndent(fromV3, "", " ")
		t.Errorf("Ansible reads the playbook as\n%s\nyaml.v3 as\n%s", a, b)
	}
}

// plainNode is n as Ansible's loader gives it in ansibleReadsAsYAMLv3.
func plainNode(n *yaml.Node) any {
	switch n.Kind {
	case yaml.MappingNode:
		m := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[n.Content[i].Value] = plainNode(n.Content[i+1])
		}
		return m
	case yaml.SequenceNode:
		l := []any{}
		for _, c := range n.Content {
			l = append(l, plainNode(c))
		}
		return l
	}
	if n.Tag == "!unsafe" {
		return map[string]any{"!unsafe": n.Value}
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return err.Error()
	}
	return v
}
