package main

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// untilDone runs f, which may block in a call no context reaches (open(2)
// of a FIFO nobody writes, read(2) of a pipe or a terminal), and returns
// when f does or when ctx ends, whichever comes first. An f left blocked is
// abandoned to the process's exit: the command returns the interruption
// at once and the process ends with it.
func untilDone[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// restorers undo what must not outlive the process (a terminal left with
// echo off), also when a second signal ends it at once.
var restorers struct {
	sync.Mutex
	next int
	m    map[int]func()
}

// atExit registers f to run before an exit forced by a second signal; the
// returned func unregisters it.
func atExit(f func()) (remove func()) {
	restorers.Lock()
	defer restorers.Unlock()
	if restorers.m == nil {
		restorers.m = map[int]func(){}
	}
	id := restorers.next
	restorers.next++
	restorers.m[id] = f
	return func() {
		restorers.Lock()
		defer restorers.Unlock()
		delete(restorers.m, id)
	}
}

func runRestorers() {
	restorers.Lock()
	defer restorers.Unlock()
	for _, f := range restorers.m {
		f()
	}
}

// signalContext is cancelled by the first SIGINT, SIGTERM or SIGHUP, so
// the run winds down (its probes stopped) and still writes what it has; a
// second one ends the process at once with exit 130, as a shell user
// pressing Ctrl-C twice expects, after restoring the terminal. SIGHUP (the
// terminal closed, the jump host's session lost) is an interrupt like the
// others: left to Go's default it ended the process at once, exit 129,
// with no report and the probes still running.
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		select {
		case <-sigs:
		case <-ctx.Done():
			return
		}
		cancel()
		<-sigs
		runRestorers()
		os.Exit(int(exitInterrupted))
	}()
	return ctx, func() {
		signal.Stop(sigs)
		cancel()
	}
}
