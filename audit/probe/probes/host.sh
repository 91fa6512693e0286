# id: host
# description: swap, time synchronisation, disk and inode use under /var/lib/rancher and /var/lib/kubelet, cores and load, pending reboot
# needs_root: false
# timeout: 20s
# facts: host.swap host.swap_kb host.cpus host.load1 host.load15 host.load_per_cpu time.service time.synced time.leap time.offset_ms disk.rancher.path disk.rancher.mount disk.rancher.used_pct disk.rancher.free_bytes disk.rancher.inodes_used_pct disk.kubelet.path disk.kubelet.mount disk.kubelet.used_pct disk.kubelet.inodes_used_pct host.reboot_required_file host.needs_restarting host.kernel_newest host.reboot_pending host.reboot_reason
# volatile: host.load1 host.load15 host.load_per_cpu time.offset_ms disk.rancher.used_pct disk.rancher.free_bytes disk.rancher.inodes_used_pct disk.kubelet.used_pct disk.kubelet.inodes_used_pct host.reboot_required_file host.needs_restarting host.kernel_newest host.reboot_pending host.reboot_reason
# role_scoped: host.cpus

# Servers and agents are often sized differently; within a role another
# core count is a different instance type, which is worth seeing as drift.
#
# External commands are bounded by timeout(1): a hung chronyd socket, D-Bus
# or NFS mount must not eat the whole probe's budget. One awk at the end
# reads the files, parses chronyc's answer, runs both df and prints every
# fact: the time decisions that need more commands are made before it.
to=
have timeout && to="timeout 5"

# Time synchronisation. chronyc answers only when chronyd runs, so a reply
# names the service without asking systemd. timedatectl reports the kernel's
# synchronised flag whichever daemon sets it; "show" needs systemd >= 239,
# older ones only have "status" ("NTP synchronized: yes").
svc=none synced=unknown tracking=
if have chronyc; then
	tracking=$($to chronyc -n tracking 2>/dev/null)
	case $tracking in
	*"Leap status"*)
		svc=chrony
		# The words chrony prints (client.c): awk below turns them into
		# the facts. Any other leaves the kernel's flag to timedatectl.
		l=${tracking#*"Leap status"*": "}
		case ${l%%"$fa_nl"*} in
		Normal | "Insert second" | "Delete second" | "Not synchronised") synced=chrony ;;
		esac
		;;
	*) tracking= ;;
	esac
fi
# chrony's own view wins when it answered: it is the daemon doing the work.
if [ "$synced" = unknown ] && have timedatectl; then
	td=$($to timedatectl show -p NTPSynchronized --value 2>/dev/null)
	case $td in
	yes | no) ;;
	*)
		td=$($to timedatectl status 2>/dev/null)
		case $td in
		*"System clock synchronized: "* | *"NTP synchronized: "*)
			td=${td#*" synchronized: "}
			td=${td%%"$fa_nl"*}
			;;
		esac
		;;
	esac
	case $td in yes | no) synced=$td ;; esac
fi
# One systemctl asks for every candidate: is-active prints a line per unit,
# in order (systemctl-is-active.c check_unit_generic); the first active one
# names the service.
if [ "$svc" = none ] && have systemctl; then
	states=$(systemctl is-active systemd-timesyncd ntpd ntp chronyd chrony 2>/dev/null)
	set -f
	# shellcheck disable=SC2086
	set -- $states
	set +f
	for u in timesyncd ntpd ntpd chrony chrony; do
		if [ "${1:-}" = active ]; then
			svc=$u
			break
		fi
		[ $# -gt 0 ] && shift
	done
fi

# Disk and inode use of the filesystems holding RKE2's data (images,
# containerd, etcd) and kubelet's (pods, volumes, logs); /var when a
# directory does not exist yet. One df for blocks and one for inodes, both
# paths at once; -P keeps each filesystem on one line. awk runs them with
# the paths from its environment, never spliced into their command line.
rp=/var/lib/rancher
[ -d "$R$rp" ] || rp=/var
kp=/var/lib/kubelet
[ -d "$R$kp" ] || kp=/var
df=no
have df && df=yes

# A pending reboot, from three signs, each read without changing anything:
#   /run/reboot-required (/var/run links to it), which update-notifier's
#     notify-reboot-required writes when a package (a kernel, libc,
#     systemd) asks for a reboot (Debian, Ubuntu: update-notifier-common);
#   needs-restarting -r, RHEL's dnf-utils/yum-utils: "Only report whether
#     a reboot is required (exit code 1) or not (exit code 0)" (man
#     dnf-needs-restarting(8)); run only where installed, bounded; any
#     other exit (no cache, no permission) is unknown, not "no";
#   a kernel installed newer than the running one: every kernel package
#     installs its modules under /lib/modules/<release>, so a release there
#     that sorts above the running one (uname -r, read from
#     /proc/sys/kernel/osrelease) is a kernel the next boot is meant to run.
#     The rule is simple on purpose: a kernel pinned older in the boot
#     loader, or one left after a removal, reads as pending too; awk below
#     names the release so the reader can tell.
rbfile=no
if [ -e "$R/run/reboot-required" ] || [ -e "$R/var/run/reboot-required" ]; then
	rbfile=yes
fi
rbnr=absent
if have needs-restarting; then
	if $to needs-restarting -r >/dev/null 2>&1; then
		rbnr=no
	else
		case $? in 1) rbnr=yes ;; *) rbnr=unknown ;; esac
	fi
fi
kmods=
for d in "$R"/lib/modules/*/; do
	[ -d "$d" ] || continue
	d=${d%/}
	kmods="$kmods ${d##*/}"
done

# Swap, cores and load: only readable files are read, and cpuinfo only
# when the online list is missing: it is large on big machines.
cpuinfo=
[ -r "$R/sys/devices/system/cpu/online" ] || cpuinfo=$R/proc/cpuinfo
fa_to=$to fa_rp=$R$rp fa_kp=$R$kp tracking=$tracking awk -v root="$R" -v cpuinfo="$cpuinfo" \
	-v svc="$svc" -v synced="$synced" -v rp="$rp" -v kp="$kp" -v df="$df" \
	-v rbfile="$rbfile" -v rbnr="$rbnr" -v kmods="$kmods" "$fa_awk_fact"'
# lines reads file f into a[1..n] and returns n, -1 when it cannot be read.
function lines(f, a,   n, l, r) {
	if (f == "") return -1
	n = 0
	while ((r = (getline l < f)) > 0) a[++n] = l
	close(f)
	return (r < 0 && n == 0) ? -1 : n
}
function words(s, w) { return split(s, w, " ") }
# newer(a, b) says whether kernel release a sorts above b, comparing their
# runs of digits as numbers left to right ("6.1.0-30-amd64" above
# "6.1.0-28-amd64", "5.14.0-503.el9" above "5.14.0-427.13.1.el9").
function newer(a, b,   x, y, n, m, i) {
	n = split(a, x, /[^0-9]+/); m = split(b, y, /[^0-9]+/)
	for (i = 1; i <= n && i <= m; i++) if (x[i] + 0 != y[i] + 0) return y[i] + 0 < x[i] + 0
	return m < n
}
function cores(   n, a, r, ab, i, m, cpus) {
	cpus = 0
	if (lines(root "/sys/devices/system/cpu/online", a) > 0) {
		m = split(a[1], r, ",")
		for (i = 1; i <= m; i++) {
			if (split(r[i], ab, "-") == 2) cpus += ab[2] - ab[1] + 1
			else if (r[i] ~ /^[0-9]+$/) cpus++
		}
	} else if ((n = lines(cpuinfo, a)) > 0) {
		for (i = 1; i <= n; i++) if (a[i] ~ /^processor[ \t]*:/) cpus++
	}
	return cpus
}
# df -P prints a header, then one line per path: "Filesystem 1024-blocks
# Used Available Capacity Mounted on"; -Pi the same with inodes.
function df_use(flag, used, mnt, free,   cmd, l, w, n, nf, who, p, m, i) {
	# exec: the shell awk starts becomes the command, one process fewer.
	cmd = "exec " ENVIRON["fa_to"] " df " flag " \"$fa_rp\" \"$fa_kp\" 2>/dev/null"
	n = 0
	while ((cmd | getline l) > 0) {
		nf = words(l, w)
		if (w[1] == "Filesystem" || nf < 6) continue
		n++
		who = n == 1 ? "rancher" : n == 2 ? "kubelet" : ""
		if (who == "") continue
		p = w[5]; sub(/%$/, "", p)
		# btrfs and some overlay filesystems print "-": no inode limit.
		if (p !~ /^[0-9]+$/) p = "n/a"
		used[who] = p
		# -P counts 1024-byte blocks (POSIX df -P), so Available * 1024.
		if (w[4] ~ /^[0-9]+$/) free[who] = sprintf("%.0f", w[4] * 1024)
		m = w[6]; for (i = 7; i <= nf; i++) m = m " " w[i]
		mnt[who] = m
	}
	close(cmd)
}
BEGIN {
	# /proc/swaps lists active swap devices and files under a header line.
	if ((n = lines(root "/proc/swaps", a)) > 0) {
		swaps = 0; kb = 0
		for (i = 2; i <= n; i++) if (words(a[i], w) >= 3) { swaps++; kb += w[3] }
		fact("host.swap", swaps ? "on" : "off"); fact("host.swap_kb", kb + 0)
	} else { fact("host.swap", "unknown"); fact("host.swap_kb", "unknown") }
	l1 = l15 = ""
	if (lines(root "/proc/loadavg", a) > 0) { words(a[1], w); l1 = w[1]; l15 = w[3] }
	cpus = cores()
	fact("host.cpus", cpus ? cpus : "unknown")
	fact("host.load1", l1 != "" ? l1 : "unknown")
	fact("host.load15", l15 != "" ? l15 : "unknown")
	# The 15-minute average: a sustained load, not a burst.
	fact("host.load_per_cpu", (cpus && l15 != "") ? sprintf("%.2f", l15 / cpus) : "unknown")

	# chronyc tracking: "Leap status     : Normal", "System time     :
	# 0.000012345 seconds slow of NTP time".
	leap = "absent"; off = "absent"
	if (ENVIRON["tracking"] != "") {
		leap = off = ""
		n = split(ENVIRON["tracking"], a, "\n")
		for (i = 1; i <= n; i++) {
			split(a[i], f, / *: */)
			if (f[1] == "System time") { split(f[2], w, " "); o = w[1] * 1000; if (o < 0) o = -o; off = sprintf("%.3f", o) }
			if (f[1] == "Leap status") { leap = tolower(f[2]); gsub(/ /, "-", leap) }
		}
		if (leap == "") leap = "unknown"
		if (off == "") off = "unknown"
		if (synced == "chrony") synced = (leap == "normal" || leap == "insert-second" || leap == "delete-second") ? "yes" : "no"
	}
	fact("time.service", svc)
	fact("time.synced", synced)
	fact("time.leap", leap)
	fact("time.offset_ms", off)

	# Pending reboot: each sign that says so, in the reason.
	reason = ""
	if (rbfile == "yes") reason = "reboot-required"
	if (rbnr == "yes") reason = reason (reason != "" ? "," : "") "needs-restarting"
	kn = "absent"
	if (lines(root "/proc/sys/kernel/osrelease", a) > 0) {
		run = a[1]
		n = words(kmods, w)
		for (i = 1; i <= n; i++) if (kn == "absent" || newer(w[i], kn)) kn = w[i]
		if (kn != "absent" && newer(kn, run)) reason = reason (reason != "" ? "," : "") "kernel " kn " installed, " run " running"
	} else kn = "unknown"
	fact("host.reboot_required_file", rbfile)
	fact("host.needs_restarting", rbnr)
	fact("host.kernel_newest", kn)
	fact("host.reboot_pending", reason != "" ? "yes" : "no")
	fact("host.reboot_reason", reason != "" ? reason : "none")

	fact("disk.rancher.path", rp)
	fact("disk.kubelet.path", kp)
	split("rancher kubelet", who, " ")
	if (df != "yes") {
		for (i = 1; i <= 2; i++) {
			x = who[i]
			fact("disk." x ".mount", "absent"); fact("disk." x ".used_pct", "absent"); fact("disk." x ".inodes_used_pct", "absent")
		}
		fact("disk.rancher.free_bytes", "absent")
		exit
	}
	df_use("-P", used, mnt, free)
	df_use("-Pi", ino, imnt, ifree)
	fact("disk.rancher.free_bytes", ("rancher" in free) ? free["rancher"] : "unknown")
	for (i = 1; i <= 2; i++) {
		x = who[i]
		fact("disk." x ".mount", (x in mnt) ? mnt[x] : "unknown")
		fact("disk." x ".used_pct", (x in used) ? used[x] : "unknown")
		fact("disk." x ".inodes_used_pct", (x in ino) ? ino[x] : "unknown")
	}
}' </dev/null
