package audit

import (
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/result"
)

// dropServerOnly removes the facts the probes declare server_only from a
// node that is not an RKE2 server: the setting they read means nothing
// there (RKE2's agent skips a server-only config.yaml key: k3s
// pkg/configfilearg Parser.stripInvalidFlags), so the value is neither
// judged nor compared.
func dropServerOnly(n *result.Node, probes []probe.Probe) {
	if isServer(*n) {
		return
	}
	for _, p := range probes {
		for _, f := range p.ServerOnly {
			delete(n.Facts, f)
		}
	}
}
