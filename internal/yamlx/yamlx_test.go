package yamlx

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestExpandAliasesBudget(t *testing.T) {
	// Each level doubles the expanded tree: 2^20 nodes, far over the budget.
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x]\n")
	for i := 1; i <= 20; i++ {
		b.WriteString("a" + string(rune('0'+i%10)) + "_" + strings.Repeat("z", i) + ": &l" + strings.Repeat("z", i) + " [")
		prev := "a0"
		if i > 1 {
			prev = "l" + strings.Repeat("z", i-1)
		}
		b.WriteString("*" + prev + ", *" + prev + "]\n")
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatal(err)
	}
	_, err := ExpandAliases("laughs.yaml", doc.Content[0])
	if err == nil || !strings.Contains(err.Error(), "laughs.yaml") {
		t.Fatalf("ExpandAliases of a 2^20-node document: err = %v, want a refusal naming the file", err)
	}
	var small yaml.Node
	if err := yaml.Unmarshal([]byte("base: &b {k: v}\nuse: *b\n"), &small); err != nil {
		t.Fatal(err)
	}
	out, err := ExpandAliases("ok.yaml", small.Content[0])
	if err != nil {
		t.Fatal(err)
	}
	if use := out.Content[3]; use.Kind != yaml.MappingNode || use.Content[1].Value != "v" {
		t.Errorf("alias not replaced by a copy of its anchor: %+v", use)
	}
}

func TestErrLineAndText(t *testing.T) {
	var v struct{ N int }
	err := yaml.Unmarshal([]byte("\n\nn: [1]\n"), &v)
	if err == nil {
		t.Fatal("decoding a list into an int succeeded")
	}
	if got := ErrLine(err); got != 3 {
		t.Errorf("ErrLine = %d, want 3 (%v)", got, err)
	}
	if got := ErrText(err); strings.Contains(got, "line 3") || got == "" {
		t.Errorf("ErrText = %q, want the message without its line", got)
	}
}

// TestList: the loaders of checks and waivers read their list one way; a
// syntax error or a document that is not a list names the file and line.
func TestList(t *testing.T) {
	for _, tc := range []struct {
		name, in, err string
		items         int
	}{
		{"empty file", "", "", -1},
		{"list with an alias", "- &a {k: v}\n- *a\n", "", 2},
		{"mapping", "k: v\n", "f.yaml:1: want a list of things", 0},
		{"syntax error", "- a\n- [b\n", "f.yaml:", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			list, err := List("f.yaml", []byte(tc.in), "things")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.items < 0 {
				if list != nil {
					t.Fatalf("empty file gave %v", list)
				}
				return
			}
			if len(list.Content) != tc.items || list.Content[1].Kind != yaml.MappingNode {
				t.Fatalf("list = %+v", list)
			}
		})
	}
}
