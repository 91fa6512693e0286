package audit

import (
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/result"
)

// isRKE2Server says whether a node runs RKE2 as a server. The rke2 probe's
// units decide where they exist: systemctl is-active prints "inactive" for a
// unit that is stopped and for one that does not exist alike, so any other
// state (active, activating, failed, ...) shows the unit is there. Where
// neither unit says so (RKE2 stopped, the rke2 probe not run), the
// inventory role decides, so a stopped server is still one.
func isRKE2Server(n result.Node) bool {
	present := func(state string) bool {
		switch state {
		case "", "inactive", "absent", "unknown":
			return false
		}
		return true
	}
	switch {
	case present(n.Facts["rke2.server.active"]):
		return true
	case present(n.Facts["rke2.agent.active"]):
		return false
	}
	return hasServerRole(n.Roles)
}

// dropServerOnly removes the facts the probes declare server_only from a
// node that is not an RKE2 server: the setting they read means nothing
// there (RKE2's agent skips a server-only config.yaml key: k3s
// pkg/configfilearg Parser.stripInvalidFlags), so the value is neither
// judged nor compared.
func dropServerOnly(n *result.Node, probes []probe.Probe) {
	if isRKE2Server(*n) {
		return
	}
	for _, p := range probes {
		for _, f := range p.ServerOnly {
			delete(n.Facts, f)
		}
	}
}
