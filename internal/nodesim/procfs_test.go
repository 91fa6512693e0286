package nodesim

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/internal/testtools"
)

// TestProcfsShimReadSemantics pins the shim to the kernel's behaviour
// (kernel/sysctl.c: the integer handlers return nothing for a read at a
// non-zero offset; proc_dostring honours it): dash's and busybox's
// byte-at-a-time read builtin gets the first digit of an integer sysctl,
// a whole-buffer read (head) gets the value, and a string sysctl reads whole
// either way. Without the shim, plain files answer every read.
func TestProcfsShimReadSemantics(t *testing.T) {
	cc := testtools.Find(t, "cc")
	shim, err := BuildProcfsShim(cc, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "node")
	old := ProcfsShim
	ProcfsShim = shim
	defer func() { ProcfsShim = old }()
	s := Healthy("w1", false)
	s.Sysctls["net.netfilter.nf_conntrack_max"] = "262144"
	if err := Build(root, s); err != nil {
		t.Fatal(err)
	}
	if target, err := os.Readlink(filepath.Join(root, ProcfsShimFile)); err != nil || target != shim {
		t.Fatalf("node's %s -> %q (%v), want the shim", ProcfsShimFile, target, err)
	}
	const script = `read v <"$FLEET_AUDIT_ROOT/proc/sys/net/netfilter/nf_conntrack_max"; read k <"$FLEET_AUDIT_ROOT/proc/sys/kernel/osrelease"; printf '%s %s %s\n' "$v" "$(head -n 1 "$FLEET_AUDIT_ROOT/proc/sys/net/netfilter/nf_conntrack_max")" "$k"`
	for _, sh := range []string{"dash", "busybox", "bash"} {
		bin := testtools.Find(t, sh)
		args := []string{"-c", script}
		if sh == "busybox" {
			args = append([]string{"sh"}, args...)
		}
		for _, preload := range []bool{true, false} {
			cmd := exec.Command(bin, args...)
			cmd.Env = []string{"PATH=/usr/bin:/bin", "FLEET_AUDIT_ROOT=" + root}
			if preload {
				cmd.Env = append(cmd.Env, "LD_PRELOAD="+shim)
			}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v: %s", sh, err, out)
			}
			want := "262144 262144 6.1.0-28-amd64"
			// bash reads a regular file's line in one read(2).
			if preload && sh != "bash" {
				want = "2 262144 6.1.0-28-amd64"
			}
			if got := strings.TrimSpace(string(out)); got != want {
				t.Errorf("%s (preload %v): %q, want %q", sh, preload, got, want)
			}
		}
	}
}
