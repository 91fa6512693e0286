package nodesim

import (
	"fmt"
	"strconv"
	"strings"
)

// ConntrackCPU is one CPU's conntrack statistics, the counters of struct
// ip_conntrack_stat (linux include/linux/netfilter/nf_conntrack_common.h)
// that /proc/net/stat/nf_conntrack shows, each counted since boot.
type ConntrackCPU struct {
	ClashResolve, Found, Invalid, ChainTooLong, Insert, InsertFailed uint32
	Drop, EarlyDrop, Error                                           uint32
	ExpectNew, ExpectCreate, ExpectDelete, SearchRestart             uint32
}

// conntrackStatHeader is the header line ct_cpu_seq_show prints for
// SEQ_START_TOKEN since Linux 5.15 (net/netfilter/nf_conntrack_standalone.c,
// "chainlength" where 5.10 said "delete_list", "clashres" where 5.8 and
// older said "searched"), two blanks after "entries" and "icmp_error" as
// the kernel writes them.
const conntrackStatHeader = "entries  clashres found new invalid ignore delete chainlength insert insert_failed drop early_drop icmp_error  expect_new expect_create expect_delete search_restart\n"

// procNetStatConntrack is /proc/net/stat/nf_conntrack as ct_cpu_seq_show
// prints it (net/netfilter/nf_conntrack_standalone.c): the header, then a
// row per possible CPU (ct_cpu_seq_start/next walk cpu_possible) of
// "%08x" words. entries is nf_conntrack_count(net), the same on every row;
// new, ignore and delete are printed as constant 0 since the counters went
// away (5.x).
func procNetStatConntrack(count int, cpus []ConntrackCPU) string {
	var b strings.Builder
	b.WriteString(conntrackStatHeader)
	for _, c := range cpus {
		fmt.Fprintf(&b, "%08x  %08x %08x %08x %08x %08x %08x %08x %08x %08x %08x %08x %08x  %08x %08x %08x %08x\n",
			uint32(count), c.ClashResolve, c.Found, 0, c.Invalid, 0, 0, c.ChainTooLong,
			c.Insert, c.InsertFailed, c.Drop, c.EarlyDrop, c.Error,
			c.ExpectNew, c.ExpectCreate, c.ExpectDelete, c.SearchRestart)
	}
	return b.String()
}

// healthyConntrack gives a healthy node's four CPUs (cpu/online 0-3) the
// statistics of a table that never filled: lookups and inserts, a few
// invalid packets (stray RSTs), and no drop, early drop or failed insert.
func healthyConntrack(s *State) {
	s.ConntrackStats = make([]ConntrackCPU, 4)
	for i := range s.ConntrackStats {
		s.ConntrackStats[i] = ConntrackCPU{Found: 1200 + uint32(i)*37, Invalid: 3 + uint32(i), Insert: 5100 + uint32(i)*211, SearchRestart: uint32(i)}
	}
	// The ring buffer of a booted node: the banner printk prints first
	// (init/main.c linux_banner), and br_netfilter's load message
	// (net/bridge/br_netfilter_hooks.c br_netfilter_init).
	s.KernelLog = []string{
		"Linux version " + s.Kernel + " (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 (2024-11-22)",
		"Bridge firewalling registered",
	}
	s.Sysctls = hostSysctls(*s)
	// Debian's kernels are built with CONFIG_SECURITY_DMESG_RESTRICT=y
	// (debian/config/config), Ubuntu's since 20.10: only CAP_SYSLOG
	// reads the ring buffer (Documentation/admin-guide/sysctl/kernel.rst,
	// dmesg_restrict).
	s.Sysctls["kernel.dmesg_restrict"] = "1"
}

// TableFullMessage is what __nf_conntrack_alloc logs, rate-limited
// (net_warn_ratelimited), for a packet it drops because the table is at
// nf_conntrack_max and early_drop found nothing to evict
// (net/netfilter/nf_conntrack_core.c); a network namespace other than the
// host's says "table full in netns %u, dropping packet" on recent kernels.
const TableFullMessage = "nf_conntrack: table full, dropping packet"

// WithConntrackDrops is a node whose table filled since boot: early_drop
// evicted unassured entries to make room until there were none, then drop
// packets were dropped, each a "table full" message until the kernel's rate
// limit (net_ratelimit: 10 messages a burst) muted the rest. The burst is
// over: the table's use is back to normal, as an audit usually finds it.
func WithConntrackDrops(s State, drops, earlyDrops uint32) State {
	s.ConntrackStats = append([]ConntrackCPU(nil), s.ConntrackStats...)
	if len(s.ConntrackStats) == 0 {
		s.ConntrackStats = make([]ConntrackCPU, 1)
	}
	s.ConntrackStats[0].Drop += drops - drops/2
	s.ConntrackStats[0].EarlyDrop += earlyDrops - earlyDrops/2
	last := len(s.ConntrackStats) - 1
	s.ConntrackStats[last].Drop += drops / 2
	s.ConntrackStats[last].EarlyDrop += earlyDrops / 2
	msgs := min(drops, 10)
	s.KernelLog = append([]string(nil), s.KernelLog...)
	for range msgs {
		s.KernelLog = append(s.KernelLog, TableFullMessage)
	}
	return s
}

// WithConntrackInsertFailed is a node that lost the well-known insert
// race: two packets of one new flow (glibc's parallel A and AAAA queries
// from one UDP socket) handled on two CPUs, the second's entry clashing
// with the first's at __nf_conntrack_confirm, which counts insert_failed
// and drops the packet when nf_ct_resolve_clash cannot merge them
// (net/netfilter/nf_conntrack_core.c).
func WithConntrackInsertFailed(s State, n uint32) State {
	s.ConntrackStats = append([]ConntrackCPU(nil), s.ConntrackStats...)
	if len(s.ConntrackStats) == 0 {
		s.ConntrackStats = make([]ConntrackCPU, 1)
	}
	s.ConntrackStats[0].InsertFailed += n
	return s
}

// writeConntrack writes the statistics file where nf_conntrack's procfs
// entry would be (none where the state has no statistics: the module is not
// loaded, or CONFIG_NF_CONNTRACK_PROCFS is off), and the kernel's log of
// this boot where the journalctl and dmesg stubs read it.
func (w *writer) writeConntrack(s State) {
	// nf_conntrack_max is the module's own sysctl (nf_conntrack_standalone.c
	// registers both): no sysctl, no module, no statistics.
	if _, loaded := s.Sysctls["net.netfilter.nf_conntrack_max"]; loaded && s.ConntrackStats != nil {
		count, _ := strconv.Atoi(s.Sysctls["net.netfilter.nf_conntrack_count"])
		w.file("proc/net/stat/nf_conntrack", procNetStatConntrack(count, s.ConntrackStats))
	}
	var b strings.Builder
	for _, l := range s.KernelLog {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	w.file("state/kernel.log", b.String())
	w.stub("dmesg")
	if !s.SystemdNotRunning {
		w.stub("journalctl")
	}
}
