# id: modules
# description: kernel modules kube-proxy and the CNI rely on
# needs_root: false
# timeout: 10s
# facts: module.br_netfilter module.nf_conntrack module.ip_tables module.iptable_nat module.x_tables module.ip_vs

# modules_state (in _lib.sh) tells loaded from built-in from absent, also on
# kernels without /proc/modules.
modules_state br_netfilter nf_conntrack ip_tables iptable_nat x_tables ip_vs
while read -r m st; do
	fact "module.$m" "$st"
done <<EOF
$fa_ms
EOF
