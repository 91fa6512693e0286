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
kver=
[ -r "$R/proc/sys/kernel/osrelease" ] && read -r kver <"$R/proc/sys/kernel/osrelease"
manifest=/var/lib/rancher/rke2/agent/pod-manifests/kube-proxy.yaml
set -- /dev/null
for f in /proc/modules "/lib/modules/$kver/modules.builtin" "$manifest" /proc/net/ip_vs; do
	[ -r "$R$f" ] && set -- "$@" "$R$f"
done
# One awk reads the loaded and built-in modules, the mode and IPVS scheduler
# RKE2 configured in kube-proxy's static pod (only those two flags are ever
# looked at) and /proc/net/ip_vs, which lists the IPVS table like ipvsadm -Ln
# without root and without loading anything. It prints one word per field,
# each from its own vocabulary, so the words can be split by the shell.
set -- $(awk -v root="$R" '
FILENAME ~ /\/proc\/modules$/ { loaded[$1] = 1; next }
FILENAME ~ /modules\.builtin$/ { n = $0; sub(/.*\//, "", n); sub(/\.ko.*/, "", n); gsub(/-/, "_", n); builtin[n] = 1; next }
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
function state(m,   l) {
	if (m in loaded) return "loaded"
	if (m in builtin) return "builtin"
	# /proc/net/ip_vs and the conntrack sysctls exist only when the code is
	# in the kernel; not listed as a module, it must be built in (a kernel
	# without modules.builtin would otherwise look like one without it).
	if (m == "ip_vs" && ipvs) return "builtin"
	if (m == "nf_conntrack" && 0 < (getline l < (root "/proc/sys/net/netfilter/nf_conntrack_max"))) return "builtin"
	return "absent"
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
	split("ip_vs ip_vs_rr ip_vs_wrr ip_vs_sh nf_conntrack nf_tables", want, " ")
	for (i = 1; i <= 6; i++) printf "%s ", state(want[i])
	if (!manifest) conf = "absent"
	else if (pm != "") conf = pm
	else conf = cfg ? "unknown" : "iptables"
	# The scheduler kube-proxy asks for (rr unless --ipvs-scheduler says
	# otherwise) and every scheduler in use need their ip_vs_* module.
	if (cs == "") cs = "rr"
	need[cs] = 1
	for (s in sched) need[s] = 1
	sm = "loaded"; miss = ""
	for (s in need) {
		st = state("ip_vs_" s)
		if (st == "absent") { sm = "absent"; miss = miss (miss == "" ? "" : ",") "ip_vs_" s }
		else if (st == "builtin" && sm == "loaded") sm = "builtin"
	}
	print conf, (ipvs ? vs + 0 : "-"), (ipvs ? rs + 0 : "-"), (ipvs ? sorted(sched) : "-"), sm, (miss == "" ? "-" : miss)
}' "$@")
m_ip_vs=$1 m_rr=$2 m_wrr=$3 m_sh=$4 m_ct=$5 m_nft=$6 configured=$7 vs=$8 rs=$9
shift 9
sched=$1 s_mod=$2 s_miss=$3
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
# kube-proxy's metrics server answers /proxyMode with the mode it runs in.
if have curl; then
	pm=$(curl -s -m 3 -w '\n%{http_code}' http://127.0.0.1:10249/proxyMode 2>/dev/null)
elif have wget; then
	pm=$(wget -q -T 3 -O - http://127.0.0.1:10249/proxyMode 2>/dev/null) && pm="$pm
200"
else
	pm=
fi
nl='
'
mode= source=
case $pm in
*"${nl}200")
	source=proxyMode
	case ${pm%"$nl"*} in
	iptables | ipvs | nftables | kernelspace) mode=${pm%"$nl"*} ;;
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
