// Package shproc holds the POSIX sh functions that find and kill a process
// tree on a node through /proc. Three scripts run them: remote's kill script
// (a second session that stops a timed-out run), the probe bundle's
// watchdog (which stops a login user's probe at its timeout, and the whole
// bundle when its session is gone) and its root supervisor (which stops a
// root probe under sudo, where the login user cannot).
package shproc

// TreeFuncs defines, in POSIX sh:
//
//	fa_stat PID  reads /proc/PID/stat into fa_state, fa_ppid and fa_start
//	             (fields 3, 4 and 22; the start time tells a reused pid
//	             apart), or returns 1 when the process is gone;
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

// SweepFunc defines, in POSIX sh, fa_sweep MARKER: it kills every process
// this user may signal whose environment holds RunMarkerEnv=MARKER, what a
// probe left behind that its process tree no longer reaches (cmd &, setsid,
// nohup). One grep(1) reads every /proc/PID/environ: -z reads them as the
// NUL-separated entries they are (busybox grep's plain match would stop at
// the first NUL) and -x matches a whole entry, so one run's marker never
// matches another's. Processes that fork between the scan and the kill are
// found by the next round; three rounds bound it. Only fa_sw-prefixed
// variables are set.
const SweepFunc = `fa_sweep() {
	fa_swi=0
	while [ "$fa_swi" -lt 3 ]; do
		fa_swl=$(grep -l -s -z -x -F -e "` + RunMarkerEnv + `=$1" /proc/[0-9]*/environ 2>/dev/null)
		[ -n "$fa_swl" ] || return 0
		for fa_swf in $fa_swl; do
			fa_swf=${fa_swf#/proc/}
			kill -KILL "${fa_swf%/environ}" 2>/dev/null
		done
		fa_swi=$((fa_swi + 1))
	done
	return 0
}
`
