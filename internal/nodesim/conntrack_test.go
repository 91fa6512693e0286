package nodesim

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The statistics file as ct_cpu_seq_show writes it
// (net/netfilter/nf_conntrack_standalone.c): the header's 17 names, then
// one row of 17 eight-digit hex words per CPU, entries (the table's
// count) on every row, and the planted drops split over the CPUs.
func TestConntrackStatsAsTheKernelWritesThem(t *testing.T) {
	root := buildNode(t, WithConntrackDrops(Healthy("n1", false), 9, 4))
	b, err := os.ReadFile(filepath.Join(root, "proc/net/stat/nf_conntrack"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	head := strings.Fields(lines[0])
	if len(head) != 17 || head[0] != "entries" || head[10] != "drop" || head[11] != "early_drop" || head[9] != "insert_failed" {
		t.Fatalf("header %q", lines[0])
	}
	if !strings.HasPrefix(lines[0], "entries  clashres") || !strings.Contains(lines[0], "icmp_error  expect_new") {
		t.Errorf("header %q lacks the kernel's double blanks", lines[0])
	}
	if len(lines) != 5 {
		t.Fatalf("%d rows, want one per CPU of cpu/online 0-3", len(lines)-1)
	}
	var drop, early uint64
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) != 17 {
			t.Fatalf("row of %d words: %q", len(f), l)
		}
		for _, w := range f {
			if len(w) != 8 {
				t.Errorf("word %q is not %%08x", w)
			}
		}
		if f[0] != "00000331" {
			t.Errorf("entries %s, want the table's count 817 (0x331)", f[0])
		}
		d, _ := strconv.ParseUint(f[10], 16, 32)
		e, _ := strconv.ParseUint(f[11], 16, 32)
		drop, early = drop+d, early+e
	}
	if drop != 9 || early != 4 {
		t.Errorf("drop %d early_drop %d over the CPUs, want 9 and 4", drop, early)
	}
	noModule := Healthy("n1", false)
	delete(noModule.Sysctls, "net.netfilter.nf_conntrack_max")
	if _, err := os.Stat(filepath.Join(buildNode(t, noModule), "proc/net/stat/nf_conntrack")); !os.IsNotExist(err) {
		t.Errorf("without the module the statistics file exists (%v)", err)
	}
}

// journalctl -k and dmesg as root and as anyone else: systemd's
// journal_access_check_and_warn (src/shared/journal-util.c) shows a user
// outside systemd-journal only their own files, with a notice, exit 0;
// dmesg_restrict (Documentation/admin-guide/sysctl/kernel.rst) refuses the
// ring buffer to a user without CAP_SYSLOG.
func TestKernelLogStubsAsUpstream(t *testing.T) {
	full := WithConntrackDrops(Healthy("n1", false), 3, 0)
	open := full
	open.Sysctls = hostSysctls(open)
	open.Sysctls["kernel.dmesg_restrict"] = "0"
	for _, c := range []struct {
		name        string
		s           State
		uid         string
		args        []string
		out, errOut string
		rc          int
	}{
		{"journalctl -k as root", full, "0", []string{"journalctl", "-k", "-b", "--no-pager"}, "Dec 05 04:00:00 n1 kernel: " + TableFullMessage, "", 0},
		{"journalctl -k as a user", full, "1000", []string{"journalctl", "-k", "-b", "--no-pager"}, "-- No entries --", "Hint: You are currently not seeing messages from other users and the system.", 0},
		{"journalctl without -k is not simulated", full, "0", []string{"journalctl", "-u", "rke2-agent"}, "", "only -k", 1},
		{"dmesg as root", full, "0", []string{"dmesg"}, "] " + TableFullMessage, "", 0},
		{"dmesg restricted", full, "1000", []string{"dmesg"}, "", "dmesg: read kernel buffer failed: Operation not permitted", 1},
		{"dmesg open to all", open, "1000", []string{"dmesg"}, "] " + TableFullMessage, "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := buildNode(t, c.s)
			out, errOut, rc := runStub(t, root, c.uid, c.args[0], c.args[1:]...)
			if rc != c.rc || !strings.Contains(out, c.out) || !strings.Contains(errOut, c.errOut) || (c.out == "" && out != "") {
				t.Errorf("%v: rc %d, stdout %q, stderr %q; want rc %d, stdout with %q, stderr with %q", c.args, rc, out, errOut, c.rc, c.out, c.errOut)
			}
		})
	}
	// The messages come from the node's state: a healthy node's log has none.
	root := buildNode(t, Healthy("n1", false))
	if out, _, _ := runStub(t, root, "0", "journalctl", "-k", "-b"); strings.Contains(out, "table full") || !strings.Contains(out, "Linux version") {
		t.Errorf("healthy journal: %q", out)
	}
}
