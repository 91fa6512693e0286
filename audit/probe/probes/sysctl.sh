# id: sysctl
# description: forwarding and bridge-netfilter sysctls, the cluster's IP families, conntrack table use and its drop, early_drop and insert_failed counters since boot (/proc/net/stat/nf_conntrack), and the table size kube-proxy sets on this node (from its flags in RKE2's static pod)
# needs_root: false
# timeout: 10s
# facts: sysctl.net.ipv4.ip_forward sysctl.net.ipv6.conf.all.forwarding sysctl.net.bridge.bridge-nf-call-iptables sysctl.net.bridge.bridge-nf-call-ip6tables net.ip_families conntrack.count conntrack.max conntrack.kube_proxy_max conntrack.drop conntrack.early_drop conntrack.insert_failed
# volatile: conntrack.count conntrack.drop conntrack.early_drop conntrack.insert_failed
# role_scoped: conntrack.max conntrack.kube_proxy_max

# The table size follows the core count, and servers and agents are often
# sized differently; within a role a difference is real drift.
#
# Everything is read straight from /proc/sys (sysctl(8) may be absent in
# minimal images) by one awk, whose getline reads a file with one read(2) of
# a whole buffer. Never with the shell's read builtin: dash and busybox read
# one byte per read(2), and the kernel's integer sysctl handlers
# (proc_dointvec and friends in kernel/sysctl.c) return nothing for a read
# at a non-zero offset, so "262144" would come back as "2". A missing file
# is "absent": with br_netfilter unloaded the bridge keys do not exist.
# kube-proxy's conntrack flags, from the static pod RKE2 writes: only the
# three flags below are ever looked at. The pod-manifests directory is 0700
# root on RKE2, so without root the answer is "unknown", never a guess.
kpm=$R/var/lib/rancher/rke2/agent/pod-manifests
if [ -r "$kpm/kube-proxy.yaml" ]; then
	kps=readable
elif [ -d "$kpm" ] && [ -x "$kpm" ] && [ ! -e "$kpm/kube-proxy.yaml" ]; then
	# RKE2 without its kube-proxy (disable-kube-proxy, e.g. Cilium's
	# replacement): nothing sizes the table.
	kps=none
else
	kps=unknown
fi
# The cluster's IP families decide which IPv6 settings matter: RKE2 turns
# IPv6 forwarding and bridge-nf-call-ip6tables on only when its cluster
# CIDRs hold an IPv6 range (k3s pkg/agent/run.go run: enableIPv6 :=
# dualCluster || clusterIPv6, then pkg/agent/syssetup kernelSysctls). The
# same ranges are kube-proxy's --cluster-cidr (k3s kubeProxyArgs), read
# from its manifest where readable; else the cluster-cidr key of
# config.yaml (a server's; the file holds the join token, so that key
# alone is read, and never printed); else "unknown", which no check
# judges. A server whose config.yaml sets no cluster-cidr runs RKE2's
# IPv4 default, but an agent's never sets it: absent is unknown too.
cfg=$R/etc/rancher/rke2/config.yaml
[ -r "$cfg" ] || cfg=
# conntrack's statistics (what conntrack -S shows, without the conntrack
# tool, which few nodes have): nf_conntrack_standalone.c creates
# /proc/net/stat/nf_conntrack 0444 in every network namespace
# (nf_conntrack_standalone_init_proc), so any user reads it; missing, the
# module is not loaded (or CONFIG_NF_CONNTRACK_PROCFS is off): "absent".
# There, yet unreadable (a mode or an LSM that denies this user), is
# "unreadable", told by test(1): getline fails alike on both, and mawk
# aborts on a read error.
cst=absent
if [ -e "$R/proc/net/stat/nf_conntrack" ]; then
	cst=readable
	[ -r "$R/proc/net/stat/nf_conntrack" ] || cst=unreadable
fi
awk -v root="$R" -v kps="$kps" -v kpm="$kpm/kube-proxy.yaml" -v cfg="$cfg" -v cst="$cst" "$fa_awk_fact"'
function rd(path,   v, st) {
	v = ""
	st = (getline v < (root path))
	close(root path)
	if (st < 0) return "absent"
	return (st == 0 || v == "") ? "empty" : v
}
function key(k,   p) { p = k; gsub(/\./, "/", p); return "/proc/sys/" p }
function flag(l, name,   v) {
	if (!match(l, "--" name "=[0-9]+")) return ""
	v = substr(l, RSTART, RLENGTH); sub(/^[^=]*=/, "", v)
	return v
}
# families names the IP families of a comma-separated CIDR list: ipv4,
# ipv6, dual, or unknown for an empty one.
function families(l,   n, c, i, v4, v6) {
	gsub(/["\047 \t]/, "", l)
	n = split(l, c, ",")
	for (i = 1; i <= n; i++) {
		if (index(c[i], ":")) v6 = 1
		else if (c[i] ~ /^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+\/[0-9]+$/) v4 = 1
	}
	return v4 && v6 ? "dual" : v6 ? "ipv6" : v4 ? "ipv4" : "unknown"
}
# hex is the value of a hexadecimal word, or -1 for anything else: mawk
# (20200120, Debian 12 and Ubuntu) has no strtonum, and POSIX awk reads
# "0x1f" as 0. A 32-bit counter fits a double exactly.
function hex(s,   i, d, v) {
	if (s == "") return -1
	s = tolower(s); v = 0
	for (i = 1; i <= length(s); i++) {
		d = index("0123456789abcdef", substr(s, i, 1))
		if (d == 0) return -1
		v = v * 16 + d - 1
	}
	return v
}
# ctstats emits the conntrack counters summed over the CPUs. ct_cpu_seq_show
# (net/netfilter/nf_conntrack_standalone.c) prints a header of column names,
# then one row of "%08x" words per possible CPU, each CPU counting since
# boot. Columns are found by the names in the header: the set changed across
# kernels ("searched" became "clashres" in 5.9, "delete_list"
# "chainlength" in 5.15), and a column this kernel lacks reads "unknown".
# "entries" is the count of the table, repeated on every row, never summed.
function ctstats(   f, l, h, nh, c, col, v, i, k, x, rows, sum, bad) {
	split("drop early_drop insert_failed", c, " ")
	f = root "/proc/net/stat/nf_conntrack"
	if (cst != "readable" || (getline l < f) <= 0) {
		if (cst == "readable") cst = "unknown"
		for (i = 1; i <= 3; i++) fact("conntrack." c[i], cst)
		return
	}
	nh = split(l, h, " ")
	for (i = 1; i <= nh; i++) col[h[i]] = i
	rows = 0
	while ((getline l < f) > 0) {
		if (split(l, v, " ") != nh) { bad["row"] = 1; continue }
		rows++
		for (i = 1; i <= 3; i++) {
			k = c[i]
			if (!(k in col)) continue
			x = hex(v[col[k]])
			if (x < 0) bad[k] = 1
			else sum[k] += x
		}
	}
	close(f)
	for (i = 1; i <= 3; i++) {
		k = c[i]
		# %.0f: mawk 20200120 prints a number past 2^31 as "%.6g"
		# (4294967295 x 8 as 3.43597e+10).
		fact("conntrack." k, (k in col) && !(k in bad) && !("row" in bad) && rows > 0 ? sprintf("%.0f", sum[k]) : "unknown")
	}
}
BEGIN {
	n = split("net.ipv4.ip_forward net.ipv6.conf.all.forwarding net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables", ks, " ")
	for (i = 1; i <= n; i++) fact("sysctl." ks[i], rd(key(ks[i])))
	fam = "unknown"
	if (kps == "readable") {
		while ((getline l < kpm) > 0) if (match(l, /--cluster-cidr=[^ \t]+/)) fam = families(substr(l, RSTART + 15, RLENGTH - 15))
		close(kpm)
	}
	if (fam == "unknown" && cfg != "") {
		while ((getline l < cfg) > 0) if (sub(/^cluster-cidr:[ \t]*/, "", l)) { sub(/[ \t]*#.*$/, "", l); fam = families(l) }
		close(cfg)
	}
	fact("net.ip_families", fam)
	fact("conntrack.count", rd("/proc/sys/net/netfilter/nf_conntrack_count"))
	fact("conntrack.max", rd("/proc/sys/net/netfilter/nf_conntrack_max"))
	ctstats()
	# Cores are counted like Go runtime.NumCPU on an unrestricted process:
	# the online list ("0-3,8-11"), else /proc/cpuinfo.
	cpus = 0
	online = rd("/sys/devices/system/cpu/online")
	if (online != "absent" && online != "empty") {
		m = split(online, r, ",")
		for (i = 1; i <= m; i++) {
			if (split(r[i], ab, "-") == 2) cpus += ab[2] - ab[1] + 1
			else if (r[i] ~ /^[0-9]+$/) cpus++
		}
	} else {
		f = root "/proc/cpuinfo"
		while ((getline l < f) > 0) if (l ~ /^processor[ \t]*:/) cpus++
		close(f)
	}
	# What kube-proxy sets nf_conntrack_max to at start
	# (cmd/kube-proxy/app/server_linux.go getConntrackMax, and
	# pkg/proxy/conntrack/sysctls.go, which only ever raises it):
	# max(maxPerCore x cores, min) when maxPerCore > 0, defaults 32768 and
	# 131072; with maxPerCore 0, as RKE2 runs it (k3s kubeProxyArgs), it
	# leaves the kernel value alone: "keep". A --config file may set them
	# too, and is not read: "unknown". A repeated flag: the last one wins.
	per = 32768; min = 131072; t = kps
	if (kps == "readable") {
		t = ""
		while ((getline l < kpm) > 0) {
			if ((v = flag(l, "conntrack-max-per-core")) != "") per = v + 0
			if ((v = flag(l, "conntrack-min")) != "") min = v + 0
			if (index(l, "--config=")) t = "unknown"
		}
		close(kpm)
		if (t == "") {
			if (per == 0) t = "keep"
			else if (cpus > 0) { t = per * cpus; if (t < min) t = min }
			else t = "unknown"
		}
	}
	fact("conntrack.kube_proxy_max", t)
}' </dev/null
