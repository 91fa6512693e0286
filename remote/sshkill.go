package remote

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fleet-audit/fleet-audit/internal/shproc"
)

// OpenSSH ignores the "signal" channel request for root logins (it logs
// "session signalling requires privilege separation"), sends it to the
// session's shell alone otherwise, and closing the channel does not stop a
// process that is not writing. fleet-audit usually logs in as root, so a
// timed-out probe would otherwise keep running on the node. To stop it
// anyway every SSH script reports its own pid, start time and session, and
// a killed run gets a second session that kills that process tree, the
// session's orphans and the processes carrying the run's marker.

// pidPrelude is prepended to the script's first line, not on a line of its
// own, so line numbers in the script's error messages stay right. It prints
// the shell's pid, start time (field 22 of /proc/PID/stat, which tells a
// reused pid apart) and session (field 6) to stderr, and leaves no variable
// or positional parameter behind. Without /proc it prints nothing and only
// the signal is tried.
const pidPrelude = `IFS= read -r __fa_s 2>/dev/null </proc/$$/stat && { __fa_s=${__fa_s##*) }; set -- $__fa_s; printf 'fleet-audit-pid %s %s %s\n' "$$" "${20}" "$4" >&2; set --; }; unset __fa_s; `

// pidMarker matches the prelude's line; digits only, so nothing a node
// prints can reach the kill script as anything but a number.
var pidMarker = regexp.MustCompile(`^fleet-audit-pid ([0-9]{1,10}) ([0-9]{1,20}) ([0-9]{1,10})\n$`)

// runMarkerShape is what Script.RunMarker may hold: it is spliced into the
// kill script.
var runMarkerShape = regexp.MustCompile(`^[A-Za-z0-9]{1,64}$`)

// killTreeScript kills a process and all its descendants (shproc.TreeFuncs),
// if the process still has the recorded start time; then the orphans its
// session holds that are no older than it (shproc.OrphanFunc: what it left
// outside its tree without exec'ing setsid), and, given a run marker
// (%[4]s, or empty), every process whose environment carries it
// (shproc.SweepFunc: what left the session).
// The functions are not part of the format: they hold % of their own.
const killTreeScript = `if fa_stat %[1]d && [ "$fa_start" = %[2]d ]; then
	fa_kill %[1]d
fi
fa_orphans %[3]d %[2]d
[ -z "%[4]s" ] || fa_sweep "%[4]s"
`

const (
	// signalGrace is how long a signalled session may take to end before
	// the kill script is sent.
	signalGrace = 500 * time.Millisecond
	// killScriptTimeout bounds the kill script's own session.
	killScriptTimeout = 3 * time.Second
	// maxPIDScan bounds how much stderr is searched for the pid line; it
	// is normally the first line, after anything a login shell printed.
	maxPIDScan = 4 << 10
)

// withPIDPrelude returns the script with the prelude before its first line
// (an SSH run writes the two in turn instead, sparing a copy of the script).
func withPIDPrelude(script []byte) []byte {
	return append([]byte(pidPrelude), script...)
}

// remotePID is the identity the prelude reported.
type remotePID struct {
	pid   int
	start uint64
	sid   int
}

// pidSniffer passes stderr through to dst, minus the prelude's line, and
// reports the pid it carried.
type pidSniffer struct {
	dst   io.Writer
	found func(remotePID)

	mu      sync.Mutex
	buf     []byte
	scanned int
	done    bool
}

func (s *pidSniffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return s.dst.Write(p)
	}
	s.buf = append(s.buf, p...)
	for {
		i := bytes.IndexByte(s.buf, '\n')
		if i < 0 {
			break
		}
		line := s.buf[:i+1]
		s.buf = s.buf[i+1:]
		if m := pidMarker.FindSubmatch(line); m != nil {
			pid, perr := strconv.Atoi(string(m[1]))
			start, serr := strconv.ParseUint(string(m[2]), 10, 64)
			sid, iderr := strconv.Atoi(string(m[3]))
			if perr == nil && serr == nil && iderr == nil {
				s.found(remotePID{pid: pid, start: start, sid: sid})
			}
			s.done = true
			return len(p), s.flushLocked()
		}
		s.scanned += len(line)
		if _, err := s.dst.Write(line); err != nil {
			return len(p), err
		}
	}
	if s.scanned+len(s.buf) > maxPIDScan {
		s.done = true
		return len(p), s.flushLocked()
	}
	return len(p), nil
}

// flush passes on a partial line held back while looking for the marker.
func (s *pidSniffer) flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done = true
	return s.flushLocked()
}

func (s *pidSniffer) flushLocked() error {
	if len(s.buf) == 0 {
		return nil
	}
	_, err := s.dst.Write(s.buf)
	s.buf = nil
	return err
}

// killTree runs killTreeScript for p in a session of its own, bounded by
// killScriptTimeout, opening the session included (a stuck connection
// would hold NewSession; abandon closes it). Failures are ignored: this
// follows the signal, and the caller reports the timeout either way.
func (e *sshExec) killTree(p remotePID) {
	marker := e.marker
	if !runMarkerShape.MatchString(marker) {
		marker = ""
	}
	script := shproc.TreeFuncs + shproc.OrphanFunc + shproc.SweepFunc + fmt.Sprintf(killTreeScript, p.pid, p.start, p.sid, marker)
	done := make(chan error, 1)
	go func() {
		sess, err := e.conn.client.NewSession()
		if err != nil {
			done <- err
			return
		}
		defer sess.Close()
		sess.Stdin = strings.NewReader(script)
		done <- sess.Run(remoteCommand)
	}()
	await(done, killScriptTimeout)
}
