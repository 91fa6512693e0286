package remote

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// errHopLost marks a jump host connection found dead when a node tried to
// tunnel through it; Dial then dials the hop again once.
var errHopLost = fmt.Errorf("%w: the connection to the jump host is gone", ErrConnectionLost)

// shareGrace is how long a node whose deadline passed still waits for the
// hop dial it shares, which may be ending at the same moment.
const shareGrace = 200 * time.Millisecond

// hopCache holds one connection per chain of jump hosts (each prefix of a
// target's Jumps), shared by every node behind it. A chain being dialled
// has an entry too, so concurrent nodes wait for that one dial, and share
// its failure, instead of each opening their own: dozens of nodes behind
// one bastion would otherwise trip its MaxStartups.
type hopCache struct {
	base context.Context // ends hop dials in flight when the dialer closes
	stop context.CancelFunc
	wg   sync.WaitGroup // hop dials in flight

	mu     sync.Mutex
	closed bool
	chains map[string]*hopDial
}

// hopDial is one dial of a chain and, once done is closed, its result.
type hopDial struct {
	depth int
	done  chan struct{}
	conn  *sshConn
	err   error
}

func (c *hopCache) init() {
	c.base, c.stop = context.WithCancel(context.Background())
	c.chains = make(map[string]*hopDial)
}

// label names a hop in messages.
func (h Hop) label() string {
	if h.Name != "" {
		return h.Name
	}
	return hostPort(h.Address, h.Port)
}

func (d *SSHDialer) hopEndpoint(h Hop) endpoint {
	addr := hostPort(h.Address, h.Port)
	userName := h.User
	if userName == "" {
		userName = currentUser()
	}
	// A hop is shared by nodes that may differ in PassphraseEnv and host
	// key policy; taking a node's would make the hop's behaviour depend
	// on which node dialled it first.
	return endpoint{
		where:          fmt.Sprintf("jump host %s (%s@%s)", h.label(), userName, addr),
		addr:           addr,
		user:           userName,
		identityFiles:  h.IdentityFiles,
		knownHosts:     d.knownHosts(h.KnownHostsFiles),
		identitiesOnly: h.IdentitiesOnly,
		policy:         d.opts.HostKeyPolicy,
		proxyCommand:   h.ProxyCommand,
	}
}

// chainKey identifies a chain by everything that decides how each of its
// hops is dialled, so hops alike only in name are not confused.
func (d *SSHDialer) chainKey(jumps []Hop) string {
	var b strings.Builder
	for _, h := range jumps {
		ep := d.hopEndpoint(h)
		fmt.Fprintf(&b, "%q %q %q %q %q %t %q\x00", h.Name, ep.user, ep.addr, ep.identityFiles, ep.knownHosts, ep.identitiesOnly, ep.proxyCommand)
	}
	return b.String()
}

// hop returns the connection to the last hop of jumps, dialling the chain
// unless a live connection or a dial in flight can be shared. Its errors
// wrap ErrJumpFailed and name the hop that failed.
func (d *SSHDialer) hop(b budget, jumps []Hop) (*sshConn, error) {
	last := jumps[len(jumps)-1]
	key := d.chainKey(jumps)
	c := &d.hops
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, fmt.Errorf("%s: %w: %w: the dialer is closed", d.hopEndpoint(last).where, ErrJumpFailed, ErrUnreachable)
	}
	var stale *sshConn
	e := c.chains[key]
	if e != nil {
		select {
		case <-e.done:
			// A failure is shared only by the nodes that waited for it;
			// the next node tries again, as it would without a hop.
			if e.err != nil || e.conn.isDead() {
				stale, e = e.conn, nil
			}
		default:
		}
	}
	if e == nil {
		e = &hopDial{depth: len(jumps), done: make(chan struct{})}
		c.chains[key] = e
		c.wg.Add(1)
		// The dial runs on its own so that a node that stops waiting
		// (its context ended) does not end it for the others; the
		// first node's deadline bounds it, and Close ends it.
		go d.dialHop(e, jumps, b.deadline, b.timeout)
	}
	c.mu.Unlock()
	if stale != nil {
		_ = stale.Close()
	}

	select {
	case <-e.done:
		return e.conn, e.err
	case <-b.ctx.Done():
		// A dial this node started ends at this same deadline, and its
		// own error says better what the hop did.
		if b.parent.Err() == nil && await(e.done, shareGrace) && e.err != nil {
			return nil, e.err
		}
		cause := fmt.Errorf("%w: no connection within %s", ErrConnectTimeout, b.timeout)
		if b.parent.Err() != nil {
			cause = fmt.Errorf("%w: %w", ErrConnectTimeout, b.parent.Err())
		}
		return nil, fmt.Errorf("%s: %w: %w", d.hopEndpoint(last).where, ErrJumpFailed, cause)
	}
}

// dialHop dials the last hop of jumps through the chain before it and
// records the result in e.
func (d *SSHDialer) dialHop(e *hopDial, jumps []Hop, deadline time.Time, timeout time.Duration) {
	c := &d.hops
	defer c.wg.Done()
	defer close(e.done)
	ctx, cancel := context.WithDeadline(c.base, deadline)
	defer cancel()
	b := budget{parent: c.base, ctx: ctx, deadline: deadline, timeout: timeout}

	h := jumps[len(jumps)-1]
	ep := d.hopEndpoint(h)
	if h.Address == "" {
		e.err = fmt.Errorf("%s: %w: %w: no address to dial", ep.where, ErrJumpFailed, ErrUnreachable)
		return
	}
	for tries := 0; ; tries++ {
		var via *sshConn
		if len(jumps) > 1 {
			var err error
			if via, err = d.hop(b, jumps[:len(jumps)-1]); err != nil {
				e.err = err // names the earlier hop that failed
				return
			}
		}
		client, note, err := d.connect(b, ep, via)
		if errors.Is(err, errHopLost) && tries == 0 {
			c.forget(via)
			continue
		}
		if err == nil && note != "" {
			d.noteHop(h.label(), note)
		}
		switch {
		case err == nil:
			e.conn = startConn(ep.where, client, via, d.opts.KeepAliveInterval, d.opts.KeepAliveCountMax, true)
		case errors.Is(err, ErrJumpFailed):
			e.err = err
		default:
			e.err = fmt.Errorf("%s: %w: %w", ep.where, ErrJumpFailed, err)
		}
		return
	}
}

func (c *hopCache) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// forget drops conn from the cache, so the next node dials its chain
// again, and closes it.
func (c *hopCache) forget(conn *sshConn) {
	if conn == nil {
		return
	}
	c.mu.Lock()
	for key, e := range c.chains {
		select {
		case <-e.done:
			if e.conn == conn {
				delete(c.chains, key)
			}
		default:
		}
	}
	c.mu.Unlock()
	_ = conn.Close()
}

// close ends the dials in flight, then every hop connection, deepest
// first so no tunnel outlives its carrier by more than a moment.
func (c *hopCache) close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	var dials []*hopDial
	for _, e := range c.chains {
		dials = append(dials, e)
	}
	c.chains = nil
	c.mu.Unlock()

	c.stop()
	var errs []error
	if !waitTimeout(&c.wg, closeWait) {
		errs = append(errs, fmt.Errorf("jump host dials still running %s after close", closeWait))
	}
	slices.SortFunc(dials, func(a, b *hopDial) int { return b.depth - a.depth })
	for _, e := range dials {
		select {
		case <-e.done:
		default:
			continue
		}
		if e.conn != nil {
			if err := e.conn.Close(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// tunnelError maps a failed channel open through the jump host via. The
// hop answering, even with a refusal, means the hop is fine and the node
// is the problem; no answer at all means the hop connection is gone.
func tunnelError(b budget, via *sshConn, addr string, err error) error {
	var oce *ssh.OpenChannelError
	switch {
	case errors.As(err, &oce) && oce.Reason == ssh.ConnectionFailed:
		return fmt.Errorf("%w: %s could not connect to %s: %s; check that the node is up and sshd listens there, as seen from the jump host",
			ErrUnreachable, via.where, addr, oce.Message)
	case errors.As(err, &oce) && oce.Reason == ssh.Prohibited:
		return fmt.Errorf("%w: %s refused to forward to %s: %s; the jump host must allow TCP forwarding (AllowTcpForwarding) to the node",
			ErrUnreachable, via.where, addr, oce.Message)
	case errors.As(err, &oce):
		return fmt.Errorf("%w: %s could not open a channel to %s: %w", ErrUnreachable, via.where, addr, err)
	case b.parent.Err() != nil:
		return fmt.Errorf("%w: %w", ErrConnectTimeout, b.parent.Err())
	case b.ctx.Err() != nil:
		return fmt.Errorf("%w: %s opened no channel to %s within %s; check that the node is up and no firewall drops SSH traffic from the jump host",
			ErrConnectTimeout, via.where, addr, b.timeout)
	}
	return fmt.Errorf("%s: %w: %w (%w)", via.where, ErrJumpFailed, errHopLost, err)
}

// hostPort joins an address and a port, 22 when unset.
func hostPort(address string, port int) string {
	if port == 0 {
		port = 22
	}
	return net.JoinHostPort(address, strconv.Itoa(port))
}

// noteHop records how a jump host's key was trusted when known_hosts alone
// did not vouch for it (see connect).
func (d *SSHDialer) noteHop(name, note string) {
	d.hopNotesMu.Lock()
	defer d.hopNotesMu.Unlock()
	if d.hopNotes == nil {
		d.hopNotes = map[string]string{}
	}
	d.hopNotes[name] = note
}

// HopHostKeyNotes maps each jump host whose key was recorded (accept-new)
// or not verified (insecure-ignore) during the dialer's life to how; the
// nodes' own are on their connections (HostKeyNoter).
func (d *SSHDialer) HopHostKeyNotes() map[string]string {
	d.hopNotesMu.Lock()
	defer d.hopNotesMu.Unlock()
	return maps.Clone(d.hopNotes)
}
