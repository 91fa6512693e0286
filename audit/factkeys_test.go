package audit

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/audit/catalog"
	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/audit/probe"
)

// factKeySources are the packages whose Go code reads facts by key.
var factKeySources = []string{".", "../report", "check", "probe", "../cmd/fleet-audit", "../cmd/fleet-audit/internal/demo", "../result"}

// declaredFacts are the one home of every fact key: the built-in probes'
// headers (facts, node_facts) and GoFacts.
func declaredFacts(t *testing.T) map[string]bool {
	t.Helper()
	probes, err := probe.BuiltinProbes()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, p := range probes {
		for _, f := range slices.Concat(p.Facts, p.NodeFacts) {
			out[f] = true
		}
	}
	for _, f := range catalog.GoFacts {
		out[f.Key] = true
	}
	return out
}

// TestGoFactKeysAreDeclared holds the probe headers and GoFacts as the one
// home of the fact keys Go code reads. In the non-test code of audit and
// report, a string literal that indexes a Facts map, or that looks like a
// fact key (probe.FactKeyPattern, with a dot) and starts with the first
// word of a declared fact, must be a declared fact, or end with "." and be
// the prefix of one; a check or Go finding id of the same shape is not a
// fact. A key no probe emits reads absent on every node, and the Go that
// judges it is silently never judged.
func TestGoFactKeysAreDeclared(t *testing.T) {
	declared := declaredFacts(t)
	prefixes := map[string]bool{}
	for f := range declared {
		if word, _, ok := strings.Cut(f, "."); ok {
			prefixes[word] = true
		}
	}
	notFacts := map[string]bool{}
	for _, f := range catalog.GoFindings {
		notFacts[f.ID] = true
	}
	checks, err := check.BuiltinChecks()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		notFacts[c.ID] = true
	}
	for _, bad := range factKeyProblems(t, factKeySources, declared, prefixes, notFacts) {
		t.Error(bad)
	}
}

// factKeyProblems returns, for every Go file of dirs, each literal that
// TestGoFactKeysAreDeclared refuses.
func factKeyProblems(t *testing.T, dirs []string, declared, prefixes, notFacts map[string]bool) []string {
	t.Helper()
	var out []string
	fset := token.NewFileSet()
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		// A package that moved leaves its old path matching nothing, and
		// an empty glob would pass its keys unread.
		if len(files) == 0 {
			t.Fatalf("%s holds no Go file: did the package move?", dir)
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(fset, name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			indexed := map[*ast.BasicLit]bool{}
			ast.Inspect(af, func(n ast.Node) bool {
				if ix, ok := n.(*ast.IndexExpr); ok && isFactsMap(ix.X) {
					if lit, ok := ix.Index.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						indexed[lit] = true
					}
				}
				return true
			})
			ast.Inspect(af, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					return true
				}
				if !indexed[lit] {
					word, _, dotted := strings.Cut(s, ".")
					if !dotted || !prefixes[word] || !probe.FactKeyPattern.MatchString(s) || notFacts[s] {
						return true
					}
				}
				if declared[s] || strings.HasSuffix(s, ".") && hasPrefixIn(declared, s) {
					return true
				}
				out = append(out, fset.Position(lit.Pos()).String()+": "+strconv.Quote(s)+" is a fact no probe header declares and no catalog.GoFact is")
				return true
			})
		}
	}
	return out
}

// isFactsMap says whether e names a map of facts: x.Facts, facts or Facts.
func isFactsMap(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.SelectorExpr:
		return e.Sel.Name == "Facts"
	case *ast.Ident:
		return e.Name == "facts" || e.Name == "Facts"
	}
	return false
}

func hasPrefixIn(keys map[string]bool, prefix string) bool {
	for k := range keys {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// TestFactKeyProblemsFindsStaleKeys proves the scan on planted code: each
// stale key is refused, and what is declared, a prefix of declared keys or
// a check id of a fact's shape is not.
func TestFactKeyProblemsFindsStaleKeys(t *testing.T) {
	declared := declaredFacts(t)
	prefixes := map[string]bool{"cluster": true, "kubeproxy": true, "rke2": true}
	notFacts := map[string]bool{"kubeproxy.healthz-failing": true}
	for _, tc := range []struct {
		name, code string
		refused    bool
	}{
		{"a stale cluster key indexed", `n.Facts["cluster.nonexistent"]`, true},
		{"a stale key indexed, whatever its prefix", `r.Cluster.Facts["nowhere.key"]`, true},
		{"a stale key in a local map", `facts["rke2.nonexistent"]`, true},
		{"a stale key by its prefix alone", `f["kubeproxy.nonexistent"]`, true},
		{"a stale key in a list", `[]string{"cluster.api", "cluster.server_versions"}`, true},
		{"a prefix no key has", `strings.HasPrefix(k, "cluster.nothing.")`, true},
		{"a declared key", `n.Facts["rke2.version"]`, false},
		{"a declared cluster key", `f["cluster.api"]`, false},
		{"a prefix of declared keys", `strings.HasPrefix(k, "kubeproxy.metrics.")`, false},
		{"a check id", `id == "kubeproxy.healthz-failing"`, false},
		{"a dotted word of no fact's prefix", `name == "results.json"`, false},
	} {
		dir := t.TempDir()
		src := "package x\n\nfunc _() { _ = " + tc.code + " }\n"
		if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		got := factKeyProblems(t, []string{dir}, declared, prefixes, notFacts)
		if (len(got) > 0) != tc.refused {
			t.Errorf("%s: %s: problems %q, want refused=%v", tc.name, tc.code, got, tc.refused)
		}
	}
}
