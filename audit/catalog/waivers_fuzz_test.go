package catalog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/fleet-audit/fleet-audit/internal/testtools"
)

// FuzzParseWaivers feeds waivers files (--waivers is untrusted text) to
// parseWaivers: it never panics, every error names the file, and an
// accepted waiver has the check and the reason the format requires.
// Seeds: the example and the waiver files of the cmd testscripts.
func FuzzParseWaivers(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "waivers.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	scripts, err := filepath.Glob(filepath.Join("..", "..", "cmd", "fleet-audit", "testdata", "script", "waivers*.txtar"))
	if err != nil || len(scripts) == 0 {
		f.Fatalf("no waiver testscripts: %v", err)
	}
	for _, s := range scripts {
		a, err := txtar.ParseFile(s)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range a.Files {
			if strings.HasSuffix(file.Name, ".yaml") {
				f.Add(file.Data)
			}
		}
	}
	f.Add([]byte("- check: '['\n  reason: x\n  expires: 2026-02-30\n"))
	c, err := Builtin()
	if err != nil {
		f.Fatal(err)
	}
	known := c.WaivableIDs()
	const name = "fuzz.yaml"
	f.Fuzz(func(t *testing.T, data []byte) {
		ws, err := parseWaivers(name, data, known)
		if err != nil {
			if ws != nil {
				t.Fatal("waivers returned with an error")
			}
			testtools.ErrorsNameFile(t, err, name)
			return
		}
		for _, w := range ws {
			if w.Check == "" || strings.TrimSpace(w.Reason) == "" {
				t.Fatalf("accepted waiver without check or reason: %+v", w)
			}
		}
	})
}
