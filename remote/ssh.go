package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"
)

// remoteCommand is the only command line ever sent to a node. The script
// travels on stdin, so nothing from the inventory reaches a remote shell's
// parser.
const remoteCommand = "/bin/sh -s"

const (
	defaultConnectTimeout    = 10 * time.Second
	defaultKeepAliveInterval = 15 * time.Second
	// defaultKeepAliveCountMax is how many intervals may pass without an
	// answer before the connection is declared dead, as OpenSSH's
	// ServerAliveCountMax.
	defaultKeepAliveCountMax = 3
	// defaultRetries is how many more times a transient dial failure is
	// tried; sshd's MaxStartups drops come in bursts that pass in well
	// under a second.
	defaultRetries = 2
	// retryBackoff is the wait before the first retry; it doubles for each
	// one after.
	retryBackoff = 200 * time.Millisecond
	// closeWait bounds Close's wait for the connection's goroutines.
	closeWait = 5 * time.Second
)

// SSHOptions configures an SSHDialer. Zero fields take the defaults noted.
type SSHOptions struct {
	// ConnectTimeout bounds the TCP dial, SSH handshake and authentication
	// together, through every jump host of a node. Default 10s.
	ConnectTimeout time.Duration
	// AgentSocket is the ssh-agent socket tried before identity files; ""
	// means no agent. The command fills it from SSH_AUTH_SOCK.
	AgentSocket string
	// Logger traces every dial step (--debug): TCP or tunnel, handshake,
	// host key, the keys offered; nil traces nothing. It never carries key
	// material or passphrases, only paths and fingerprints.
	Logger *slog.Logger
	// DefaultIdentityFiles are tried for targets and hops that name no
	// identity file; nil means the package's DefaultIdentityFiles (ssh's),
	// an empty non-nil list none.
	DefaultIdentityFiles []string
	// DefaultKnownHosts is used for targets and hops without
	// KnownHostsFiles. Default ~/.ssh/known_hosts.
	DefaultKnownHosts []string
	// KeepAliveInterval is how often an open connection, to a node or a
	// jump host, sends keepalive@openssh.com; after KeepAliveCountMax
	// unanswered in a row the connection is closed and a running script
	// fails with ErrConnectionLost. Default 15s.
	KeepAliveInterval time.Duration
	// KeepAliveCountMax is how many keepalives may go unanswered in a row
	// before the connection is declared lost. Default 3.
	KeepAliveCountMax int
	// HostKeyPolicy applies to targets that set none, and to every jump
	// host. Default strict.
	HostKeyPolicy HostKeyPolicy
	// Passphrase is asked for encrypted identity files whose target names
	// no PassphraseEnv, or whose variable is unset; nil means never ask.
	Passphrase PassphraseFunc
	// Retries is how many more times a dial that failed transiently (reset
	// or closed during the handshake) is tried, with backoff, within the
	// same ConnectTimeout. Default 2; negative means none.
	Retries int
}

// SSHDialer dials nodes over SSH, verifying host keys under the host-key
// policy (strict unless the caller chose otherwise; a key accepted without
// verification is reported through HostKeyNoter). Create it with
// NewSSHDialer; it is safe for concurrent use.
//
// Nodes behind the same ProxyJump hops share one connection to each hop
// for the dialer's lifetime; Close ends them.
//
// Its runs prefix the script's first line with a statement that reports the
// shell's pid on stderr (stripped from Output.Stderr), so a run that must be
// stopped can be killed even where sshd ignores signal requests, as OpenSSH
// does for root logins; see sshkill.go.
type SSHDialer struct {
	opts    SSHOptions
	retries int
	hops    hopCache
	known   knownHostsCache

	hopNotesMu sync.Mutex
	hopNotes   map[string]string // see HopHostKeyNotes
}

var _ Dialer = (*SSHDialer)(nil)

// NewSSHDialer returns a dialer with o's zero fields set to their defaults.
func NewSSHDialer(o SSHOptions) *SSHDialer {
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = defaultConnectTimeout
	}
	if o.KeepAliveInterval <= 0 {
		o.KeepAliveInterval = defaultKeepAliveInterval
	}
	if o.KeepAliveCountMax <= 0 {
		o.KeepAliveCountMax = defaultKeepAliveCountMax
	}
	if len(o.DefaultKnownHosts) == 0 {
		o.DefaultKnownHosts = []string{filepath.Join("~", ".ssh", "known_hosts")}
	}
	retries := o.Retries
	switch {
	case retries == 0:
		retries = defaultRetries
	case retries < 0:
		retries = 0
	}
	d := &SSHDialer{opts: o, retries: retries}
	d.hops.init()
	return d
}

// Close ends the dialer's connections to jump hosts, which ends every node
// connection tunnelled through them, and waits, boundedly, for hop dials
// still in flight. Dial fails after Close. Node connections are the
// caller's to close, before this.
func (d *SSHDialer) Close() error {
	return d.hops.close()
}

// endpoint is one SSH server to authenticate to: a node or a jump host.
type endpoint struct {
	where          string // "ssh node (user@host:port)" or "jump host ...", for messages
	addr           string // host:port, the name known_hosts is searched for
	user           string
	identityFiles  []string
	knownHosts     []string // expanded
	identitiesOnly bool
	passphraseEnv  string
	policy         HostKeyPolicy
	proxyCommand   string // "" for TCP (or a tunnel through a hop)
}

func (d *SSHDialer) knownHosts(files []string) []string {
	if len(files) == 0 {
		files = d.opts.DefaultKnownHosts
	}
	expanded := make([]string, len(files))
	for i, f := range files {
		expanded[i] = expandHome(f)
	}
	return expanded
}

func (d *SSHDialer) nodeEndpoint(t Target) endpoint {
	addr := hostPort(t.Address, t.Port)
	userName := t.User
	if userName == "" {
		userName = currentUser()
	}
	where := fmt.Sprintf("ssh %s@%s", userName, addr)
	if t.Name != "" {
		where = fmt.Sprintf("ssh %s (%s@%s)", t.Name, userName, addr)
	}
	if t.ProxyCommand != "" {
		where += " via ProxyCommand"
	}
	if len(t.Jumps) > 0 {
		names := make([]string, len(t.Jumps))
		for i, h := range t.Jumps {
			names[i] = h.label()
		}
		where += " via " + strings.Join(names, ",")
	}
	policy := t.HostKeyPolicy
	if policy == HostKeyDefault {
		policy = d.opts.HostKeyPolicy
	}
	return endpoint{
		where:          where,
		addr:           addr,
		user:           userName,
		identityFiles:  t.IdentityFiles,
		knownHosts:     d.knownHosts(t.KnownHostsFiles),
		identitiesOnly: t.IdentitiesOnly,
		passphraseEnv:  t.PassphraseEnv,
		policy:         policy,
		proxyCommand:   t.ProxyCommand,
	}
}

// budget is what bounds one dial: parent is the caller's context, ctx adds
// the connect timeout to it.
type budget struct {
	parent   context.Context
	ctx      context.Context
	deadline time.Time
	timeout  time.Duration
}

// Dial connects, through the target's jump hosts if any, verifies the host
// key and authenticates, all within the connect timeout and ctx. Its errors
// wrap ErrUnreachable, ErrConnectTimeout, ErrHostKeyUnknown,
// ErrHostKeyMismatch or ErrAuthFailed, and also ctx's error when ctx ended
// the dial. When a jump host failed they wrap ErrJumpFailed as well, and
// the sentinel then describes the jump host, not the node.
func (d *SSHDialer) Dial(ctx context.Context, t Target) (Conn, error) {
	ep := d.nodeEndpoint(t)
	fail := func(err error) (Conn, error) { return nil, fmt.Errorf("%s: %w", ep.where, err) }
	if t.Address == "" {
		return fail(fmt.Errorf("%w: no address to dial", ErrUnreachable))
	}
	if d.hops.isClosed() {
		return fail(fmt.Errorf("%w: the dialer is closed", ErrUnreachable))
	}

	timeout := d.opts.ConnectTimeout
	if t.ConnectTimeout > 0 {
		timeout = t.ConnectTimeout
	}
	dialCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	deadline, _ := dialCtx.Deadline()
	b := budget{parent: ctx, ctx: dialCtx, deadline: deadline, timeout: timeout}

	interval, countMax := d.opts.KeepAliveInterval, d.opts.KeepAliveCountMax
	if t.KeepAliveInterval > 0 {
		interval = t.KeepAliveInterval
	}
	if t.KeepAliveCountMax > 0 {
		countMax = t.KeepAliveCountMax
	}

	// A hop connection found dead only when used is dialled again once;
	// a second loss in a row is reported, not chased.
	for tries := 0; ; tries++ {
		var via *sshConn
		if len(t.Jumps) > 0 {
			var err error
			if via, err = d.hop(b, t.Jumps); err != nil {
				return fail(err)
			}
		}
		client, note, err := d.connect(b, ep, via)
		if errors.Is(err, errHopLost) && tries == 0 {
			d.hops.forget(via)
			continue
		}
		if err != nil {
			return fail(err)
		}
		c := startConn(ep.where, client, via, interval, countMax, false)
		c.hostKeyNote = note
		return c, nil
	}
}

// connect opens a transport to ep, directly or through via, and
// authenticates, retrying transient failures with backoff within b.
//
// The note says how the host key was trusted when it was not simply found
// in known_hosts: recorded now (accept-new) or not verified at all
// (insecure-ignore). The report must show it.
func (d *SSHDialer) connect(b budget, ep endpoint, via *sshConn) (*ssh.Client, string, error) {
	client, hk, err := d.connectKeys(b, ep, via)
	if err != nil {
		return nil, "", err
	}
	note := ""
	if ignored := hk.ignoredMismatch(); ignored != nil {
		note = "host key NOT verified (host-key policy insecure-ignore): " + ignored.Error()
	} else if file := hk.learnedIn(); file != "" {
		note = "host key seen for the first time, trusted and recorded in " + file + " (host-key policy accept-new)"
	}
	return client, note, nil
}

func (d *SSHDialer) connectKeys(b budget, ep endpoint, via *sshConn) (*ssh.Client, *hostKeys, error) {
	set, err := d.known.get(ep.knownHosts)
	if err != nil {
		return nil, nil, err
	}
	hk := set.hostKeys(ep.addr, ep.policy)
	hk.onLearn = d.known.learned
	auth := newAuthPlan(b.deadline, d.opts.AgentSocket, d.defaultIdentities(), ep.identityFiles, ep.identitiesOnly, ep.passphraseEnv, d.opts.Passphrase)
	defer auth.close()
	if !auth.usable() {
		return nil, nil, fmt.Errorf("%w: no usable key: %s; load a key into ssh-agent or configure an identity file",
			ErrAuthFailed, auth.noKeyReason())
	}
	for attempt := 0; ; attempt++ {
		client, transient, err := d.attempt(b, ep, via, hk, auth)
		if err == nil || !transient {
			return client, hk, err
		}
		if attempt >= d.retries {
			if attempt > 0 {
				err = fmt.Errorf("%w (tried %d times)", err, attempt+1)
			}
			return nil, nil, err
		}
		wait := backoff(attempt)
		if time.Until(b.deadline) <= wait {
			return nil, nil, fmt.Errorf("%w (tried %d times; no time left for another within %s)", err, attempt+1, b.timeout)
		}
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-b.ctx.Done():
			timer.Stop()
			return nil, nil, err
		}
	}
}

// backoff is the wait before retry n+1: retryBackoff doubled n times, with
// a quarter of jitter either way so nodes dropped together do not come back
// together.
func backoff(n int) time.Duration {
	d := retryBackoff << n
	return d*3/4 + rand.N(d/2)
}

// attempt is one transport and handshake. transient says the failure is
// worth retrying: the server closed or reset the connection before proving
// its host key, as sshd does to connections beyond MaxStartups. A refusal,
// a timeout, a host key or an authentication failure is not.
func (d *SSHDialer) attempt(b budget, ep endpoint, via *sshConn, hk *hostKeys, auth *authPlan) (*ssh.Client, bool, error) {
	log := d.logger().With("target", ep.where)
	viaName := ""
	if via != nil {
		viaName = via.where
	}
	if ep.proxyCommand != "" && via == nil {
		// As ssh -v says "Executing proxy command".
		viaName = "ProxyCommand " + ep.proxyCommand
	}
	log.Debug("dial", "address", ep.addr, "user", ep.user, "via", viaName, "known_hosts", strings.Join(ep.knownHosts, ","), "host_key_policy", ep.policy.String())
	started := time.Now()
	raw, err := d.transport(b, ep, via)
	if err != nil {
		log.Debug("dial failed", "error", err, "after", time.Since(started).Round(time.Millisecond))
		return nil, false, err
	}
	log.Debug("connected", "local", raw.LocalAddr().String(), "after", time.Since(started).Round(time.Millisecond))

	// ClientConfig.Timeout covers only the TCP dial, and a tunnelled
	// connection has no deadlines at all: closing the connection when
	// the budget ends is what bounds a peer that accepts and never
	// speaks, and a slow auth. The deadline, where it works, turns the
	// same event into a plain timeout error.
	_ = raw.SetDeadline(b.deadline)
	stopClose := context.AfterFunc(b.ctx, func() { _ = raw.Close() })
	cfg := &ssh.ClientConfig{
		User:              ep.user,
		Auth:              []ssh.AuthMethod{ssh.PublicKeysCallback(auth.getSigners)},
		HostKeyCallback:   hk.check,
		HostKeyAlgorithms: hk.algorithms(),
	}
	// addr, not the connection's address, names the server: through a
	// tunnel the remote address is 0.0.0.0:0.
	sc, chans, reqs, err := ssh.NewClientConn(raw, ep.addr, cfg)
	closed := !stopClose()
	if err != nil {
		if proxy, ok := raw.(*proxyConn); ok {
			if perr := proxyError(b, proxy, hk); perr != nil {
				_ = raw.Close()
				log.Debug("handshake failed", "error", perr)
				return nil, false, perr
			}
		}
		_ = raw.Close()
		if b.ctx.Err() != nil && b.parent.Err() == nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			err = fmt.Errorf("%w (closed at the deadline): %w", os.ErrDeadlineExceeded, err)
		}
		transient := b.ctx.Err() == nil && !hk.verified.Load() && hk.failed() == nil && droppedEarly(err)
		err = handshakeError(b.parent, err, hk, auth, ep.user, b.timeout)
		log.Debug("handshake failed", "host_key_verified", hk.verified.Load(), "auth", auth.summary(), "retry", transient, "error", err)
		return nil, transient, err
	}
	if closed {
		_ = sc.Close()
		if b.parent.Err() != nil {
			return nil, false, fmt.Errorf("%w: %w", ErrConnectTimeout, b.parent.Err())
		}
		return nil, false, fmt.Errorf("%w: authentication did not finish within %s", ErrConnectTimeout, b.timeout)
	}
	_ = raw.SetDeadline(time.Time{})
	log.Debug("authenticated", "server", string(sc.ServerVersion()), "host_key_verified", hk.verified.Load(), "auth", auth.summary(), "after", time.Since(started).Round(time.Millisecond))
	return ssh.NewClient(sc, chans, reqs), false, nil
}

// tooManyAuthFailures reports the disconnect a server sends when a client
// reaches MaxAuthTries: OpenSSH's auth_maxtries_exceeded (auth.c) sends
// "Too many authentication failures", x/crypto's server "too many
// authentication failures". x/crypto keeps its disconnect error type
// unexported, so only the text tells.
func tooManyAuthFailures(err error) bool {
	return strings.Contains(strings.ToLower(err.Error()), "disconnect") &&
		strings.Contains(strings.ToLower(err.Error()), "too many authentication failures")
}

// droppedEarly reports an error of a connection the server closed or reset.
func droppedEarly(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// transport opens the byte stream to ep: a TCP connection, the stdio of
// ep's ProxyCommand, or a channel through the jump host via.
func (d *SSHDialer) transport(b budget, ep endpoint, via *sshConn) (net.Conn, error) {
	if via == nil && ep.proxyCommand != "" {
		return startProxy(ep.proxyCommand)
	}
	if via == nil {
		var nd net.Dialer
		raw, err := nd.DialContext(b.ctx, "tcp", ep.addr)
		if err != nil {
			return nil, dialError(b.parent, err, b.timeout)
		}
		return raw, nil
	}
	raw, err := via.client.DialContext(b.ctx, "tcp", ep.addr)
	if err != nil {
		return nil, tunnelError(b, via, ep.addr, err)
	}
	return raw, nil
}

// dialError maps a failed TCP dial to a sentinel and a hint.
func dialError(parent context.Context, err error, timeout time.Duration) error {
	if parent.Err() != nil {
		return fmt.Errorf("%w: %w", ErrConnectTimeout, parent.Err())
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && !dnsErr.IsTimeout {
		return fmt.Errorf("%w: cannot resolve %q: %w; check the node's address", ErrUnreachable, dnsErr.Name, err)
	}
	var netErr net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()) {
		return fmt.Errorf("%w: no TCP connection within %s; check that the node is up and no firewall drops SSH traffic: %w",
			ErrConnectTimeout, timeout, err)
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("%w: connection refused; check that sshd is running and the port is right: %w", ErrUnreachable, err)
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return fmt.Errorf("%w: no route to host; check the node's address and network: %w", ErrUnreachable, err)
	}
	return fmt.Errorf("%w: %w", ErrUnreachable, err)
}

// handshakeError maps a failed SSH handshake to a sentinel. x/crypto reports
// most failures as plain strings, so the phase the handshake reached (host
// key verified or not) decides between a protocol and an auth problem.
func handshakeError(parent context.Context, err error, hk *hostKeys, auth *authPlan, userName string, timeout time.Duration) error {
	if hkErr := hk.failed(); hkErr != nil {
		return hkErr
	}
	if parent.Err() != nil {
		return fmt.Errorf("%w: %w", ErrConnectTimeout, parent.Err())
	}
	if strings.Contains(err.Error(), "no common algorithm for host key") {
		// Only the recorded key types were offered, so the server has
		// none of them any more: its host keys were replaced.
		if mismatch := hk.typeMismatch(); mismatch != nil {
			return mismatch
		}
	}
	var netErr net.Error
	if errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()) {
		if !hk.verified.Load() {
			return fmt.Errorf("%w: the port accepted TCP but no SSH handshake finished within %s; check that sshd, not another service, listens there: %w",
				ErrConnectTimeout, timeout, err)
		}
		return fmt.Errorf("%w: authentication did not finish within %s (%s): %w",
			ErrConnectTimeout, timeout, auth.summary(), err)
	}
	if strings.Contains(err.Error(), "unable to authenticate") {
		return fmt.Errorf("%w: the server accepted no key for user %q (%s); add the public key of one of them to that user's authorized_keys on the node",
			ErrAuthFailed, userName, auth.summary())
	}
	if hk.verified.Load() && tooManyAuthFailures(err) {
		return fmt.Errorf("%w: the server closed the connection after too many authentication failures (sshd's MaxAuthTries) for user %q (%s); "+
			"put a key the node accepts among the first it is offered (IdentityFile order, IdentitiesOnly, fewer agent keys): %w",
			ErrAuthFailed, userName, auth.summary(), err)
	}
	if hk.verified.Load() {
		// OpenSSH drops the connection after MaxAuthTries rejected keys.
		return fmt.Errorf("%w: the server closed the connection during authentication of user %q (%s); too many keys in the agent can exceed MaxAuthTries: %w",
			ErrAuthFailed, userName, auth.summary(), err)
	}
	return fmt.Errorf("%w: the port accepted TCP but the SSH handshake failed; check that sshd listens there: %w", ErrUnreachable, err)
}

func currentUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return os.Getenv("USER")
}

// sshConn is one authenticated connection; every Run is a new session on it.
type sshConn struct {
	where  string
	client *ssh.Client
	via    *sshConn // the jump host the connection is tunnelled through, or nil

	closeOnce sync.Once
	done      chan struct{} // closed by Close
	// dead is closed when the transport is gone, for any reason, by a
	// goroutine that waits for it: a jump host's connection has one, as
	// the nodes behind it ask isDead; a node's, used once and closed,
	// has none (nil).
	dead chan struct{}
	wg   sync.WaitGroup

	mu   sync.Mutex
	lost error // why the connection died under us, if we know

	keepAlive keepAlive

	hostKeyNote string // see connect; set before the conn is returned
}

// HostKeyNote says how the node's host key was trusted when known_hosts
// alone did not vouch for it, or "".
func (c *sshConn) HostKeyNote() string { return c.hostKeyNote }

func (c *sshConn) Run(ctx context.Context, s Script) (Output, error) {
	select {
	case <-c.done:
		return Output{ExitCode: -1}, fmt.Errorf("%s: %w: connection already closed", c.where, ErrConnectionLost)
	default:
	}
	out, err := supervise(ctx, s, newSSHExec(c, s.RunMarker))
	if err != nil {
		return out, fmt.Errorf("%s: %w", c.where, err)
	}
	return out, nil
}

// Close ends the connection and waits, boundedly, for its goroutines.
func (c *sshConn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		close(c.done)
		c.keepAlive.stop()
		// A tunnelled connection that is already closed says io.EOF
		// where TCP says net.ErrClosed.
		if cerr := c.client.Close(); cerr != nil && !errors.Is(cerr, net.ErrClosed) && !errors.Is(cerr, io.EOF) {
			err = fmt.Errorf("%s: close: %w", c.where, cerr)
		}
	})
	if c.dead != nil {
		waitTimeout(&c.wg, closeWait)
	}
	return err
}

// markLost closes the transport after recording why, so the error of the
// session it interrupts can say.
func (c *sshConn) markLost(reason error) {
	c.mu.Lock()
	if c.lost == nil {
		c.lost = reason
	}
	c.mu.Unlock()
	_ = c.client.Close()
}

// lostReason says why the connection died, or why the jump host it went
// through did, which takes its tunnels with it.
func (c *sshConn) lostReason() error {
	c.mu.Lock()
	lost := c.lost
	c.mu.Unlock()
	if lost == nil && c.via != nil {
		if reason := c.via.lostReason(); reason != nil {
			return fmt.Errorf("%s: %w", c.via.where, reason)
		}
	}
	return lost
}

// isDead reports whether the transport is gone; only for a connection
// started with watch.
func (c *sshConn) isDead() bool {
	select {
	case <-c.dead:
		return true
	default:
		return false
	}
}

// startConn wraps an authenticated client and starts its keepalives. With
// watch, a goroutine also waits for the transport to end, for isDead.
//
// Nothing else runs per connection until a keepalive is due: a node's
// connection lives for one bundle, usually well under the interval, and
// a goroutine and a ticker each would wake the process for every node of
// the fleet (issue 31).
func startConn(where string, client *ssh.Client, via *sshConn, interval time.Duration, countMax int, watch bool) *sshConn {
	c := &sshConn{
		where:  where,
		client: client,
		via:    via,
		done:   make(chan struct{}),
	}
	if watch {
		c.dead = make(chan struct{})
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			_ = c.client.Wait()
			close(c.dead)
		}()
	}
	c.keepAlive.start(c, interval, countMax)
	return c
}

// keepAlive detects a peer that vanished without closing TCP, which would
// otherwise hold a run until its timeout and a connection forever, as
// OpenSSH's ServerAliveInterval and ServerAliveCountMax do (ssh_config(5)).
// Only one request is in flight at a time; each interval it stays
// unanswered counts as a miss, and countMax misses in a row close the
// connection. It is a timer, not a goroutine: nothing runs before the
// first interval passes.
type keepAlive struct {
	conn     *sshConn
	interval time.Duration
	countMax int

	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
	pending bool // a request awaits its answer
	misses  int
}

func (k *keepAlive) start(c *sshConn, interval time.Duration, countMax int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.conn, k.interval, k.countMax = c, interval, countMax
	k.timer = time.AfterFunc(interval, k.tick)
}

// stop ends the keepalives; an answer still awaited is dropped.
func (k *keepAlive) stop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.stopped = true
	if k.timer != nil {
		k.timer.Stop()
	}
}

func (k *keepAlive) tick() {
	k.mu.Lock()
	if k.stopped {
		k.mu.Unlock()
		return
	}
	if k.pending {
		k.misses++
		lost := k.misses >= k.countMax
		if lost {
			k.stopped = true
		} else {
			k.timer.Reset(k.interval)
		}
		k.mu.Unlock()
		if lost {
			k.conn.markLost(fmt.Errorf("no answer to %d keepalives sent %s apart", k.countMax, k.interval))
		}
		return
	}
	defer k.mu.Unlock()
	k.pending = true
	// SendRequest cannot be cancelled; it returns once the answer
	// arrives or the transport closes.
	go func() {
		_, _, err := k.conn.client.SendRequest("keepalive@openssh.com", true, nil)
		k.mu.Lock()
		defer k.mu.Unlock()
		k.pending = false
		if err != nil {
			// The transport is gone: nothing left to watch.
			k.stopped = true
			k.timer.Stop()
			return
		}
		k.misses = 0
	}()
	k.timer.Reset(k.interval)
}

// sshExec is one session running the script.
type sshExec struct {
	conn   *sshConn
	ended  chan struct{} // closed when run returns
	marker string        // Script.RunMarker

	mu      sync.Mutex
	session *ssh.Session
	killed  bool
	pid     *remotePID // reported by the prelude, if it ran
}

func newSSHExec(c *sshConn, marker string) *sshExec {
	return &sshExec{conn: c, ended: make(chan struct{}), marker: marker}
}

func (e *sshExec) run(prefix, stdin []byte, stdout, stderr io.Writer) (int, error) {
	defer close(e.ended)
	sess, err := e.conn.client.NewSession()
	if err != nil {
		return -1, e.lostError("open session", err)
	}
	e.mu.Lock()
	if e.killed {
		e.mu.Unlock()
		_ = sess.Close()
		return -1, errors.New("stopped before start")
	}
	e.session = sess
	e.mu.Unlock()
	defer sess.Close()

	sniffer := &pidSniffer{dst: stderr, found: func(p remotePID) {
		e.mu.Lock()
		e.pid = &p
		e.mu.Unlock()
	}}
	sess.Stdout = stdout
	sess.Stderr = sniffer
	// A pipe rather than Session.Stdin: Wait would report a script that
	// exits without reading all its stdin as a failed copy.
	in, err := sess.StdinPipe()
	if err != nil {
		return -1, fmt.Errorf("stdin pipe: %w", err)
	}
	if err := sess.Start(remoteCommand); err != nil {
		if errors.Is(err, io.EOF) {
			return -1, e.lostError("start "+remoteCommand, err)
		}
		return -1, fmt.Errorf("the server refused to run %s: %w", remoteCommand, err)
	}
	// The write ends when the script has read it all or the channel
	// closes; its error only says the script did not read everything.
	go func() {
		// The prelude, then the script: written in turn rather than
		// joined, which would copy the whole bundle for every node.
		if _, err := io.WriteString(in, pidPrelude); err == nil {
			if _, err := in.Write(prefix); err == nil {
				_, _ = in.Write(stdin)
			}
		}
		_ = in.Close()
	}()

	err = sess.Wait()
	_ = sniffer.flush()
	var exitErr *ssh.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &exitErr):
		return exitErr.ExitStatus(), nil
	default:
		return -1, e.lostError("session ended without an exit status", err)
	}
}

func (e *sshExec) lostError(what string, err error) error {
	if reason := e.conn.lostReason(); reason != nil {
		return fmt.Errorf("%w: %s: %w (%w)", ErrConnectionLost, what, reason, err)
	}
	return fmt.Errorf("%w: %s: %w", ErrConnectionLost, what, err)
}

func (e *sshExec) kill() {
	e.mu.Lock()
	e.killed = true
	sess := e.session
	e.mu.Unlock()
	if sess == nil {
		return
	}
	// Signal first: once the channel is closed the request cannot be sent.
	_ = sess.Signal(ssh.SIGKILL)
	// Even a signal that ended the shell ended only the shell (sshd sends
	// it to the session's process: OpenSSH session.c, session_signal_req),
	// so the kill script runs either way, for what the shell left.
	await(e.ended, signalGrace)
	e.mu.Lock()
	pid := e.pid
	e.mu.Unlock()
	if pid != nil {
		e.killTree(*pid)
	}
	_ = sess.Close()
}

// abandon closes the whole connection: a session that does not end after
// being killed and closed means the transport itself is stuck.
func (e *sshExec) abandon() {
	e.conn.markLost(errors.New("a killed session did not close"))
}

// waitTimeout waits for wg up to d. Goroutines still running after d are
// left to finish on their own; the caller must not wait forever on them.
func waitTimeout(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	return await(done, d)
}

func (d *SSHDialer) defaultIdentities() []string {
	if d.opts.DefaultIdentityFiles != nil {
		return d.opts.DefaultIdentityFiles
	}
	return DefaultIdentityFiles
}

func (d *SSHDialer) logger() *slog.Logger {
	if d.opts.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return d.opts.Logger
}
