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
# Everything is read with the read builtin (no fork per file), straight from
# /proc/sys: sysctl(8) may be absent in minimal images. A missing file is
# "absent": with br_netfilter unloaded the bridge keys do not exist.
rd() {
	v=absent
	if [ -r "$R$1" ]; then
		IFS= read -r v <"$R$1" || [ -n "$v" ] || v=empty
	fi
}
for k in net.ipv4.ip_forward net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables; do
	p=$k
	# dots to slashes without tr: the keys hold no other dots to keep.
	out=
	while [ -n "$p" ]; do
		case $p in
		*.*) out=$out${p%%.*}/ p=${p#*.} ;;
		*) out=$out$p p= ;;
		esac
	done
	rd "/proc/sys/$out"
	fact "sysctl.$k" "$v"
done
rd /proc/sys/net/netfilter/nf_conntrack_count
fact conntrack.count "$v"
rd /proc/sys/net/netfilter/nf_conntrack_max
fact conntrack.max "$v"
# kube-proxy sizes the table as max(conntrack.maxPerCore x cores,
# conntrack.min) = max(32768 x cores, 131072) and raises nf_conntrack_max to
# it at start. Cores are counted like Go's runtime.NumCPU on an unrestricted
# process: the online list ("0-3,8-11"), else /proc/cpuinfo.
cpus=0
rd /sys/devices/system/cpu/online
if [ "$v" != absent ]; then
	list=$v,
	while [ -n "$list" ]; do
		r=${list%%,*} list=${list#*,}
		case $r in
		*-*) cpus=$((cpus + ${r#*-} - ${r%-*} + 1)) ;;
		[0-9]*) cpus=$((cpus + 1)) ;;
		esac
	done
elif [ -r "$R/proc/cpuinfo" ]; then
	cpus=$(grep -c '^processor' "$R/proc/cpuinfo")
fi
if [ "${cpus:-0}" -gt 0 ] 2>/dev/null; then
	d=$((32768 * cpus))
	[ "$d" -lt 131072 ] && d=131072
	fact conntrack.default_max "$d"
else
	fact conntrack.default_max unknown
fi
