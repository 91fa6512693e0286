package report

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestYAMLEncodeRoundTrips reads yamlEncode's output back with a YAML
// library: every string, however hostile, comes back as it went in (a
// byte that is not UTF-8 as U+FFFD), tags and structure included.
func TestYAMLEncodeRoundTrips(t *testing.T) {
	type task struct {
		Name  unsafeText            `yaml:"name"`
		Vars  map[string]unsafeText `yaml:"vars,omitempty"`
		Hosts []string              `yaml:"hosts"`
		Skip  string                `yaml:"skip,omitempty"`
		N     int                   `yaml:"n"`
		On    bool                  `yaml:"on"`
		Sub   *task                 `yaml:"sub,omitempty"`
	}
	hostile := []string{
		"", "plain", "yes", "null", "~", "- a", "a: b", "# c", "'q'", `"dq"`, `back\slash`, "{{ lookup('pipe','id') }}",
		"line\nbreak", "cr\rlf", "tab\tx", "nul\x00x", "bell\a", "del\x7f", "c1\u0085nel", "c1\u0090", "ls\u2028ps\u2029",
		"bom\ufeff", "emoji 😀", "ünïcödé", "rtl\u202eevil", "!unsafe x", "&anchor", "*alias", "%TAG", "@at", "`tick`", "$(id)",
		"  lead and trail  ", "---", "...", "0x1F", "1e3", "true",
	}
	for _, s := range hostile {
		in := task{Name: unsafeText(s), Vars: map[string]unsafeText{"want": unsafeText(s), s + "k": "v", "on": "x"}, Hosts: []string{s}, N: 3, On: true,
			Sub: &task{Name: "inner", Hosts: []string{}, Vars: map[string]unsafeText{}}}
		out, err := yamlEncode([]task{in})
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		var back []map[string]any
		if err := yaml.Unmarshal(out, &back); err != nil {
			t.Fatalf("%q: the output does not parse: %v\n%s", s, err, out)
		}
		if len(back) != 1 {
			t.Fatalf("%q: %d items back, want 1\n%s", s, len(back), out)
		}
		got := back[0]
		vars, _ := got["vars"].(map[string]any)
		hosts, _ := got["hosts"].([]any)
		if got["name"] != s || vars["want"] != s || vars[s+"k"] != "v" || vars["on"] != "x" || len(hosts) != 1 || hosts[0] != s ||
			got["n"] != 3 || got["on"] != true || got["skip"] != nil {
			t.Errorf("%q came back as %#v\n%s", s, got, out)
		}
		sub, _ := got["sub"].(map[string]any)
		if sub["name"] != "inner" || len(sub) != 5 {
			t.Errorf("%q: the nested mapping came back as %#v\n%s", s, sub, out)
		}
		// The tag is on the scalar, so Ansible never templates it.
		var doc yaml.Node
		if err := yaml.Unmarshal(out, &doc); err != nil {
			t.Fatal(err)
		}
		if name := doc.Content[0].Content[0].Content[1]; name.Tag != "!unsafe" || name.Value != s {
			t.Errorf("%q: name is %s %q, want !unsafe", s, name.Tag, name.Value)
		}
	}
	out, _ := yamlEncode([]task{{Name: "x\xffy"}})
	if !strings.Contains(string(out), `"x\uFFFDy"`) {
		t.Errorf("a byte that is not UTF-8 is not U+FFFD:\n%s", out)
	}
}
