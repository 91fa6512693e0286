// Package sshfleet runs a fleet of in-process SSH servers on loopback, for
// tests and the demo. Each node is a real x/crypto/ssh server that executes
// the command it is sent with /bin/sh in its own process group, or misbehaves
// in one chosen way (see Fault) so clients can be tested against broken
// nodes.
//
// A node configured as a Bastion also forwards direct-tcpip channels, so
// clients can test ProxyJump through it; it forwards only to 127.0.0.1.
//
// It owns its listeners, connections, goroutines and child processes, and
// Close releases all of them. It must only listen on and connect to
// 127.0.0.1, must not be
// used outside tests and demos (it runs whatever command a client sends),
// and must not leave a process running after Close.
package sshfleet
