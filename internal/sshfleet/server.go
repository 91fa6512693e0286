package sshfleet

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"
)

func (f *Fleet) accept(n *Node) {
	defer f.wg.Done()
	for {
		c, err := n.listener.Accept()
		if err != nil {
			// Close closed the listener; any other accept error on
			// loopback is as fatal for a test server.
			return
		}
		n.accepted.Add(1)
		if !f.track(n, c) {
			_ = c.Close()
			return
		}
		// Adding while this goroutine still counts keeps the group
		// above zero, so Close's Wait cannot have begun on zero.
		f.wg.Add(1)
		go f.serveConn(n, c)
	}
}

func (f *Fleet) serveConn(n *Node, c net.Conn) {
	defer f.wg.Done()
	defer f.untrack(c)
	defer c.Close()

	if n.Config.Fault == FaultDropHandshake && n.dropNext() {
		return
	}
	if n.Config.Fault == FaultSilent {
		// Hold the connection open without a banner until the client
		// gives up or the fleet closes it.
		_, _ = io.Copy(io.Discard, c)
		return
	}

	_ = c.SetDeadline(time.Now().Add(handshakeTimeout))
	_, chans, reqs, err := ssh.NewServerConn(c, n.server)
	if err != nil {
		return
	}
	_ = c.SetDeadline(time.Time{})

	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		for r := range reqs {
			// The mux blocks until each request is taken, so even a
			// hanging node must drain them; it just never answers.
			if n.Config.Fault == FaultHang || !r.WantReply {
				continue
			}
			_ = r.Reply(r.Type == "keepalive@openssh.com", nil)
		}
	}()

	for nc := range chans {
		if nc.ChannelType() == "direct-tcpip" && n.Config.Bastion {
			n.forwards.Add(1)
			f.wg.Add(1)
			go func() {
				defer f.wg.Done()
				f.forward(n, nc)
			}()
			continue
		}
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "sshfleet serves only session channels")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			continue
		}
		s := &session{fleet: f, node: n, raw: c, ch: ch}
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			s.serve(creqs)
		}()
	}
}

// session is one session channel. At most one command runs in it.
type session struct {
	fleet *Fleet
	node  *Node
	raw   net.Conn
	ch    ssh.Channel

	mu      sync.Mutex
	started bool
	pgid    int // non-zero while the command's process group may be alive
}

func (s *session) serve(reqs <-chan *ssh.Request) {
	for req := range reqs {
		switch req.Type {
		case "exec":
			var p struct{ Command string }
			if s.started || ssh.Unmarshal(req.Payload, &p) != nil {
				_ = req.Reply(false, nil)
				continue
			}
			s.started = true
			_ = req.Reply(true, nil)
			s.start(p.Command)
		case "signal":
			var p struct{ Signal string }
			if err := ssh.Unmarshal(req.Payload, &p); err == nil && s.node.Config.Fault != FaultHang {
				if sig, ok := signals[ssh.Signal(p.Signal)]; ok {
					s.killGroup(sig)
				}
			}
			if req.WantReply {
				_ = req.Reply(s.node.Config.Fault != FaultHang, nil)
			}
		default:
			// pty-req, shell, subsystem, env and the rest: this server
			// only runs commands, as fleet-audit only needs.
			if req.WantReply {
				_ = req.Reply(false, nil)
			}
		}
	}
	// The client closed the channel or the connection is gone: a command
	// still running has no one to report to, and must not linger.
	s.killGroup(syscall.SIGKILL)
}

func (s *session) start(command string) {
	switch s.node.Config.Fault {
	case FaultHang:
		return
	case FaultFlood:
		s.fleet.wg.Add(1)
		go func() {
			defer s.fleet.wg.Done()
			s.flood()
		}()
	case FaultDropMidRun:
		s.fleet.wg.Add(1)
		go func() {
			defer s.fleet.wg.Done()
			s.dropMidRun()
		}()
	default:
		s.exec(command)
	}
}

// maxReplayStdin bounds what a replaying node reads before deciding: a
// probe bundle is a few hundred KiB.
const maxReplayStdin = 16 << 20

func (s *session) exec(command string) {
	r := s.node.Config.Replay
	if r == nil {
		s.run(command, nil, nil)
		return
	}
	// The whole script first: a bundle's key is its text.
	in, err := io.ReadAll(io.LimitReader(s.ch, maxReplayStdin))
	if err != nil {
		fmt.Fprintf(s.ch.Stderr(), "sshfleet: read stdin: %v\n", err)
		s.exit(127, "")
		return
	}
	k, nonce, ok := r.key(s.node, command, in)
	if !ok {
		s.run(command, in, nil)
		return
	}
	as := s.node.Config.ReplayAs
	if rec := r.lookup(k); rec != nil {
		r.Hits.Add(1)
		var stdout, stderr []byte
		if as != "" {
			stdout, stderr = rec.replay(nonce, as, s.node.Config.Name)
		} else {
			stdout, stderr = rec.replay(nonce, "", "")
		}
		_, _ = s.ch.Stderr().Write(stderr)
		_, _ = s.ch.Write(stdout)
		s.exit(rec.status, "")
		return
	}
	r.Misses.Add(1)
	if as != "" && as != s.node.Config.Name {
		fmt.Fprintf(s.ch.Stderr(), "sshfleet: %s stands in for %s, which has not run this bundle yet\n", s.node.Config.Name, as)
		s.exit(127, "")
		return
	}
	s.run(command, in, func(stdout, stderr []byte, status int) { r.record(k, nonce, stdout, stderr, status) })
}

// run runs command in a session of its own, as sshd does (OpenSSH
// session.c, do_exec_no_pty: setsid in the child), which is also its own
// process group: the probe bundle kills the orphans of that session, and
// must never meet the test's. With stdin nil the client's
// stream is copied in as it comes; otherwise stdin is the script, already
// read. done, when set, gets the output and exit status of a command that
// exited (not one killed by a signal).
func (s *session) run(command string, stdin []byte, done func(stdout, stderr []byte, status int)) {
	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Env = commandEnv(s.node.Config.Env)
	cmd.Dir = s.node.Config.Dir
	cmd.Stdout = s.ch
	cmd.Stderr = s.ch.Stderr()
	var stdout, stderr bytes.Buffer
	if done != nil {
		cmd.Stdout = io.MultiWriter(s.ch, &stdout)
		cmd.Stderr = io.MultiWriter(s.ch.Stderr(), &stderr)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var pipe io.WriteCloser
	var err error
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	} else {
		pipe, err = cmd.StdinPipe()
	}
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		fmt.Fprintf(s.ch.Stderr(), "sshfleet: start /bin/sh: %v\n", err)
		s.exit(127, "")
		return
	}
	pgid := cmd.Process.Pid
	s.mu.Lock()
	s.pgid = pgid
	s.mu.Unlock()
	if !s.fleet.addGroup(pgid) {
		s.killGroup(syscall.SIGKILL)
	}

	if pipe != nil {
		s.fleet.wg.Add(1)
		go func() {
			defer s.fleet.wg.Done()
			// Ends at the client's EOF, or when the channel closes.
			_, _ = io.Copy(pipe, s.ch)
			_ = pipe.Close()
		}()
	}
	s.fleet.wg.Add(1)
	go func() {
		defer s.fleet.wg.Done()
		_ = cmd.Wait()
		// Background children that outlived the shell go with it, as
		// they would when a real node's session ends.
		s.killGroup(syscall.SIGKILL)
		s.mu.Lock()
		s.pgid = 0
		s.mu.Unlock()
		s.fleet.removeGroup(pgid)

		if cmd.ProcessState == nil {
			s.exit(127, "")
			return
		}
		ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if ws.Signaled() {
			s.exit(0, signalName(ws.Signal()))
			return
		}
		if done != nil {
			done(stdout.Bytes(), stderr.Bytes(), ws.ExitStatus())
		}
		s.exit(ws.ExitStatus(), "")
	}()
}

// exit reports how the command ended and closes the channel, as sshd does.
func (s *session) exit(status int, signal string) {
	if signal != "" {
		_, _ = s.ch.SendRequest("exit-signal", false, ssh.Marshal(struct {
			Signal     string
			CoreDumped bool
			Error      string
			Lang       string
		}{Signal: signal}))
	} else {
		_, _ = s.ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{uint32(status)}))
	}
	_ = s.ch.Close()
}

func (s *session) killGroup(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pgid != 0 {
		_ = syscall.Kill(-s.pgid, sig)
	}
}

func (s *session) flood() {
	n := s.node.Config.FloodBytes
	if n <= 0 {
		n = DefaultFloodBytes
	}
	line := append(bytes.Repeat([]byte{'x'}, 79), '\n')
	chunk := bytes.Repeat(line, 32<<10/len(line))
	for n > 0 {
		b := chunk
		if int64(len(b)) > n {
			b = b[:n]
		}
		// Write fails once the client closes the channel, which is how
		// a client that capped its output stops the flood.
		if _, err := s.ch.Write(b); err != nil {
			_ = s.ch.Close()
			return
		}
		n -= int64(len(b))
	}
	s.exit(0, "")
}

func (s *session) dropMidRun() {
	_, _ = io.WriteString(s.ch, "sshfleet: partial output before the connection drops\n")
	t := time.NewTimer(dropDelay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.fleet.ctx.Done():
	}
	_ = s.raw.Close()
}

// commandEnv is env with a default PATH, since a command without one can
// find nothing, and with nothing else: tests set exactly what they expect.
func commandEnv(env []string) []string {
	out := append([]string{}, env...)
	for _, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			return out
		}
	}
	return append(out, defaultPath)
}

var signals = map[ssh.Signal]syscall.Signal{
	ssh.SIGABRT: syscall.SIGABRT,
	ssh.SIGALRM: syscall.SIGALRM,
	ssh.SIGFPE:  syscall.SIGFPE,
	ssh.SIGHUP:  syscall.SIGHUP,
	ssh.SIGILL:  syscall.SIGILL,
	ssh.SIGINT:  syscall.SIGINT,
	ssh.SIGKILL: syscall.SIGKILL,
	ssh.SIGPIPE: syscall.SIGPIPE,
	ssh.SIGQUIT: syscall.SIGQUIT,
	ssh.SIGSEGV: syscall.SIGSEGV,
	ssh.SIGTERM: syscall.SIGTERM,
	ssh.SIGUSR1: syscall.SIGUSR1,
	ssh.SIGUSR2: syscall.SIGUSR2,
}

func signalName(sig syscall.Signal) string {
	for name, s := range signals {
		if s == sig {
			return string(name)
		}
	}
	return "KILL"
}
