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

	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/result"
)

// TestGoFindingsAreDeclared holds builtin.go as the one home of the
// findings built in Go: no finding in this package's code is named by a
// string literal (it must use a constant of builtin.go), and every such
// constant has its row in GoFindings, so waivers, --only/--skip, `fleet-audit
// probes` and the catalogue know it.
func TestGoFindingsAreDeclared(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	declared := map[string]bool{}
	for _, f := range GoFindings {
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
						t.Errorf("%s: a finding named by the literal %s: use a constant of builtin.go", fset.Position(n.Pos()), lit)
					}
				}
			case *ast.CallExpr:
				if fn, ok := n.Fun.(*ast.Ident); ok && strings.HasSuffix(fn.Name, "Finding") && len(n.Args) > 0 {
					if lit := stringLiteralIn(n.Args[0]); lit != "" {
						t.Errorf("%s: %s(%s, ...): use a constant of builtin.go", fset.Position(n.Pos()), fn.Name, lit)
					}
				}
			case *ast.GenDecl:
				if name != "builtin.go" || n.Tok != token.CONST {
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
							t.Errorf("builtin.go: %s = %q has no row in GoFindings", id.Name, v)
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

// TestUserCheckMayReadGoFacts: a --probes check on a fact fleet-audit
// computes in Go loads (k8s.node.registered was refused as "emitted by no
// probe", while a built-in check reads it), and one on a Go fact no check
// may read is still refused.
func TestUserCheckMayReadGoFacts(t *testing.T) {
	checkOn := func(fact string) string {
		return "- id: site.on-" + strings.ReplaceAll(fact, ".", "-") + "\n  title: t\n  severity: warning\n  when:\n    - {fact: " + fact + ", op: eq, value: \"no\"}\n  summary: s\n  remediation: r\n"
	}
	for _, tc := range []struct {
		fact string
		ok   bool
	}{
		{NodeRegisteredFact, true},
		{TargetVersionFact, true},
		{probe.MetaSudo, false},
		{"k8s.node.registred", false},
	} {
		t.Run(tc.fact, func(t *testing.T) {
			_, checks, err := LoadProbeDir(writeDir(t, map[string]string{"site.yaml": checkOn(tc.fact)}))
			if tc.ok && (err != nil || len(checks) != 1) {
				t.Fatalf("LoadProbeDir = %d checks, %v; want the check loaded", len(checks), err)
			}
			if !tc.ok && (err == nil || !strings.Contains(err.Error(), "emitted by no probe")) {
				t.Fatalf("LoadProbeDir error = %v, want it refused as emitted by no probe", err)
			}
		})
	}
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
	if !slices.Contains(all, SkewServersID) {
		t.Fatalf("findings %v lack %s: the fleet no longer shows skew", all, SkewServersID)
	}
	if got := ids(check.Selection{Skip: []string{"skew.*"}}); slices.ContainsFunc(got, func(id string) bool { return strings.HasPrefix(id, "skew.") }) {
		t.Errorf("--skip skew.* kept %v", got)
	}
	if got := ids(check.Selection{Only: []string{SkewServersID}}); !slices.Equal(got, []string{SkewServersID}) {
		t.Errorf("--only %s gave %v", SkewServersID, got)
	}
	if _, err := check.SelectChecks(nil, check.Selection{Skip: []string{"skew.*", "cluster.unavailable"}}, GoSelectableIDs()); err != nil {
		t.Errorf("--skip of findings built in Go refused: %v", err)
	}
	for _, id := range []string{SkewServersID, ClusterUnavailableID} {
		if !slices.Contains(WaivableIDs(nil), id) {
			t.Errorf("a waiver may not name %s", id)
		}
	}
	for _, id := range []string{WaiverExpiredID, WaiverUnusedID} {
		if slices.Contains(WaivableIDs(nil), id) || slices.Contains(GoSelectableIDs(), id) {
			t.Errorf("%s is waivable or selectable: the waiver bookkeeping must not be hidden", id)
		}
	}
}
