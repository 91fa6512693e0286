package sshfleet

import (
	"bytes"
	"crypto/sha256"
	"regexp"
	"sync"
	"sync/atomic"
)

// Replay memoises the probe bundles a node runs, for tests that exercise
// the client (reports, selection, limits, gates) on nodes that never
// change: the first run of a bundle on a node runs it for real, and a
// later run of the same bundle on the same node gets the recorded stdout,
// stderr and exit status instead of another few hundred forks. A bundle is
// told apart from other commands (a kill script, a sudo check) by the
// fleet-audit nonce line it starts with; other commands always run. The
// nonce, fresh on every run, is taken out of the key and put back into the
// replayed output, so a replay parses exactly as a run would.
//
// Only a fleet whose nodes' files do not change may use a Replay: the key
// is the node (its address, name, command environment and directory) and
// the bundle's text, not the files the probes read.
type Replay struct {
	mu   sync.Mutex
	runs map[[sha256.Size]byte]*recorded
	// Hits and Misses count replays and real runs, for a test to report.
	Hits, Misses atomic.Int64
}

type recorded struct {
	stdout, stderr []byte // with the nonce as nonceHole
	status         int
}

// nonceLine finds the bundle's nonce (audit/probe BuildBundle writes it on
// the first line, after remote's pid prelude).
var nonceLine = regexp.MustCompile(`(?:^|; )fa_n=([0-9a-f]{16,64})\n`)

// markerLine finds the run's marker (audit/probe BuildBundle writes
// fa_m=, shproc.RunMarkerEnv's value, on the line after the nonce's): it
// is derived from the nonce, so it changes with every run as the nonce
// does and is taken out of the key the same way.
var markerLine = regexp.MustCompile(`\nfa_m=([0-9a-f]{16,64})\n`)

// probeTimedOut matches a probe end marker with timeout(1)'s status or a
// KILL's: a run that hit a timeout says more about the machine's load than
// about the node, and is not recorded.
var probeTimedOut = regexp.MustCompile(`:end:[^:\n]+:(124|137)\n`)

// pidLine is remote's pid prelude line on stderr; a replay leaves it out,
// so no client ever holds the identity of a process that is gone.
var pidLine = regexp.MustCompile(`(?m)^fleet-audit-pid [0-9]+ [0-9]+\n`)

const (
	nonceHole  = "\x00nonce\x00"
	markerHole = "\x00marker\x00"
)

// key identifies a bundle run on one node; ok is false for a command that
// is not a bundle.
func (r *Replay) key(n *Node, command string, stdin []byte) (k [sha256.Size]byte, nonce []byte, ok bool) {
	head := stdin[:min(len(stdin), 4<<10)]
	m := nonceLine.FindSubmatch(head)
	if m == nil {
		return k, nil, false
	}
	nonce = m[1]
	h := sha256.New()
	if as := n.Config.ReplayAs; as != "" {
		// A stand-in and the node it stands in for share their runs.
		h.Write([]byte("as\x00" + as + "\x00"))
	} else {
		h.Write([]byte(n.Addr + "\x00" + n.Config.Name + "\x00"))
		for _, e := range n.Config.Env {
			h.Write([]byte(e + "\x00"))
		}
		h.Write([]byte(n.Config.Dir + "\x00"))
	}
	h.Write([]byte(command + "\x00"))
	script := bytes.ReplaceAll(stdin, nonce, []byte(nonceHole))
	if m := markerLine.FindSubmatch(head); m != nil {
		script = bytes.ReplaceAll(script, m[1], []byte(markerHole))
	}
	h.Write(script)
	copy(k[:], h.Sum(nil))
	return k, nonce, true
}

func (r *Replay) lookup(k [sha256.Size]byte) *recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.runs[k]
}

// record keeps a finished run unless a probe in it timed out.
func (r *Replay) record(k [sha256.Size]byte, nonce []byte, stdout, stderr []byte, status int) {
	if status != 0 || probeTimedOut.Match(stdout) {
		return
	}
	rec := &recorded{
		stdout: bytes.ReplaceAll(stdout, nonce, []byte(nonceHole)),
		stderr: pidLine.ReplaceAll(bytes.ReplaceAll(stderr, nonce, []byte(nonceHole)), nil),
		status: status,
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.runs == nil {
		r.runs = map[[sha256.Size]byte]*recorded{}
	}
	r.runs[k] = rec
}

// replay is rec's output with this run's nonce, and with the name of the
// node that ran it replaced by as's when as is not "".
func (rec *recorded) replay(nonce []byte, ran, as string) (stdout, stderr []byte) {
	stdout, stderr = bytes.ReplaceAll(rec.stdout, []byte(nonceHole), nonce), bytes.ReplaceAll(rec.stderr, []byte(nonceHole), nonce)
	if as != "" && as != ran {
		stdout, stderr = bytes.ReplaceAll(stdout, []byte(ran), []byte(as)), bytes.ReplaceAll(stderr, []byte(ran), []byte(as))
	}
	return stdout, stderr
}
