package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// shortAllowed are the files that may call testing.Short() themselves:
// testtools.SkipShort, the one home of the -short skip, and the cmd
// testscript runner, whose scripts are skipped through testscript's T (no
// testing.TB) only when they audit a fleet.
var shortAllowed = map[string]bool{
	"internal/testtools/testtools.go": true,
	"cmd/fleet-audit/main_test.go":    true,
}

// TestShortSkipsHaveOneHome holds every -short skip to
// testtools.SkipShort(t, why), so that each says why its test is slow in
// the same words ("-short: ...") and the fast tier's rule has one home.
func TestShortSkipsHaveOneHome(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil || !strings.HasSuffix(path, ".go") || shortAllowed[filepath.ToSlash(rel)] {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Short" {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "testing" {
					t.Errorf("%s: testing.Short(): skip with testtools.SkipShort(t, why) instead", fset.Position(call.Pos()))
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
