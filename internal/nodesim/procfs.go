package nodesim

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/fleet-audit/fleet-audit/audit/probe"
)

//go:embed shim/fa-procfs.c
var procfsSource []byte

// ProcfsShimFile is where a simulated node holds the procfs shim; the probe
// bundle preloads it into the probes' shells when it is there.
const ProcfsShimFile = "lib/fa-procfs.so"

// ProcfsShim, when set, is the path of a library built by BuildProcfsShim,
// and Build links it into every node it writes, so that the node's proc/sys
// integer files are read as the kernel serves them (see shim/fa-procfs.c). Tests set
// it once, before building nodes; the demo does not, since it must run with
// nothing but Go and /bin/sh.
var ProcfsShim string

// EnableProcfsShim builds the shim into the system's temporary directory
// with cc and sets ProcfsShim; for a test binary's TestMain.
func EnableProcfsShim(cc string) error {
	p, err := BuildProcfsShim(cc, os.TempDir())
	if err != nil {
		return err
	}
	ProcfsShim = p
	return nil
}

// BuildProcfsShim compiles the procfs shim with the C compiler cc into dir
// (named by the source's hash, so a build is reused) and returns its path.
func BuildProcfsShim(cc, dir string) (string, error) {
	sum := sha256.Sum256(procfsSource)
	out := filepath.Join(dir, "nodesim-procfs-"+hex.EncodeToString(sum[:8])+".so")
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	src := fmt.Sprintf("%s.%d.c", out, os.Getpid())
	if err := os.WriteFile(src, procfsSource, 0o644); err != nil {
		return "", fmt.Errorf("procfs shim: %w", err)
	}
	tmp := fmt.Sprintf("%s.%d.tmp", out, os.Getpid())
	if b, err := exec.Command(cc, "-shared", "-fPIC", "-O2", "-o", tmp, src, "-ldl").CombinedOutput(); err != nil {
		os.Remove(src)
		return "", fmt.Errorf("procfs shim: %s: %w\n%s", cc, err, b)
	}
	os.Remove(src)
	if err := os.Rename(tmp, out); err != nil {
		return "", fmt.Errorf("procfs shim: %w", err)
	}
	return out, nil
}

func (w *writer) procfsShim() {
	if w.err != nil || ProcfsShim == "" {
		return
	}
	p := filepath.Join(w.root, filepath.FromSlash(ProcfsShimFile))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		w.err = fmt.Errorf("simulated node %s: %w", w.root, err)
		return
	}
	if err := os.Symlink(ProcfsShim, p); err != nil && !os.IsExist(err) {
		w.err = fmt.Errorf("simulated node %s: %w", w.root, err)
	}
}

// SessionEnv is the environment a simulated node's login shell starts with:
// FLEET_AUDIT_ROOT and the key without which the bundle ignores it
// (probe.SimulatedNodeEnv, which also lets this process's bundles honour
// it), what the node's /etc/environment sets (pam_env, see
// loginEnv), and LD_PRELOAD of the procfs shim where the node holds one.
// The probe bundle runs its probes in subshells of that shell, never in a
// shell it execs, so the shim must be loaded when the session's shell
// starts; the bundle stops on a node whose shim its shell lacks.
func SessionEnv(root string) []string {
	if root == "" {
		return []string{"FLEET_AUDIT_ROOT="}
	}
	env := probe.SimulatedNodeEnv(root)
	env = append(env, loginEnv(root)...)
	shim := filepath.Join(root, filepath.FromSlash(ProcfsShimFile))
	if _, err := os.Stat(shim); err == nil {
		env = append(env, "LD_PRELOAD="+shim)
	}
	return env
}
