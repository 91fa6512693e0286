package probe

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/fleet-audit/fleet-audit/internal/shproc"
	"github.com/fleet-audit/fleet-audit/internal/shquote"
	"github.com/fleet-audit/fleet-audit/internal/username"
)

// NewNonce returns the random marker that frames probe output for one run.
// A node cannot guess it, so its output cannot forge another probe's section.
func NewNonce() string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err)) // the OS entropy source is gone: nothing is safe
	}
	return hex.EncodeToString(b)
}

// rootPath is the PATH of root probes on a real node: sudo's secure_path
// (sudoers(5), Debian's and RHEL's default) rather than the login user's
// PATH, which sudo -n env PATH=... would otherwise hand to root, so a
// command planted early on the login user's PATH never runs as root.
const rootPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// aliveFunc defines fa_alive PID START, true while PID runs and is the
// process that started at START (field 22 of /proc/PID/stat, which tells a
// reused pid apart; empty without /proc). A process that has ended but not
// been reaped yet (state Z) is gone too. It needs shproc.TreeFuncs' fa_stat.
const aliveFunc = `fa_alive() {
	kill -0 "$1" 2>/dev/null || return 1
	[ -z "$2" ] && return 0
	fa_stat "$1" && [ "$fa_start" = "$2" ] && [ "$fa_state" != Z ]
}
`

// reapFunc defines fa_reap BG and fa_probe_env: a probe's subshell runs
// fa_probe_env first, which exports the run's marker (shproc.RunMarkerEnv,
// from fa_m) and sets an EXIT trap that runs fa_reap with the $! the
// subshell inherited. On the probe's exit, when it started anything in the
// background ($! changed), fa_reap kills the trees of the subshell's
// children that are still there. The marker sweep alone cannot find a
// child forked at the probe's last line that has not exec'd yet: its
// /proc/PID/environ is still the session shell's, without the marker, and
// it execs after the sweep (seen under load). A probe that started nothing
// pays no fork for it. The trap keeps the probe's exit status, and runs
// with set -e and -u off and IFS unset (the default splitting fa_stat
// needs), whatever the probe set.
const reapFunc = `fa_reap() {
	[ "${!:-}" != "$1" ] || return 0
	unset IFS
	fa_s=
	IFS= read -r fa_s 2>/dev/null </proc/self/stat || return 0
	fa_me=${fa_s%% *}
	for fa_f in /proc/[0-9]*; do
		fa_q=${fa_f#/proc/}
		if fa_stat "$fa_q" && [ "$fa_ppid" = "$fa_me" ]; then
			fa_kill "$fa_q"
		fi
	done
}
fa_probe_env() {
	` + shproc.RunMarkerEnv + `=$fa_m
	export ` + shproc.RunMarkerEnv + `
	fa_bg=${!:-}
	trap 'fa_rc=$?; set +eu; fa_reap "$fa_bg"; exit "$fa_rc"' EXIT
}
`

// rootSupervisor runs as root under sudo and runs one probe. The login user
// cannot signal root processes; sudo relays a signal to its direct child
// only, and none sent from its own or the command's process group (sudo
// src/exec_nopty.c, signal_cb_nopty: kill(cmnd_pid) unless getpgid(si_pid)
// is sudo_pid or cmnd_pid). So the login side's watchdog, which can kill
// none of root's processes, would leave the probe's children running with
// the channel open, and the remote package's kill script, which runs as
// the login user, cannot stop them either. This supervisor stops it from
// the root side instead: a watchdog kills the probe's whole process tree when the probe's timeout passes or
// when the bundle shell that started it is gone (the session was killed:
// node timeout or Ctrl-C), so no root process outlives the run and keeps the
// channel open. Arguments: timeout seconds, the bundle shell's pid and its
// start time (field 22 of /proc/PID/stat, telling a reused pid apart; empty
// without /proc), and the run's marker (shproc.RunMarkerEnv); the probe text
// comes on stdin. The probe runs in a subshell of this one, as the login
// user's probes run in the bundle's: its text is never an exec argument,
// whatever its size. sudo starts it with the marker in its environment,
// so every process forked from it carries the marker too, a subshell that
// never execs included (/proc/PID/environ is the environment at exec,
// which a fork copies). A killed probe exits 137, which the parser reads as
// a timeout; what it left outside its tree (setsid, nohup, a subshell's
// background subshell) is then swept at once, this shell excepted, and
// otherwise by the bundle's one root sweep at its end (fa_sweep_all). The probe's $$ is this shell's pid, so a probe's kill $$
// would end its own supervisor and leave it unbounded: TERM is trapped here
// (a trap with an action is reset to the default in the probe's subshell,
// POSIX 2.11 Signals and Error Handling, so the probe itself is unchanged),
// and wait, which a trapped signal interrupts, is resumed.
const rootSupervisor = `fa_t=$1 fa_w=$2 fa_ws=$3 fa_m=$4
fa_p=$(cat)
exec </dev/null
set --
` + shproc.TreeFuncs + shproc.SweepFunc + aliveFunc + reapFunc + `fa_sig=
trap 'fa_sig=1' TERM
( fa_probe_env; eval "$fa_p" ) &
fa_c=$!
fa_me=$$
(
	fa_i=0
	while :; do
		# Without sleep the loop would spin and kill the probe at once;
		# it is then unbounded, as the login user's probes are.
		sleep 1 || exit 0
		fa_i=$((fa_i + 1))
		if [ "$fa_i" -ge "$fa_t" ] || ! fa_alive "$fa_w" "$fa_ws"; then
			# Only while the probe is still this shell's child: its pid
			# may have ended and been reused since wait returned.
			if ! [ -r "/proc/$fa_c/stat" ] || { fa_stat "$fa_c" && [ "$fa_ppid" = "$fa_me" ]; }; then
				fa_kill "$fa_c"
			fi
			exit 0
		fi
	done
) </dev/null >/dev/null 2>&1 &
fa_d=$!
while :; do
	fa_sig=
	wait "$fa_c"
	fa_rc=$?
	[ -n "$fa_sig" ] || break
done
kill "$fa_d" 2>/dev/null
[ "$fa_rc" != 137 ] || fa_sweep "$fa_m" "$$"
exit "$fa_rc"
`

// watchdog bounds the login user's probes, which run in subshells of the
// bundle's shell: nothing is exec'd to start a probe, where timeout(1) and
// a shell of its own per probe cost two processes and most of a probe's
// framework time. POSIX sh has no timed read, so time reaches the watchdog
// as lines on the pipe it reads: a ticker subshell writes "tick" each
// second, and the bundle (the body, left of the pipe) writes "body PID
// START TICKER" once, then "start PID SECS" and "end PID" around each
// probe and "quit" at the end. A probe still running at the SECS+1st tick
// after its start (between SECS and SECS+1 seconds, within timeout -k 2's
// SECS to SECS+2) has its whole process tree killed (shproc's fa_kill:
// stopped first, then KILLed), and exits 137, which the parser reads as a
// timeout, as it does the root supervisor's kill. At each tick the
// watchdog also checks that the session's shell and the body still run: if
// the session was killed (node timeout, Ctrl-C: remote kills the shell, or
// its whole tree where sshd ignores the signal), or the body died (its
// channel closed under it), it kills what is left of the body, its probe
// and the ticker, so nothing of the bundle outlives the session. Without
// sleep(1) no tick comes: the probes are then unbounded (meta.timeout
// absent), as they were without timeout(1).
const watchdog = `# fa_begin, in the body: its own identity (a subshell's $$ is the bundle
# shell's), and the ticker, writing to the watchdog's pipe (fd 9) and
# holding none of the session's descriptors.
fa_begin() {
	fa_s= fa_body=
	if IFS= read -r fa_s 2>/dev/null </proc/self/stat; then
		fa_body=${fa_s%% *}
		fa_s=${fa_s##*) }
		set -- $fa_s
		fa_s=${20}
	fi
	fa_ticker </dev/null >&9 2>/dev/null 9>&- &
	fa_tk=$!
	echo "body ${fa_body:-0} ${fa_s:-0} $fa_tk" >&9
	unset fa_s
}
fa_finish() {
	echo quit >&9
	kill "$fa_tk" 2>/dev/null
	fa_sweep_all
}
fa_watch() {
	fa_cur= fa_left=0 fa_body= fa_bs= fa_tk=
	while read -r fa_ev fa_a fa_b fa_c; do
		case $fa_ev in
		body) fa_body=${fa_a#0} fa_bs=${fa_b#0} fa_tk=$fa_c ;;
		start) fa_cur=$fa_a fa_left=$((fa_b + 1)) ;;
		end) fa_cur= ;;
		quit) break ;;
		tick)
			fa_gone=
			fa_alive "$fa_self" "$fa_self_start" || fa_gone=1
			[ -z "$fa_body" ] || fa_alive "$fa_body" "$fa_bs" || fa_gone=1
			if [ -n "$fa_gone" ]; then
				if [ -n "$fa_body" ] && fa_alive "$fa_body" "$fa_bs"; then
					fa_kill "$fa_body"
				fi
				# A probe the dead body left: its pid cannot have been
				# reused within a tick, since the kernel hands pids out
				# in turn (linux kernel/pid.c, alloc_pid: idr_alloc_cyclic).
				if [ -n "$fa_cur" ] && fa_stat "$fa_cur" && [ "$fa_state" != Z ]; then
					fa_kill "$fa_cur"
				fi
				fa_root_ran=1 fa_sweep_all
				break
			fi
			[ -n "$fa_cur" ] || continue
			fa_left=$((fa_left - 1))
			[ "$fa_left" -gt 0 ] && continue
			# Only while the probe is still the body's child: it may have
			# ended and its pid been reused before its end line came.
			if ! [ -r "/proc/$fa_cur/stat" ] || { fa_stat "$fa_cur" && [ "$fa_ppid" = "$fa_body" ]; }; then
				fa_kill "$fa_cur"
				fa_sweep "$fa_m"
			fi
			fa_cur=
			;;
		esac
	done
	kill "$fa_tk" 2>/dev/null
	return 0
}
`

// tickerFunc defines fa_ticker, which writes "tick" each second until it is
// sent TERM; the watchdog and the sudo check (sudoCheck) count time by it.
// Its sleep runs in the background so that the TERM that ends the ticker
// ends it too: nothing of it is left once its reader is done.
const tickerFunc = `fa_ticker() {
	trap 'kill "$fa_sl" 2>/dev/null; exit 0' TERM
	while :; do
		sleep 1 &
		fa_sl=$!
		wait "$fa_sl" || exit 0
		echo tick
	done
}
`

// SudoCheckSeconds bounds the first sudo -n, which tells whether root
// probes can run: a sudo that waits on PAM, sssd or LDAP would otherwise
// hold the whole node, whose probes needing no root have nothing to wait
// for. A sudo -n that answers from sssd's cache takes well under a second.
const SudoCheckSeconds = 10

// sudoCheck defines fa_sudo_try, which prints sudo -n's stderr then
// "@@rc N" with its exit status, or "@@rc hung" when it has not answered
// within SudoCheckSeconds (a tick per second from fa_ticker; without
// sleep(1) no tick comes and it waits, unbounded, as the probes do). The
// hung sudo's tree is killed where the login user may (fa_kill); where it
// may not (sudo runs with a real uid of 0 around its lookups: sudo
// plugins/sudoers/set_perms.c, PERM_ROOT), it is left to end on its own,
// holding none of the session's descriptors, so the run goes on without it.
var sudoCheck = `fa_sudo_try() {
	{
		if [ "$fa_bound" = watchdog ]; then
			fa_ticker &
			echo "@@tk $!"
		fi
		{ sudo -n $fa_sudo_as true 2>&1 >/dev/null; echo "@@rc $?"; } &
		echo "@@sp $!"
	} </dev/null 2>/dev/null | {
		fa_tk= fa_sp= fa_i=0
		while IFS= read -r fa_l; do
			case $fa_l in
			"@@tk "*) fa_tk=${fa_l#@@tk } ;;
			"@@sp "*) fa_sp=${fa_l#@@sp } ;;
			"@@rc "*) echo "$fa_l"; break ;;
			tick)
				fa_i=$((fa_i + 1))
				if [ "$fa_i" -ge ` + strconv.Itoa(SudoCheckSeconds) + ` ]; then
					[ -z "$fa_sp" ] || fa_kill "$fa_sp"
					echo "@@rc hung"
					break
				fi
				;;
			*) echo "$fa_l" ;;
			esac
		done
		[ -z "$fa_tk" ] || kill "$fa_tk" 2>/dev/null
	}
}
`

// bundlePrelude runs first on the node. It finds the simulated-node stub
// directory, settles whether sudo can be used without a password (sudo -n
// never prompts, so a password-wanting sudo cannot hang the run) and defines
// fa_run, which frames one probe's output with begin/end markers and bounds
// it: with the watchdog for the login user's probes, with rootSupervisor
// for root probes run through sudo.
var bundlePrelude = `# fleet-audit probe bundle: read-only, fed on stdin to /bin/sh -s
# FLEET_AUDIT_ROOT counts only beside the key the building process gave its
# simulated nodes (probe.SimulatedNodeEnv; fa_sim is empty in a process
# without them): a real node's login environment that names it must not put
# its bin/ on root's PATH nor have root probes read its files as the node's.
if [ -z "$fa_sim" ] || [ "${` + SimulatedNodeKeyEnv + `:-}" != "$fa_sim" ]; then
	unset FLEET_AUDIT_ROOT
fi
unset ` + SimulatedNodeKeyEnv + ` fa_sim
# A simulated node (FLEET_AUDIT_ROOT with a bin/) puts its stubs first; one
# whose bin/ holds .only has exactly those commands, so a test never sees
# the tools of the machine it runs on. Root probes get a fixed system PATH,
# the stubs still first on a simulated node.
fa_root_path=` + rootPath + `
if [ -n "${FLEET_AUDIT_ROOT:-}" ] && [ -e "$FLEET_AUDIT_ROOT/bin/.only" ]; then
	PATH="$FLEET_AUDIT_ROOT/bin"
	fa_root_path=$PATH
elif [ -n "${FLEET_AUDIT_ROOT:-}" ] && [ -d "$FLEET_AUDIT_ROOT/bin" ]; then
	PATH="$FLEET_AUDIT_ROOT/bin:$PATH:/usr/local/sbin:/usr/sbin:/sbin"
	fa_root_path="$FLEET_AUDIT_ROOT/bin:$fa_root_path"
else PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"
fi
export PATH
# A simulated node may also hold a library that gives its proc/sys files the
# kernel's read semantics (nodesim's procfs shim). The probes run in this
# shell's subshells, so it must have been started with the library
# preloaded (nodesim.SessionEnv): one started without it would read those
# files as plain files and hide what the shim exists to catch, so it stops.
if [ -n "${FLEET_AUDIT_ROOT:-}" ] && [ -r "$FLEET_AUDIT_ROOT/lib/fa-procfs.so" ] &&
	[ "${LD_PRELOAD:-}" != "$FLEET_AUDIT_ROOT/lib/fa-procfs.so" ]; then
	echo "fleet-audit: the simulated node $FLEET_AUDIT_ROOT has the procfs shim, but its shell was not started with LD_PRELOAD=$FLEET_AUDIT_ROOT/lib/fa-procfs.so" >&2
	exit 125
fi
# This shell's identity, which the watchdogs (the login user's and the root
# side's) watch to stop the probe when the session is killed, and its
# session, whose orphans fa_sweep_all kills.
fa_self=$$ fa_self_start= fa_self_sid=
if IFS= read -r fa_s 2>/dev/null </proc/$$/stat; then
	fa_s=${fa_s##*) }
	set -- $fa_s
	fa_self_sid=$4
	fa_self_start=${20}
	set --
fi
unset fa_s
fa_sup=` + shquote.Quote(rootSupervisor) + `
fa_bound=absent
if command -v sleep >/dev/null 2>&1; then fa_bound=watchdog; fi
# The login user's uid, asked once: is_root (_lib.sh) reads it from the
# environment instead of forking id(1) in every probe. A root probe run
# through sudo is another user, so fa_run hands it fa_uid empty: it asks
# id(1) itself, once.
fa_uid=$(id -u)
export fa_uid
` + shproc.TreeFuncs + shproc.SweepFunc + shproc.OrphanFunc + aliveFunc + reapFunc + tickerFunc + sudoCheck + `fa_sudo=not_requested
if [ "$fa_become" = sudo ]; then
	if [ "$fa_uid" = 0 ]; then fa_sudo=root
	elif ! command -v sudo >/dev/null 2>&1; then fa_sudo=absent
	else
		fa_e=$(fa_sudo_try)
		# sudo's own wording, stable since 1.7: requiretty refuses before it
		# would ask, so the two need different fixes.
		case $fa_e in
		*"@@rc 0") fa_sudo=ok ;;
		*"@@rc hung") fa_sudo=timeout ;;
		*"must have a tty"*|*requiretty*) fa_sudo=requiretty ;;
		*) fa_sudo=password_required ;;
		esac
	fi
	unset fa_e
fi
echo "@@FA:$fa_n:begin:_meta"
echo "meta.uid=$fa_uid"
echo "meta.sudo=$fa_sudo"
echo "meta.timeout=$fa_bound"
echo "@@FA:$fa_n:end:_meta:0"
# fa_sweep_all kills what the probes left outside their trees, the login
# user's and, when a root probe ran through sudo, root's (one sudo for the
# whole bundle rather than a sweep per root probe). The login user's
# subshells that never exec'd carry no marker: they are the session's
# orphans. Root's all carry it, the supervisor having been started with it.
fa_root_ran= fa_swsup=` + shquote.Quote(shproc.SweepFunc+`fa_sweep "$1"`) + `
fa_sweep_all() {
	fa_sweep "$fa_m"
	[ -z "$fa_self_sid" ] || fa_orphans "$fa_self_sid" "$fa_self_start"
	if [ -n "$fa_root_ran" ] && [ "$fa_sudo" = ok ]; then
		sudo -n $fa_sudo_as env "PATH=$fa_root_path" /bin/sh -c "$fa_swsup" fa_sweep "$fa_m" </dev/null >/dev/null 2>&1 9>&-
	fi
}
# A probe's kill $$ signals this shell (a subshell's $$ is its parent's):
# trapped, it ends nothing, and the probe's subshell, where a trap with an
# action is reset to the default (POSIX 2.11), is unchanged. Only TERM,
# kill's default: the transports stop a session with KILL.
trap : TERM
` + watchdog + `# A login user's probe runs in a subshell of the body with its stdin
# /dev/null (never the bundle's, which is the session's script) and
# without the watchdog's pipe; it sees no positional parameters and not the
# nonce. Its text is never an exec argument, so its size is bounded by
# MaxProbeScriptBytes alone.
fa_run() {
	fa_id=$1 fa_t=$2 fa_root=$3
	echo "@@FA:$fa_n:begin:$fa_id"
	if [ "$fa_root" = 1 ] && [ "$fa_sudo" = ok ]; then
		fa_root_ran=1
		{ printf '%s\n' "$fa_p" | sudo -n $fa_sudo_as env "FLEET_AUDIT_ROOT=${FLEET_AUDIT_ROOT:-}" "PATH=$fa_root_path" fa_uid= "` + shproc.RunMarkerEnv + `=$fa_m" \
			/bin/sh -c "$fa_sup" fa_sup "$fa_t" "$fa_self" "$fa_self_start" "$fa_m"; } 9>&-
		fa_rc=$?
	else
		( unset fa_n; set --; fa_probe_env; eval "$fa_p" ) </dev/null 9>&- &
		fa_c=$!
		echo "start $fa_c $fa_t" >&9
		wait "$fa_c"
		fa_rc=$?
		echo "end $fa_c" >&9
	fi
	echo
	echo "@@FA:$fa_n:end:$fa_id:$fa_rc"
}
# The body (the probes) writes to the session's stdout, kept here as fd 8,
# and to the watchdog on fd 9; the watchdog holds none of the session's
# descriptors, so it never keeps the channel open.
exec 8>&1
`

// bundleOpen and bundleClose enclose the probes: the body, whose lines to
// the watchdog reach it through the pipe between them. The body is parsed
// whole before it runs.
const (
	bundleOpen  = "{\nfa_begin\n"
	bundleClose = "fa_finish\n} 9>&1 >&8 8>&- | fa_watch >/dev/null 2>&1 8>&-\n"
)

// Become is how probes that need root get it on a node.
type Become struct {
	// Method is "" (run as the login user) or "sudo".
	Method string
	// User is sudo's -u user; "" means root.
	User string
}

// BuildBundle writes one shell program that runs every probe in order, so a
// node is audited in a single session (one round-trip): BundleHead's lines
// for the node, then BundleBody. Only probes with NeedsRoot run under sudo.
// Nothing else from the inventory is ever part of the text: the inserted
// values are the nonce, the simulated-node key, probe ids and timeouts, all
// made or validated by this package, and become.User, which must match
// username.CheckBecome (inventory validates it; an error here is a bug).
func BuildBundle(probes []Probe, become Become, nonce string) ([]byte, error) {
	head, err := BundleHead(become, nonce)
	if err != nil {
		return nil, err
	}
	return append(head, BundleBody(probes)...), nil
}

// BundleHead is the first lines of a bundle: all that differs between the
// nodes of a run (the nonce, its run marker, how to become root), so that
// one BundleBody serves every node.
func BundleHead(become Become, nonce string) ([]byte, error) {
	method := "none"
	if become.Method == "sudo" {
		method = "sudo"
	}
	sudoAs := ""
	if become.User != "" {
		// The only inventory value that reaches the bundle's text: held
		// to a shape in which no character means anything to a shell.
		if err := username.CheckBecome(become.User); err != nil {
			return nil, err
		}
		sudoAs = "-u " + become.User
	}
	return fmt.Appendf(nil, "fa_n=%s\nfa_m=%s\nfa_become=%s\nfa_sudo_as='%s'\nfa_sim=%s\n", nonce, RunMarker(nonce), method, sudoAs, bundleSimKey()), nil
}

// BundleBody is the rest of the bundle that runs probes, after BundleHead:
// the same for every node, so a run builds it once and sends the one copy
// to every node (it is most of the bundle, about 360 KB with every
// built-in probe).
func BundleBody(probes []Probe) []byte {
	lib := Library()
	// Single quotes keep the probe text literal: no expansion happens
	// until the probe's own shell runs it, and assigning it forks nothing
	// (a here-document in $(cat) would).
	quoted := make([]string, len(probes))
	size := len(bundlePrelude) + len(bundleOpen) + len(bundleClose)
	for i, p := range probes {
		quoted[i] = quotedProbe(lib, p.Script)
		size += 64 + len(p.ID) + len(quoted[i])
	}
	var b bytes.Buffer
	b.Grow(size)
	b.WriteString(bundlePrelude)
	b.WriteString(bundleOpen)
	for i, p := range probes {
		root := 0
		if p.NeedsRoot {
			root = 1
		}
		fmt.Fprintf(&b, "fa_p=%s\nfa_run %s %d %d\n", quoted[i], p.ID, int(p.Timeout.Seconds()+0.999), root)
	}
	b.WriteString(bundleClose)
	return b.Bytes()
}

// quotedProbe is the text a probe's subshell runs, the library then the
// script, as one single-quoted word for the bundle.
func quotedProbe(lib, script string) string {
	return shquote.Quote(lib + "\n" + script + "\n")
}

// RunMarker is the value of shproc.RunMarkerEnv for the bundle framed by
// nonce: a probe sees it, so it is derived one way from the nonce, which a
// probe must never learn (it could forge another probe's section).
func RunMarker(nonce string) string {
	sum := sha256.Sum256([]byte("fleet-audit run marker\x00" + nonce))
	return hex.EncodeToString(sum[:8])
}
