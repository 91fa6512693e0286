# id: host
# description: swap, time synchronisation, disk and inode use under /var/lib/rancher and /var/lib/kubelet, cores and load
# needs_root: false
# timeout: 20s
# facts: host.swap host.swap_kb host.cpus host.load1 host.load15 host.load_per_cpu time.service time.synced time.leap time.offset_ms disk.rancher.path disk.rancher.mount disk.rancher.used_pct disk.rancher.inodes_used_pct disk.kubelet.path disk.kubelet.mount disk.kubelet.used_pct disk.kubelet.inodes_used_pct
# volatile: host.load1 host.load15 host.load_per_cpu time.offset_ms disk.rancher.used_pct disk.rancher.inodes_used_pct disk.kubelet.used_pct disk.kubelet.inodes_used_pct
# role_scoped: host.cpus

# Servers and agents are often sized differently; within a role another
# core count is a different instance type, which is worth seeing as drift.
#
# b CMD... bounds one external command: a hung chronyd socket, D-Bus or NFS
# mount must not eat the whole probe's budget.
b() {
	if have timeout; then timeout 5 "$@"; else "$@"; fi
}
emit() {
	while read -r k v; do fact "$k" "$v"; done
}

# Swap, cores and load in one awk. Only readable files are passed (mawk
# stops at the first missing one), and cpuinfo only when the online list is
# missing: it is large on big machines.
set --
for f in /proc/swaps /proc/loadavg /sys/devices/system/cpu/online; do
	[ -r "$R$f" ] && set -- "$@" "$R$f"
done
[ -r "$R/sys/devices/system/cpu/online" ] || { [ -r "$R/proc/cpuinfo" ] && set -- "$@" "$R/proc/cpuinfo"; }
[ $# -gt 0 ] || set -- /dev/null
awk '
	FILENAME ~ /\/proc\/swaps$/ { seen_swaps = 1; if (FNR > 1 && NF >= 3) { swaps++; kb += $3 }; next }
	FILENAME ~ /\/proc\/loadavg$/ { l1 = $1; l15 = $3; next }
	FILENAME ~ /\/cpu\/online$/ {
		n = split($0, r, ",")
		for (i = 1; i <= n; i++) {
			if (split(r[i], ab, "-") == 2) cpus += ab[2] - ab[1] + 1
			else if (r[i] ~ /^[0-9]+$/) cpus++
		}
		next
	}
	FILENAME ~ /\/proc\/cpuinfo$/ && /^processor[ \t]*:/ { cpus++ }
	END {
		# /proc/swaps lists active swap devices and files under a header line.
		if (seen_swaps) { print "host.swap", (swaps ? "on" : "off"); print "host.swap_kb", kb + 0 }
		else { print "host.swap unknown"; print "host.swap_kb unknown" }
		print "host.cpus", (cpus ? cpus : "unknown")
		print "host.load1", (l1 != "" ? l1 : "unknown")
		print "host.load15", (l15 != "" ? l15 : "unknown")
		# The 15-minute average: a sustained load, not a burst.
		if (cpus && l15 != "") printf "host.load_per_cpu %.2f\n", l15 / cpus
		else print "host.load_per_cpu unknown"
	}' "$@" | emit

# Time synchronisation. chronyc answers only when chronyd runs, so a reply
# names the service without asking systemd. timedatectl reports the kernel's
# synchronised flag whichever daemon sets it; "show" needs systemd >= 239,
# older ones only have "status" ("NTP synchronized: yes").
svc=none synced=unknown leap=absent off=absent
if have chronyc; then
	tr_out=$(b chronyc -n tracking 2>/dev/null)
	case $tr_out in
	*"Leap status"*)
		svc=chrony
		set -- $(printf '%s\n' "$tr_out" | awk -F' *: *' '
			# "System time     : 0.000012345 seconds slow of NTP time"
			$1 == "System time" { split($2, w, " "); o = w[1] * 1000; if (o < 0) o = -o; off = sprintf("%.3f", o) }
			$1 == "Leap status" { l = tolower($2); gsub(/ /, "-", l) }
			END { print (l != "" ? l : "unknown"), (off != "" ? off : "unknown") }')
		leap=$1 off=$2
		case $leap in
		normal | insert-second | delete-second) synced=yes ;;
		not-synchronised) synced=no ;;
		esac
		;;
	esac
fi
# chrony's own view wins when it answered: it is the daemon doing the work.
if [ "$synced" = unknown ] && have timedatectl; then
	td=$(b timedatectl show -p NTPSynchronized --value 2>/dev/null)
	case $td in
	yes | no) ;;
	*) td=$(b timedatectl status 2>/dev/null | awk -F': *' '/(System clock|NTP) synchronized/ { print $2; exit }') ;;
	esac
	case $td in yes | no) synced=$td ;; esac
fi
if [ "$svc" = none ] && have systemctl; then
	for u in systemd-timesyncd:timesyncd ntpd:ntpd ntp:ntpd chronyd:chrony chrony:chrony; do
		if [ "$(systemctl is-active "${u%%:*}" 2>/dev/null)" = active ]; then
			svc=${u#*:}
			break
		fi
	done
fi
fact time.service "$svc"
fact time.synced "$synced"
fact time.leap "$leap"
fact time.offset_ms "$off"

# Disk and inode use of the filesystems holding RKE2's data (images,
# containerd, etcd) and kubelet's (pods, volumes, logs); /var when a
# directory does not exist yet. One df for blocks and one for inodes, both
# paths at once; -P keeps each filesystem on one line.
rp=/var/lib/rancher
[ -d "$R$rp" ] || rp=/var
kp=/var/lib/kubelet
[ -d "$R$kp" ] || kp=/var
fact disk.rancher.path "$rp"
fact disk.kubelet.path "$kp"
if have df; then
	{
		b df -P "$R$rp" "$R$kp" 2>/dev/null
		echo @inodes
		b df -Pi "$R$rp" "$R$kp" 2>/dev/null
	} | awk '
		$0 == "@inodes" { inodes = 1; n = 0; next }
		$1 == "Filesystem" { next }
		NF >= 6 {
			n++
			who = n == 1 ? "rancher" : n == 2 ? "kubelet" : ""
			if (who == "") next
			p = $5; sub(/%$/, "", p)
			# btrfs and some overlay filesystems print "-": no inode limit.
			if (p !~ /^[0-9]+$/) p = "n/a"
			if (inodes) ino[who] = p
			else {
				used[who] = p
				m = $6; for (i = 7; i <= NF; i++) m = m " " $i
				mnt[who] = m
			}
		}
		END {
			split("rancher kubelet", w, " ")
			for (i = 1; i <= 2; i++) {
				x = w[i]
				print "disk." x ".mount", (x in mnt ? mnt[x] : "unknown")
				print "disk." x ".used_pct", (x in used ? used[x] : "unknown")
				print "disk." x ".inodes_used_pct", (x in ino ? ino[x] : "unknown")
			}
		}' | emit
else
	for x in rancher kubelet; do
		fact "disk.$x.mount" absent
		fact "disk.$x.used_pct" absent
		fact "disk.$x.inodes_used_pct" absent
	done
fi
