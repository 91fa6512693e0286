// Package probe is what runs on a node and what comes back: the embedded
// probe scripts (probes/*.sh, with their headers as the one home of each
// probe's metadata) and user probes parsed the same way, the bundle that
// runs them in one session (with the root side under sudo), and the parser
// that turns the bundle's output into facts, bounded and with secrets
// redacted.
//
// It knows neither checks nor the fleet: package check judges the facts and
// package audit runs the bundle on every node and compares them.
package probe
