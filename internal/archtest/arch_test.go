package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const mod = "github.com/fleet-audit/fleet-audit"

// moduleImports maps every package of the module to the module packages its
// non-test files import directly.
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, mod+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(f[0], mod+"/")
		imports[pkg] = []string{}
		for _, imp := range f[1:] {
			if rel, ok := strings.CutPrefix(imp, mod+"/"); ok {
				imports[pkg] = append(imports[pkg], rel)
			}
		}
	}
	return imports
}

// deps lists everything pkg's non-test build reaches, standard library and
// modules included.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", mod+"/"+pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

func under(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

func requireGo(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command not on PATH")
	}
}

// TestLayering holds the walls in the packages' doc.go files: a report is
// rendered from a result alone (possibly read back from JSON long after the
// run), so report reaches nothing but result; what runs on a node and the
// checks are read without the run that uses them; nothing below the command
// knows SSH but remote and the transport.
func TestLayering(t *testing.T) {
	requireGo(t)
	// A forbidden "p" is that package; "p/..." is p and everything under it.
	forbidden := map[string][]string{
		"report":      {"remote", "cmd/...", "internal/sshfleet", "inventory", "audit", "golang.org/x/crypto/ssh/..."},
		"result":      {"audit", "inventory", "remote", "report", "gopkg.in/yaml.v3"},
		"audit":       {"remote", "cmd/...", "inventory", "golang.org/x/crypto/ssh/..."},
		"audit/probe": {"audit", "audit/check", "inventory", "remote"},
		"audit/check": {"audit", "inventory", "remote"},
		// The catalogue answers for the ids before any run: it knows the
		// probes and checks, never the run that uses them.
		"audit/catalog": {"audit", "inventory", "remote", "report", "cmd/..."},
		"inventory":     {"remote", "audit", "report"},
		"remote":        {"audit", "report", "inventory"},
	}
	for pkg, bad := range forbidden {
		for _, d := range deps(t, pkg) {
			for _, b := range bad {
				full := b
				if !strings.Contains(strings.TrimSuffix(b, "/..."), ".") {
					full = mod + "/" + b
				}
				if d == full || strings.HasSuffix(full, "/...") && under(d, strings.TrimSuffix(full, "/...")) {
					t.Errorf("%s depends on %s", pkg, d)
				}
			}
		}
	}
	// Outside the standard library and this module, report reaches the
	// terminal's character widths and the playbook's YAML encoder
	// (plan_ansible.go: escaping node text into a playbook that runs as
	// root is a maintained encoder's job), and result nothing.
	otherModules := map[string][]string{
		"report": {"github.com/clipperhouse/displaywidth", "github.com/clipperhouse/uax29/v2/...", "gopkg.in/yaml.v3"},
		"result": {},
	}
	for pkg, allowed := range otherModules {
		for _, d := range deps(t, pkg) {
			if first, _, _ := strings.Cut(d, "/"); !strings.Contains(first, ".") || under(d, mod) {
				continue
			}
			if !slices.ContainsFunc(allowed, func(a string) bool {
				return d == a || strings.HasSuffix(a, "/...") && under(d, strings.TrimSuffix(a, "/..."))
			}) {
				t.Errorf("%s depends on %s; outside the standard library and this module it may reach only %v", pkg, d, allowed)
			}
		}
	}
	onlyModuleImports := map[string][]string{
		"report": {"result"},
		"result": {},
	}
	imports := moduleImports(t)
	for pkg, allowed := range onlyModuleImports {
		for _, imp := range imports[pkg] {
			if !slices.Contains(allowed, imp) {
				t.Errorf("%s imports %s; it may import only %v from this module", pkg, imp, allowed)
			}
		}
	}
	// The inventory file format is the command's business; the transport
	// adapter alone maps its hosts to audit targets and SSH targets, and
	// discover alone writes the format, held to the rules that read it.
	inventoryUsers := []string{"cmd/fleet-audit", "cmd/fleet-audit/internal/transport", "cmd/fleet-audit/internal/discover"}
	for pkg, imps := range imports {
		for _, imp := range imps {
			// The command's adapters live under it; nothing else, and
			// none of internal/'s leaves, simulators and rigs, may
			// reach up into cmd/.
			if under(imp, "cmd") && !under(pkg, "cmd/fleet-audit") {
				t.Errorf("%s imports %s; only the command and its adapters under cmd/fleet-audit may", pkg, imp)
			}
			if imp == "inventory" && !slices.Contains(inventoryUsers, pkg) {
				t.Errorf("%s imports inventory; only %v may", pkg, inventoryUsers)
			}
		}
	}
}

// The packages under internal/ that exist for tests: a real sshd, a
// headless browser, test helpers and a fake kubectl. Simulators stand up
// nodes that are not there; the demo is their one shipped user.
var (
	testRigs   = []string{"internal/sshdtest", "internal/browser", "internal/testtools", "internal/kubefake"}
	simulators = []string{"internal/nodesim", "internal/sshfleet"}
	demoPkg    = "cmd/fleet-audit/internal/demo"
)

// TestRigsAndSimulators keeps what only tests need out of the shipped
// binary, and the simulated fleet behind the demo: a test rig in the
// command's build would ship test code to every operator, and a simulator
// reached from anywhere but the demo could answer a real audit from a
// simulated node. (That internal/ never reaches up into cmd/ is
// TestLayering's rule for every package outside the command.)
func TestRigsAndSimulators(t *testing.T) {
	requireGo(t)
	for _, d := range deps(t, "cmd/fleet-audit") {
		for _, rig := range testRigs {
			if under(d, mod+"/"+rig) {
				t.Errorf("the shipped binary (cmd/fleet-audit) depends on the test rig %s", strings.TrimPrefix(d, mod+"/"))
			}
		}
	}
	for pkg, imps := range moduleImports(t) {
		for _, imp := range imps {
			if slices.Contains(simulators, imp) && pkg != demoPkg {
				t.Errorf("%s imports the simulator %s; only %s may (outside tests)", pkg, imp, demoPkg)
			}
		}
	}
}

// TestCatalogIsTheOneLoader: outside their own packages, the embedded
// probes and checks are read through audit/catalog alone, so every command
// sees the same catalogue (a --probes directory's rules joined, the
// embedded checks shown as builtin) and a new question about ids has one
// place to be answered. Tests may read the embedded files directly.
func TestCatalogIsTheOneLoader(t *testing.T) {
	requireGo(t)
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .GoFiles}} {{$.Dir}}/{{.}}{{end}}`, mod+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	loaders := map[string]string{"BuiltinProbes": "audit/probe", "BuiltinChecks": "audit/check"}
	fset := token.NewFileSet()
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(f[0], mod+"/")
		for _, file := range f[1:] {
			af, err := parser.ParseFile(fset, file, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(af, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if home, ok := loaders[sel.Sel.Name]; ok && pkg != home && pkg != "audit/catalog" {
					t.Errorf("%s: %s reads the embedded files itself; load them with audit/catalog (catalog.Load or catalog.Builtin)", fset.Position(sel.Pos()), sel.Sel.Name)
				}
				return true
			})
		}
	}
}
