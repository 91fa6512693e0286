# id: network
# description: ports RKE2 roles listen on, NetworkManager and nm-cloud-setup against the CNI, which CNI the node runs
# needs_root: false
# timeout: 15s
# facts: port.6443.listening port.9345.listening port.2379.listening port.2380.listening port.10250.listening nm.installed nm.active nm.cni_unmanaged nm.cni_devices nm.cloud_setup cni.name cni.config_file cni.configured
# volatile: nm.cni_devices
# role_scoped: port.6443.listening port.9345.listening port.2379.listening port.2380.listening
# server_only: cni.configured

# Listening TCP sockets from /proc/net/tcp{,6} (no root needed, unlike
# ss -p): state 0A is LISTEN, the port is the hex after the last ':' of
# local_address.
set --
for f in /proc/net/tcp /proc/net/tcp6; do
	[ -r "$R$f" ] && set -- "$@" "$R$f"
done
if [ $# -gt 0 ]; then
	ports=$(awk '
		FNR > 1 && $4 == "0A" { n = split($2, a, ":"); l[a[n]] = 1 }
		END {
			# 6443 kube-apiserver, 9345 rke2 supervisor, 2379/2380 etcd
			# client/peer, 10250 kubelet.
			split("6443:192B 9345:2481 2379:094B 2380:094C 10250:280A", p, " ")
			for (i = 1; i <= 5; i++) { split(p[i], d, ":"); printf "%s=%s ", d[1], (d[2] in l) ? "yes" : "no" }
		}' "$@")
else
	ports="6443=unknown 9345=unknown 2379=unknown 2380=unknown 10250=unknown"
fi
for pv in $ports; do
	fact "port.${pv%%=*}.listening" "${pv#*=}"
done

# File names are ordered as bytes, the way NetworkManager sorts its conf.d
# (strcmp) and the container runtime its CNI configs (Go's sort.Strings),
# whatever the locale of the login session.
LC_ALL=C
export LC_ALL

# NetworkManager must leave the CNI's interfaces alone (RKE2 known issues):
# one it manages gets its routes and addresses rewritten under the CNI.
# Which interfaces those are depends on the CNI, known only further down:
# this part finds which CNI interfaces NetworkManager's files and nmcli
# leave unmanaged, and the end of the probe judges them for the CNI.
# One systemctl for NetworkManager and nm-cloud-setup's units below
# (unit_states).
nm_here=
if have NetworkManager || [ -d "$R/etc/NetworkManager" ]; then
	nm_here=1
	unit_states NetworkManager nm-cloud-setup.service nm-cloud-setup.timer
else
	unit_states nm-cloud-setup.service nm-cloud-setup.timer
fi
if [ -n "$nm_here" ]; then
	fact nm.installed yes
	unit_state_of NetworkManager
	fact nm.active "$fa_ua"
	# The files in the order NetworkManager merges them (NetworkManager.conf(5);
	# src/core/nm-config.c read_entire_config()): the *.conf of
	# /usr/lib/NetworkManager/conf.d, then those of /run/NetworkManager/conf.d,
	# then NetworkManager.conf (nm-system-settings.conf instead while that
	# old name exists: read_base_config()), then /etc/NetworkManager/conf.d;
	# directory by directory, each in strcmp order of the names (hence
	# LC_ALL=C above). A name in /etc or /run shadows the /usr/lib file of
	# that name, and a name in /etc the /run one: the shadowed file is not
	# read at all, whatever the shadowing one holds. That is how netplan's
	# empty /run/NetworkManager/conf.d/10-globally-managed-devices.conf
	# cancels Ubuntu's unmanaged list. A file we may not read (this probe runs
	# unprivileged) is left out; nm.cni_devices below sees past it.
	nmd=$R/etc/NetworkManager
	lib=$R/usr/lib/NetworkManager/conf.d run=$R/run/NetworkManager/conf.d etc=$nmd/conf.d
	named() { [ -e "$1" ] || [ -L "$1" ]; }
	set --
	for f in "$lib"/*.conf; do
		named "$etc/${f##*/}" || named "$run/${f##*/}" || set -- "$@" "$f"
	done
	for f in "$run"/*.conf; do
		named "$etc/${f##*/}" || set -- "$@" "$f"
	done
	if named "$nmd/nm-system-settings.conf"; then
		set -- "$@" "$nmd/nm-system-settings.conf"
	else
		set -- "$@" "$nmd/NetworkManager.conf"
	fi
	set -- "$@" "$etc"/*.conf
	# Keep the readable files; a pattern that matched nothing stays literal.
	n=$#
	while [ "$n" -gt 0 ]; do
		f=$1
		shift
		n=$((n - 1))
		[ -f "$f" ] && [ -r "$f" ] && set -- "$@" "$f"
	done
	[ $# -gt 0 ] || set -- /dev/null
	# Each file is a GLib key file (glib/gkeyfile.c): leading blanks
	# dropped, a CR before the LF too, "#" lines are comments, "[name]"
	# opens a group (one given twice is one group), "key = value" with the
	# blanks around "=" dropped, and the last assignment of a key wins. In
	# [keyfile], "unmanaged-devices=" replaces the list, "+=" appends the
	# entries not yet in it and "-=" removes those it names, each key
	# applied where it appears with its last value (nm-config.c
	# read_config()). The list is split as nm_match_spec_split() does and
	# matched as nm_match_spec_device() does (src/core/nm-core-utils.c)
	# against one sample of each interface pattern a CNI creates (nm_cni
	# below), with the type and driver NetworkManager matches "type:" and
	# "driver:" against (NetworkManagerUtils.c
	# nm_match_spec_device_data_init_from_device: the device's type
	# description, which nm-device.c get_type_description() derives from its
	# class, "ethernet" for a veth, "vxlan", "iptunnel", "wireguard"; the
	# driver ethtool reports, "veth" and "vxlan"; for ipip and wireguard
	# devices not known here, so a "driver:" entry never matches them).
	# Calico's veths are "cali" and 11 hex digits of a hash (libcalico-go
	# VethNameForWorkload; two names, so that a glob covering only some of
	# them is not taken for all); Flannel's VXLAN device is flannel.<VNI>,
	# flannel.1 by default (flannel pkg/backend/vxlan). It prints the
	# patterns left unmanaged. A MAC, a driver version, s390 subchannels or a
	# DHCP plugin are unknown here and match nothing; [device*] sections with
	# "managed=", udev's NM_UNMANAGED, [.config] enable= conditions and
	# NetworkManager-intern.conf are not read: nm.cni_devices is the runtime
	# answer for those.
	nm_left=$(awk '
		function isspace(c) { return c == " " || c == "\t" || c == "\n" || c == "\r" || c == "\f" || c == "\v" }
		# nm_match_spec_split: "," and ";" separate, "\" escapes (\s \t
		# \n \r \\ \, \; and otherwise kept with the character), blanks
		# around an entry dropped, empty entries too. As upstream, only an
		# escape or a separator resets the count of trailing blanks.
		function specsplit(v, a,   n, i, c, cur, tws, len) {
			n = 0; cur = ""; tws = 0; len = length(v); i = 1
			while (i <= len && isspace(substr(v, i, 1))) i++
			for (; i <= len; i++) {
				c = substr(v, i, 1)
				if (c == "\\") {
					if (len < ++i) break
					c = substr(v, i, 1)
					if (c == "s") c = " "
					else if (c == "t") c = "\t"
					else if (c == "n") c = "\n"
					else if (c == "r") c = "\r"
					else if (c != "\\" && c != "," && c != ";") c = "\\" c
					cur = cur c; tws = 0
				} else if (c == "," || c == ";") {
					if (tws < length(cur)) a[++n] = substr(cur, 1, length(cur) - tws)
					cur = ""; tws = 0
					while (i < len && isspace(substr(v, i + 1, 1))) i++
				} else {
					cur = cur c
					if (isspace(c)) tws++
				}
			}
			if (tws < length(cur)) a[++n] = substr(cur, 1, length(cur) - tws)
			return n
		}
		function inlist(x, a, n,   i) {
			for (i = 1; i <= n; i++) if (a[i] == x) return 1
			return 0
		}
		function apply(op, v,   nv, nw, out, no, i) {
			nw = specsplit(v, nv)
			no = 0
			if (op != "") {
				for (i = 1; i <= ncur; i++) if (op != "-" || !inlist(cur[i], nv, nw)) out[++no] = cur[i]
			}
			for (i = 1; i <= nw; i++) if (op == "" || (op == "+" && !inlist(nv[i], cur, ncur))) out[++no] = nv[i]
			ncur = no
			for (i = 1; i <= no; i++) cur[i] = out[i]
		}
		function flush(   i) {
			for (i = 1; i <= nocc; i++) apply(substr(occ[i], 18), last[occ[i]])
			nocc = 0
		}
		# g_pattern_match_simple: "*" and "?" only, no escapes.
		function glob(p, s,   i, j, star, mark, pc) {
			i = j = 1; star = 0
			while (j <= length(s)) {
				pc = substr(p, i, 1)
				if (i <= length(p) && pc == "*") { star = i++; mark = j }
				else if (i <= length(p) && (pc == "?" || pc == substr(s, j, 1))) { i++; j++ }
				else if (star) { i = star + 1; j = ++mark }
				else return 0
			}
			while (substr(p, i, 1) == "*") i++
			return length(p) < i
		}
		# match_device_eval: tags are case-insensitive; interface-name:
		# takes "=" (exact) or "~"/nothing (a glob, or the exact name); a
		# bare entry is the exact name (or a MAC) unless under except:.
		function evalspec(s, fuzzy, name, type, drv,   l, p, pat) {
			if (s == "*") return 1
			l = tolower(s)
			if (substr(l, 1, 5) == "type:") return substr(s, 6) == type
			if (substr(l, 1, 4) == "mac:") return 0
			if (substr(l, 1, 15) == "interface-name:") {
				p = substr(s, 16); pat = 1
				if (substr(p, 1, 1) == "=") { p = substr(p, 2); pat = 0 }
				else if (substr(p, 1, 1) == "~") p = substr(p, 2)
				return p == name || (pat && glob(p, name))
			}
			if (substr(l, 1, 7) == "driver:") return drv != "" && substr(s, 8) == drv
			if (substr(l, 1, 17) == "s390-subchannels:" || substr(l, 1, 12) == "dhcp-plugin:") return 0
			return fuzzy && s == name
		}
		# nm_match_spec_device then _match_result: an except: that matches
		# wins; a list of nothing but except: entries matches every device
		# none of them names. Unmanaged means MATCH.
		function unmanaged(name, type, drv,   i, s, ex, hasex, hasnot, m, mex) {
			hasex = hasnot = m = mex = 0
			for (i = 1; i <= ncur; i++) {
				s = cur[i]
				if (s == "") continue
				ex = tolower(substr(s, 1, 7)) == "except:"
				if (ex) { s = substr(s, 8); hasex = 1 } else hasnot = 1
				if ((ex && mex) || (!ex && m)) continue
				if (!evalspec(s, !ex, name, type, drv)) continue
				if (ex) mex = 1; else m = 1
			}
			if (hasex && !hasnot) return !mex
			return !mex && m
		}
		FNR == 1 { flush(); grp = "" }
		{
			line = $0
			sub(/\r$/, "", line)
			while (line != "" && isspace(substr(line, 1, 1))) line = substr(line, 2)
		}
		line == "" || substr(line, 1, 1) == "#" { next }
		substr(line, 1, 1) == "[" {
			grp = substr(line, 2)
			sub(/\][ \t]*$/, "", grp)
			next
		}
		grp == "keyfile" && (i = index(line, "=")) > 1 {
			k = substr(line, 1, i - 1)
			sub(/[ \t\r\n\f\v]+$/, "", k)
			if (k != "unmanaged-devices" && k != "unmanaged-devices+" && k != "unmanaged-devices-") next
			v = substr(line, i + 1)
			while (v != "" && isspace(substr(v, 1, 1))) v = substr(v, 2)
			occ[++nocc] = k
			last[k] = v
		}
		END {
			flush()
			if (unmanaged("cali0123456789a", "ethernet", "veth") && unmanaged("califedcba98765", "ethernet", "veth")) printf " cali*"
			if (unmanaged("tunl0", "iptunnel", "")) printf " tunl*"
			if (unmanaged("vxlan.calico", "vxlan", "vxlan")) printf " vxlan.calico"
			if (unmanaged("vxlan-v6.calico", "vxlan", "vxlan")) printf " vxlan-v6.calico"
			if (unmanaged("wireguard.cali", "wireguard", "")) printf " wireguard.cali"
			if (unmanaged("wg-v6.cali", "wireguard", "")) printf " wg-v6.cali"
			if (unmanaged("flannel.1", "vxlan", "vxlan")) printf " flannel*"
			print ""
		}' "$@")
	# NetworkManager's own view where nmcli exists: terse output is one
	# "DEVICE:STATE" line per device, the state untranslated (nmcli(1);
	# src/nmcli/utils.c _print_do escapes a ':' inside a value, which an
	# interface name cannot hold). The end of the probe reads it.
	nm_devs=absent
	if have nmcli; then
		if have timeout; then set -- timeout 5; else set --; fi
		nm_devs=unknown
		nm_out=$("$@" nmcli -t -f DEVICE,STATE device 2>/dev/null) && nm_devs=listed
	fi
else
	fact nm.installed no
	fact nm.active absent
fi
# nm-cloud-setup rewrites the routing tables on cloud images and breaks the
# CNI's routes; RKE2 requires the service and its timer disabled.
cs=absent
for u in nm-cloud-setup.service nm-cloud-setup.timer; do
	unit_state_of "$u"
	case $fa_ue in
	enabled | enabled-runtime) cs=enabled ;;
	unknown) [ "$cs" = enabled ] || cs=unknown ;;
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
name='' file=absent multus=''
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
			name='' multus=multus+
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
# characters: nothing else of the file can reach the output. cni is a flag
# of `rke2 server` only (rancher/rke2 pkg/cli/cmds/server.go CNIFlag, not in
# agent.go's flag set), hence server_only: an agent's value is dropped and
# its CNI is judged by cni.name, what runs there.
cfg=$R/etc/rancher/rke2/config.yaml
if [ ! -e "$cfg" ]; then
	conf=absent
elif [ ! -r "$cfg" ]; then
	conf=unreadable
else
	# The first "cni:" line, read by the shell (the file is no procfs
	# file); every other line is passed over unexamined.
	line='' found=''
	while IFS= read -r l || [ -n "$l" ]; do
		case $l in
		cni:*)
			line=$l found=yes
			break
			;;
		esac
	done <"$cfg"
	if [ -n "$found" ]; then
		# A trailing "# comment" could hold anything: cut it before the
		# character filter, which would otherwise keep its letters.
		line=${line%%#*}
		line=${line#cni:}
		# Only CNI-name characters are kept, at most 64 of them.
		conf=
		while [ -n "$line" ] && [ ${#conf} -lt 64 ]; do
			c=${line%"${line#?}"}
			line=${line#?}
			case $c in
			[a-z0-9,-]) conf=$conf$c ;;
			esac
		done
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
		conf='unset'
	fi
fi
fact cni.configured "$conf"
# The interface patterns each CNI creates, the ones NetworkManager must
# leave unmanaged:
# - Calico: cali* (workload veths), tunl* (IP-in-IP), vxlan.calico and
#   vxlan-v6.calico (VXLAN), wireguard.cali and wg-v6.cali (WireGuard),
#   Calico's own list (docs.tigera.io, "Configure NetworkManager").
# - Flannel: flannel* (flannel.<VNI> for VXLAN, flannel-wg for WireGuard).
# - Canal, Calico's policy on Flannel's network: cali* and flannel*. RKE2's
#   rke2-canal.conf (rke2-docs known_issues.md) is Calico's whole list plus
#   flannel*, a superset, and the file the remediation writes.
# - Cilium: RKE2 documents nothing, and Cilium documents NetworkManager only
#   for AWS ENI devices (cilium/cilium PR #16186); the cilium*/lxc* lists
#   seen elsewhere are no upstream's. An unrecognised CNI names no
#   interfaces either. Both are "undocumented", which no check judges.
# nm.cni_unmanaged is "yes" when the files leave all of the node's CNI's
# patterns unmanaged, else "missing:" and the patterns they leave to
# NetworkManager. nm.cni_devices is what nmcli says of the interfaces of
# those patterns present now: "managed" when one is in any state but
# "unmanaged" (a [device] section with managed=, `nmcli device set X managed
# yes`, a drop-in written but never loaded: whatever the files say), "none"
# when there is none (pods come and go with their veths).
case $name in
canal | multus+canal) nm_cni="cali* flannel*" ;;
calico | multus+calico) nm_cni="cali* tunl* vxlan.calico vxlan-v6.calico wireguard.cali wg-v6.cali" ;;
flannel | multus+flannel) nm_cni="flannel*" ;;
*) nm_cni= ;;
esac
if [ -z "$nm_here" ]; then
	fact nm.cni_unmanaged absent
	fact nm.cni_devices absent
elif [ -z "$nm_cni" ]; then
	fact nm.cni_unmanaged undocumented
	fact nm.cni_devices undocumented
else
	set -f # the patterns are words here, never globs of this directory
	miss=
	for p in $nm_cni; do
		case " $nm_left " in
		*" $p "*) ;;
		*) miss=$miss${miss:+,}$p ;;
		esac
	done
	fact nm.cni_unmanaged "${miss:+missing:}${miss:-yes}"
	if [ "$nm_devs" = listed ]; then
		nm_devs=none
		while IFS= read -r l; do
			for p in $nm_cni; do
				# A NetworkManager glob ("*" and "?") is a case pattern.
				# shellcheck disable=SC2254 # unquoted, so it matches as a glob
				case ${l%%:*} in
				$p)
					if [ "${l#*:}" != unmanaged ]; then nm_devs=managed; break 2; fi
					nm_devs=unmanaged
					;;
				esac
			done
		done <<EOF
$nm_out
EOF
	fi
	set +f
	fact nm.cni_devices "$nm_devs"
fi
