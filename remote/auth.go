package remote

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// authPlan is the keys one dial may offer, and the notes that explain a
// failure: which keys were offered and which were skipped and why. It never
// records key material, only paths and fingerprints.
type authPlan struct {
	agentSocket string
	agentConn   net.Conn // nil without a usable agent
	files       []fileSigner

	mu      sync.Mutex
	loaded  bool
	signers []ssh.Signer
	offered []string
	notes   []string
}

type fileSigner struct {
	path   string
	signer ssh.Signer
}

// newAuthPlan parses the identity files and connects to the agent. Keys that
// cannot be used are skipped with a note rather than failing the dial,
// because another key may still be accepted.
func newAuthPlan(deadline time.Time, agentSocket string, identityFiles []string, identitiesOnly bool, passphraseEnv string, ask PassphraseFunc) *authPlan {
	a := &authPlan{agentSocket: agentSocket}
	if agentSocket != "" {
		d := net.Dialer{Deadline: deadline}
		conn, err := d.Dial("unix", agentSocket)
		if err != nil {
			a.note("ssh-agent at %s: %v", agentSocket, err)
		} else {
			// The agent answers during authentication, inside the dial
			// deadline; a hung agent must not outlive it.
			_ = conn.SetDeadline(deadline)
			a.agentConn = conn
		}
	}
	for _, path := range identityFiles {
		path = expandHome(path)
		pemBytes, err := os.ReadFile(path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				a.note("%s: no such file", path)
			} else {
				a.note("%s: %v", path, err)
			}
			continue
		}
		signer, err := ssh.ParsePrivateKey(pemBytes)
		var missing *ssh.PassphraseMissingError
		switch {
		case errors.As(err, &missing):
			a.note("%s: passphrase-protected (load it with ssh-add %s)", path, path)
			continue
		case err != nil:
			a.note("%s: not a usable private key: %v", path, err)
			continue
		}
		a.files = append(a.files, fileSigner{path: path, signer: signer})
	}
	return a
}

// usable reports whether any key could be offered. An agent counts before
// it is asked, because listing its keys is deferred to the server's request.
func (a *authPlan) usable() bool {
	return a.agentConn != nil || len(a.files) > 0
}

// getSigners is handed to ssh.PublicKeysCallback, so the agent is only
// queried when the server actually asks for public key authentication.
func (a *authPlan) getSigners() ([]ssh.Signer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.loaded {
		return a.signers, nil
	}
	a.loaded = true
	if a.agentConn != nil {
		signers, err := agent.NewClient(a.agentConn).Signers()
		switch {
		case err != nil:
			a.notes = append(a.notes, fmt.Sprintf("ssh-agent at %s: list keys: %v", a.agentSocket, err))
		case len(signers) == 0:
			a.notes = append(a.notes, fmt.Sprintf("ssh-agent at %s holds no keys", a.agentSocket))
		}
		for _, s := range signers {
			a.signers = append(a.signers, s)
			a.offered = append(a.offered, "agent "+describeKey(s.PublicKey()))
		}
	}
	for _, f := range a.files {
		a.signers = append(a.signers, f.signer)
		a.offered = append(a.offered, f.path+" "+describeKey(f.signer.PublicKey()))
	}
	return a.signers, nil
}

func (a *authPlan) note(format string, args ...any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.notes = append(a.notes, fmt.Sprintf(format, args...))
}

// summary says what was offered, and why other keys were not, for an
// authentication error.
func (a *authPlan) summary() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var parts []string
	if len(a.offered) > 0 {
		parts = append(parts, "offered "+strings.Join(a.offered, ", "))
	} else {
		parts = append(parts, "no key was offered")
	}
	parts = append(parts, a.notes...)
	return strings.Join(parts, "; ")
}

// noKeyReason explains why there is nothing to offer at all.
func (a *authPlan) noKeyReason() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	notes := append([]string(nil), a.notes...)
	if a.agentSocket == "" {
		notes = append(notes, "no ssh-agent configured (SSH_AUTH_SOCK)")
	}
	if len(notes) == 0 {
		notes = append(notes, "no identity file configured")
	}
	return strings.Join(notes, "; ")
}

func (a *authPlan) close() {
	if a.agentConn != nil {
		_ = a.agentConn.Close()
	}
}

func describeKey(k ssh.PublicKey) string {
	return k.Type() + " " + ssh.FingerprintSHA256(k)
}

// expandHome expands a leading "~/" as the shell would, since inventories
// are written with shell paths in mind.
func expandHome(path string) string {
	if !strings.HasPrefix(path, "~/") {
		return path
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return path
	}
	return home + path[1:]
}
