package remote

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode"
)

// Bounds on a ProxyCommand process.
const (
	// proxyStderrTail is how much of a ProxyCommand's stderr is kept for
	// the error that explains a failed dial: its last words ("connect
	// failed: Connection refused") are the useful ones.
	proxyStderrTail = 2 << 10
	// proxyHangupGrace is how long a proxy gets to exit after SIGHUP
	// before it is killed.
	proxyHangupGrace = time.Second
	// proxyExitWait is how long a dial whose stream ended waits for the
	// proxy's exit status, which tells a proxy that failed from a server
	// that closed the connection.
	proxyExitWait = 250 * time.Millisecond
)

// proxyConn is the byte stream to a node through a ProxyCommand: the
// command's stdout is read and its stdin written, as OpenSSH does
// (sshconnect.c ssh_proxy_connect: pipes on fds 0 and 1, "$SHELL -c 'exec
// COMMAND'", $SHELL unset or empty meaning /bin/sh). The pipes are pollable
// *os.File ends, so deadlines work as on TCP.
type proxyConn struct {
	r, w   *os.File
	cmd    *exec.Cmd
	stderr *tailBuffer
	exited chan struct{} // closed once the process is reaped
	// waitErr is cmd.Wait's result, read only after exited is closed.
	waitErr error
	// hungUp is set when Close had to signal the process, whose status
	// then says nothing about the proxy.
	hungUp atomic.Bool

	closeOnce sync.Once
}

var _ net.Conn = (*proxyConn)(nil)

// proxyShell is the shell that runs a ProxyCommand: the user's $SHELL,
// else /bin/sh, as ssh_proxy_connect picks it.
func proxyShell() string {
	if sh := os.Getenv("SHELL"); sh != "" {
		return sh
	}
	return "/bin/sh"
}

// startProxy starts command, already expanded, with the connection on its
// stdin and stdout. Its stderr is kept (the tail) for error messages
// instead of reaching the terminal: dozens of proxies run at once.
func startProxy(command string) (*proxyConn, error) {
	childIn, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("%w: ProxyCommand: %w", ErrUnreachable, err)
	}
	r, childOut, err := os.Pipe()
	if err != nil {
		_ = childIn.Close()
		_ = w.Close()
		return nil, fmt.Errorf("%w: ProxyCommand: %w", ErrUnreachable, err)
	}
	stderr := &tailBuffer{limit: proxyStderrTail}
	cmd := exec.Command(proxyShell(), "-c", "exec "+command)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = childIn, childOut, stderr
	// A proxy that left a child holding its stderr must not hold Wait,
	// and with it the dial, forever.
	cmd.WaitDelay = proxyHangupGrace
	err = cmd.Start()
	// The child has its own copies now; ours would keep the pipes open
	// after it exits, and a read would never see its end.
	_ = childIn.Close()
	_ = childOut.Close()
	if err != nil {
		_ = r.Close()
		_ = w.Close()
		return nil, fmt.Errorf("%w: cannot start ProxyCommand: %w", ErrUnreachable, err)
	}
	p := &proxyConn{r: r, w: w, cmd: cmd, stderr: stderr, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

func (p *proxyConn) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p *proxyConn) Write(b []byte) (int, error) { return p.w.Write(b) }

// Close ends the stream and the process: its stdin closes, which ends a
// netcat or ssh -W on its own; one that is still there a moment later gets
// SIGHUP, as ssh_kill_proxy_command sends, and SIGKILL after that. The
// process is reaped before Close returns, so no proxy outlives the
// connection it carried.
func (p *proxyConn) Close() error {
	p.closeOnce.Do(func() {
		_ = p.w.Close()
		_ = p.r.Close()
		if await(p.exited, proxyExitWait) {
			return
		}
		p.hungUp.Store(true)
		_ = p.cmd.Process.Signal(syscall.SIGHUP)
		if !await(p.exited, proxyHangupGrace) {
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return nil
}

// failure explains a stream that ended during the handshake when the proxy
// itself failed: it exited with a non-zero status, or it had to be stopped
// after saying something on stderr. It returns nil when the proxy exited 0
// or said nothing, where the server on the other end is the one that
// closed (and the handshake's own error says so).
func (p *proxyConn) failure() error {
	if !await(p.exited, proxyExitWait) {
		return nil
	}
	tail := p.stderr.String()
	var msg string
	var exitErr *exec.ExitError
	switch {
	case p.hungUp.Load():
		if tail == "" {
			return nil
		}
		msg = "ProxyCommand ended the connection"
	case !errors.As(p.waitErr, &exitErr) || exitErr.Success():
		return nil
	default:
		msg = fmt.Sprintf("ProxyCommand exited with status %d", exitErr.ExitCode())
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			msg = fmt.Sprintf("ProxyCommand was killed by %s", ws.Signal())
		}
	}
	if tail != "" {
		msg += ": " + tail
	}
	return fmt.Errorf("%w: %s", ErrUnreachable, msg)
}

// proxyError explains a handshake through proxy that failed because of the
// proxy rather than the server: the command failed, or, when the budget
// ran out before any host key arrived, what it said meanwhile. nil leaves
// the explanation to the handshake's error.
func proxyError(b budget, proxy *proxyConn, hk *hostKeys) error {
	if b.parent.Err() != nil || hk.failed() != nil {
		return nil
	}
	if b.ctx.Err() == nil {
		return proxy.failure()
	}
	if hk.verified.Load() {
		return nil
	}
	msg := fmt.Sprintf("no SSH handshake through the ProxyCommand within %s", b.timeout)
	if tail := proxy.stderr.String(); tail != "" {
		msg += "; it said: " + tail
	}
	return fmt.Errorf("%w: %s", ErrConnectTimeout, msg)
}

func (p *proxyConn) LocalAddr() net.Addr  { return proxyAddr{} }
func (p *proxyConn) RemoteAddr() net.Addr { return proxyAddr{} }

func (p *proxyConn) SetDeadline(t time.Time) error {
	return errors.Join(p.r.SetReadDeadline(t), p.w.SetWriteDeadline(t))
}
func (p *proxyConn) SetReadDeadline(t time.Time) error  { return p.r.SetReadDeadline(t) }
func (p *proxyConn) SetWriteDeadline(t time.Time) error { return p.w.SetWriteDeadline(t) }

// proxyAddr stands for both ends of a ProxyCommand stream, which has no
// network address of its own.
type proxyAddr struct{}

func (proxyAddr) Network() string { return "proxycommand" }
func (proxyAddr) String() string  { return "ProxyCommand" }

// tailBuffer keeps the last limit bytes written to it.
type tailBuffer struct {
	mu    sync.Mutex
	buf   []byte
	limit int
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.limit; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

// String is the tail as one line: a proxy's stderr is usually a line or
// two, and a message carries it inline.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	line := strings.Join(strings.Fields(string(bytes.ToValidUTF8(t.buf, []byte("?")))), " ")
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '?'
		}
		return r
	}, line)
}
