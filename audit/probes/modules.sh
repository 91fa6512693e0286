# id: modules
# description: kernel modules kube-proxy and the CNI rely on
# needs_root: false
# timeout: 10s
# facts: module.br_netfilter module.nf_conntrack module.ip_tables module.iptable_nat module.x_tables module.ip_vs

kver=
[ -r "$R/proc/sys/kernel/osrelease" ] && IFS= read -r kver <"$R/proc/sys/kernel/osrelease"
set --
[ -r "$R/proc/modules" ] && set -- "$R/proc/modules"
[ -n "$kver" ] && [ -r "$R/lib/modules/$kver/modules.builtin" ] && set -- "$@" "$R/lib/modules/$kver/modules.builtin"
# /dev/null keeps awk off stdin when neither file is readable.
[ $# -gt 0 ] || set -- /dev/null
# One awk for both files. modules.builtin lists paths
# ("kernel/net/bridge/br_netfilter.ko"); its file names may use '-' where
# the module name has '_', so both are normalised.
awk '
	FILENAME ~ /modules\.builtin$/ {
		n = $0; sub(/.*\//, "", n); sub(/\.ko.*$/, "", n); gsub(/-/, "_", n); builtin[n] = 1; next
	}
	{ loaded[$1] = 1 }
	END {
		n = split("br_netfilter nf_conntrack ip_tables iptable_nat x_tables ip_vs", m, " ")
		for (i = 1; i <= n; i++)
			print m[i], (m[i] in loaded) ? "loaded" : (m[i] in builtin) ? "builtin" : "absent"
	}' "$@" | while read -r m st; do
	fact "module.$m" "$st"
done
