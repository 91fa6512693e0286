# id: kubeproxy_mode
# description: kube-proxy's proxy mode (asked from kube-proxy, else read from the IPVS table, nftables, Cilium's agent, Calico's BPF maps or RKE2's kube-proxy manifest), whether a CNI replaces kube-proxy, and the kernel modules that mode needs
# needs_root: true
# timeout: 20s
# facts: kubeproxy.mode kubeproxy.mode.source kubeproxy.mode.configured kubeproxy.mode.missing_modules kubeproxy.module.ip_vs kubeproxy.module.ip_vs_rr kubeproxy.module.ip_vs_wrr kubeproxy.module.ip_vs_sh kubeproxy.module.nf_conntrack kubeproxy.module.nf_tables kubeproxy.ipvs.virtual_services kubeproxy.ipvs.real_servers kubeproxy.ipvs.schedulers kubeproxy.ipvs.scheduler_module kubeproxy.cilium.agent kubeproxy.cilium.status kubeproxy.cilium.kube_proxy_replacement kubeproxy.cilium.health_port kubeproxy.calico.bpf_nat cni.kube_proxy_replaced cni.bridge_nf_required kubeproxy.bpftool.maps kubeproxy.bpftool.cilium_lb_maps
# volatile: kubeproxy.ipvs.virtual_services kubeproxy.ipvs.real_servers kubeproxy.bpftool.maps

# Root only adds detail (ipvsadm, nft, bpftool, the Cilium socket and
# RKE2's 0700 pod-manifests directory need it); without it the mode still
# comes from kube-proxy's own /proxyMode. What root alone could tell is
# "unreadable" then, never a guess.
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
# shellcheck disable=SC2046 # awk prints one word a field: split on purpose
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
# RKE2's agent directory and its pod-manifests are 0700 root (k3s
# pkg/agent, rancher/rke2 pkg/executor/staticpod): a directory on the way
# that may not be searched hides the manifest, which is then unreadable,
# not absent.
if [ "$configured" = absent ]; then
	for d in /var/lib/rancher/rke2 /var/lib/rancher/rke2/agent /var/lib/rancher/rke2/agent/pod-manifests; do
		if [ -d "$R$d" ] && [ ! -x "$R$d" ]; then configured=unreadable; fi
	done
	if [ -e "$R$manifest" ] && [ ! -r "$R$manifest" ]; then configured=unreadable; fi
fi
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
		# shellcheck disable=SC2046 # awk prints one word a field: split on purpose
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
# Cilium's agent (fleet-shapes.md §2). RKE2 installs no cilium or
# cilium-dbg on the host; what the host has is the agent's API socket
# (cilium pkg/defaults RuntimePath, the chart's cilium-run hostPath), mode
# 0660 root (pkg/api/socket.go), and its socket-free health endpoint on
# 127.0.0.1:9879 (the chart's probes: GET /healthz with "brief: true"; 200
# while the agent's state is Ok or Disabled, else 503, no body). As root the
# socket is asked GET /v1/healthz only, which changes nothing (its PATCH,
# PUT and DELETE operations would: cilium api/v1/openapi.yaml); the answer
# is a StatusResponse whose cilium.state is the agent's state and whose
# kube-proxy-replacement.mode says whether it replaces kube-proxy ('True'/
# 'False'; Disabled, Strict, Probe or Partial before Cilium 1.14).
# --noproxy: a login environment's http_proxy must not take loopback.
sock=$R/var/run/cilium/cilium.sock
agent=absent cstatus=absent kpr=absent hport=absent
if [ -S "$sock" ]; then
	agent=socket cstatus=unknown kpr=unknown hport=unknown
	if have curl; then
		h=$(curl -s --noproxy '*' -m 3 -o /dev/null -H 'brief: true' -w '%{http_code}' http://127.0.0.1:9879/healthz 2>/dev/null)
		case $h in
		200) hport=ok ;;
		000 | "") hport=connect-failed ;;
		*) hport=http-$h ;;
		esac
		if is_root; then
			# shellcheck disable=SC2046 # awk prints one word a field: split on purpose
			set -- $(curl -s --noproxy '*' -m 5 --unix-socket "$sock" -w '\n%{http_code}\n' http://localhost/v1/healthz 2>/dev/null | awk '
# jget is the string at a path of object keys ("cilium.state") in the JSON
# text s, or "": a scanner that keeps the path, since a key such as "mode"
# also sits deeper (features.nodePort.mode) and the generated models write
# features first.
function jget(s, want,   n, i, j, k, c, d, str, p, key, arr) {
	n = length(s); d = 0
	for (i = 1; i <= n; i++) {
		c = substr(s, i, 1)
		if (c == "{" || c == "[") { d++; arr[d] = c == "["; key[d] = "" }
		else if (c == "}" || c == "]") d--
		else if (c == "\"") {
			str = ""
			for (i++; i <= n; i++) {
				c = substr(s, i, 1)
				if (c == "\\") { str = str c substr(s, i + 1, 1); i++; continue }
				if (c == "\"") break
				str = str c
			}
			for (j = i + 1; substr(s, j, 1) ~ /[ \t\r\n]/; j++) ;
			if (!arr[d] && substr(s, j, 1) == ":") { key[d] = str; i = j; continue }
			p = ""
			for (k = 1; k <= d; k++) p = p (k > 1 ? "." : "") (arr[k] ? "[]" : key[k])
			if (p == want) return str
		}
	}
	return ""
}
{ if (NR > 1) body = body prev "\n"; prev = $0 }
END {
	code = prev
	if (code == "000" || code == "") { print "not-answering", "unknown"; exit }
	if (code != "200") { print "error", "unknown"; exit }
	st = jget(body, "cilium.state"); m = jget(body, "kube-proxy-replacement.mode")
	print (st ~ /^[A-Za-z]+$/ ? st : "error"), (m ~ /^[A-Za-z]+$/ ? m : "unknown")
}')
			cstatus=${1:-error} kpr=${2:-unknown}
		else
			# The socket is root's: what it would say is unreadable.
			cstatus=unreadable kpr=unreadable
		fi
	fi
fi
fact kubeproxy.cilium.agent "$agent"
fact kubeproxy.cilium.status "$cstatus"
fact kubeproxy.cilium.kube_proxy_replacement "$kpr"
fact kubeproxy.cilium.health_port "$hport"
# Calico's eBPF dataplane pins its NAT maps in the BPF filesystem (felix
# bpf/nat: cali_v4_nat_fe, versioned cali_v4_nat_fe3; cali_v6_ for IPv6).
# Calico also attaches XDP programs in iptables mode (xdpEnabled, on by
# default in rke2-calico), so only the NAT maps tell the BPF dataplane.
# systemd mounts /sys/fs/bpf 0700: without root that is unreadable.
bpfd=$R/sys/fs/bpf
cnat=absent
if [ -d "$bpfd" ]; then
	if [ ! -x "$bpfd" ] || { [ -d "$bpfd/tc/globals" ] && [ ! -x "$bpfd/tc/globals" ]; }; then
		cnat=unreadable
	else
		cnat=no
		for f in "$bpfd"/tc/globals/cali_v4_nat_fe* "$bpfd"/tc/globals/cali_v6_nat_fe*; do
			if [ -e "$f" ]; then cnat=yes; fi
		done
	fi
fi
fact kubeproxy.calico.bpf_nat "$cnat"
# kube-proxy is replaced when RKE2 removed its manifest (disable-kube-proxy;
# RKE2's Bootstrap removes it on every start and writes it back only when
# kube-proxy is enabled: fleet-shapes.md §1) and a CNI serves Services:
# Cilium's agent says so, or Calico's BPF NAT maps are there. What could
# not be looked at is unknown.
case $configured in
absent)
	case $kpr:$cnat in
	True:* | true:* | Strict:* | *:yes) rep=yes ;;
	unreadable:* | unknown:* | *:unreadable) rep=unknown ;;
	*) rep=no ;;
	esac
	;;
unreadable) rep=unknown ;;
*) rep=no ;;
esac
fact cni.kube_proxy_replaced "$rep"
# bridge-nf-call matters wherever kube-proxy's iptables rules must see
# bridged traffic: Canal and Flannel bridge pods on cni0; Calico's iptables
# dataplane relies on it for hostPort/portmap and multus secondary bridges,
# and RKE2 itself turns it on at start, so "off" means something reverted
# the host setup. Only a CNI that replaces kube-proxy has no use for it;
# any doubt keeps the bridge checks on.
if [ "$rep" = yes ]; then fact cni.bridge_nf_required no; else fact cni.bridge_nf_required yes; fi
if have bpftool; then
	# Map names are cut to 15 characters: cilium_lb4_serv, cilium_lb4_back...
	# shellcheck disable=SC2046 # awk prints one word a field: split on purpose
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
mode='' source=''
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
if [ -z "$mode" ] && [ "$cnat" = yes ]; then mode=ebpf source=calico; fi
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
	unknown | unreadable) looked=no ;;
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
