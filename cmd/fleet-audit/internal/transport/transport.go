// Package transport adapts package remote to audit.Transport: it turns an
// inventory host into a remote.Target and remote's sentinel errors into node
// statuses with a one-line message. It owns that mapping and nothing else,
// so package audit never depends on SSH and report never reaches remote.
package transport

import (
	"context"
	"errors"
	"maps"
	"sync"

	"github.com/fleet-audit/fleet-audit/audit"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/inventory"
	"github.com/fleet-audit/fleet-audit/remote"
	"github.com/fleet-audit/fleet-audit/result"
)

// Fleet is the audit.Fleet of an inventory: its hosts as audit targets,
// in inventory order. A Transport built with the same inventory opens them.
func Fleet(inv *inventory.Inventory) *audit.Fleet {
	f := &audit.Fleet{Name: inv.Name, Targets: make([]audit.Target, 0, len(inv.Hosts))}
	for _, h := range inv.Hosts {
		f.Targets = append(f.Targets, audit.Target{
			Name: h.Name, Address: h.Address, Roles: append([]string{}, h.Roles...),
			Become: probe.Become{Method: h.Become, User: h.BecomeUser},
		})
	}
	return f
}

// Transport opens SSH or local sessions for audit.Run.
type Transport struct {
	// Inventory says how to reach each target (by its name): address,
	// port, user, keys, jump hosts, host-key policy.
	Inventory *inventory.Inventory
	SSH       remote.Dialer
	Local     remote.Dialer
	// MaxOutput caps the bytes one node may print; 0 = remote's default.
	MaxOutput int64
	// HostKeyPolicy, when set, overrides every host's own (the command
	// line's --host-key-policy beats the inventory and ssh_config).
	HostKeyPolicy remote.HostKeyPolicy

	mu    sync.Mutex
	notes map[string]string

	indexOnce sync.Once
	byName    map[string]int
}

// HostKeyNotes maps each host whose key was trusted other than through
// known_hosts (recorded by accept-new, or not verified under
// insecure-ignore) to how; the report must say so.
func (t *Transport) HostKeyNotes() map[string]string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return maps.Clone(t.notes)
}

// PolicyFor is the host-key policy a host is dialled with: override when
// set, else the host's own (inventory host_key_policy or ssh_config
// StrictHostKeyChecking), else strict.
func PolicyFor(h inventory.Host, override remote.HostKeyPolicy) remote.HostKeyPolicy {
	if override != remote.HostKeyDefault {
		return override
	}
	if p, err := remote.ParseHostKeyPolicy(h.HostKeyPolicy); err == nil {
		return p
	}
	return remote.HostKeyStrict
}

// targetOf is the remote.Target for a host.
func targetOf(h inventory.Host, policy remote.HostKeyPolicy) remote.Target {
	t := remote.Target{
		Name: h.Name, Address: h.Address, Port: h.Port, User: h.User,
		IdentityFiles: h.IdentityFiles, KnownHostsFiles: h.KnownHostsFiles,
		Local:          h.Connection == "local",
		IdentitiesOnly: h.IdentitiesOnly, PassphraseEnv: h.PassphraseEnv,
		HostKeyPolicy:  PolicyFor(h, policy),
		ConnectTimeout: h.ConnectTimeout, KeepAliveInterval: h.ServerAliveInterval, KeepAliveCountMax: h.ServerAliveCountMax,
		ProxyCommand: h.ProxyCommand,
	}
	for _, j := range h.Jumps {
		t.Jumps = append(t.Jumps, remote.Hop{
			Name: j.Name, Address: j.Address, Port: j.Port, User: j.User,
			IdentityFiles: j.IdentityFiles, KnownHostsFiles: j.KnownHostsFiles, IdentitiesOnly: j.IdentitiesOnly,
			ProxyCommand: j.ProxyCommand,
		})
	}
	return t
}

var _ audit.Transport = (*Transport)(nil)

// Open dials the host.
func (t *Transport) Open(ctx context.Context, node audit.Target) (audit.Session, error) {
	h, ok := t.host(node.Name)
	if !ok {
		return nil, &audit.NodeError{Status: result.StatusError, Message: "no inventory host named " + node.Name}
	}
	target := targetOf(h, t.HostKeyPolicy)
	d := t.SSH
	if target.Local {
		d = t.Local
	}
	if d == nil {
		return nil, &audit.NodeError{Status: result.StatusError, Message: "no transport configured for connection " + h.Connection}
	}
	c, err := d.Dial(ctx, target)
	if err != nil {
		return nil, Classify(err)
	}
	if n, ok := c.(remote.HostKeyNoter); ok && n.HostKeyNote() != "" {
		t.mu.Lock()
		if t.notes == nil {
			t.notes = map[string]string{}
		}
		t.notes[h.Name] = n.HostKeyNote()
		t.mu.Unlock()
	}
	return &session{conn: c, maxOutput: t.MaxOutput}, nil
}

type session struct {
	conn      remote.Conn
	maxOutput int64
}

func (s *session) Exec(ctx context.Context, script audit.Script) (audit.ExecResult, error) {
	// A bundle that needs more than the cap (the cluster probes, whose
	// output grows with the cluster) says so.
	limit := s.maxOutput
	if script.MaxOutput > 0 {
		limit = max(limit, script.MaxOutput)
	}
	out, err := s.conn.Run(ctx, remote.Script{Prefix: script.Head, Stdin: script.Bundle, Timeout: script.Timeout, MaxOutput: limit, RunMarker: script.RunMarker})
	res := audit.ExecResult{Stdout: out.Stdout, Stderr: out.Stderr, ExitCode: out.ExitCode}
	if err != nil {
		return res, Classify(err)
	}
	return res, nil
}

func (s *session) Close() error { return s.conn.Close() }

// Classify maps an error from package remote to a node status. The message
// is the status's meaning alone, the cause with its fix, the same on every
// node it fails, so that a report groups forty unknown host keys under one
// instruction; remote's own error text, node by node (address,
// fingerprint, what the proxy said), is the error, and reports show it
// after the message, once (result.ErrorText).
func Classify(err error) error {
	status := result.StatusError
	switch {
	case errors.Is(err, context.Canceled):
		status = result.StatusInterrupted
	case errors.Is(err, remote.ErrJumpFailed):
		// First: the hop's own cause (refused, host key...) is wrapped too,
		// and would otherwise be taken for the node's.
		status = result.StatusJumpFailed
	case errors.Is(err, remote.ErrUnreachable):
		status = result.StatusUnreachable
	case errors.Is(err, remote.ErrConnectTimeout):
		status = result.StatusTimeout
	case errors.Is(err, remote.ErrAuthFailed):
		status = result.StatusAuthFailed
	case errors.Is(err, remote.ErrHostKeyUnknown):
		status = result.StatusHostKeyUnknown
	case errors.Is(err, remote.ErrHostKeyMismatch):
		status = result.StatusHostKeyMismatch
	case errors.Is(err, remote.ErrRunTimeout), errors.Is(err, context.DeadlineExceeded):
		status = result.StatusProbeTimeout
	case errors.Is(err, remote.ErrOutputTruncated):
		status = result.StatusOutputTruncated
	case errors.Is(err, remote.ErrConnectionLost):
		status = result.StatusConnectionLost
	}
	return &audit.NodeError{Status: status, Message: status.Meaning(), Err: err}
}

// host finds the inventory host behind a target; inventory names are unique.
func (t *Transport) host(name string) (inventory.Host, bool) {
	t.indexOnce.Do(func() {
		t.byName = map[string]int{}
		if t.Inventory != nil {
			for i, h := range t.Inventory.Hosts {
				t.byName[h.Name] = i
			}
		}
	})
	i, ok := t.byName[name]
	if !ok {
		return inventory.Host{}, false
	}
	return t.Inventory.Hosts[i], true
}
