# id: kubeproxy_mode
# description: kube-proxy's proxy mode (asked from kube-proxy, else read from the IPVS table, nftables, Cilium or RKE2's kube-proxy manifest) and the kernel modules that mode needs
# needs_root: true
# timeout: 20s
# facts: kubeproxy.mode kubeproxy.mode.source kubeproxy.mode.configured kubeproxy.mode.missing_modules kubeproxy.module.ip_vs kubeproxy.module.ip_vs_rr kubeproxy.module.ip_vs_wrr kubeproxy.module.ip_vs_sh kubeproxy.module.nf_conntrack kubeproxy.module.nf_tables kubeproxy.ipvs.virtual_services kubeproxy.ipvs.real_servers kubeproxy.ipvs.schedulers kubeproxy.ipvs.scheduler_module kubeproxy.cilium.agent kubeproxy.cilium.status kubeproxy.cilium.kube_proxy_replacement kubeproxy.bpftool.maps kubeproxy.bpftool.cilium_lb_maps
# volatile: kubeproxy.ipvs.virtual_services kubeproxy.ipvs.real_servers kubeproxy.bpftool.maps

# Root only adds detail (ipvsadm, nft, bpftool and the Cilium socket need
# it); without it the mode still comes from kube-proxy's own /proxyMode.
# Nothing here may load a module: ipvsadm modprobes ip_vs when it is missing
# and nft's netlink request autoloads nf_tables, so each runs only when its
# module is already there.
to=
have timeout && to="timeout 5"
manifest=/var/lib/rancher/rke2/agent/pod-manifests/kube-proxy.yaml
set -- /dev/null
for f in "$manifest" /proc/net/ip_vs; do
	[ -r "$R$f" ] && set -- "$@" "$R$f"
done
# One awk reads the mode and IPVS scheduler RKE2 configured in kube-proxy's
# static pod (only those two flags are ever looked at) and /proc/net/ip_vs,
# which lists the IPVS table like ipvsadm -Ln without root and without
# loading anything. It prints one word per field, each from its own
# vocabulary, so the words can be split by the shell.
set -- $(awk '
FILENAME ~ /kube-proxy\.yaml$/ {
	manifest = 1
	if (match($0, /--proxy-mode=[A-Za-z]*/)) pm = tolower(substr($0, RSTART + 13, RLENGTH - 13))
	if (match($0, /--ipvs-scheduler=[a-z]*/)) cs = substr($0, RSTART + 17, RLENGTH - 17)
	if (index($0, "--config=")) cfg = 1
	next
}
FILENAME ~ /\/proc\/net\/ip_vs$/ {
	ipvs = 1
	if ($1 ~ /^(TCP|UDP|SCTP|FWM)$/) { vs++; if ($3 ~ /^[a-z]+$/) sched[$3] = 1 }
	else if ($1 ~ /^-/ && $2 !~ /^Remote/) rs++
	next
}
function sorted(a,   k, out, n, i, j, w) {
	n = 0
	for (k in a) {
		for (j = n; 0 < j && k < w[j]; j--) w[j + 1] = w[j]
		w[j + 1] = k; n++
	}
	out = ""
	for (i = 1; i <= n; i++) out = out (i == 1 ? "" : ",") w[i]
	return n ? out : "none"
}
END {
	if (!manifest) conf = "absent"
	else if (pm != "") conf = pm
	else conf = cfg ? "unknown" : "iptables"
	# The scheduler kube-proxy asks for (rr unless --ipvs-scheduler says
	# otherwise) and every scheduler in use need their ip_vs_* module.
	if (cs == "") cs = "rr"
	need["ip_vs_" cs] = 1
	for (s in sched) need["ip_vs_" s] = 1
	# The needed modules last, one word each.
	n = sorted(need); gsub(/,/, " ", n)
	print conf, (ipvs ? vs + 0 : "-"), (ipvs ? rs + 0 : "-"), (ipvs ? sorted(sched) : "-"), n
}' "$@")
configured=$1 vs=$2 rs=$3 sched=$4
shift 4
# Module states in one call; the needed schedulers' modules come last.
modules_state ip_vs ip_vs_rr ip_vs_wrr ip_vs_sh nf_conntrack nf_tables "$@"
# shellcheck disable=SC2086
set -- $fa_ms
m_ip_vs=$2 m_rr=$4 m_wrr=$6 m_sh=$8 m_ct=${10} m_nft=${12}
shift 12
s_mod=loaded s_miss=
while [ $# -ge 2 ]; do
	case $2 in
	absent) s_mod=absent s_miss=${s_miss:+$s_miss,}$1 ;;
	builtin) [ "$s_mod" = loaded ] && s_mod=builtin ;;
	esac
	shift 2
done
s_miss=${s_miss:--}
# RKE2's agent directory may be closed to a non-root audit user.
if [ "$configured" = absent ] && [ -e "$R$manifest" ]; then configured=denied; fi
fact kubeproxy.module.ip_vs "$m_ip_vs"
fact kubeproxy.module.ip_vs_rr "$m_rr"
fact kubeproxy.module.ip_vs_wrr "$m_wrr"
fact kubeproxy.module.ip_vs_sh "$m_sh"
fact kubeproxy.module.nf_conntrack "$m_ct"
fact kubeproxy.module.nf_tables "$m_nft"
fact kubeproxy.mode.configured "$configured"
fact kubeproxy.ipvs.scheduler_module "$s_mod"
if [ "$vs" = - ]; then
	if [ "$m_ip_vs" = absent ]; then
		vs=0 rs=0 sched=none
	elif have ipvsadm; then
		set -- $(ipvsadm -Ln 2>&1 | awk '
			/^Can.t initialize/ { err = index($0, "ermission denied") ? "denied" : "error" }
			$1 ~ /^(TCP|UDP|SCTP|FWM)$/ { vs++; if ($3 ~ /^[a-z]+$/) sched[$3] = 1 }
			$1 ~ /^-/ && $2 !~ /^Remote/ { rs++ }
			END {
				if (err != "") { print err, err, err; exit }
				n = 0
				for (k in sched) { for (j = n; 0 < j && k < w[j]; j--) w[j + 1] = w[j]; w[j + 1] = k; n++ }
				out = ""
				for (i = 1; i <= n; i++) out = out (i == 1 ? "" : ",") w[i]
				print vs + 0, rs + 0, (n ? out : "none")
			}')
		vs=${1:-error} rs=${2:-error} sched=${3:-error}
	else
		vs=absent rs=absent sched=absent
	fi
fi
fact kubeproxy.ipvs.virtual_services "$vs"
fact kubeproxy.ipvs.real_servers "$rs"
fact kubeproxy.ipvs.schedulers "$sched"
# A Cilium agent on this node has its socket here. Only the agent CLI is
# asked, pinned to that socket with -H: cilium-cli, which would go to the
# API server instead, has no -H and fails without leaving the node.
sock=$R/var/run/cilium/cilium.sock
agent=absent cstatus=absent kpr=absent
if [ -e "$sock" ]; then
	agent=socket cstatus=no-cli kpr=unknown
	for b in cilium-dbg cilium; do
		if have "$b"; then
			set -- $($to "$b" status -H "unix://$sock" 2>&1 | awk '
				$1 == "Cilium:" { c = $2 }
				$1 == "KubeProxyReplacement:" { k = $2 }
				END { print (c ~ /^[A-Za-z]+$/ ? c : "error"), (k ~ /^[A-Za-z]+$/ ? k : "unknown") }')
			cstatus=$1 kpr=$2
			break
		fi
	done
fi
fact kubeproxy.cilium.agent "$agent"
fact kubeproxy.cilium.status "$cstatus"
fact kubeproxy.cilium.kube_proxy_replacement "$kpr"
if have bpftool; then
	# Map names are cut to 15 characters: cilium_lb4_serv, cilium_lb4_back...
	set -- $($to bpftool map list 2>&1 | awk '
		/^Error/ { err = index($0, "not permitted") ? "denied" : "error" }
		/^[0-9]+: / { n++; if (index($0, " name cilium_lb")) lb++ }
		END { if (err != "" && !n) print err, err; else print n + 0, lb + 0 }')
	maps=${1:-error} lbmaps=${2:-error}
else
	maps=absent lbmaps=absent
fi
fact kubeproxy.bpftool.maps "$maps"
fact kubeproxy.bpftool.cilium_lb_maps "$lbmaps"
# kube-proxy's metrics server answers /proxyMode with the mode it runs in,
# asked never through a login's http_proxy (see kubeproxy.sh).
if have curl; then
	pm=$(curl -s --noproxy '*' -m 3 -w '\n%{http_code}' http://127.0.0.1:10249/proxyMode 2>/dev/null)
elif have wget; then
	pm=$(unset http_proxy HTTP_PROXY all_proxy ALL_PROXY; wget -q -T 3 -O - http://127.0.0.1:10249/proxyMode 2>/dev/null) && pm="$pm
200"
else
	pm=
fi
mode= source=
case $pm in
*"${fa_nl}200")
	source=proxyMode
	case ${pm%"$fa_nl"*} in
	iptables | ipvs | nftables | kernelspace) mode=${pm%"$fa_nl"*} ;;
	*) mode=unknown ;;
	esac
	;;
esac
# kube-proxy did not answer (down, crash-looping or replaced): what the node
# shows decides, then what RKE2 configured.
looked=yes
if [ -z "$mode" ]; then
	case $kpr in
	True | true | Strict) mode=ebpf source=cilium ;;
	esac
fi
if [ -z "$mode" ]; then
	case $vs in
	0 | absent) ;;
	denied | error) looked=no ;;
	*) mode=ipvs source=ipvs ;;
	esac
fi
if [ -z "$mode" ] && [ "$m_nft" != absent ] && have nft; then
	t=$(nft list tables 2>&1)
	case $t in
	*"table ip kube-proxy"* | *"table ip6 kube-proxy"*) mode=nftables source=nft ;;
	*"ermission denied"* | *"not permitted"*) looked=no ;;
	esac
fi
if [ -z "$mode" ]; then
	case $configured in
	absent) ;;
	unknown | denied) looked=no ;;
	*) mode=$configured source=manifest ;;
	esac
fi
if [ -z "$mode" ]; then
	source=none
	if [ "$looked" = yes ]; then mode=absent; else mode=unknown; fi
fi
fact kubeproxy.mode "$mode"
fact kubeproxy.mode.source "$source"
# What the mode cannot work without; only "absent" counts as missing.
miss=
need() {
	if [ "$2" = absent ]; then miss=${miss:+$miss,}$1; fi
}
case $mode in
ipvs)
	need ip_vs "$m_ip_vs"
	[ "$s_mod" = absent ] && miss=${miss:+$miss,}$s_miss
	need nf_conntrack "$m_ct"
	;;
nftables)
	need nf_tables "$m_nft"
	need nf_conntrack "$m_ct"
	;;
iptables) need nf_conntrack "$m_ct" ;;
esac
fact kubeproxy.mode.missing_modules "${miss:-none}"
