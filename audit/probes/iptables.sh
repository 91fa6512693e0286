# id: iptables
# description: iptables version and backend (nf_tables or legacy)
# needs_root: false
# timeout: 10s
# facts: iptables.version iptables.backend
if have iptables; then
	v=$(iptables --version 2>/dev/null | head -n 1)
	# "iptables v1.8.10 (nf_tables)"; releases before 1.8 print no backend
	# and are always legacy.
	ver=$(printf '%s' "$v" | sed -n 's/^iptables v\([0-9][0-9.]*\).*/\1/p')
	be=$(printf '%s' "$v" | sed -n 's/.*(\(.*\)).*/\1/p')
	fact iptables.version "${ver:-unknown}"
	fact iptables.backend "${be:-legacy}"
else
	fact iptables.version absent
	fact iptables.backend absent
fi
