package probe

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"sync"

	"github.com/fleet-audit/fleet-audit/internal/shproc"
	"github.com/fleet-audit/fleet-audit/internal/shquote"
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

// rootSupervisor runs as root under sudo and runs one probe. The login user
// cannot signal root processes; sudo relays a signal to its direct child
// only, and none sent from its own or the command's process group (sudo
// src/exec_nopty.c, signal_cb_nopty: kill(cmnd_pid) unless getpgid(si_pid)
// is sudo_pid or cmnd_pid). So timeout(1) on the login side, whose kill of
// its process group cannot reach root's, leaves the probe's children running
// with the channel open, and the remote package's kill script, which runs as
// the login user, cannot stop them either. This supervisor stops it from the root side instead: a watchdog
// kills the probe's whole process tree when the probe's timeout passes or
// when the bundle shell that started it is gone (the session was killed:
// node timeout or Ctrl-C), so no root process outlives the run and keeps the
// channel open. Arguments: timeout seconds, the bundle shell's pid and its
// start time (field 22 of /proc/PID/stat, telling a reused pid apart; empty
// without /proc), then fa_load; the probe text comes on stdin. A killed
// probe exits 137, which the parser reads as a timeout, as it does
// timeout -s KILL's.
const rootSupervisor = `fa_t=$1 fa_w=$2 fa_ws=$3 fa_load=$4
fa_p=$(cat)
exec </dev/null
set --
` + shproc.TreeFuncs + `# A killed bundle shell its parent has not reaped yet (state Z) is gone too.
fa_alive() {
	kill -0 "$fa_w" 2>/dev/null || return 1
	[ -z "$fa_ws" ] && return 0
	fa_stat "$fa_w" && [ "$fa_start" = "$fa_ws" ] && [ "$fa_state" != Z ]
}
# The probe's text goes to its shell on stdin, never in an argv (see
# fa_load); $! is the pid of that shell, the pipeline's last command.
printf '%s\n' "$fa_p" | /bin/sh -c "$fa_load" &
fa_c=$!
fa_me=$$
(
	fa_i=0
	while :; do
		# Without sleep the loop would spin and kill the probe at once;
		# it is then unbounded, as under a login without timeout(1).
		sleep 1 || exit 0
		fa_i=$((fa_i + 1))
		if [ "$fa_i" -ge "$fa_t" ] || ! fa_alive; then
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
wait "$fa_c"
fa_rc=$?
kill "$fa_d" 2>/dev/null
exit "$fa_rc"
`

// bundlePrelude runs first on the node. It finds the simulated-node stub
// directory, settles whether sudo can be used without a password (sudo -n
// never prompts, so a password-wanting sudo cannot hang the run) and defines
// fa_run, which frames one probe's output with begin/end markers and bounds
// it: with timeout(1) where the node has it for the login user's probes, with
// rootSupervisor for root probes run through sudo.
var bundlePrelude = `# fleet-audit probe bundle: read-only, fed on stdin to /bin/sh -s
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
# kernel's read semantics (nodesim's procfs shim); the probes' shells load it.
if [ -n "${FLEET_AUDIT_ROOT:-}" ] && [ -r "$FLEET_AUDIT_ROOT/lib/fa-procfs.so" ]; then
	LD_PRELOAD="$FLEET_AUDIT_ROOT/lib/fa-procfs.so"
	export LD_PRELOAD
fi
# This shell's identity, which the root side watches to stop its probe when
# the session is killed.
fa_self=$$ fa_self_start=
if IFS= read -r fa_s 2>/dev/null </proc/$$/stat; then
	fa_s=${fa_s##*) }
	set -- $fa_s
	fa_self_start=${20}
	set --
fi
unset fa_s
fa_sup=` + shquote.Quote(rootSupervisor) + `
fa_timeout=
if command -v timeout >/dev/null 2>&1; then fa_timeout=timeout; fi
# The login user's uid, asked once: is_root (_lib.sh) reads it from the
# environment instead of forking id(1) in every probe. A root probe run
# through sudo is another user, so fa_run hands it fa_uid empty: it asks
# id(1) itself, once.
fa_uid=$(id -u)
export fa_uid
fa_sudo=not_requested
if [ "$fa_become" = sudo ]; then
	if [ "$fa_uid" = 0 ]; then fa_sudo=root
	elif ! command -v sudo >/dev/null 2>&1; then fa_sudo=absent
	elif fa_e=$(sudo -n $fa_sudo_as true 2>&1 </dev/null >/dev/null); then fa_sudo=ok
	else
		# sudo's own wording, stable since 1.7: requiretty refuses before it
		# would ask, so the two need different fixes.
		case $fa_e in
		*"must have a tty"*|*requiretty*) fa_sudo=requiretty ;;
		*) fa_sudo=password_required ;;
		esac
	fi
	unset fa_e
fi
echo "@@FA:$fa_n:begin:_meta"
echo "meta.uid=$fa_uid"
echo "meta.sudo=$fa_sudo"
echo "meta.timeout=${fa_timeout:-absent}"
echo "@@FA:$fa_n:end:_meta:0"
# A probe's text is the argument of its shell's -c (fa_via=argv): no
# process is spent handing it over. Linux refuses an exec whose one
# argument exceeds MAX_ARG_STRLEN (32 pages, 128 KiB; linux
# include/uapi/linux/binfmts.h) with E2BIG, exit 126, so a bigger probe
# (a user's, up to MaxProbeScriptBytes) comes on its shell's stdin instead
# (fa_via=stdin): fa_load reads it into memory (no file is written on the
# node), stdin becomes /dev/null again as the probes expect, and the text
# runs in that shell. printf is a builtin of dash, bash and busybox sh, so
# the text is never an exec argument on the way in either. Either way the
# probe's stdin is never the bundle's, which is the session's script.
fa_load='fa_text=$(cat) && exec </dev/null && eval "$fa_text"'
fa_run() {
	fa_id=$1 fa_t=$2 fa_root=$3 fa_via=$4
	echo "@@FA:$fa_n:begin:$fa_id"
	if [ "$fa_root" = 1 ] && [ "$fa_sudo" = ok ]; then
		printf '%s\n' "$fa_p" | sudo -n $fa_sudo_as env "FLEET_AUDIT_ROOT=${FLEET_AUDIT_ROOT:-}" "PATH=$fa_root_path" fa_uid= \
			/bin/sh -c "$fa_sup" fa_sup "$fa_t" "$fa_self" "$fa_self_start" "$fa_load"
	else
		set -- /bin/sh -c
		if [ "$fa_via" = argv ]; then set -- "$@" "$fa_p"; else set -- "$@" "$fa_load"; fi
		if [ -n "$fa_timeout" ]; then set -- "$fa_timeout" -k 2 "$fa_t" "$@"; fi
		if [ "$fa_via" = argv ]; then
			"$@" </dev/null
		else
			printf '%s\n' "$fa_p" | "$@"
		fi
	fi
	fa_rc=$?
	echo
	echo "@@FA:$fa_n:end:$fa_id:$fa_rc"
}
`

// maxArgBytes is Linux's MAX_ARG_STRLEN, the longest single argument an
// exec accepts, its terminating NUL included (32 pages of 4 KiB; linux
// include/uapi/linux/binfmts.h).
const maxArgBytes = 32 * 4096

// Become is how probes that need root get it on a node.
type Become struct {
	// Method is "" (run as the login user) or "sudo".
	Method string
	// User is sudo's -u user; "" means root.
	User string
}

// becomeUserPattern is a portable user name (POSIX, as useradd accepts):
// the only inventory value that reaches the bundle's text, so it is held to
// a shape in which no character means anything to a shell.
var becomeUserPattern = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,31}$`)

// BuildBundle writes one shell program that runs every probe in order, so a
// node is audited in a single session (one round-trip). Only probes with
// NeedsRoot run under sudo. Nothing else from the inventory is ever part of
// the text: the inserted values are the nonce, probe ids and timeouts, all
// validated by this package, and become.User, which must match
// becomeUserPattern (inventory validates it; an error here is a bug).
func BuildBundle(probes []Probe, become Become, nonce string) ([]byte, error) {
	method := "none"
	if become.Method == "sudo" {
		method = "sudo"
	}
	sudoAs := ""
	if become.User != "" {
		if !becomeUserPattern.MatchString(become.User) {
			return nil, fmt.Errorf("become_user %q is not a portable user name", become.User)
		}
		sudoAs = "-u " + become.User
	}
	lib := Library()
	// Single quotes keep the probe text literal: no expansion happens
	// until the probe's own shell runs it, and assigning it forks nothing
	// (a here-document in $(cat) would).
	quoted := make([]probeText, len(probes))
	size := 64 + len(nonce) + len(sudoAs) + len(bundlePrelude)
	for i, p := range probes {
		quoted[i] = quotedProbe(lib, p.Script)
		size += 64 + len(p.ID) + len(quoted[i].word)
	}
	// Sized once: grown by doubling it allocated four times its length,
	// for every node of the fleet.
	var b bytes.Buffer
	b.Grow(size)
	fmt.Fprintf(&b, "fa_n=%s\nfa_become=%s\nfa_sudo_as='%s'\n", nonce, method, sudoAs)
	b.WriteString(bundlePrelude)
	for i, p := range probes {
		via := "argv"
		if quoted[i].size >= maxArgBytes {
			via = "stdin"
		}
		root := 0
		if p.NeedsRoot {
			root = 1
		}
		fmt.Fprintf(&b, "fa_p=%s\nfa_run %s %d %d %s\n", quoted[i].word, p.ID, int(p.Timeout.Seconds()+0.999), root, via)
	}
	return b.Bytes(), nil
}

// quotedTexts memoises quotedProbe by script: every node of a run is sent
// the same probes, and quoting them anew cost three copies of the bundle
// per node. lib is the embedded Library, the same on every call, so the
// script alone is the key.
var quotedTexts sync.Map // script → probeText

// probeText is the text a probe's shell runs, the library then the script:
// its size, which decides whether it fits in an argument, and the text as
// one single-quoted word for the bundle.
type probeText struct {
	size int
	word string
}

// quotedProbe is the library and a probe's script as the text its shell
// runs.
func quotedProbe(lib, script string) probeText {
	if q, ok := quotedTexts.Load(script); ok {
		return q.(probeText)
	}
	text := lib + "\n" + script + "\n"
	q := probeText{size: len(text), word: shquote.Quote(text)}
	quotedTexts.Store(script, q)
	return q
}
