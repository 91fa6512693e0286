// Package remote runs probe scripts on nodes and reports what they printed.
//
// It owns the transport: dialling a node over SSH (or running on this
// machine for `connection: local`), through ProxyJump hosts whose
// connections are shared by all the nodes behind them for the dialer's
// lifetime (SSHDialer.Close ends them), verifying host keys against
// known_hosts under a host-key policy (strict, accept-new,
// insecure-ignore), authenticating with ssh-agent, identity files (also
// encrypted ones and certificates), retrying handshakes the server dropped,
// sending keepalives, feeding a script to `/bin/sh -s` over stdin, and
// bounding every run by a timeout and an output cap. A ProxyCommand
// (proxycommand.go) is run locally, as ssh runs it, with the connection on
// its stdio, and is the one local command remote starts for an SSH node.
// Failures are reported through the sentinel errors in remote.go so the
// caller can map them to node statuses with errors.Is. Local and SSH runs
// share one supervisor (supervise.go), so the same event yields the same
// error on either transport.
//
// It must not read the inventory, interpret probe output, or decide what a
// failure means for the audit; and it must never put an inventory value on a
// remote command line, skip host key verification unless the caller chose
// insecure-ignore (and then say so through HostKeyNoter), or wait without a
// deadline.
package remote
