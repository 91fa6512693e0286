# id: iptables
# description: iptables version, backend and selected alternative; as root, kube-proxy's rules in iptables-save and in the other backend
# needs_root: true
# timeout: 20s
# facts: iptables.version iptables.backend iptables.alternative iptables.save.lines iptables.kube_chains iptables.kube_proxy_chains iptables.kube_rules iptables.duplicate_rules iptables.forward_policy iptables.other_backend.kube_rules iptables.dual_backend iptables.ip6.kube_rules
# volatile: iptables.save.lines iptables.kube_chains iptables.kube_proxy_chains iptables.kube_rules iptables.duplicate_rules iptables.other_backend.kube_rules iptables.ip6.kube_rules
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
# Its "Value: /usr/sbin/iptables-nft" line is cut out with parameter
# expansion: no awk.
alt=
if have update-alternatives; then
	q=$fa_nl$(update-alternatives --query iptables 2>/dev/null)
	case $q in
	*"${fa_nl}Value:"*)
		alt=${q#*"${fa_nl}Value:"}
		alt=${alt%%"$fa_nl"*}
		set -f
		# shellcheck disable=SC2086
		set -- $alt
		set +f
		alt=${1##*/}
		;;
	esac
fi
if [ -z "$alt" ] && [ -L "$R/etc/alternatives/iptables" ]; then
	alt=$(readlink "$R/etc/alternatives/iptables")
	alt=${alt##*/}
fi
fact iptables.alternative "${alt:-absent}"

# kp_chains matches the chains kube-proxy alone creates (kubernetes
# pkg/proxy/iptables/proxier.go: its fixed chains and the per-Service and
# per-endpoint prefixes; KUBE-XLB- before 1.26), never kubelet's:
# KUBE-IPTABLES-HINT, KUBE-KUBELET-CANARY and KUBE-FIREWALL, and before
# 1.28 also KUBE-MARK-DROP, KUBE-MARK-MASQ and KUBE-POSTROUTING, which
# kube-proxy shares (pkg/kubelet/kubelet_network_linux.go; fleet-shapes.md
# §5). The stale-chain check's cleanup command uses the same expression.
kp_chains='^KUBE-(SERVICES|EXTERNAL-SERVICES|NODEPORTS|FORWARD|PROXY-FIREWALL|PROXY-CANARY|(SVC|SVL|EXT|FW|SEP|XLB)-)'
# save_stats is an awk program that runs each *-save command of cmds and
# prints, in one pass, a line per command: lines, KUBE- chains, kube-proxy's
# own chains among them (kp_chains), rules in or jumping to KUBE- chains,
# duplicated -A lines (the iptables 1.8.0-1.8.4 bug) and the filter FORWARD
# policy, or "error" when the command failed. awk runs the commands itself
# and close() tells whether one failed (non-zero: its exit status in mawk and
# gawk, the wait status in busybox awk): no temporary file, no second run,
# no shell between them (exec). The names are this probe's own constants,
# never input.
save_stats='
function stats(cmd,   l, n, kc, kpc, kr, dup, fp, t, k, w, seen) {
	n = kc = kpc = kr = dup = 0; fp = ""; t = ""
	cmd = "exec " cmd " 2>/dev/null"
	while ((cmd | getline l) > 0) {
		n++
		if (l ~ /^\*/) { t = substr(l, 2); continue }
		split(l, w, " ")
		if (l ~ /^:/) {
			if (t == "filter" && w[1] == ":FORWARD") fp = w[2]
			if (substr(w[1], 1, 6) == ":KUBE-") kc++
			if (substr(w[1], 2) ~ kp) kpc++
			continue
		}
		if (l ~ /^-A /) {
			if (substr(w[2], 1, 5) == "KUBE-" || index(l, " -j KUBE-") || index(l, " -g KUBE-")) kr++
			k = t " " l
			if (k in seen) dup++
			seen[k] = 1
		}
	}
	if (close(cmd) != 0) return "error"
	return sprintf("%d %d %d %d %d %s", n, kc, kpc, kr, dup, (fp == "" ? "none" : fp))
}
BEGIN {
	m = split(cmds, c, " ")
	for (i = 1; i <= m; i++) print stats(c[i])
}'

root_facts() {
	for k in save.lines kube_chains kube_proxy_chains kube_rules duplicate_rules forward_policy other_backend.kube_rules dual_backend; do
		fact "iptables.$k" "$1"
	done
}

if ! have iptables-save; then
	root_facts absent
elif ! is_root; then
	# iptables-save needs CAP_NET_ADMIN; the checks that read these skip.
	root_facts not-root
else
	# kube-proxy's rules in the backend this node does not select are a
	# split dataplane: one half of the rules is never evaluated. Both
	# backends are read by one awk.
	case $backend in
	nf_tables) other=iptables-legacy-save ;;
	legacy) other=iptables-nft-save ;;
	*) other= ;;
	esac
	if [ "$other" = iptables-nft-save ] && have "$other" &&
		modules_state nf_tables && [ "$fa_ms" = "nf_tables absent" ]; then
		# iptables-nft-save's netlink request would autoload nf_tables,
		# as nft's would (nftables.sh): a probe must not change the
		# kernel. Without the module that backend holds no rule at all.
		other_state=unloaded
		stats=$(awk -v cmds=iptables-save -v kp="$kp_chains" "$save_stats" </dev/null)
	elif [ -z "$other" ] || ! have "$other"; then
		other_state=absent
		stats=$(awk -v cmds=iptables-save -v kp="$kp_chains" "$save_stats" </dev/null)
	else
		other_state=asked
		stats=$(awk -v cmds="iptables-save $other" -v kp="$kp_chains" "$save_stats" </dev/null)
	fi
	set -f
	# shellcheck disable=SC2086
	set -- ${stats%%"$fa_nl"*}
	set +f
	if [ $# != 6 ]; then
		root_facts error
	else
		fact iptables.save.lines "$1"
		fact iptables.kube_chains "$2"
		fact iptables.kube_proxy_chains "$3"
		fact iptables.kube_rules "$4"
		fact iptables.duplicate_rules "$5"
		fact iptables.forward_policy "$6"
		kube=$4
		case $other_state in
		unloaded)
			fact iptables.other_backend.kube_rules 0
			fact iptables.dual_backend no
			;;
		absent)
			fact iptables.other_backend.kube_rules absent
			fact iptables.dual_backend absent
			;;
		*)
			set -f
			# shellcheck disable=SC2086
			set -- ${stats#*"$fa_nl"}
			set +f
			if [ $# != 6 ]; then
				fact iptables.other_backend.kube_rules error
				fact iptables.dual_backend error
			else
				fact iptables.other_backend.kube_rules "$4"
				if [ "$4" -gt 0 ] && [ "$kube" -gt 0 ]; then
					fact iptables.dual_backend yes
				else
					fact iptables.dual_backend no
				fi
			fi
			;;
		esac
	fi
fi

# kube-proxy's IPv6 rules, which a dual-stack or IPv6 cluster's Services
# need (checks judge them only there: net.ip_families). ip6tables-save
# must not load a module either: the legacy one loads ip6_tables where
# /proc/net/ip6_tables_names is missing (iptables xtables_load_ko), the
# nf_tables one autoloads nf_tables. Without that module there is no rule.
if ! have ip6tables-save; then
	fact iptables.ip6.kube_rules absent
elif ! is_root; then
	fact iptables.ip6.kube_rules not-root
else
	v6=asked
	case $backend in
	legacy) [ -e "$R/proc/net/ip6_tables_names" ] || v6=unloaded ;;
	nf_tables) modules_state nf_tables && [ "$fa_ms" = "nf_tables absent" ] && v6=unloaded ;;
	esac
	if [ $v6 = unloaded ]; then
		fact iptables.ip6.kube_rules 0
	else
		stats=$(awk -v cmds=ip6tables-save -v kp="$kp_chains" "$save_stats" </dev/null)
		set -f
		# shellcheck disable=SC2086
		set -- $stats
		set +f
		if [ $# = 6 ]; then fact iptables.ip6.kube_rules "$4"; else fact iptables.ip6.kube_rules error; fi
	fi
fi
