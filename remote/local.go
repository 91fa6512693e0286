package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/fleet-audit/fleet-audit/internal/shproc"
)

// localWaitDelay bounds how long a finished shell's background children may
// hold its output pipes open before Run stops waiting for them.
const localWaitDelay = 2 * time.Second

// LocalDialer runs scripts on this machine with /bin/sh, for nodes whose
// inventory entry says `connection: local`. Its runs have the same caps,
// timeout and errors as SSH runs.
type LocalDialer struct {
	// Env, when non-nil, is the whole environment of every script; nil
	// inherits this process's environment.
	Env []string
	// Dir is the working directory of every script; "" inherits this
	// process's.
	Dir string
}

var _ Dialer = LocalDialer{}

// Dial never touches the network; it only returns a Conn bound to t.
func (d LocalDialer) Dial(ctx context.Context, t Target) (Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("local %s: %w: %w", t.Name, ErrConnectTimeout, err)
	}
	return &localConn{dialer: d, name: t.Name, closed: make(chan struct{})}, nil
}

type localConn struct {
	dialer    LocalDialer
	name      string
	closeOnce sync.Once
	closed    chan struct{}
}

func (c *localConn) Run(ctx context.Context, s Script) (Output, error) {
	select {
	case <-c.closed:
		return Output{ExitCode: -1}, fmt.Errorf("local %s: %w: connection already closed", c.name, ErrConnectionLost)
	default:
	}
	out, err := supervise(ctx, s, &localExec{env: c.dialer.Env, dir: c.dialer.Dir, marker: s.RunMarker})
	if err != nil {
		return out, fmt.Errorf("local %s: %w", c.name, err)
	}
	return out, nil
}

func (c *localConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

// localExec is one /bin/sh process in a session of its own, as sshd starts
// one (OpenSSH session.c, do_exec_no_pty: setsid in the child): its
// process group then holds everything the script started but what
// exec'd setsid(1) or setpgid, and kill reaches the group, then what
// carries the run's marker.
type localExec struct {
	env    []string
	dir    string
	marker string // Script.RunMarker

	mu     sync.Mutex
	pgid   int // 0 until started
	killed bool
}

func (e *localExec) run(prefix, stdin []byte, stdout, stderr io.Writer) (int, error) {
	cmd := exec.Command("/bin/sh", "-s")
	cmd.Env = e.env
	cmd.Dir = e.dir
	cmd.Stdin = io.MultiReader(bytes.NewReader(prefix), bytes.NewReader(stdin))
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.WaitDelay = localWaitDelay

	// Start under the lock so a concurrent kill either sees the group or
	// prevents the start; a script must not begin after it was stopped.
	e.mu.Lock()
	if e.killed {
		e.mu.Unlock()
		return -1, errors.New("stopped before start")
	}
	if err := cmd.Start(); err != nil {
		e.mu.Unlock()
		return -1, fmt.Errorf("start /bin/sh: %w", err)
	}
	e.pgid = cmd.Process.Pid
	e.mu.Unlock()

	waitErr := cmd.Wait()
	// Background children that outlived the shell are part of the probe;
	// none of them may keep running after Run returns.
	_ = syscall.Kill(-e.pgid, syscall.SIGKILL)
	sweepMarked(e.marker)

	if cmd.ProcessState == nil {
		return -1, fmt.Errorf("wait for /bin/sh: %w", waitErr)
	}
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok {
		return cmd.ProcessState.ExitCode(), nil
	}
	if ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	return ws.ExitStatus(), nil
}

func (e *localExec) kill() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.killed = true
	if e.pgid != 0 {
		_ = syscall.Kill(-e.pgid, syscall.SIGKILL)
		sweepMarked(e.marker)
	}
}

// sweepMarked kills every process whose environment holds
// shproc.RunMarkerEnv=marker, as the kill script's fa_sweep does on a node:
// what a script started under setsid(1) is in no group of ours. Processes
// forked while the list is read are found in the next of three rounds.
func sweepMarked(marker string) {
	if marker == "" {
		return
	}
	want := []byte("\x00" + shproc.RunMarkerEnv + "=" + marker + "\x00")
	for range 3 {
		found := false
		entries, _ := os.ReadDir("/proc")
		for _, ent := range entries {
			pid, err := strconv.Atoi(ent.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			env, err := os.ReadFile("/proc/" + ent.Name() + "/environ")
			if err != nil || !bytes.Contains(append([]byte{0}, env...), want) {
				continue
			}
			_ = syscall.Kill(pid, syscall.SIGKILL)
			found = true
		}
		if !found {
			return
		}
	}
}

// abandon has nothing to do: WaitDelay already bounds cmd.Wait once the
// group is dead.
func (e *localExec) abandon() {}
