# id: nftables
# description: nftables tables (as root), and whether kube-proxy's nftables mode has programmed its own tables
# needs_root: true
# timeout: 10s
# facts: nft.installed nft.tables nft.kube_proxy_table
if ! have nft; then
	fact nft.installed no
	fact nft.tables absent
	fact nft.kube_proxy_table absent
elif modules_state nf_tables && [ "$fa_ms" = "nf_tables absent" ]; then
	# nft's netlink request would autoload nf_tables: a probe must not
	# change the kernel. Without the module no nftables ruleset exists, so
	# kube-proxy's nftables mode is not running either.
	fact nft.installed yes
	fact nft.tables not-loaded
	fact nft.kube_proxy_table no
elif ! is_root; then
	# Listing needs CAP_NET_ADMIN (netlink); an unprivileged nft only errors.
	fact nft.installed yes
	fact nft.tables not-root
	fact nft.kube_proxy_table not-root
else
	fact nft.installed yes
	# "table ip filter" per line, in creation order, which differs between
	# otherwise identical nodes: insertion-sorted in awk so drift compares
	# sets, without a sort(1) fork; LC_ALL=C so the order is bytes, not the
	# node's collation. kube-proxy's nftables mode owns
	# "table ip kube-proxy" and "table ip6 kube-proxy". awk runs nft itself
	# (exec: no shell between them) and close() tells whether it failed
	# (non-zero: the exit status in mawk and gawk, the wait status in
	# busybox awk).
	LC_ALL=C awk "$fa_awk_fact"'
BEGIN {
	cmd = "exec nft list tables 2>/dev/null"
	while ((cmd | getline l) > 0) {
		if (split(l, w, " ") != 3 || w[1] != "table") continue
		t = w[2] ":" w[3]
		if (w[3] == "kube-proxy" && (w[2] == "ip" || w[2] == "ip6")) kp = "yes"
		n++
		for (i = n; 1 < i && t < a[i - 1]; i--) a[i] = a[i - 1]
		a[i] = t
	}
	if (close(cmd) != 0) { fact("nft.tables", "error"); fact("nft.kube_proxy_table", "error"); exit }
	s = ""
	for (i = 1; i <= n; i++) s = s (i == 1 ? "" : ",") a[i]
	fact("nft.tables", s == "" ? "none" : s)
	fact("nft.kube_proxy_table", kp == "" ? "no" : kp)
}' </dev/null
fi
