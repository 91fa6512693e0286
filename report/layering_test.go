package report

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports enforces the package contract in doc.go: a report is
// rendered from a Report alone (possibly read back from JSON long after
// the run), so nothing here may reach for SSH, the inventory or the CLI.
func TestImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	const module = "github.com/fleet-audit/fleet-audit/"
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, module) && path != module+"audit" {
				t.Errorf("%s imports %s; package report may only import package audit from this module", f, path)
			}
		}
	}
}
