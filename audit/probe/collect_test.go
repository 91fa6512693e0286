package probe

import (
	"strings"
	"testing"
)

func TestParseCollect(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, err string
	}{
		{"ok", "- facts: [a.b, c.*]\n  commands: [x]\n", ""},
		{"unknown field", "- facts: [a]\n  commands: [x]\n  note: y\n", "field note not found"},
		{"no commands", "- facts: [a]\n", "commands: is required"},
		{"no facts", "- commands: [x]\n", "facts: is required"},
		{"bad on", "- facts: [a]\n  on: laptop\n  commands: [x]\n", `on: want node, server or workstation, got "laptop"`},
		{"twice", "- facts: [a]\n  commands: [x]\n- facts: [a]\n  commands: [y]\n", `"a" is already listed at line 1`},
		{"not a list", "facts: [a]\n", "want a list of entries"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseCollect("c.yaml", []byte(tc.yaml))
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err %v; want it to say %q", err, tc.err)
			}
		})
	}
}

// TestCollectFor: an exact key beats any family, and a longer family a
// shorter one, whatever their order in the table.
func TestCollectFor(t *testing.T) {
	table, err := ParseCollect("c.yaml", []byte(`
- {facts: [kp.*], commands: [family]}
- {facts: [kp.metrics.*], commands: [longer family]}
- {facts: [kp.metrics.restore], commands: [exact]}
- {facts: [other], on: server, commands: [server]}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		fact, want, on string
		ok             bool
	}{
		{"kp.metrics.restore", "exact", CollectOnNode, true},
		{"kp.metrics.sync", "longer family", CollectOnNode, true},
		{"kp.health", "family", CollectOnNode, true},
		{"other", "server", CollectOnServer, true},
		{"kp", "", "", false},
		{"otherwise", "", "", false},
	} {
		c, ok := CollectFor(table, tc.fact)
		if ok != tc.ok || (ok && (c.Commands[0] != tc.want || c.On != tc.on)) {
			t.Errorf("%s: got %v %+v; want %v %q on %q", tc.fact, ok, c, tc.ok, tc.want, tc.on)
		}
	}
}
