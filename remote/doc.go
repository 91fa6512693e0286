// Package remote runs probe scripts on nodes and reports what they printed.
//
// It owns the transport: dialling a node over SSH (or running on this
// machine for `connection: local`), verifying host keys against known_hosts,
// authenticating with ssh-agent and identity files, feeding a script to
// `/bin/sh -s` over stdin, and bounding every run by a timeout and an output
// cap. Failures are reported through the sentinel errors in remote.go so the
// caller can map them to node statuses with errors.Is. Local and SSH runs
// share one supervisor (supervise.go), so the same event yields the same
// error on either transport.
//
// It must not read the inventory, interpret probe output, or decide what a
// failure means for the audit; and it must never put an inventory value on a
// remote command line, skip host key verification, or wait without a
// deadline.
package remote
