# id: modules
# description: kernel modules kube-proxy and the CNI rely on
# needs_root: false
# timeout: 10s
# facts: module.br_netfilter module.nf_conntrack module.ip_tables module.iptable_nat module.x_tables module.ip_vs
kver=$(readf /proc/sys/kernel/osrelease)
for m in br_netfilter nf_conntrack ip_tables iptable_nat x_tables ip_vs; do
	if [ -r "$R/proc/modules" ] && grep -q "^$m " "$R/proc/modules"; then
		st=loaded
	elif [ -r "$R/lib/modules/$kver/modules.builtin" ] && grep -q "/$m\.ko" "$R/lib/modules/$kver/modules.builtin"; then
		st=builtin
	else
		st=absent
	fi
	fact "module.$m" "$st"
done
