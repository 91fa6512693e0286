package audit

import (
	"slices"
	"strings"

	"github.com/fleet-audit/fleet-audit/result"
)

// roleClass maps an inventory role name, in any of the spellings operators
// use for it, to its rollout class; a role it does not know is a worker's.
func roleClass(role string) result.RolloutClass {
	switch strings.ToLower(role) {
	case "etcd":
		return result.ClassEtcd
	case "control-plane", "controlplane", "control_plane", "master", "server", "cp", "rke2-server":
		return result.ClassControlPlane
	case "infra", "infrastructure", "monitor", "monitoring", "ingress", "storage", "logging":
		return result.ClassInfra
	}
	return result.ClassWorker
}

// hasServerRole says whether the inventory makes a node a server: etcd and
// control-plane nodes run rke2-server.
func hasServerRole(roles []string) bool {
	for _, r := range roles {
		switch roleClass(r) {
		case result.ClassEtcd, result.ClassControlPlane:
			return true
		}
	}
	return false
}

// isServer says whether a node is an RKE2 server: the one answer skew,
// the cluster view, rollout order and server_only facts all use. The rke2
// probe decides where it can: rke2.service names the active service, and
// each unit's state shows it exists when it is anything but inactive
// (systemctl is-active prints "inactive" for a stopped unit and a missing
// one alike), so a crashed (failed) server is still a server. Where
// neither says so (RKE2 stopped, the rke2 probe not run, a report written
// before the facts existed), the inventory role decides.
func isServer(n result.Node) bool {
	present := func(state string) bool {
		switch state {
		case "", "inactive", "absent", "unknown":
			return false
		}
		return true
	}
	switch {
	case n.Facts["rke2.service"] == "rke2-server", present(n.Facts["rke2.server.active"]):
		return true
	case n.Facts["rke2.service"] == "rke2-agent", present(n.Facts["rke2.agent.active"]):
		return false
	}
	return hasServerRole(n.Roles)
}

// nodeClass is the earliest rollout class of a node's roles; without roles,
// a server is control-plane and any other node a worker.
func nodeClass(n result.Node) result.RolloutClass {
	best := len(result.RolloutOrder)
	for _, r := range n.Roles {
		if i := slices.Index(result.RolloutOrder, roleClass(r)); i < best {
			best = i
		}
	}
	if best < len(result.RolloutOrder) {
		return result.RolloutOrder[best]
	}
	if isServer(n) {
		return result.ClassControlPlane
	}
	return result.ClassWorker
}
