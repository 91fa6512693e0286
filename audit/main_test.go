package audit

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
)

// TestMain gives every simulated node of this package's tests the kernel's
// proc/sys read semantics (nodesim's procfs shim), so a probe that reads a
// sysctl one byte at a time fails here as it does on a real node.
func TestMain(m *testing.M) {
	// Every bundle this process builds is for a simulated node.
	probe.EnableSimulatedNodes()
	if err := testtools.WithCompiler(nodesim.EnableProcfsShim); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// TestSimulatedProcfsCatchesByteReads runs, through the real bundle, the
// way the sysctl probe once read nf_conntrack_max (dash's read builtin) on a
// simulated node: with the procfs shim the simulation gives the first digit,
// as a real Debian node does, so the defect could not hide here again.
func TestSimulatedProcfsCatchesByteReads(t *testing.T) {
	if nodesim.ProcfsShim == "" {
		testtools.Require(t, "cc")
	}
	p, err := probe.ParseProbe("bytewise.sh", "# id: bytewise\n# description: reads a sysctl with the read builtin\n# needs_root: false\n# timeout: 5s\n# facts: bytewise.max bytewise.whole\n"+
		`IFS= read -r v <"$R/proc/sys/net/netfilter/nf_conntrack_max"`+"\n"+`fact bytewise.max "$v"`+"\n"+
		`fact bytewise.whole "$(head -n 1 "$R/proc/sys/net/netfilter/nf_conntrack_max")"`+"\n")
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "node")
	if err := nodesim.Build(root, nodesim.Healthy("w1", false)); err != nil {
		t.Fatal(err)
	}
	nonce := probe.NewNonce()
	res, err := (&shSession{root: root}).Exec(context.Background(), scriptFor(t, []probe.Probe{p}, probe.Become{}, nonce, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	facts := probe.ParseOutput(res.Stdout, nonce, []probe.Probe{p}).Facts
	// /bin/sh is bash on some machines; bash reads a line in one read(2).
	want := "1"
	if sh, _ := filepath.EvalSymlinks("/bin/sh"); filepath.Base(sh) == "bash" {
		want = "131072"
	}
	if facts["bytewise.max"] != want || facts["bytewise.whole"] != "131072" {
		t.Errorf("read builtin %q, head %q; want %q and 131072 (stderr %s)", facts["bytewise.max"], facts["bytewise.whole"], want, res.Stderr)
	}
}

// TestBundleRefusesNodeShellWithoutShim: the probes run in the session's
// shell, so a simulated node whose shell was started without its procfs
// shim would read proc/sys as plain files; the bundle stops there rather
// than let a harness lose the shim without a word.
func TestBundleRefusesNodeShellWithoutShim(t *testing.T) {
	testtools.SkipShort(t, "runs the bundle in a shell on a simulated node")
	if nodesim.ProcfsShim == "" {
		testtools.Require(t, "cc")
	}
	root := filepath.Join(t.TempDir(), "node")
	if err := nodesim.Build(root, nodesim.Healthy("w1", false)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  []string
		code int
	}{
		{"nodesim.SessionEnv", nodesim.SessionEnv(root), 0},
		{"without LD_PRELOAD", probe.SimulatedNodeEnv(root), 125},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nonce := probe.NewNonce()
			res, err := (&shSession{env: tc.env}).Exec(context.Background(), scriptFor(t, nil, probe.Become{}, nonce, 10*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != tc.code || (tc.code != 0) != bytes.Contains(res.Stderr, []byte("LD_PRELOAD")) {
				t.Errorf("exit %d, stderr %q; want exit %d", res.ExitCode, res.Stderr, tc.code)
			}
		})
	}
}
