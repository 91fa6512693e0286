package audit

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
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

// bundlePrelude runs first on the node. It finds the simulated-node stub
// directory, settles whether sudo can be used without a password (sudo -n
// never prompts, so a password-wanting sudo cannot hang the run) and defines
// fa_run, which frames one probe's output with begin/end markers and bounds
// it with timeout(1) where the node has it.
const bundlePrelude = `# fleet-audit probe bundle: read-only, fed on stdin to /bin/sh -s
# A simulated node (FLEET_AUDIT_ROOT with a bin/) puts its stubs first; one
# whose bin/ holds .only has exactly those commands, so a test never sees
# the tools of the machine it runs on.
if [ -n "${FLEET_AUDIT_ROOT:-}" ] && [ -e "$FLEET_AUDIT_ROOT/bin/.only" ]; then PATH="$FLEET_AUDIT_ROOT/bin"
elif [ -n "${FLEET_AUDIT_ROOT:-}" ] && [ -d "$FLEET_AUDIT_ROOT/bin" ]; then PATH="$FLEET_AUDIT_ROOT/bin:$PATH:/usr/local/sbin:/usr/sbin:/sbin"
else PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"
fi
export PATH
# A simulated node may also hold a library that gives its proc/sys files the
# kernel's read semantics (nodesim's procfs shim); the probes' shells load it.
if [ -n "${FLEET_AUDIT_ROOT:-}" ] && [ -r "$FLEET_AUDIT_ROOT/lib/fa-procfs.so" ]; then
	LD_PRELOAD="$FLEET_AUDIT_ROOT/lib/fa-procfs.so"
	export LD_PRELOAD
fi
fa_timeout=
if command -v timeout >/dev/null 2>&1; then fa_timeout=timeout; fi
fa_sudo=not_requested
if [ "$fa_become" = sudo ]; then
	if [ "$(id -u)" = 0 ]; then fa_sudo=root
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
echo "meta.uid=$(id -u)"
echo "meta.sudo=$fa_sudo"
echo "meta.timeout=${fa_timeout:-absent}"
echo "@@FA:$fa_n:end:_meta:0"
# fa_load is the command line of every probe's shell. The probe's text comes
# on that shell's stdin, not in its argv: Linux refuses an exec whose one
# argument exceeds MAX_ARG_STRLEN (32 pages, 128 KiB; linux
# include/uapi/linux/binfmts.h) with E2BIG, exit 126, and a bigger probe
# would fail on every node. The text is read into memory (no file is
# written on the node), stdin becomes /dev/null again as the probes expect,
# and the text runs in that shell. printf is a builtin of dash, bash and
# busybox sh, so the text is never an exec argument on the way in either.
fa_load='fa_text=$(cat) && exec </dev/null && eval "$fa_text"'
fa_run() {
	fa_id=$1 fa_t=$2 fa_root=$3
	echo "@@FA:$fa_n:begin:$fa_id"
	if [ "$fa_root" = 1 ] && [ "$fa_sudo" = ok ]; then
		set -- sudo -n $fa_sudo_as env "FLEET_AUDIT_ROOT=${FLEET_AUDIT_ROOT:-}" "PATH=$PATH" /bin/sh -c "$fa_load"
	else
		set -- /bin/sh -c "$fa_load"
	fi
	if [ -n "$fa_timeout" ]; then
		printf '%s\n' "$fa_p" | "$fa_timeout" -k 2 "$fa_t" "$@"
	else
		printf '%s\n' "$fa_p" | "$@"
	fi
	fa_rc=$?
	echo
	echo "@@FA:$fa_n:end:$fa_id:$fa_rc"
}
`

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
	var b strings.Builder
	fmt.Fprintf(&b, "fa_n=%s\nfa_become=%s\nfa_sudo_as='%s'\n", nonce, method, sudoAs)
	b.WriteString(bundlePrelude)
	lib := Library()
	for _, p := range probes {
		// A quoted here-document keeps the probe text literal: no expansion
		// happens until the probe's own shell runs it.
		fmt.Fprintf(&b, "fa_p=$(cat <<'FA_EOF_%s'\n%s\n%s\nFA_EOF_%s\n)\n", nonce, lib, p.Script, nonce)
		root := 0
		if p.NeedsRoot {
			root = 1
		}
		fmt.Fprintf(&b, "fa_run %s %d %d\n", p.ID, int(p.Timeout.Seconds()+0.999), root)
	}
	return []byte(b.String()), nil
}
