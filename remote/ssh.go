package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
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
	// keepAliveMisses is how many intervals may pass without an answer
	// before the connection is declared dead, as OpenSSH's
	// ServerAliveCountMax.
	keepAliveMisses = 3
	// closeWait bounds Close's wait for the connection's goroutines.
	closeWait = 5 * time.Second
)

// SSHOptions configures an SSHDialer. Zero fields take the defaults noted.
type SSHOptions struct {
	// ConnectTimeout bounds the TCP dial, SSH handshake and authentication
	// together. Default 10s.
	ConnectTimeout time.Duration
	// AgentSocket is the ssh-agent socket tried before identity files; ""
	// means no agent. DefaultSSHOptions fills it from SSH_AUTH_SOCK.
	AgentSocket string
	// DefaultKnownHosts is used for targets without KnownHostsFiles.
	// Default ~/.ssh/known_hosts.
	DefaultKnownHosts []string
	// KeepAliveInterval is how often an open connection sends
	// keepalive@openssh.com; after three unanswered in a row the connection
	// is closed and a running script fails with ErrConnectionLost.
	// Default 15s.
	KeepAliveInterval time.Duration
	// KeepAliveCountMax is how many keepalives may go unanswered in a row
	// before the connection is declared lost. Default 3.
	KeepAliveCountMax int
	// HostKeyPolicy applies to targets that set none. Default strict.
	HostKeyPolicy HostKeyPolicy
	// Passphrase is asked for encrypted identity files whose target names
	// no PassphraseEnv, or whose variable is unset; nil means never ask.
	Passphrase PassphraseFunc
	// Retries is how many more times a dial that failed transiently (reset
	// or closed during the handshake) is tried, with backoff, within the
	// same ConnectTimeout. Default 2; negative means none.
	Retries int
}

// DefaultSSHOptions returns the options an interactive user expects: the
// agent from SSH_AUTH_SOCK and ~/.ssh/known_hosts.
func DefaultSSHOptions() SSHOptions {
	return SSHOptions{AgentSocket: os.Getenv("SSH_AUTH_SOCK")}
}

// SSHDialer dials nodes over SSH with host key verification that cannot be
// turned off. Create it with NewSSHDialer; it is safe for concurrent use.
//
// Its runs prefix the script's first line with a statement that reports the
// shell's pid on stderr (stripped from Output.Stderr), so a run that must be
// stopped can be killed even where sshd ignores signal requests, as OpenSSH
// does for root logins; see sshkill.go.
type SSHDialer struct {
	opts SSHOptions
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
	if len(o.DefaultKnownHosts) == 0 {
		o.DefaultKnownHosts = []string{filepath.Join("~", ".ssh", "known_hosts")}
	}
	return &SSHDialer{opts: o}
}

// Dial connects, verifies the host key and authenticates, all within
// ConnectTimeout and ctx. Its errors wrap ErrUnreachable, ErrConnectTimeout,
// ErrHostKeyUnknown, ErrHostKeyMismatch or ErrAuthFailed, and also ctx's
// error when ctx ended the dial.
func (d *SSHDialer) Dial(ctx context.Context, t Target) (Conn, error) {
	port := t.Port
	if port == 0 {
		port = 22
	}
	addr := net.JoinHostPort(t.Address, strconv.Itoa(port))
	userName := t.User
	if userName == "" {
		userName = currentUser()
	}
	where := fmt.Sprintf("ssh %s@%s", userName, addr)
	if t.Name != "" {
		where = fmt.Sprintf("ssh %s (%s@%s)", t.Name, userName, addr)
	}
	fail := func(err error) (Conn, error) { return nil, fmt.Errorf("%s: %w", where, err) }

	dialCtx, cancel := context.WithTimeout(ctx, d.opts.ConnectTimeout)
	defer cancel()
	deadline, _ := dialCtx.Deadline()

	files := t.KnownHostsFiles
	if len(files) == 0 {
		files = d.opts.DefaultKnownHosts
	}
	expanded := make([]string, len(files))
	for i, f := range files {
		expanded[i] = expandHome(f)
	}
	policy := t.HostKeyPolicy
	if policy == HostKeyDefault {
		policy = d.opts.HostKeyPolicy
	}
	hk, err := loadHostKeys(addr, expanded, policy)
	if err != nil {
		return fail(err)
	}

	auth := newAuthPlan(deadline, d.opts.AgentSocket, t.IdentityFiles, t.IdentitiesOnly, t.PassphraseEnv, d.opts.Passphrase)
	defer auth.close()
	if !auth.usable() {
		return fail(fmt.Errorf("%w: no usable key: %s; load a key into ssh-agent or configure an identity file",
			ErrAuthFailed, auth.noKeyReason()))
	}

	var nd net.Dialer
	raw, err := nd.DialContext(dialCtx, "tcp", addr)
	if err != nil {
		return fail(dialError(ctx, err, d.opts.ConnectTimeout))
	}

	// ClientConfig.Timeout covers only the TCP dial; the deadline is what
	// bounds a peer that accepts and then never speaks, and a slow auth.
	_ = raw.SetDeadline(deadline)
	stopCancel := context.AfterFunc(ctx, func() { _ = raw.SetDeadline(time.Now()) })
	cfg := &ssh.ClientConfig{
		User:              userName,
		Auth:              []ssh.AuthMethod{ssh.PublicKeysCallback(auth.getSigners)},
		HostKeyCallback:   hk.check,
		HostKeyAlgorithms: hk.algorithms(),
	}
	sc, chans, reqs, err := ssh.NewClientConn(raw, addr, cfg)
	cancelled := !stopCancel()
	if err != nil {
		return fail(handshakeError(ctx, err, hk, auth, userName, d.opts.ConnectTimeout))
	}
	if cancelled {
		_ = sc.Close()
		return fail(fmt.Errorf("%w: %w", ErrConnectTimeout, ctx.Err()))
	}
	_ = raw.SetDeadline(time.Time{})

	c := &sshConn{
		where:  where,
		client: ssh.NewClient(sc, chans, reqs),
		done:   make(chan struct{}),
		dead:   make(chan struct{}),
	}
	c.wg.Add(2)
	go func() {
		defer c.wg.Done()
		_ = c.client.Wait()
		close(c.dead)
	}()
	go c.keepAlive(d.opts.KeepAliveInterval)
	return c, nil
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

	closeOnce sync.Once
	done      chan struct{} // closed by Close
	dead      chan struct{} // closed when the transport is gone, for any reason
	wg        sync.WaitGroup

	mu   sync.Mutex
	lost error // why the connection died under us, if we know
}

func (c *sshConn) Run(ctx context.Context, s Script) (Output, error) {
	select {
	case <-c.done:
		return Output{ExitCode: -1}, fmt.Errorf("%s: %w: connection already closed", c.where, ErrConnectionLost)
	default:
	}
	out, err := supervise(ctx, s, newSSHExec(c))
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
		if cerr := c.client.Close(); cerr != nil && !errors.Is(cerr, net.ErrClosed) {
			err = fmt.Errorf("%s: close: %w", c.where, cerr)
		}
	})
	waitTimeout(&c.wg, closeWait)
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

func (c *sshConn) lostReason() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lost
}

// keepAlive detects a peer that vanished without closing TCP, which would
// otherwise hold a run until its timeout and a connection forever. Only one
// request is in flight at a time; each interval it stays unanswered counts
// as a miss.
func (c *sshConn) keepAlive(interval time.Duration) {
	defer c.wg.Done()
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	var (
		pending chan error // non-nil while a request awaits its answer
		misses  int
	)
	for {
		select {
		case <-c.done:
			return
		case <-c.dead:
			return
		case err := <-pending:
			pending = nil
			if err != nil {
				return
			}
			misses = 0
		case <-ticker.C:
			if pending != nil {
				misses++
				if misses >= keepAliveMisses {
					c.markLost(fmt.Errorf("no answer to %d keepalives sent %s apart", keepAliveMisses, interval))
					return
				}
				continue
			}
			pending = make(chan error, 1)
			// SendRequest cannot be cancelled; it returns once the
			// answer arrives or the transport closes, and the
			// buffered channel lets it finish after we stopped
			// listening.
			go func(answer chan<- error) {
				_, _, err := c.client.SendRequest("keepalive@openssh.com", true, nil)
				answer <- err
			}(pending)
		}
	}
}

// sshExec is one session running the script.
type sshExec struct {
	conn  *sshConn
	ended chan struct{} // closed when run returns

	mu      sync.Mutex
	session *ssh.Session
	killed  bool
	pid     *remotePID // reported by the prelude, if it ran
}

func newSSHExec(c *sshConn) *sshExec {
	return &sshExec{conn: c, ended: make(chan struct{})}
}

func (e *sshExec) run(stdin []byte, stdout, stderr io.Writer) (int, error) {
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
		_, _ = in.Write(withPIDPrelude(stdin))
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
	if !await(e.ended, signalGrace) {
		e.mu.Lock()
		pid := e.pid
		e.mu.Unlock()
		if pid != nil {
			e.killTree(*pid)
		}
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
