package sshfleet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// Fault is one way a node misbehaves.
type Fault int

const (
	// FaultNone serves exec requests faithfully.
	FaultNone Fault = iota
	// FaultRefuse leaves nothing listening: the node's port was opened and
	// closed again, so connecting is refused.
	FaultRefuse
	// FaultSilent accepts TCP connections and never sends a byte.
	FaultSilent
	// FaultRejectKey rejects every authentication attempt.
	FaultRejectKey
	// FaultDropMidRun writes some output once a command is requested,
	// then closes the TCP connection about 100ms later, without an exit
	// status.
	FaultDropMidRun
	// FaultFlood ignores the command, writes FloodBytes bytes of lines of
	// 'x' to stdout and exits 0.
	FaultFlood
	// FaultHang accepts the command but runs nothing, never answers a
	// signal or keepalive, and never exits.
	FaultHang
	// FaultDropHandshake closes the first DropFirst TCP connections right
	// after accepting them, before a byte of SSH, as sshd does beyond
	// MaxStartups, and serves the ones after faithfully.
	FaultDropHandshake
)

var faultNames = map[Fault]string{
	FaultNone:       "none",
	FaultRefuse:     "refuse",
	FaultSilent:     "silent",
	FaultRejectKey:  "reject-key",
	FaultDropMidRun: "drop-mid-run",
	FaultFlood:      "flood",
	FaultHang:       "hang",

	FaultDropHandshake: "drop-handshake",
}

func (f Fault) String() string {
	if name, ok := faultNames[f]; ok {
		return name
	}
	return "Fault(" + strconv.Itoa(int(f)) + ")"
}

// DefaultFloodBytes is what a FaultFlood node writes when FloodBytes is 0.
const DefaultFloodBytes = 64 << 20

const (
	// handshakeTimeout bounds a client that connects and stalls, so its
	// goroutine does not live until Close.
	handshakeTimeout = 10 * time.Second
	// closeTimeout bounds Close's wait for the fleet's goroutines.
	closeTimeout = 10 * time.Second
	// dropDelay is how long FaultDropMidRun lets a session run.
	dropDelay = 100 * time.Millisecond
	// defaultPath is the PATH of commands whose Env does not set one.
	defaultPath = "PATH=/usr/local/bin:/usr/bin:/bin"
)

// NodeConfig describes one node of the fleet.
type NodeConfig struct {
	Name string
	// HostKey is the node's host key; nil generates an ed25519 key.
	HostKey ssh.Signer
	// ExtraHostKeys are further host keys of other types, offered during
	// negotiation but not listed by KnownHosts, like a real node with
	// several keys of which known_hosts records one.
	ExtraHostKeys []ssh.Signer
	// AuthorizedKeys are the client keys accepted.
	AuthorizedKeys []ssh.PublicKey
	// User is the accepted user name; "" accepts any.
	User string
	// Env is the whole environment of executed commands, e.g.
	// FLEET_AUDIT_ROOT=/tmp/x; PATH defaults to /usr/local/bin:/usr/bin:/bin.
	Env []string
	// Dir is the working directory of executed commands; "" inherits.
	Dir   string
	Fault Fault
	// FloodBytes is what FaultFlood writes; 0 means DefaultFloodBytes.
	FloodBytes int64
	// DropFirst is how many connections FaultDropHandshake drops; 0 means
	// one.
	DropFirst int
	// Bastion makes the node a ProxyJump host: it serves direct-tcpip
	// channels (RFC 4254 7.2) to 127.0.0.1 and refuses every other
	// destination. Forwarding ignores Fault once the handshake is done,
	// so a FaultHang bastion forwards but answers no keepalive.
	Bastion bool
	// Replay, when set, memoises the probe bundles the node runs (see
	// Replay); for nodes whose files never change.
	Replay *Replay
	// ReplayAs, with Replay, makes the node a stand-in for the node of
	// that name, for a fleet of thousands that costs the server side
	// next to nothing: it answers a bundle with what that node's run of
	// the same bundle printed, that node's name replaced by its own. The
	// node named runs each bundle for real once (it sets ReplayAs to its
	// own name); a stand-in asked for a bundle it has not run yet fails
	// with status 127 rather than answer with another node's name. Every
	// other command runs as usual.
	ReplayAs string
}

// Node is one started node.
type Node struct {
	Config NodeConfig
	// Addr is "127.0.0.1:port".
	Addr    string
	Host    string
	Port    int
	HostKey ssh.PublicKey

	fleet    *Fleet
	listener net.Listener // nil for FaultRefuse
	// refuseFD holds a FaultRefuse node's port: bound, never listening,
	// so connecting is refused and no other listener can be handed the
	// port while the fleet lives (a port closed right away could be, and
	// a test of "refused" would then reach another test's server).
	refuseFD int
	server   *ssh.ServerConfig

	accepted atomic.Int64
	forwards atomic.Int64
	dropped  atomic.Int64 // connections FaultDropHandshake has seen
}

// Accepted is how many TCP connections the node has accepted, including
// those FaultDropHandshake dropped; tests use it to prove a connection was
// shared or a dial retried.
func (n *Node) Accepted() int { return int(n.accepted.Load()) }

// Forwards is how many direct-tcpip channels a Bastion node has accepted
// or refused, one per connection a client tunnelled through it.
func (n *Node) Forwards() int { return int(n.forwards.Load()) }

// DropConnections closes every connection the node holds, clients' and
// the ones it forwards to, as if the node crashed, and returns how many it
// closed. The node keeps listening.
func (n *Node) DropConnections() int {
	f := n.fleet
	f.mu.Lock()
	var conns []net.Conn
	for c, owner := range f.conns {
		if owner == n {
			conns = append(conns, c)
		}
	}
	f.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
	return len(conns)
}

// Fleet is a set of running nodes. Close it to release everything.
type Fleet struct {
	nodes []*Node
	// ctx is cancelled by Close, to end fault timers early.
	ctx    context.Context
	cancel context.CancelFunc

	wg sync.WaitGroup

	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]*Node // accepted and forwarded, by the node holding them
	groups map[int]struct{}   // process groups of running commands

	stopAfter func() bool // unregisters the close-on-ctx-done hook; guarded by mu
	closeOnce sync.Once
	closeErr  error
}

// Start starts one server per config, each on its own 127.0.0.1 port. The
// fleet is closed when ctx is done, or by Close.
func Start(ctx context.Context, nodes []NodeConfig) (*Fleet, error) {
	fctx, cancel := context.WithCancel(context.Background())
	f := &Fleet{
		ctx:    fctx,
		cancel: cancel,
		conns:  make(map[net.Conn]*Node),
		groups: make(map[int]struct{}),
	}
	for _, cfg := range nodes {
		n, err := f.startNode(cfg)
		if err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("sshfleet: node %q: %w", cfg.Name, err)
		}
		f.nodes = append(f.nodes, n)
	}
	stop := context.AfterFunc(ctx, func() { _ = f.Close() })
	f.mu.Lock()
	f.stopAfter = stop
	f.mu.Unlock()
	return f, nil
}

func (f *Fleet) startNode(cfg NodeConfig) (*Node, error) {
	hostKey := cfg.HostKey
	if hostKey == nil {
		var err error
		if hostKey, err = newHostKey(); err != nil {
			return nil, err
		}
	}
	if cfg.Fault == FaultRefuse {
		fd, port, err := BoundPort()
		if err != nil {
			return nil, fmt.Errorf("refusing port: %w", err)
		}
		return &Node{fleet: f, Config: cfg, Addr: fmt.Sprintf("127.0.0.1:%d", port), Host: "127.0.0.1", Port: port,
			HostKey: hostKey.PublicKey(), refuseFD: fd}, nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	tcp := ln.Addr().(*net.TCPAddr)
	n := &Node{
		fleet:   f,
		Config:  cfg,
		Addr:    tcp.String(),
		Host:    tcp.IP.String(),
		Port:    tcp.Port,
		HostKey: hostKey.PublicKey(),
	}
	n.listener = ln
	n.server = n.serverConfig(hostKey)
	f.wg.Add(1)
	go f.accept(n)
	return n, nil
}

func (n *Node) serverConfig(hostKey ssh.Signer) *ssh.ServerConfig {
	cfg := &ssh.ServerConfig{
		PublicKeyCallback: func(meta ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			if n.Config.Fault == FaultRejectKey {
				return nil, errors.New("sshfleet: this node rejects every key")
			}
			if n.Config.User != "" && meta.User() != n.Config.User {
				return nil, fmt.Errorf("sshfleet: user %q not accepted", meta.User())
			}
			for _, k := range n.Config.AuthorizedKeys {
				if bytes.Equal(k.Marshal(), key.Marshal()) {
					return &ssh.Permissions{}, nil
				}
			}
			return nil, errors.New("sshfleet: key not authorized")
		},
	}
	cfg.AddHostKey(hostKey)
	for _, k := range n.Config.ExtraHostKeys {
		cfg.AddHostKey(k)
	}
	return cfg
}

// Nodes returns the nodes in the order they were configured.
func (f *Fleet) Nodes() []*Node { return f.nodes }

// KnownHosts returns known_hosts lines for every node that listens, with
// each node's HostKey (not its ExtraHostKeys).
func (f *Fleet) KnownHosts() []byte {
	var b bytes.Buffer
	for _, n := range f.nodes {
		if n.Config.Fault == FaultRefuse {
			continue
		}
		b.WriteString(knownhosts.Line([]string{n.Addr}, n.HostKey))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// Close stops the listeners, kills every running command's process group,
// closes every connection and waits, for at most 10s, for the fleet's
// goroutines. It is safe to call more than once.
func (f *Fleet) Close() error {
	f.closeOnce.Do(func() {
		f.cancel()
		f.mu.Lock()
		if f.stopAfter != nil {
			// Close may be running inside the AfterFunc; stopping it
			// then is a no-op.
			f.stopAfter()
		}
		f.closed = true
		conns := make([]net.Conn, 0, len(f.conns))
		for c := range f.conns {
			conns = append(conns, c)
		}
		for g := range f.groups {
			_ = syscall.Kill(-g, syscall.SIGKILL)
		}
		f.mu.Unlock()

		var errs []error
		for _, n := range f.nodes {
			if n.refuseFD > 0 {
				if err := syscall.Close(n.refuseFD); err != nil {
					errs = append(errs, fmt.Errorf("close refusing port %s: %w", n.Addr, err))
				}
				n.refuseFD = 0
			}
			if n.listener != nil {
				if err := n.listener.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
					errs = append(errs, fmt.Errorf("close listener %s: %w", n.Addr, err))
				}
			}
		}
		for _, c := range conns {
			_ = c.Close()
		}
		if !waitTimeout(&f.wg, closeTimeout) {
			errs = append(errs, fmt.Errorf("goroutines still running %s after close", closeTimeout))
		}
		if err := errors.Join(errs...); err != nil {
			f.closeErr = fmt.Errorf("sshfleet: close: %w", err)
		}
	})
	return f.closeErr
}

// track registers a connection held by n so Close can cut it; false means
// the fleet is closing and the connection must be dropped.
func (f *Fleet) track(n *Node, c net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	f.conns[c] = n
	return true
}

func (f *Fleet) untrack(c net.Conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.conns, c)
}

// addGroup registers a started process group; false means the fleet is
// closing, and the caller must kill the group itself.
func (f *Fleet) addGroup(pgid int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	f.groups[pgid] = struct{}{}
	return true
}

func (f *Fleet) removeGroup(pgid int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.groups, pgid)
}

func waitTimeout(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// BoundPort binds a TCP socket to a free loopback port and does not listen
// on it: the kernel answers a connection there with a reset (connection
// refused), and, as the socket does not set SO_REUSEADDR, refuses to bind
// the port for anyone else (ip(7), SO_REUSEADDR) until fd is closed. It is
// how a test has a node that refuses: a port merely closed again could be
// handed to another test's server running beside it.
func BoundPort() (fd, port int, err error) {
	// SOCK_CLOEXEC is Linux's; the demo, and with it this package, is
	// built for macOS too.
	syscall.ForkLock.RLock()
	fd, err = syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return 0, 0, fmt.Errorf("socket: %w", err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		_ = syscall.Close(fd)
		return 0, 0, fmt.Errorf("bind: %w", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		_ = syscall.Close(fd)
		return 0, 0, fmt.Errorf("getsockname: %w", err)
	}
	in4, ok := sa.(*syscall.SockaddrInet4)
	if !ok {
		_ = syscall.Close(fd)
		return 0, 0, fmt.Errorf("getsockname: %T", sa)
	}
	return fd, in4.Port, nil
}
