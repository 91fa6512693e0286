// Package sshdtest starts a real OpenSSH sshd on loopback for end-to-end
// tests, with a private configuration, host key and authorized_keys in the
// test's temporary directory.
//
// It owns the sshd process and its files, and stops the process when the
// test ends. It must not touch the machine's own sshd configuration or host
// keys, listen beyond 127.0.0.1, or be imported outside tests. Without sshd
// installed the test is skipped, unless FLEET_AUDIT_REQUIRE_SSHD=1 makes the
// absence a failure, as CI does.
package sshdtest
