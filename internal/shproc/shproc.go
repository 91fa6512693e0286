// Package shproc holds the POSIX sh functions that find and kill a process
// tree on a node through /proc. Three scripts run them: remote's kill script
// (a second session that stops a timed-out run), the probe bundle's
// watchdog (which stops a login user's probe at its timeout, and the whole
// bundle when its session is gone) and its root supervisor (which stops a
// root probe under sudo, where the login user cannot).
package shproc

// TreeFuncs defines, in POSIX sh:
//
//	fa_stat PID  reads /proc/PID/stat into fa_state, fa_ppid, fa_sid and
//	             fa_start (fields 3, 4, 6 and 22; the start time tells a
//	             reused pid apart), or returns 1 when the process is gone;
//	fa_kill PID  stops PID, kills its descendants the same way, then PID.
//
// Each process is stopped before its children are looked for, so none can
// fork past the scan. It scans /proc rather than /proc/PID/task/*/children,
// which some kernels lack. /proc/PID/stat is a seq_file, which honours read
// offsets, so the read builtin's one byte per read(2) (dash, busybox) is
// safe here. Only fa_-prefixed variables are set; fa_k and fa_q are used
// for the scan.
const TreeFuncs = `fa_stat() {
	fa_s=
	IFS= read -r fa_s 2>/dev/null <"/proc/$1/stat" || return 1
	fa_s=${fa_s##*) }
	set -- $fa_s
	fa_state=$1
	fa_ppid=$2
	fa_sid=$4
	fa_start=${20}
}
fa_kill() {
	kill -STOP "$1" 2>/dev/null
	fa_kids=
	for fa_f in /proc/[0-9]*; do
		fa_q=${fa_f#/proc/}
		if fa_stat "$fa_q" && [ "$fa_ppid" = "$1" ]; then
			fa_kids="$fa_kids $fa_q"
		fi
	done
	for fa_k in $fa_kids; do
		fa_kill "$fa_k"
	done
	kill -KILL "$1" 2>/dev/null
}
`

// RunMarkerEnv names the environment variable that tags every process a
// probe starts: each probe's shell exports it with the bundle's marker, so
// every command the probe execs carries it in /proc/PID/environ (the
// environment at exec, which neither setsid, nohup nor a change of parent
// removes). The shells of the bundle and its supervisors do not carry it,
// so a sweep never finds them.
const RunMarkerEnv = "FLEET_AUDIT_RUN"

// SweepFunc defines, in POSIX sh, fa_sweep MARKER [EXCEPT]: it kills every
// process this user may signal whose environment holds
// RunMarkerEnv=MARKER, what a probe left behind that its process tree no
// longer reaches (cmd &, setsid, nohup), except the process EXCEPT (a
// supervisor that carries the marker itself). One grep(1) reads every
// /proc/PID/environ: -z reads them as the NUL-separated entries they are
// (busybox grep's plain match would stop at the first NUL) and -x matches
// a whole entry, so one run's marker never matches another's. Processes
// that fork between the scan and the kill are found by the next round;
// three rounds bound it. Only fa_sw-prefixed variables are set.
const SweepFunc = `fa_sweep() {
	fa_swi=0
	while [ "$fa_swi" -lt 3 ]; do
		fa_swl=$(grep -l -s -z -x -F -e "` + RunMarkerEnv + `=$1" /proc/[0-9]*/environ 2>/dev/null)
		[ -n "$fa_swl" ] || return 0
		for fa_swf in $fa_swl; do
			fa_swf=${fa_swf#/proc/}
			fa_swf=${fa_swf%/environ}
			[ "$fa_swf" = "${2:-}" ] || kill -KILL "$fa_swf" 2>/dev/null
		done
		fa_swi=$((fa_swi + 1))
	done
	return 0
}
`

// OrphanFunc defines, in POSIX sh, fa_orphans SID SINCE: it kills the
// process trees (TreeFuncs' fa_kill, which it needs) of the orphans of
// session SID that started at or after SINCE (field 22 of /proc/PID/stat),
// other than the session's leader and the calling shell. An orphan is a
// process whose parent is not in the session: its parent ended and the
// kernel handed it to init or a subreaper (linux kernel/exit.c,
// forget_original_parent). That is what a subshell backgrounded inside a
// subshell becomes, ( (loop) & ): it never execs, so its environment is
// the session shell's and carries no run marker, and it is no descendant
// of the probe that started it. It cannot leave the session without
// exec'ing setsid(1) (setsid(2) is no shell builtin), and then it carries
// the marker. Every other process of a bundle has its parent in the
// session, sshd having made the session for the command alone (OpenSSH
// session.c, do_exec_no_pty: setsid in the child), so only what a probe
// left behind matches; SINCE keeps out anything older than the bundle.
//
// One cat(1) and one awk(1) read every /proc/PID/stat: the shell's read
// builtin reads a byte per read(2), a seventh of a second for 700
// processes under dash, where these take a fiftieth. awk alone would stop
// at the first process that ended since the glob (mawk, gawk and busybox
// awk all exit on a file they cannot open); cat goes on. The stat line's
// second field, the command name in parentheses, may hold spaces and
// parentheses: the fields are counted after its last ") " (the kernel
// prints only numbers and the state letter after it: linux
// fs/proc/array.c, do_task_stat). Each pid is checked again (fa_stat)
// before it is killed. Only fa_o-prefixed variables are set.
const OrphanFunc = `fa_orphans() {
	fa_ome=
	IFS= read -r fa_ome 2>/dev/null </proc/self/stat
	fa_ome=${fa_ome%% *}
	fa_ol=$(cat /proc/[0-9]*/stat 2>/dev/null | awk -v sid="$1" -v since="$2" '
		$1 ~ /^[0-9]+$/ {
			line = $0
			sub(/^.*[)] /, "", line)
			if (split(line, f, " ") < 20 || f[4] != sid || f[1] == "Z") next
			member[$1] = 1; parent[$1] = f[2]; start[$1] = f[20]
		}
		END { for (p in member) if (p != sid && !(parent[p] in member) && start[p] + 0 >= since + 0) print p }')
	for fa_op in $fa_ol; do
		[ "$fa_op" != "$fa_ome" ] || continue
		if fa_stat "$fa_op" && [ "$fa_sid" = "$1" ]; then
			fa_kill "$fa_op"
		fi
	done
	return 0
}
`
