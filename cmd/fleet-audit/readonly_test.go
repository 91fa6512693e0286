package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/sshdtest"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

// treeSnapshot maps each path under a root to what a write would change:
// type and mode, size, mtime, and the sha256 of a regular file or the
// target of a symlink.
type treeSnapshot map[string]string

func snapshotTree(t *testing.T, root string) treeSnapshot {
	t.Helper()
	snap := treeSnapshot{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		what := fmt.Sprintf("%s size=%d mtime=%d", fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			what += " -> " + target
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			what += " sha256=" + hex.EncodeToString(sum[:])
		}
		snap[rel] = what
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// diffSnapshots lists what was added, removed or changed, sorted.
func diffSnapshots(before, after map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(before)) {
		switch a, ok := after[k]; {
		case !ok:
			out = append(out, "removed "+k)
		case a != before[k]:
			out = append(out, fmt.Sprintf("changed %s: %s → %s", k, before[k], a))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(after)) {
		if _, ok := before[k]; !ok {
			out = append(out, "added "+k)
		}
	}
	return out
}

// systemSnapshot is the state of the test machine a probe that ran a real
// command instead of a node's simulated one could change: netfilter rules,
// sysctls, loaded kernel modules, and new files in the shared temporary
// directories. Each part is left out where the machine cannot show it.
type systemSnapshot struct {
	parts map[string]map[string]string
}

// volatileSysctl are kernel counters and random values that change by
// themselves; a sysctl that changes between the two samples taken before
// the audit is left out as well.
var volatileSysctl = regexp.MustCompile(`random|ns_last_pid|(_|-)(nr|count|state)$|detect_count|perf_event_max_sample_rate|nf_conntrack_count|\.stat`)

// goTestTempDir is the name testing.T.TempDir gives a test's directory under
// os.TempDir: the test's name (characters unsafe in a file name dropped,
// at most 64 bytes) and a random number.
var goTestTempDir = regexp.MustCompile(`^(Test|Benchmark|Fuzz|Example)[^/]*[0-9]+$`)

// netfilterModule is a kernel module that a netfilter tool loads on demand.
var netfilterModule = regexp.MustCompile(`^(nf|nft|ip|ip6|iptable|ip6table|xt|x|br|ebt|arp|ip_vs)_`)

// tmpName is what a file left in /tmp by a probe, the bundle or fleet-audit
// would be called; files of other processes and of this test are not.
func tmpName(probes []probe.Probe) *regexp.Regexp {
	words := []string{"fleet", "fa_", "fa-", "FA_"}
	for _, p := range probes {
		if len(p.ID) >= 5 {
			words = append(words, regexp.QuoteMeta(p.ID))
		}
	}
	return regexp.MustCompile("(?i)(" + strings.Join(words, "|") + ")")
}

func takeSystemSnapshot(t *testing.T) systemSnapshot {
	t.Helper()
	s := systemSnapshot{parts: map[string]map[string]string{}}
	if out, ok := readOnlyCommand(t, "iptables-save"); ok {
		counters := regexp.MustCompile(`\[[0-9]+:[0-9]+\]`)
		rules := map[string]string{}
		for i, l := range strings.Split(string(out), "\n") {
			if !strings.HasPrefix(l, "#") {
				rules[fmt.Sprintf("%05d", i)] = counters.ReplaceAllString(l, "")
			}
		}
		s.parts["iptables-save"] = rules
	}
	if out, ok := readOnlyCommand(t, "sysctl", "-a"); ok {
		vals := map[string]string{}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), " = "); ok && !volatileSysctl.MatchString(k) {
				vals[k] = v
			}
		}
		s.parts["sysctl"] = vals
	}
	if b, err := os.ReadFile("/proc/modules"); err == nil {
		mods := map[string]string{}
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) > 0 {
				mods[f[0]] = "loaded"
			}
		}
		s.parts["modules"] = mods
	}
	for _, d := range []string{"/tmp", "/var/tmp", "/dev/shm", os.TempDir()} {
		entries, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		names := map[string]string{}
		for _, e := range entries {
			names[e.Name()] = "present"
		}
		s.parts["dir "+d] = names
	}
	return s
}

// readOnlyCommand runs a command that only reads, when the machine has it
// and it works here (iptables-save needs root and netfilter).
func readOnlyCommand(t *testing.T, name string, args ...string) ([]byte, bool) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).Output()
	if err != nil && len(out) == 0 {
		t.Logf("%s: %v: that part of the snapshot is left out", name, err)
		return nil, false
	}
	return out, true
}

// diffSystem compares after with before, leaving out what changed between
// before and again (noise), sysctls and modules that appear or vanish with
// network interfaces or other processes, unless they are netfilter's, and
// new temporary files not named like fleet-audit's.
func diffSystem(before, again, after systemSnapshot, ours *regexp.Regexp, ignore func(string) bool) []string {
	var out []string
	for _, part := range slices.Sorted(maps.Keys(before.parts)) {
		b, a := maps.Clone(before.parts[part]), after.parts[part]
		if a == nil {
			out = append(out, part+": gone after the audit")
			continue
		}
		for k, v := range again.parts[part] {
			if b[k] != v {
				delete(b, k)
				delete(a, k)
			}
		}
		for _, d := range diffSnapshots(b, a) {
			key := strings.SplitN(strings.TrimPrefix(strings.TrimPrefix(d, "added "), "removed "), ":", 2)[0]
			switch {
			case strings.HasPrefix(part, "dir "):
				if !strings.HasPrefix(d, "added ") || !ours.MatchString(key) || ignore(filepath.Join(strings.TrimPrefix(part, "dir "), key)) {
					continue
				}
			case part == "sysctl" && !strings.HasPrefix(d, "changed "):
				if !strings.HasPrefix(key, "net.bridge.") && !strings.HasPrefix(key, "net.netfilter.") {
					continue
				}
			case part == "modules":
				if !netfilterModule.MatchString(key) {
					continue
				}
			}
			out = append(out, part+": "+d)
		}
	}
	return out
}

// TestProbesAreReadOnly runs the real embedded bundle through real OpenSSH
// sshd against simulated node roots, and compares every file of every node
// root (mode, size, mtime, sha256) and the test machine's netfilter rules,
// sysctls, modules and temporary directories before and after: an audit
// changes nothing, neither kubectl's caches nor a kernel module that a
// netlink request would load (the stubs simulate both in the node root). The negative control adds a user probe that writes into
// its node root and into /tmp, and the same comparison must see both.
func TestProbesAreReadOnly(t *testing.T) {
	testtools.SkipShort(t, "runs the whole probe bundle under a write watch")
	if _, ok := sshdtest.Available(); !ok {
		testtools.Require(t, "sshd")
	}
	isolateClient(t, t.TempDir())
	probes, err := probe.BuiltinProbes()
	if err != nil {
		t.Fatal(err)
	}
	members := nodesim.Clean(3)
	members[1].State = nodesim.WithUFWActive(members[1].State)
	// A legacy node that never loaded nf_tables: the simulated nft and
	// iptables-nft-save load it when asked (a change to the node's
	// /proc/modules), as the kernel's autoload would. The simulated kubectl
	// writes its caches where the real one would (under $HOME unless told
	// otherwise), in the node root.
	members[2].State = nodesim.WithoutNFTables(nodesim.WithIPTablesLegacy(members[2].State))
	inv := realFleet(t, members, nil, nil)
	nodes := filepath.Join(filepath.Dir(inv), "nodes")
	out := t.TempDir()
	ours := tmpName(probes)
	// This test's own temporary directories are named after it, and new;
	// so are those of the tests go test runs at the same time in other
	// packages (t.TempDir: the test's name, then random digits).
	ignore := func(p string) bool { return goTestTempDir.MatchString(filepath.Base(p)) }

	runAudit := func(t *testing.T, extra ...string) []string {
		t.Helper()
		sysBefore := takeSystemSnapshot(t)
		treeBefore := snapshotTree(t, nodes)
		sysAgain := takeSystemSnapshot(t)
		var parts []string
		for _, p := range slices.Sorted(maps.Keys(sysAgain.parts)) {
			parts = append(parts, fmt.Sprintf("%s (%d)", p, len(sysAgain.parts[p])))
		}
		t.Logf("compared: %d node root entries; %s", len(treeBefore), strings.Join(parts, ", "))
		results := filepath.Join(out, fmt.Sprintf("results-%d.json", len(extra)))
		args := append([]string{"run", "-i", inv, "--json", results, "--connect-timeout", "5s"}, extra...)
		code, stdout, stderr := runCLI(t, args...)
		if code != int(exitGateFailed) {
			t.Fatalf("exit %d, want %d (UFW active on node-2)\nstdout:\n%s\nstderr:\n%s", code, exitGateFailed, stdout, stderr)
		}
		r := readResults(t, results)
		for _, n := range r.Nodes {
			if n.Status != result.StatusOK || n.Facts["os.kernel"] != "6.1.0-28-amd64" {
				t.Fatalf("%s: %s, facts did not come from the simulated root: %v", n.Name, n.Status, n.Facts)
			}
		}
		if r.Cluster == nil || r.Cluster.Facts["cluster.kubectl"] != "ok" {
			t.Fatalf("the cluster probe did not run: %+v", r.Cluster)
		}
		return append(diffSnapshots(treeBefore, snapshotTree(t, nodes)), diffSystem(sysBefore, sysAgain, takeSystemSnapshot(t), ours, ignore)...)
	}

	t.Run("builtin probes", func(t *testing.T) {
		if diff := runAudit(t); len(diff) > 0 {
			t.Errorf("the audit changed the nodes or this machine:\n  %s", strings.Join(diff, "\n  "))
		}
	})

	t.Run("negative control", func(t *testing.T) {
		dir := t.TempDir()
		tmpFile := filepath.Join(os.TempDir(), "fleet-audit-negctl-"+probe.NewNonce())
		t.Cleanup(func() { _ = os.Remove(tmpFile) })
		probe := `# id: negctl
# description: a probe that writes, which the read-only test must catch
# needs_root: false
# timeout: 5s
# facts: negctl.wrote

: >"$R/etc/fleet-audit-negctl"
echo drift >>"$R/etc/os-release"
: >` + tmpFile + `
fact negctl.wrote yes
`
		if err := os.WriteFile(filepath.Join(dir, "negctl.sh"), []byte(probe), 0o644); err != nil {
			t.Fatal(err)
		}
		diff := runAudit(t, "--probes", dir)
		want := map[string]bool{}
		for _, m := range members {
			want["added "+filepath.Join(m.Name, "etc", "fleet-audit-negctl")] = false
			want["changed "+filepath.Join(m.Name, "etc", "os-release")] = false
		}
		want["dir "+os.TempDir()+": added "+filepath.Base(tmpFile)] = false
		for _, d := range diff {
			for w := range want {
				if strings.HasPrefix(d, w) {
					want[w] = true
				}
			}
		}
		t.Logf("detected:\n  %s", strings.Join(diff, "\n  "))
		for _, w := range slices.Sorted(maps.Keys(want)) {
			if !want[w] {
				t.Errorf("the writing probe's %q was not detected; diff:\n  %s", w, strings.Join(diff, "\n  "))
			}
		}
	})
	// The parts this machine may not show (iptables-save, modules) get
	// their control here, on made-up snapshots.
	t.Run("system diff control", func(t *testing.T) {
		snap := func(rules, noise, mod, tmp string) systemSnapshot {
			return systemSnapshot{parts: map[string]map[string]string{
				"iptables-save": {"00001": "*filter", "00002": rules},
				"sysctl":        {"net.ipv4.ip_forward": "1", "kernel.sched_noise": noise},
				"modules":       {"overlay": "loaded", mod: "loaded"},
				"dir /tmp":      {"go-build1": "present", tmp: "present"},
			}}
		}
		before, again := snap(":INPUT ACCEPT", "1", "overlay", "go-build1"), snap(":INPUT ACCEPT", "2", "overlay", "go-build1")
		if got := diffSystem(before, again, snap(":INPUT ACCEPT", "3", "overlay", "other-process.sock"), ours, ignore); len(got) != 0 {
			t.Errorf("noise and foreign files were reported: %v", got)
		}
		after := snap("-A INPUT -j DROP", "3", "br_netfilter", "fleet-audit.tmp")
		after.parts["sysctl"]["net.ipv4.ip_forward"] = "0"
		got := diffSystem(before, again, after, ours, ignore)
		for _, want := range []string{"iptables-save: changed", "sysctl: changed net.ipv4.ip_forward", "modules: added br_netfilter", "dir /tmp: added fleet-audit.tmp"} {
			if !slices.ContainsFunc(got, func(d string) bool { return strings.HasPrefix(d, want) }) {
				t.Errorf("%q not reported: %v", want, got)
			}
		}
	})
}
