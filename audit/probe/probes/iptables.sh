# id: iptables
# description: iptables version, backend and selected alternative; as root, kube-proxy's rules in iptables-save and in the other backend
# needs_root: true
# timeout: 20s
# facts: iptables.version iptables.backend iptables.alternative iptables.save.lines iptables.kube_chains iptables.kube_rules iptables.duplicate_rules iptables.forward_policy iptables.other_backend.kube_rules iptables.dual_backend
# volatile: iptables.save.lines iptables.kube_chains iptables.kube_rules iptables.duplicate_rules iptables.other_backend.kube_rules
backend=absent
if have iptables; then
	# "iptables v1.8.10 (nf_tables)"; releases before 1.8 print no backend
	# and are always legacy. Parsed with parameter expansion: no fork.
	v=$(iptables --version 2>/dev/null)
	case $v in
	"iptables v"[0-9]*)
		ver=${v#iptables v}
		ver=${ver%% *}
		;;
	*) ver=unknown ;;
	esac
	case $v in
	*"(nf_tables)"*) backend=nf_tables ;;
	*"(legacy)"* | "iptables v"[0-9]*) backend=legacy ;;
	*) backend=unknown ;;
	esac
	fact iptables.version "$ver"
else
	fact iptables.version absent
fi
fact iptables.backend "$backend"

# The alternatives system says which variant /usr/sbin/iptables is, which
# can differ from the iptables first on PATH; update-alternatives also
# works where /etc/alternatives lives elsewhere, the symlink needs no tool.
alt=
if have update-alternatives; then
	alt=$(update-alternatives --query iptables 2>/dev/null | awk '$1 == "Value:" { v = $2; sub(/.*\//, "", v); print v; exit }')
fi
if [ -z "$alt" ] && [ -L "$R/etc/alternatives/iptables" ]; then
	alt=$(readlink "$R/etc/alternatives/iptables")
	alt=${alt##*/}
fi
fact iptables.alternative "${alt:-absent}"

# save_stats CMD runs one *-save command and prints, in one awk pass:
# lines, KUBE- chains, rules in or jumping to KUBE- chains, duplicated -A
# lines (the iptables 1.8.0-1.8.4 bug) and the filter FORWARD policy, or
# "error" when the command failed. The exit status rides in on a last
# "rc=" line so no temporary file or second run is needed.
save_stats() {
	{
		"$1" 2>/dev/null
		echo "rc=$?"
	} | awk '
/^rc=[0-9]+$/ { rc = substr($0, 4); next }
{ n++ }
/^\*/ { t = substr($0, 2); next }
/^:/ {
	if (t == "filter" && $1 == ":FORWARD") fp = $2
	if (substr($1, 1, 6) == ":KUBE-") kc++
	next
}
/^-A / {
	if (substr($2, 1, 5) == "KUBE-" || index($0, " -j KUBE-") || index($0, " -g KUBE-")) kr++
	k = t " " $0
	if (k in seen) dup++
	seen[k] = 1
}
END {
	if (rc != 0) { print "error"; exit }
	printf "%d %d %d %d %s\n", n, kc, kr, dup, (fp == "" ? "none" : fp)
}'
}

root_facts() {
	for k in save.lines kube_chains kube_rules duplicate_rules forward_policy other_backend.kube_rules dual_backend; do
		fact "iptables.$k" "$1"
	done
}

if ! have iptables-save; then
	root_facts absent
elif ! is_root; then
	# iptables-save needs CAP_NET_ADMIN; the checks that read these skip.
	root_facts not-root
else
	set -f
	# shellcheck disable=SC2046
	set -- $(save_stats iptables-save)
	set +f
	if [ $# != 5 ]; then
		root_facts error
	else
		fact iptables.save.lines "$1"
		fact iptables.kube_chains "$2"
		fact iptables.kube_rules "$3"
		fact iptables.duplicate_rules "$4"
		fact iptables.forward_policy "$5"
		kube=$3
		# kube-proxy's rules in the backend this node does not select are
		# a split dataplane: one half of the rules is never evaluated.
		case $backend in
		nf_tables) other=iptables-legacy-save ;;
		legacy) other=iptables-nft-save ;;
		*) other= ;;
		esac
		if [ "$other" = iptables-nft-save ] && have "$other" &&
			[ "$(modules_state nf_tables)" = "nf_tables absent" ]; then
			# iptables-nft-save's netlink request would autoload
			# nf_tables, as nft's would (nftables.sh): a probe must not
			# change the kernel. Without the module that backend holds
			# no rule at all.
			fact iptables.other_backend.kube_rules 0
			fact iptables.dual_backend no
		elif [ -z "$other" ] || ! have "$other"; then
			fact iptables.other_backend.kube_rules absent
			fact iptables.dual_backend absent
		else
			set -f
			# shellcheck disable=SC2046
			set -- $(save_stats "$other")
			set +f
			if [ $# != 5 ]; then
				fact iptables.other_backend.kube_rules error
				fact iptables.dual_backend error
			else
				fact iptables.other_backend.kube_rules "$3"
				if [ "$3" -gt 0 ] && [ "$kube" -gt 0 ]; then
					fact iptables.dual_backend yes
				else
					fact iptables.dual_backend no
				fi
			fi
		fi
	fi
fi
