# id: network
# description: ports RKE2 roles listen on, NetworkManager and nm-cloud-setup against the CNI, which CNI the node runs
# needs_root: false
# timeout: 15s
# facts: port.6443.listening port.9345.listening port.2379.listening port.2380.listening port.10250.listening nm.installed nm.active nm.cni_unmanaged nm.cloud_setup cni.name cni.config_file cni.configured cni.kube_proxy_replaced cni.bridge_nf_required
# role_scoped: port.6443.listening port.9345.listening port.2379.listening port.2380.listening

# Listening TCP sockets from /proc/net/tcp{,6} (no root needed, unlike
# ss -p): state 0A is LISTEN, the port is the hex after the last ':' of
# local_address. 10256 is read too, only to tell a replaced kube-proxy from
# a present one below; its fact belongs to the kubeproxy probe.
set --
for f in /proc/net/tcp /proc/net/tcp6; do
	[ -r "$R$f" ] && set -- "$@" "$R$f"
done
if [ $# -gt 0 ]; then
	ports=$(awk '
		FNR > 1 && $4 == "0A" { n = split($2, a, ":"); l[a[n]] = 1 }
		END {
			# 6443 kube-apiserver, 9345 rke2 supervisor, 2379/2380 etcd
			# client/peer, 10250 kubelet, 10256 kube-proxy health.
			split("6443:192B 9345:2481 2379:094B 2380:094C 10250:280A 10256:2810", p, " ")
			for (i = 1; i <= 6; i++) { split(p[i], d, ":"); printf "%s=%s ", d[1], (d[2] in l) ? "yes" : "no" }
		}' "$@")
else
	ports="6443=unknown 9345=unknown 2379=unknown 2380=unknown 10250=unknown 10256=unknown"
fi
kp_listen=unknown
for pv in $ports; do
	if [ "${pv%%=*}" = 10256 ]; then
		kp_listen=${pv#*=}
	else
		fact "port.${pv%%=*}.listening" "${pv#*=}"
	fi
done

# NetworkManager must leave Canal's and Calico's cali* and Flannel's
# flannel* interfaces alone (RKE2 known issues): a managed cali* interface
# gets its routes and addresses rewritten under the CNI.
unit() {
	s=
	have systemctl && s=$(systemctl "$1" "$2" 2>/dev/null)
	printf '%s' "${s:-absent}"
}
if have NetworkManager || [ -d "$R/etc/NetworkManager" ]; then
	fact nm.installed yes
	fact nm.active "$(unit is-active NetworkManager)"
	# NetworkManager.conf first, then conf.d of /usr/lib, /run and /etc: a
	# later "unmanaged-devices=" replaces the value, "+=" appends to it.
	set --
	for f in "$R/etc/NetworkManager/NetworkManager.conf" "$R"/usr/lib/NetworkManager/conf.d/*.conf "$R"/run/NetworkManager/conf.d/*.conf "$R"/etc/NetworkManager/conf.d/*.conf; do
		[ -r "$f" ] && set -- "$@" "$f"
	done
	[ $# -gt 0 ] || set -- /dev/null
	fact nm.cni_unmanaged "$(awk '
		FNR == 1 { sec = "" }
		/^[ \t]*\[/ { sec = $0; gsub(/[][ \t]/, "", sec); next }
		sec == "keyfile" && /^[ \t]*unmanaged-devices[ \t]*\+?=/ {
			v = $0; add = v ~ /^[ \t]*unmanaged-devices[ \t]*\+=/
			sub(/^[^=]*=/, "", v)
			val = add ? val ";" v : v
		}
		END {
			n = split(val, d, /[;,]/)
			for (i = 1; i <= n; i++) {
				x = d[i]; gsub(/[ \t]/, "", x)
				if (x == "*" || x == "interface-name:*") cali = flannel = 1
				if (x == "interface-name:cali*" || x == "interface-name:~cali*") cali = 1
				if (x == "interface-name:flannel*" || x == "interface-name:~flannel*") flannel = 1
			}
			print cali && flannel ? "yes" : cali ? "missing-flannel" : flannel ? "missing-cali" : "no"
		}' "$@")"
else
	fact nm.installed no
	fact nm.active absent
	fact nm.cni_unmanaged absent
fi
# nm-cloud-setup rewrites the routing tables on cloud images and breaks the
# CNI's routes; RKE2 requires the service and its timer disabled.
cs=absent
for u in nm-cloud-setup.service nm-cloud-setup.timer; do
	case $(unit is-enabled "$u") in
	enabled | enabled-runtime) cs=enabled ;;
	masked) [ "$cs" = enabled ] || cs=masked ;;
	disabled) [ "$cs" = absent ] && cs=disabled ;;
	esac
done
fact nm.cloud_setup "$cs"

# The CNI is the first config in /etc/cni/net.d in lexical order, as the
# runtime picks it (libcni reads .conf, .conflist and .json). Multus goes
# first and delegates to the next one. RKE2's file names say it; the content
# is the fallback. calico-kubeconfig and multus.d hold tokens and are never
# opened: only the matched config files are.
name= file=absent multus=
for f in "$R"/etc/cni/net.d/*; do
	[ -f "$f" ] || continue
	base=${f##*/}
	case $base in
	*.conf | *.conflist | *.json) ;;
	*) continue ;;
	esac
	[ "$file" = absent ] && file=$base
	case $base in
	*multus*) multus=multus+; continue ;;
	*canal*) name=canal ;;
	*cilium*) name=cilium ;;
	*calico*) name=calico ;;
	*flannel*) name=flannel ;;
	*)
		# Canal is Calico's plugin on host-local IPAM with Flannel's VXLAN;
		# Calico proper uses calico-ipam.
		name=$(awk '
			/"type"[ \t]*:[ \t]*"multus/ { m = 1 }
			/"type"[ \t]*:[ \t]*"cilium-cni"/ { ci = 1 }
			/"type"[ \t]*:[ \t]*"calico"/ { ca = 1 }
			/"type"[ \t]*:[ \t]*"calico-ipam"/ { cipam = 1 }
			/"type"[ \t]*:[ \t]*"flannel"/ { fl = 1 }
			END { print m ? "multus" : ci ? "cilium" : ca ? (cipam ? "calico" : "canal") : fl ? "flannel" : "unknown" }' "$f")
		if [ "$name" = multus ]; then
			name= multus=multus+
			continue
		fi
		;;
	esac
	break
done
if [ -z "$name" ]; then
	name=${multus:+multus}
	name=${name:-unknown}
else
	name=$multus$name
fi
fact cni.name "$name"
fact cni.config_file "$file"
# What config.yaml asks for. That file holds the join token, so it is only
# ever matched for the one key, and what is kept is forced to CNI-name
# characters: nothing else of the file can reach the output.
cfg=$R/etc/rancher/rke2/config.yaml
if [ ! -e "$cfg" ]; then
	conf=absent
elif [ ! -r "$cfg" ]; then
	conf=unreadable
else
	if line=$(grep -E '^cni:' "$cfg"); then
		nl='
'
		line=${line%%"$nl"*}
		# A trailing "# comment" could hold anything: cut it before the
		# character filter, which would otherwise keep its letters.
		line=${line%%#*}
		conf=$(printf '%s' "${line#cni:}" | tr -cd 'a-z0-9,-' | cut -c 1-64)
		# "cni:" with a YAML list on the next lines is not followed: no
		# other line of the file is ever looked at.
		conf=${conf:-list}
		while :; do
			case $conf in
			*,*) conf=${conf%%,*}+${conf#*,} ;;
			*) break ;;
			esac
		done
	else
		conf=unset
	fi
fi
fact cni.configured "$conf"
# Cilium with kube-proxy replacement: RKE2 was started with
# disable-kube-proxy (no kube-proxy static pod) and nothing serves kube-proxy's
# health port. Any doubt (unreadable manifests) counts as kube-proxy present,
# so the bridge checks stay on.
kpr=no
case $name in
cilium | multus+cilium)
	if [ ! -e "$R/var/lib/rancher/rke2/agent/pod-manifests/kube-proxy.yaml" ] && [ -x "$R/var/lib/rancher/rke2/agent/pod-manifests" ] && [ "$kp_listen" = no ]; then
		kpr=yes
	fi
	;;
esac
fact cni.kube_proxy_replaced "$kpr"
# bridge-nf-call matters wherever kube-proxy's iptables rules must see
# bridged traffic: Canal and Flannel bridge pods on cni0; Calico's iptables
# dataplane relies on it for hostPort/portmap and multus secondary bridges,
# and RKE2 itself turns it on at start, so "off" means something reverted
# the host setup. Only Cilium without kube-proxy has no use for it.
if [ "$kpr" = yes ]; then fact cni.bridge_nf_required no; else fact cni.bridge_nf_required yes; fi
