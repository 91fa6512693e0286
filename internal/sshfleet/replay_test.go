package sshfleet

import (
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// TestReplay: a bundle (a script that starts with its nonce line) runs
// once per node and is then replayed with the new nonce, minus the pid
// line; other commands, failed runs and other nodes always run.
func TestReplay(t *testing.T) {
	var r Replay
	f, signer := startFleet(t, NodeConfig{Name: "a", Replay: &r}, NodeConfig{Name: "b", Replay: &r})
	a, b := mustDial(t, f.Nodes()[0], signer), mustDial(t, f.Nodes()[1], signer)
	// 16 hex digits, as audit/probe.NewNonce makes them.
	const nonce1, nonce2 = "0123456789abcdef", "fedcba9876543210"
	// Like remote's pid prelude and audit/probe's bundle: the nonce on the
	// first line, in the output markers, a pid line on stderr, and the
	// run marker, derived from the nonce, on the next line.
	bundle := func(nonce string) string {
		return "echo 'fleet-audit-pid 1 2' >&2; fa_n=" + nonce + "\nfa_m=" + strings.Repeat(nonce[15:], 16) +
			"\necho \"@@FA:$fa_n:begin:x\"; date +%s%N; echo warn >&2\n"
	}
	runOK := func(c *ssh.Client, stdin string) result {
		t.Helper()
		res, ok := run(t, c, "/bin/sh -s", stdin, 10*time.Second)
		if !ok || res.err != nil {
			t.Fatalf("run: %+v (finished %v)", res, ok)
		}
		return res
	}
	first := runOK(a, bundle(nonce1))
	second := runOK(a, bundle(nonce2))
	if want := strings.ReplaceAll(first.stdout, nonce1, nonce2); second.stdout != want {
		t.Errorf("replayed stdout %q, want the first run's %q with the new nonce", second.stdout, want)
	}
	if second.stderr != "warn\n" || !strings.Contains(first.stderr, "fleet-audit-pid") {
		t.Errorf("stderr: first %q, replayed %q; want the pid line only in the real run", first.stderr, second.stderr)
	}
	if r.Hits.Load() != 1 || r.Misses.Load() != 1 {
		t.Errorf("hits %d, misses %d; want 1 and 1", r.Hits.Load(), r.Misses.Load())
	}

	// Another node, another bundle text, a command that is no bundle, and a
	// bundle that failed: all run for real.
	if other := runOK(b, bundle(nonce2)); other.stdout == second.stdout {
		t.Error("node b got node a's recorded run")
	}
	if again := runOK(a, bundle(nonce1)+"echo more\n"); !strings.HasSuffix(again.stdout, "more\n") {
		t.Errorf("a different bundle was replayed: %q", again.stdout)
	}
	plain1, plain2 := runOK(a, "date +%s%N\n"), runOK(a, "date +%s%N\n")
	if plain1.stdout == plain2.stdout {
		t.Error("a command that is not a bundle was replayed")
	}
	failing := "fa_n=" + nonce1 + "\ndate +%s%N; exit 3\n"
	f1, _ := run(t, a, "/bin/sh -s", failing, 10*time.Second)
	f2, _ := run(t, a, "/bin/sh -s", failing, 10*time.Second)
	var exitErr *ssh.ExitError
	if !errors.As(f2.err, &exitErr) || exitErr.ExitStatus() != 3 || f1.stdout == f2.stdout {
		t.Errorf("a failed bundle was replayed: %+v then %+v", f1, f2)
	}
	if r.Hits.Load() != 1 {
		t.Errorf("hits %d after the runs that must not replay, want 1", r.Hits.Load())
	}
}

// TestReplayAs: a stand-in answers a bundle with what the node it stands in
// for printed, that node's name replaced by its own, and never with
// another node's name: before that node ran the bundle, it fails.
func TestReplayAs(t *testing.T) {
	var r Replay
	env := []string{"NODE=node-rep"}
	f, signer := startFleet(t,
		NodeConfig{Name: "node-rep", Replay: &r, ReplayAs: "node-rep", Env: env},
		NodeConfig{Name: "node-two", Replay: &r, ReplayAs: "node-rep", Env: env})
	rep, two := mustDial(t, f.Nodes()[0], signer), mustDial(t, f.Nodes()[1], signer)
	const nonce1, nonce2 = "0123456789abcdef", "fedcba9876543210"
	bundle := func(nonce string) string {
		return "fa_n=" + nonce + "\necho \"@@FA:$fa_n:begin:x\"; echo \"name=$NODE\"; echo \"$NODE says\" >&2\n"
	}
	early, _ := run(t, two, "/bin/sh -s", bundle(nonce1), 10*time.Second)
	var exitErr *ssh.ExitError
	if !errors.As(early.err, &exitErr) || exitErr.ExitStatus() != 127 || early.stdout != "" {
		t.Errorf("a stand-in before any recording: %+v; want status 127 and no output", early)
	}
	first, ok := run(t, rep, "/bin/sh -s", bundle(nonce1), 10*time.Second)
	if !ok || first.err != nil || first.stdout != "@@FA:"+nonce1+":begin:x\nname=node-rep\n" {
		t.Fatalf("the node itself: %+v", first)
	}
	got, ok := run(t, two, "/bin/sh -s", bundle(nonce2), 10*time.Second)
	if !ok || got.err != nil || got.stdout != "@@FA:"+nonce2+":begin:x\nname=node-two\n" || got.stderr != "node-two says\n" {
		t.Errorf("the stand-in: %+v; want the recorded run with its own name and nonce", got)
	}
	if r.Hits.Load() != 1 || r.Misses.Load() != 2 {
		t.Errorf("hits %d, misses %d; want 1 and 2", r.Hits.Load(), r.Misses.Load())
	}
}
