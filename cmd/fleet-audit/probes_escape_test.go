package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProbesListingEscapesUserText: `probes --probes DIR` prints what the
// files of DIR say, and those files may come from anyone. An OSC 52
// clipboard write, a screen clear, a bell or a bidi override in a probe's
// description or a check's title must reach the terminal made visible, as
// in every report, never as the control sequence itself.
func TestProbesListingEscapesUserText(t *testing.T) {
	const hostile = "\x1b]52;c;ZWNobyBwd25lZA==\x07 \x1b[2J\u202eevil"
	// Wide enough that no cell wraps, so each escape reads whole.
	t.Setenv("COLUMNS", "1000")
	for _, tc := range []struct {
		name  string
		files map[string]string
	}{
		{"probe description", map[string]string{
			"evil.sh": "# id: evil\n# description: " + hostile + "\n# needs_root: false\n# timeout: 5s\n# facts: evil.x\nfact evil.x 1\n",
		}},
		{"check title", map[string]string{
			"evil.sh":   "# id: evil\n# description: fine\n# needs_root: false\n# timeout: 5s\n# facts: evil.x\nfact evil.x 1\n",
			"evil.yaml": "- id: evil.check\n  title: \"\\e]52;c;ZWNobyBwd25lZA==\\a \\e[2J\\u202eevil\"\n  severity: warning\n  when:\n    - {fact: evil.x, op: eq, value: \"2\"}\n  summary: s\n  remediation: r\n",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			code, stdout, stderr := runCLI(t, "probes", "--probes", dir)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var evil []string // the listing's rows of the hostile probe or check
			for _, line := range strings.Split(stdout, "\n") {
				if strings.Contains(line, "evil") {
					evil = append(evil, line)
				}
			}
			for _, raw := range []string{"\x1b", "\x07", "\u202e"} {
				if strings.Contains(stdout, raw) {
					t.Errorf("the listing holds %q raw: %q", raw, evil)
				}
			}
			for _, shown := range []string{`\x1b]52;c;ZWNobyBwd25lZA==\x07`, `\x1b[2J`, `\u202eevil`} {
				if !strings.Contains(stdout, shown) {
					t.Errorf("the listing does not show %s: %q", shown, evil)
				}
			}
		})
	}
}
