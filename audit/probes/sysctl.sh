# id: sysctl
# description: forwarding and bridge-netfilter sysctls, conntrack table use and kube-proxy's default table size
# needs_root: false
# timeout: 10s
# facts: sysctl.net.ipv4.ip_forward sysctl.net.bridge.bridge-nf-call-iptables sysctl.net.bridge.bridge-nf-call-ip6tables conntrack.count conntrack.max conntrack.default_max
# volatile: conntrack.count
# role_scoped: conntrack.max conntrack.default_max

# Both follow the core count, and servers and agents are often sized
# differently; within a role a difference is real drift.
#
# Everything is read straight from /proc/sys (sysctl(8) may be absent in
# minimal images) by one awk, whose getline reads a file with one read(2) of
# a whole buffer. Never with the shell's read builtin: dash and busybox read
# one byte per read(2), and the kernel's integer sysctl handlers
# (proc_dointvec and friends in kernel/sysctl.c) return nothing for a read
# at a non-zero offset, so "262144" would come back as "2". A missing file
# is "absent": with br_netfilter unloaded the bridge keys do not exist.
awk -v root="$R" '
function rd(path,   v, st) {
	v = ""
	st = (getline v < (root path))
	close(root path)
	if (st < 0) return "absent"
	return (st == 0 || v == "") ? "empty" : v
}
function key(k,   p) { p = k; gsub(/\./, "/", p); return "/proc/sys/" p }
BEGIN {
	n = split("net.ipv4.ip_forward net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables", ks, " ")
	for (i = 1; i <= n; i++) print "sysctl." ks[i], rd(key(ks[i]))
	print "conntrack.count", rd("/proc/sys/net/netfilter/nf_conntrack_count")
	print "conntrack.max", rd("/proc/sys/net/netfilter/nf_conntrack_max")
	# kube-proxy sizes the table as max(conntrack.maxPerCore x cores,
	# conntrack.min) = max(32768 x cores, 131072) and raises nf_conntrack_max
	# to it at start (pkg/proxy/conntrack/sysctls.go in kubernetes). Cores
	# are counted like Go runtime.NumCPU on an unrestricted process: the
	# online list ("0-3,8-11"), else /proc/cpuinfo.
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
	if (cpus > 0) {
		d = 32768 * cpus
		if (d < 131072) d = 131072
		print "conntrack.default_max", d
	} else print "conntrack.default_max", "unknown"
}' </dev/null | while read -r k v; do
	fact "$k" "$v"
done
