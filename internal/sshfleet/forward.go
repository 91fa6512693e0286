package sshfleet

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// forwardDialTimeout bounds a bastion's TCP dial to the destination. Only
// loopback is dialled, so it matters only on a machine under heavy load.
const forwardDialTimeout = 5 * time.Second

// directTCPIP is the payload of a direct-tcpip channel open (RFC 4254 7.2).
type directTCPIP struct {
	Host     string
	Port     uint32
	OrigHost string
	OrigPort uint32
}

// forward serves one direct-tcpip channel of a Bastion node. Destinations
// other than 127.0.0.1 are refused, so a test cannot make the fleet reach
// beyond this machine.
func (f *Fleet) forward(n *Node, nc ssh.NewChannel) {
	var p directTCPIP
	if err := ssh.Unmarshal(nc.ExtraData(), &p); err != nil {
		_ = nc.Reject(ssh.ConnectionFailed, "sshfleet: malformed direct-tcpip request")
		return
	}
	if ip := net.ParseIP(p.Host); ip == nil || !ip.Equal(net.IPv4(127, 0, 0, 1)) || p.Port == 0 || p.Port > 65535 {
		_ = nc.Reject(ssh.Prohibited, fmt.Sprintf("sshfleet: forwarding only to 127.0.0.1, not %s:%d", p.Host, p.Port))
		return
	}
	dest := net.JoinHostPort("127.0.0.1", strconv.Itoa(int(p.Port)))
	d := net.Dialer{Timeout: forwardDialTimeout}
	out, err := d.DialContext(f.ctx, "tcp", dest)
	if err != nil {
		_ = nc.Reject(ssh.ConnectionFailed, fmt.Sprintf("sshfleet: connect to %s: %v", dest, err))
		return
	}
	if !f.track(n, out) {
		_ = out.Close()
		_ = nc.Reject(ssh.ConnectionFailed, "sshfleet: closing")
		return
	}
	defer f.untrack(out)
	ch, reqs, err := nc.Accept()
	if err != nil {
		_ = out.Close()
		return
	}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		ssh.DiscardRequests(reqs)
	}()

	// Either direction ending ends both: an SSH client over the tunnel
	// never half-closes, and a destination that keeps its side open must
	// not keep this goroutine after the client left.
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = out.Close()
			_ = ch.Close()
		})
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = io.Copy(out, ch)
		stop()
	}()
	_, _ = io.Copy(ch, out)
	stop()
	wg.Wait()
}

// dropNext reports whether FaultDropHandshake drops the connection just
// accepted.
func (n *Node) dropNext() bool {
	limit := n.Config.DropFirst
	if limit <= 0 {
		limit = 1
	}
	return n.dropped.Add(1) <= int64(limit)
}
