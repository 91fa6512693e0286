package nodesim

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestOSShapeMatchesThisMachine holds the OS shape of the distribution the
// tests run on to the machine itself: its /etc/os-release byte for byte,
// its awk's version and what /bin/sh is. A shape written from memory is
// checked wherever the suite runs on one of them.
func TestOSShapeMatchesThisMachine(t *testing.T) {
	release, err := os.ReadFile("/etc/os-release")
	if err != nil {
		t.Skipf("no /etc/os-release here: %v", err)
	}
	field := func(text, key string) string {
		for _, l := range strings.Split(text, "\n") {
			if v, ok := strings.CutPrefix(l, key+"="); ok {
				return strings.Trim(v, `"`)
			}
		}
		return ""
	}
	id, ver := field(string(release), "ID"), field(string(release), "VERSION_ID")
	var shape *OS
	for i, o := range AllOS {
		if field(o.OSRelease, "ID") == id && strings.HasPrefix(ver, field(o.OSRelease, "VERSION_ID")) {
			shape = &AllOS[i]
		}
	}
	if shape == nil {
		t.Skipf("this machine (%s %s) is none of the OS shapes", id, ver)
	}
	if field(shape.OSRelease, "VERSION_ID") == ver && string(release) != shape.OSRelease {
		t.Errorf("%s: os-release differs from this machine's:\n%s\nwant\n%s", shape.Name, shape.OSRelease, release)
	}
	if out, err := exec.Command("awk", "-W", "version").CombinedOutput(); err == nil && strings.HasPrefix(string(out), "mawk ") {
		if got, _, _ := strings.Cut(string(out), "\n"); !strings.HasPrefix(got, shape.Awk) {
			t.Errorf("%s: Awk = %q, this machine's awk is %q", shape.Name, shape.Awk, got)
		}
	}
	if sh, err := filepath.EvalSymlinks("/bin/sh"); err == nil && filepath.Base(sh) != shape.BinSh {
		t.Errorf("%s: BinSh = %q, /bin/sh here is %s", shape.Name, shape.BinSh, sh)
	}
}

// TestWithOSLeavesNoOtherDistribution checks that a node passed through
// two shapes keeps nothing of the first: each shape's layout is complete.
func TestWithOSLeavesNoOtherDistribution(t *testing.T) {
	for _, from := range AllOS {
		for _, to := range AllOS {
			a := WithOS(WithOS(Healthy("n1", true), from), to)
			b := WithOS(Healthy("n1", true), to)
			for k := range a.Files {
				if _, ok := b.Files[k]; !ok {
					t.Errorf("%s then %s: file %s left behind", from.Name, to.Name, k)
				}
			}
			for u := range a.Units {
				if _, ok := b.Units[u]; !ok {
					t.Errorf("%s then %s: unit %s left behind", from.Name, to.Name, u)
				}
			}
			for _, c := range a.Commands {
				if _, ok := b.Command(c.Name, c.Args); !ok {
					t.Errorf("%s then %s: command %s %s left behind", from.Name, to.Name, c.Name, c.Args)
				}
			}
			if !slices.Equal(a.Modules, b.Modules) {
				t.Errorf("%s then %s: modules %v, want %v", from.Name, to.Name, a.Modules, b.Modules)
			}
			if a.RKE2Path != b.RKE2Path || a.IPTables != b.IPTables || a.UFW != b.UFW {
				t.Errorf("%s then %s: rke2 at %q, %q, ufw %q; want %q, %q, %q", from.Name, to.Name, a.RKE2Path, a.IPTables, a.UFW, b.RKE2Path, b.IPTables, b.UFW)
			}
		}
	}
}
