package remote

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"
)

const (
	// maxStderr bounds the diagnostics kept from one run; stderr past it is
	// dropped silently because only stdout carries facts.
	maxStderr = 64 << 10

	// killGrace is how long a stopped script gets to wind down before its
	// transport is abandoned, and again after that before Run returns
	// regardless, so a dead peer cannot hold Run forever. It covers an SSH
	// kill's signal grace plus its kill script.
	killGrace = 5 * time.Second
)

// cappedBuffer keeps the first limit bytes written to it and drops the rest.
// It never returns a write error: a copier that saw one would stop draining
// the stream, and a blocked producer is exactly what the cap must avoid.
type cappedBuffer struct {
	mu       sync.Mutex
	buf      []byte
	limit    int64
	overflow bool
	// exceeded is closed on the first byte past limit, so the supervisor
	// can stop the producer instead of discarding its output forever.
	exceeded chan struct{}
}

func newCappedBuffer(limit int64) *cappedBuffer {
	return &cappedBuffer{limit: limit, exceeded: make(chan struct{})}
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	room := b.limit - int64(len(b.buf))
	if int64(len(p)) <= room {
		b.buf = append(b.buf, p...)
		return len(p), nil
	}
	if room > 0 {
		b.buf = append(b.buf, p[:room]...)
	}
	if !b.overflow {
		b.overflow = true
		close(b.exceeded)
	}
	return len(p), nil
}

// snapshot returns a copy because a producer that ignored the kill may still
// be writing when Run returns.
func (b *cappedBuffer) snapshot() (data []byte, overflowed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.buf...), b.overflow
}

// execution is one script run in progress, on this machine or over SSH. The
// backends only start, wait and stop; supervise decides what the outcome
// means, so local and SSH runs report the same errors for the same events.
type execution interface {
	// run starts the script and blocks until it ends. It returns the exit
	// code, or an error (wrapping a sentinel where one fits) when the script
	// ended without reporting one.
	run(prefix, stdin []byte, stdout, stderr io.Writer) (int, error)
	// kill stops the script with SIGKILL; run should return soon after. It
	// may be called before, during or after run, and more than once.
	kill()
	// abandon tears down whatever run is still blocked on after kill had
	// its grace period, such as the SSH connection under a dead session.
	abandon()
}

// supervise runs e under the script's timeout, output cap and ctx, and maps
// how it ended to Output and one sentinel error.
func supervise(ctx context.Context, s Script, e execution) (Output, error) {
	start := time.Now()
	limit := s.MaxOutput
	if limit <= 0 {
		limit = DefaultMaxOutput
	}
	stdout := newCappedBuffer(limit)
	stderr := newCappedBuffer(maxStderr)

	type result struct {
		code int
		err  error
	}
	done := make(chan result, 1)
	go func() {
		code, err := e.run(s.Prefix, s.Stdin, stdout, stderr)
		done <- result{code, err}
	}()

	var timeout <-chan time.Time
	if s.Timeout > 0 {
		t := time.NewTimer(s.Timeout)
		defer t.Stop()
		timeout = t.C
	}

	// stop is why the script was stopped; nil when it ended by itself.
	var stop error
	var res result
	select {
	case res = <-done:
	case <-stdout.exceeded:
		stop = fmt.Errorf("%w: stdout passed %d bytes, so the script was killed", ErrOutputTruncated, limit)
	case <-timeout:
		stop = fmt.Errorf("%w after %s, so the script was killed", ErrRunTimeout, s.Timeout)
	case <-ctx.Done():
		stop = fmt.Errorf("%w: %w", ErrRunTimeout, ctx.Err())
	}
	if stop != nil {
		// kill runs on its own goroutine because signalling a session
		// writes to the network, which can block on a dead peer; abandon
		// is what unblocks it.
		go e.kill()
		if !await(done, killGrace) {
			e.abandon()
			await(done, killGrace)
		}
	}

	out := Output{ExitCode: -1}
	out.Stdout, out.Truncated = stdout.snapshot()
	out.Stderr, _ = stderr.snapshot()
	out.Duration = time.Since(start)
	if stop == nil && out.Truncated {
		// The script overflowed and exited before the supervisor noticed.
		stop = fmt.Errorf("%w: stdout passed %d bytes", ErrOutputTruncated, limit)
	}
	if stop != nil {
		return out, stop
	}
	if res.err != nil {
		return out, res.err
	}
	out.ExitCode = res.code
	return out, nil
}

// await waits up to d for the run to finish; the result is dropped because
// a stopped run's own error only restates why it was stopped.
func await[T any](done <-chan T, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}
