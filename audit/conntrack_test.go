package audit

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

// ctStat is a /proc/net/stat/nf_conntrack of header and rows, one string
// each, as a test plants it in place of the simulator's.
func ctStat(s nodesim.State, header string, rows ...string) nodesim.State {
	s.Files = maps2(s.Files)
	s.Files["proc/net/stat/nf_conntrack"] = header + "\n" + strings.Join(rows, "\n") + "\n"
	return s
}

func maps2(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Headers of ct_cpu_seq_show (net/netfilter/nf_conntrack_standalone.c) by
// kernel: 4.19's ("searched", "delete_list") and 6.1's ("clashres",
// "chainlength").
const (
	ctHeader419 = "entries  searched found new invalid ignore delete delete_list insert insert_failed drop early_drop icmp_error  expect_new expect_create expect_delete search_restart"
	ctHeader61  = "entries  clashres found new invalid ignore delete chainlength insert insert_failed drop early_drop icmp_error  expect_new expect_create expect_delete search_restart"
)

// ctRow is a row of 17 words: the named columns of header set (hex as
// given), every other one 00000000.
func ctRow(header string, set map[string]string) string {
	var out []string
	for _, h := range strings.Fields(header) {
		v, ok := set[h]
		if !ok {
			v = "00000000"
		}
		out = append(out, v)
	}
	return strings.Join(out, " ")
}

// probeAwks are the awks the probes must run under: this machine's (mawk
// 20200120 on Debian 12, without strtonum), gawk in POSIX mode, and
// busybox's, each where this machine has it.
func probeAwks(t *testing.T) map[string]string {
	t.Helper()
	awks := map[string]string{"this machine's awk": ""}
	if p, err := exec.LookPath("gawk"); err == nil {
		w := filepath.Join(t.TempDir(), "gawk-posix")
		if err := os.WriteFile(w, []byte("#!/bin/sh\nexec "+p+" --posix \"$@\"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		awks["gawk --posix"] = w
	}
	if p, err := exec.LookPath("busybox"); err == nil {
		awks["busybox awk"] = p
	} else if err := testtools.Absent("busybox"); err != nil {
		t.Error(err)
	}
	return awks
}

func TestConntrackStatsProbe(t *testing.T) {
	healthy := nodesim.Healthy("w1", false)
	noModule := healthy
	noModule.Sysctls = map[string]string{"net.ipv4.ip_forward": "1"}
	cases := []struct {
		name  string
		state nodesim.State
		tweak func(root string)
		want  map[string]string
	}{
		{"healthy: nothing dropped", healthy, nil,
			map[string]string{"conntrack.drop": "0", "conntrack.early_drop": "0", "conntrack.insert_failed": "0"}},
		{"drops summed over the CPUs", nodesim.WithConntrackDrops(healthy, 7, 301), nil,
			map[string]string{"conntrack.drop": "7", "conntrack.early_drop": "301", "conntrack.insert_failed": "0"}},
		{"insert races", nodesim.WithConntrackInsertFailed(healthy, 12), nil,
			map[string]string{"conntrack.drop": "0", "conntrack.insert_failed": "12"}},
		{"4.19's header names the same columns", ctStat(healthy, ctHeader419,
			ctRow(ctHeader419, map[string]string{"entries": "00000331", "searched": "0000ffff", "drop": "0000000a", "early_drop": "00000001", "insert_failed": "00000002"}),
			ctRow(ctHeader419, map[string]string{"entries": "00000331", "drop": "0000001F"})), nil,
			map[string]string{"conntrack.drop": "41", "conntrack.early_drop": "1", "conntrack.insert_failed": "2"}},
		{"columns found by name, not place", ctStat(healthy, "entries early_drop drop insert_failed found",
			"00000331 00000010 00000003 00000000 00000100", "00000331 00000000 00000002 00000001 00000100"), nil,
			map[string]string{"conntrack.drop": "5", "conntrack.early_drop": "16", "conntrack.insert_failed": "1"}},
		// entries repeats the table's count on every row: summing it, or
		// reading it for drop, would be wrong.
		{"entries never summed", ctStat(healthy, ctHeader61,
			ctRow(ctHeader61, map[string]string{"entries": "00000331"}), ctRow(ctHeader61, map[string]string{"entries": "00000331"})), nil,
			map[string]string{"conntrack.drop": "0", "conntrack.early_drop": "0"}},
		// A 32-bit counter per CPU sums past 2^31, which mawk 20200120
		// would print as 1.28849e+10.
		{"sums past 2^31 print whole", ctStat(healthy, ctHeader61,
			ctRow(ctHeader61, map[string]string{"drop": "ffffffff"}), ctRow(ctHeader61, map[string]string{"drop": "ffffffff"}),
			ctRow(ctHeader61, map[string]string{"drop": "ffffffff"})), nil,
			map[string]string{"conntrack.drop": "12884901885"}},
		{"a column this kernel lacks is unknown", ctStat(healthy, "entries found drop insert_failed",
			"00000331 00000100 00000002 00000000"), nil,
			map[string]string{"conntrack.drop": "2", "conntrack.early_drop": "unknown", "conntrack.insert_failed": "0"}},
		{"a word that is not hex is unknown", ctStat(healthy, ctHeader61,
			ctRow(ctHeader61, map[string]string{"drop": "0000zz01", "early_drop": "00000001"})), nil,
			map[string]string{"conntrack.drop": "unknown", "conntrack.early_drop": "1"}},
		{"a short row is unknown", ctStat(healthy, ctHeader61, "00000331 00000000 00000001"), nil,
			map[string]string{"conntrack.drop": "unknown", "conntrack.early_drop": "unknown"}},
		{"a header and no row is unknown", ctStat(healthy, ctHeader61), nil,
			map[string]string{"conntrack.drop": "unknown"}},
		{"module not loaded: absent", noModule, nil,
			map[string]string{"conntrack.drop": "absent", "conntrack.early_drop": "absent", "conntrack.insert_failed": "absent"}},
		{"empty: unknown", ctStat(healthy, ""), func(root string) {
			if err := os.WriteFile(filepath.Join(root, "proc/net/stat/nf_conntrack"), nil, 0o444); err != nil {
				t.Fatal(err)
			}
		},
			map[string]string{"conntrack.drop": "unknown", "conntrack.insert_failed": "unknown"}},
	}
	for name, awk := range probeAwks(t) {
		for _, c := range cases {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				s := c.state
				s.Awk = awk
				nfWantFacts(t, runProbeTweaked(t, "sysctl", s, c.tweak).Facts, c.want)
			})
		}
	}
}

// The simulated node's own file is the real layout: a header of the 6.1
// kernel and one row per CPU, found by the probe under every shell.
func TestConntrackStatsProbeUnderEachShell(t *testing.T) {
	s := nodesim.WithConntrackDrops(nodesim.Healthy("w1", false), 3, 0)
	for _, sh := range probeShells {
		t.Run(sh[0], func(t *testing.T) {
			got, _ := runProbeUnder(t, sh, "sysctl", s)
			nfWantFacts(t, got.Facts, map[string]string{"conntrack.drop": "3", "conntrack.early_drop": "0"})
		})
	}
}

func TestConntrackLogProbe(t *testing.T) {
	healthy := nodesim.Healthy("w1", false)
	planted := nodesim.WithConntrackDrops(healthy, 25, 0)
	dmesgOpen := func(s nodesim.State) nodesim.State {
		s.Sysctls = maps2(s.Sysctls)
		s.Sysctls["kernel.dmesg_restrict"] = "0"
		return s
	}
	noJournal := func(root string) {
		if err := os.Remove(filepath.Join(root, "bin", "journalctl")); err != nil {
			t.Fatal(err)
		}
	}
	noTools := func(root string) {
		noJournal(root)
		if err := os.Remove(filepath.Join(root, "bin", "dmesg")); err != nil {
			t.Fatal(err)
		}
	}
	// rsyslog's kern.log over two boots: the first boot's message is not
	// this boot's.
	kernLog := "Dec  1 10:00:00 w1 kernel: [    0.000000] Linux version 6.1.0-27-amd64\n" +
		"Dec  1 11:00:00 w1 kernel: [ 3600.000000] " + nodesim.TableFullMessage + "\n" +
		"Dec  4 09:00:00 w1 kernel: [    0.000000] Linux version 6.1.0-28-amd64\n" +
		"Dec  4 10:00:00 w1 kernel: [ 3600.000000] " + nodesim.TableFullMessage + "\n" +
		"Dec  4 10:00:01 w1 kernel: [ 3601.000000] nf_conntrack: table full in netns 4026532518, dropping packet\n"
	cases := []struct {
		name  string
		state nodesim.State
		tweak func(root string)
		want  map[string]string
	}{
		{"healthy: the journal holds none", healthy, nil,
			map[string]string{"conntrack.table_full_logged": "0", "conntrack.table_full_log": "journal"}},
		// WithConntrackDrops logs 10 of 25: the kernel's rate limit.
		{"table full: counted from the journal", planted, nil,
			map[string]string{"conntrack.table_full_logged": "10", "conntrack.table_full_log": "journal"}},
		// Not root: journalctl shows only the login's own journal and
		// says so on stderr, exit 0 and "-- No entries --"; Debian's
		// dmesg_restrict refuses the ring buffer. Neither is a clean log:
		// not-root, as every root probe run without root says.
		{"not root: nothing readable", nfNotRoot(planted), nil,
			map[string]string{"conntrack.table_full_logged": "not-root", "conntrack.table_full_log": "none"}},
		{"not root, dmesg open to all", nfNotRoot(dmesgOpen(planted)), nil,
			map[string]string{"conntrack.table_full_logged": "10", "conntrack.table_full_log": "dmesg"}},
		// journald with Storage=none: the notice, no entries, exit 0.
		{"a journal that stores nothing: the ring buffer", func() nodesim.State {
			s := planted
			s.SetCommand(nodesim.Command{Name: "journalctl", Args: "-k -b --no-pager", Out: "No journal files were found.\n-- No entries --\n"})
			return s
		}(), nil, map[string]string{"conntrack.table_full_logged": "10", "conntrack.table_full_log": "dmesg"}},
		{"no journal: the ring buffer", planted, noJournal,
			map[string]string{"conntrack.table_full_logged": "10", "conntrack.table_full_log": "dmesg"}},
		{"kern.log: this boot only", hostFiles(planted, map[string]string{"var/log/kern.log": kernLog}), noTools,
			map[string]string{"conntrack.table_full_logged": "2", "conntrack.table_full_log": "kern.log"}},
		{"no source at all: unknown", planted, noTools,
			map[string]string{"conntrack.table_full_logged": "unknown", "conntrack.table_full_log": "none"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			parsed, out := runProbeOn(t, "conntrack_log", c.state, c.tweak, nil)
			nfWantFacts(t, parsed.Facts, c.want)
			if strings.Contains(out, "dropping packet") {
				t.Errorf("the probe printed a log line:\n%s", out)
			}
		})
	}
}

// A node whose table overflowed since boot, among peers whose tables never
// did: the counters and the kernel's messages are found on exactly that
// node, the insert race on another as info only, and none of the volatile
// counters makes a drift finding.
func TestConntrackDropsFoundOnTheirNode(t *testing.T) {
	fleet := nodesim.Clean(4)
	fleet[2].State = nodesim.WithConntrackDrops(fleet[2].State, 25, 400)
	fleet[3].State = nodesim.WithConntrackInsertFailed(fleet[3].State, 6)
	inv, tr := simulate(t, fleet)
	r := runSim(t, inv, tr)
	for _, n := range r.Nodes {
		if n.Status != result.StatusOK {
			t.Fatalf("node %s: status %s (%s)", n.Name, n.Status, n.Message)
		}
	}
	got := warningsByNode(t, r)
	want := map[string][]string{"node-3": {"warning conntrack.drops", "warning conntrack.early-drops", "warning conntrack.table-full-logged"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("warnings by node = %v, want %v", got, want)
	}
	var insert []string
	for _, f := range r.Findings {
		if f.Check == "conntrack.insert-failed" {
			insert = append(insert, f.Severity.String()+" "+strings.Join(f.Nodes, ","))
		}
		if f.Check == "conntrack.drops" && !slices.ContainsFunc(f.Evidence, func(e string) bool {
			return strings.Contains(e, "conntrack.max=131072") && strings.Contains(e, "conntrack.count=817")
		}) {
			t.Errorf("conntrack.drops evidence %q lacks the table's count and max", f.Evidence)
		}
		if strings.Contains(f.Check, "drift") || f.Cause != nil {
			for _, e := range f.Evidence {
				if strings.Contains(e, "conntrack.drop") || strings.Contains(e, "table_full") {
					t.Errorf("%s names a volatile counter: %s", f.Check, e)
				}
			}
		}
	}
	if !reflect.DeepEqual(insert, []string{"info node-4"}) {
		t.Errorf("conntrack.insert-failed = %v, want info on node-4 only", insert)
	}
}

// A login without root and without become: the kernel-log probe needs
// root and is not run, so its check could not judge, never passes.
func TestConntrackLogUnprivilegedCouldNotJudge(t *testing.T) {
	byID := builtinChecksByID(t)
	facts := map[string]string{"conntrack.table_full_logged": probe.NotRoot, "conntrack.table_full_log": probe.NotRoot,
		"conntrack.count": "817", "conntrack.max": "131072"}
	for _, v := range []string{probe.NotRoot, "unreadable", "unknown"} {
		facts["conntrack.table_full_logged"] = v
		if o, d := byID["conntrack.table-full-logged"].Evaluate(facts); o != result.OutcomeUnjudged {
			t.Errorf("table_full_logged=%s: %s (%s), want could not judge", v, o, d)
		}
	}
	for _, c := range []struct {
		facts map[string]string
		id    string
		want  result.Outcome
	}{
		{map[string]string{"conntrack.drop": "0", "conntrack.early_drop": "0", "conntrack.count": "817", "conntrack.max": "131072"}, "conntrack.drops", result.OutcomePass},
		{map[string]string{"conntrack.drop": "1", "conntrack.early_drop": "0", "conntrack.count": "817", "conntrack.max": "131072"}, "conntrack.drops", result.OutcomeFail},
		{map[string]string{"conntrack.drop": "unreadable", "conntrack.early_drop": "unreadable", "conntrack.count": "817", "conntrack.max": "131072"}, "conntrack.drops", result.OutcomeUnjudged},
		{map[string]string{"conntrack.drop": "absent", "conntrack.early_drop": "absent", "conntrack.count": "absent", "conntrack.max": "absent"}, "conntrack.drops", result.OutcomeSkip},
		{map[string]string{"conntrack.drop": "0", "conntrack.early_drop": "3", "conntrack.count": "817", "conntrack.max": "131072"}, "conntrack.early-drops", result.OutcomeFail},
		{map[string]string{"conntrack.drop": "0", "conntrack.insert_failed": "4"}, "conntrack.insert-failed", result.OutcomeFail},
		{map[string]string{"conntrack.table_full_logged": "0", "conntrack.table_full_log": "journal", "conntrack.count": "817", "conntrack.max": "131072"}, "conntrack.table-full-logged", result.OutcomePass},
		{map[string]string{"conntrack.table_full_logged": "2", "conntrack.table_full_log": "dmesg", "conntrack.count": "817", "conntrack.max": "131072"}, "conntrack.table-full-logged", result.OutcomeFail},
	} {
		if o, d := byID[c.id].Evaluate(c.facts); o != c.want {
			t.Errorf("%s on %v: %s (%s), want %s", c.id, c.facts, o, d, c.want)
		}
	}
}

// As nobody: the statistics file is 0444 and read like root reads it, or
// "unreadable" where a mode denies it (standing in for an LSM); the
// kernel-log probe, run without root, finds the journal limited to the
// login's own files and the ring buffer refused: not-root (become fixes
// it, as for every root probe), never 0.
func TestConntrackProbesAsUnprivilegedUser(t *testing.T) {
	s := nodesim.WithConntrackDrops(nodesim.Healthy("w1", false), 4, 0)
	nfWantFacts(t, runAsNobody(t, "sysctl", s, nil), map[string]string{"conntrack.drop": "4", "conntrack.early_drop": "0"})
	deny := func(root string) {
		if err := os.Chmod(filepath.Join(root, "proc/net/stat/nf_conntrack"), 0); err != nil {
			t.Fatal(err)
		}
	}
	nfWantFacts(t, runAsNobody(t, "sysctl", s, deny), map[string]string{"conntrack.drop": "unreadable", "conntrack.insert_failed": "unreadable"})
	nfWantFacts(t, runAsNobody(t, "conntrack_log", s, nil), map[string]string{"conntrack.table_full_logged": probe.NotRoot, "conntrack.table_full_log": "none"})
}

// The same plant audited as RKE2 admins often do: a login without root
// whose root probes go through sudo. The statistics are read as the login
// (the file is 0444), the kernel log through sudo, and the finding is on
// the planted node only.
func TestConntrackDropsFoundUnderSudoLogin(t *testing.T) {
	login := shapeLogin(t)
	c := shapeCase{shape: nodesim.Shape{OS: nodesim.AllOS[0], Net: nodesim.Nets[0], Family: nodesim.Families[0]}, sudo: true}
	fleet := c.shape.Members(3)
	fleet[1].State = nodesim.WithConntrackDrops(fleet[1].State, 2, 0)
	r := runShape(t, c, login, nodesim.WithCluster(fleet))
	want := map[string][]string{fleet[1].Name: {"warning conntrack.drops", "warning conntrack.table-full-logged"}}
	if got := warningsByNode(t, r); !reflect.DeepEqual(got, want) {
		t.Errorf("warnings by node = %v, want %v", got, want)
	}
}
