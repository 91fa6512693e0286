package audit

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/audit/catalog"
	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/result"
)

// TestGoFindingsAreDeclared holds catalog/builtin.go as the one home of
// the findings built in Go: no finding in this package's code is named by a
// string literal (it must use a constant of catalog/builtin.go), and every
// such constant has its row in GoFindings, so waivers, --only/--skip,
// `fleet-audit probes` and the catalogue know it.
func TestGoFindingsAreDeclared(t *testing.T) {
	const home = "catalog/builtin.go"
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, home)
	fset := token.NewFileSet()
	declared := map[string]bool{}
	for _, f := range catalog.GoFindings {
		declared[f.ID] = true
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(af, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.KeyValueExpr:
				if k, ok := n.Key.(*ast.Ident); ok && k.Name == "Check" {
					if lit := stringLiteralIn(n.Value); lit != "" {
						t.Errorf("%s: a finding named by the literal %s: use a constant of catalog/builtin.go", fset.Position(n.Pos()), lit)
					}
				}
			case *ast.CallExpr:
				if fn, ok := n.Fun.(*ast.Ident); ok && strings.HasSuffix(fn.Name, "Finding") && len(n.Args) > 0 {
					if lit := stringLiteralIn(n.Args[0]); lit != "" {
						t.Errorf("%s: %s(%s, ...): use a constant of catalog/builtin.go", fset.Position(n.Pos()), fn.Name, lit)
					}
				}
			case *ast.GenDecl:
				if name != home || n.Tok != token.CONST {
					return true
				}
				for _, spec := range n.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, id := range vs.Names {
						if !strings.HasSuffix(id.Name, "ID") {
							continue
						}
						v, _ := strconv.Unquote(vs.Values[i].(*ast.BasicLit).Value)
						if !declared[v] {
							t.Errorf("%s: %s = %q has no row in catalog.GoFindings", home, id.Name, v)
						}
					}
				}
			}
			return true
		})
	}
}

// stringLiteralIn returns the first string literal in an expression, "" if none.
func stringLiteralIn(e ast.Expr) string {
	found := ""
	ast.Inspect(e, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && found == "" {
			found = lit.Value
		}
		return found == ""
	})
	return found
}

// TestSelectionReachesGoFindings: --skip and --only select the findings
// built in Go as they do checks, and a waiver may name them.
func TestSelectionReachesGoFindings(t *testing.T) {
	const s, a = "rke2-server", "rke2-agent"
	nodes := []result.Node{versionNode("s1", s, "v1.30.4+rke2r1"), versionNode("s2", s, "v1.32.1+rke2r1"), versionNode("w1", a, "v1.30.4+rke2r1")}
	ids := func(sel check.Selection) []string {
		r := &result.Report{Nodes: nodes}
		Analyze(r, Rules{Selection: sel})
		var out []string
		for _, f := range r.Findings {
			out = append(out, f.Check)
		}
		slices.Sort(out)
		return out
	}
	all := ids(check.Selection{})
	if !slices.Contains(all, catalog.SkewServersID) {
		t.Fatalf("findings %v lack %s: the fleet no longer shows skew", all, catalog.SkewServersID)
	}
	if got := ids(check.Selection{Skip: []string{"skew.*"}}); slices.ContainsFunc(got, func(id string) bool { return strings.HasPrefix(id, "skew.") }) {
		t.Errorf("--skip skew.* kept %v", got)
	}
	if got := ids(check.Selection{Only: []string{catalog.SkewServersID}}); !slices.Equal(got, []string{catalog.SkewServersID}) {
		t.Errorf("--only %s gave %v", catalog.SkewServersID, got)
	}
	if _, err := check.SelectChecks(nil, check.Selection{Skip: []string{"skew.*", "cluster.unavailable"}}, catalog.GoSelectableIDs()); err != nil {
		t.Errorf("--skip of findings built in Go refused: %v", err)
	}
	for _, id := range []string{catalog.SkewServersID, catalog.ClusterUnavailableID} {
		if !slices.Contains((&catalog.Catalog{}).WaivableIDs(), id) {
			t.Errorf("a waiver may not name %s", id)
		}
	}
	for _, id := range []string{catalog.WaiverExpiredID, catalog.WaiverUnusedID} {
		if slices.Contains((&catalog.Catalog{}).WaivableIDs(), id) || slices.Contains(catalog.GoSelectableIDs(), id) {
			t.Errorf("%s is waivable or selectable: the waiver bookkeeping must not be hidden", id)
		}
	}
}
