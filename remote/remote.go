package remote

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Target is everything needed to reach one node. It is filled from the
// inventory by the caller; remote never reads the inventory itself.
type Target struct {
	// Name is the inventory name, used in messages only.
	Name string
	// Address and Port are dialled; Address may be a hostname or an IP.
	Address string
	Port    int
	User    string
	// IdentityFiles are private keys tried after the agent, in order;
	// none means DefaultIdentityFiles, as with ssh.
	IdentityFiles []string
	// KnownHostsFiles are checked for the host key; an empty list means the
	// user's ~/.ssh/known_hosts.
	KnownHostsFiles []string
	// Local runs the script on this machine with /bin/sh and no SSH.
	Local bool

	// Jumps are the ProxyJump hops, the first dialled first; the node is
	// reached through the last one. Empty means a direct connection.
	Jumps []Hop
	// ProxyCommand, when set, is run on this machine by the shell and the
	// SSH stream goes over its stdin and stdout instead of a TCP
	// connection, as with ssh_config's ProxyCommand. It is already
	// expanded (no %h left); a Target with Jumps has none.
	ProxyCommand string
	// IdentitiesOnly offers only IdentityFiles, never the agent's other
	// keys, as ssh_config's IdentitiesOnly.
	IdentitiesOnly bool
	// PassphraseEnv names the environment variable that holds the
	// passphrase of encrypted IdentityFiles; "" means none.
	PassphraseEnv string
	// HostKeyPolicy overrides the dialer's policy for this node when set.
	HostKeyPolicy HostKeyPolicy
	// ConnectTimeout overrides the dialer's ConnectTimeout when positive.
	ConnectTimeout time.Duration
	// KeepAliveInterval and KeepAliveCountMax override the dialer's
	// keepalive settings when positive (ServerAliveInterval/CountMax).
	KeepAliveInterval time.Duration
	KeepAliveCountMax int
}

// Hop is one ProxyJump host on the way to a node.
type Hop struct {
	// Name is the hop as the user wrote it ("bastion", "ops@bastion:2222"),
	// used in messages and to share one connection among the nodes behind
	// the same hop.
	Name            string
	Address         string
	Port            int
	User            string
	IdentityFiles   []string
	KnownHostsFiles []string
	IdentitiesOnly  bool
	// ProxyCommand reaches the first hop of a chain as Target's does;
	// later hops are reached through the hop before them.
	ProxyCommand string
}

// HostKeyPolicy says what to do with a host key known_hosts does not vouch
// for. The zero value is the dialer's default.
type HostKeyPolicy int

const (
	// HostKeyDefault takes the dialer's policy (Strict unless set).
	HostKeyDefault HostKeyPolicy = iota
	// HostKeyStrict refuses unknown and changed keys.
	HostKeyStrict
	// HostKeyAcceptNew records an unknown key in the first known_hosts file
	// and refuses a changed one, as OpenSSH's StrictHostKeyChecking=accept-new.
	HostKeyAcceptNew
	// HostKeyInsecureIgnore accepts any key. Reports must say so loudly.
	HostKeyInsecureIgnore
)

var hostKeyPolicyNames = map[HostKeyPolicy]string{
	HostKeyDefault: "default", HostKeyStrict: "strict", HostKeyAcceptNew: "accept-new", HostKeyInsecureIgnore: "insecure-ignore",
}

func (p HostKeyPolicy) String() string {
	if n, ok := hostKeyPolicyNames[p]; ok {
		return n
	}
	return fmt.Sprintf("HostKeyPolicy(%d)", int(p))
}

// ParseHostKeyPolicy reads a --host-key-policy value: strict, accept-new or
// insecure-ignore.
func ParseHostKeyPolicy(s string) (HostKeyPolicy, error) {
	for p, n := range hostKeyPolicyNames {
		if n == s && p != HostKeyDefault {
			return p, nil
		}
	}
	return HostKeyDefault, fmt.Errorf("host key policy %q: want strict, accept-new or insecure-ignore", s)
}

// PassphraseFunc returns the passphrase of an encrypted private key file,
// e.g. by asking on the terminal. It is called at most once per file per
// dialer; an error means no passphrase is available.
type PassphraseFunc func(keyFile string) ([]byte, error)

// Script is one program fed to `/bin/sh -s` on the node over stdin, so no
// value from the inventory is ever part of a remote command line.
type Script struct {
	// Prefix then Stdin are the program. Prefix is what differs between
	// runs that send one Stdin, so many runs can share it (fleet-audit's
	// probe bundle: a few lines per node, then the same 360 KB); the two
	// are written in turn, never joined.
	Prefix []byte
	Stdin  []byte
	// Timeout bounds the whole run; when it passes the remote process is
	// signalled and the session closed, and Run returns ErrRunTimeout with
	// the output read so far.
	Timeout time.Duration
	// MaxOutput caps the bytes of stdout kept; a node printing more gets its
	// session closed and Run returns ErrOutputTruncated with the first
	// MaxOutput bytes. Zero means DefaultMaxOutput.
	MaxOutput int64
	// RunMarker, when set, is the value of shproc.RunMarkerEnv that the
	// script gives the processes it starts (letters and digits only). A
	// stopped run then also kills every process whose environment holds
	// it, which reaches what left the script's process tree and session
	// (setsid). Empty: only the tree and the session are killed.
	RunMarker string
}

// DefaultMaxOutput bounds what one node's run may print.
const DefaultMaxOutput = 4 << 20

// Output is what a run produced. It is valid, possibly partial, even when Run
// returns an error.
type Output struct {
	Stdout []byte
	// Stderr is capped at a small size; it is for diagnostics only.
	Stderr []byte
	// ExitCode is the script's exit status (128+N when it died of signal
	// N). It is -1 when Run returns an error because the script was
	// stopped or never reported a status.
	ExitCode  int
	Truncated bool
	Duration  time.Duration
}

// Conn is an open connection to one node. Run may be called several times;
// every call is one session on the same connection.
type Conn interface {
	Run(ctx context.Context, s Script) (Output, error)
	Close() error
}

// HostKeyNoter is implemented by connections whose host key was trusted
// other than by known_hosts (accept-new, insecure-ignore); HostKeyNote says
// how, or returns "".
type HostKeyNoter interface {
	HostKeyNote() string
}

// Dialer opens connections. Dial honours ctx and its own connect timeout for
// the TCP dial, the SSH handshake and authentication together.
type Dialer interface {
	Dial(ctx context.Context, t Target) (Conn, error)
}

// Sentinel errors. Every error returned by Dial or Run wraps at most one of
// them, plus ErrJumpFailed when the one describes a failed jump host rather
// than the node, so the caller maps errors to node statuses with errors.Is
// (ErrJumpFailed first).
var (
	ErrUnreachable     = errors.New("unreachable")
	ErrConnectTimeout  = errors.New("connect timeout")
	ErrAuthFailed      = errors.New("authentication failed")
	ErrHostKeyUnknown  = errors.New("host key unknown")
	ErrHostKeyMismatch = errors.New("host key mismatch")
	ErrRunTimeout      = errors.New("run timed out")
	ErrOutputTruncated = errors.New("output truncated")
	ErrConnectionLost  = errors.New("connection lost")
	// ErrJumpFailed wraps the error of a ProxyJump hop, which wraps its
	// own cause (unreachable, host key, auth...) in turn.
	ErrJumpFailed = errors.New("jump host failed")
)
