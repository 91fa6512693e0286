package archtest

import (
	"os/exec"
	"strings"
	"testing"
)

const mod = "github.com/fleet-audit/fleet-audit"

func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", mod+"/"+pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

func TestLayering(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command not on PATH")
	}
	forbidden := map[string][]string{
		"report":    {"remote", "internal/transport", "internal/sshfleet", "golang.org/x/crypto/ssh"},
		"audit":     {"remote", "internal/transport", "golang.org/x/crypto/ssh"},
		"inventory": {"remote", "audit", "report"},
		"remote":    {"audit", "report", "inventory"},
	}
	for pkg, bad := range forbidden {
		for _, d := range deps(t, pkg) {
			for _, b := range bad {
				full := b
				if !strings.Contains(b, ".") {
					full = mod + "/" + b
				}
				if d == full || strings.HasPrefix(d, full+"/") {
					t.Errorf("%s depends on %s", pkg, d)
				}
			}
		}
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, mod+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, mod+"/cmd") {
				t.Errorf("%s imports %s", f[0], imp)
			}
		}
	}
}
