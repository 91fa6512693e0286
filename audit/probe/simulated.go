package probe

import (
	"sync"
	"sync/atomic"
)

// SimulatedNodeKeyEnv names the environment entry that, beside
// FLEET_AUDIT_ROOT, makes a node a simulated one to the bundle.
const SimulatedNodeKeyEnv = "FLEET_AUDIT_SIM_KEY"

// A simulated node (internal/nodesim) is a directory named by
// FLEET_AUDIT_ROOT in its session's environment: the probes read files
// under it and its bin/ heads PATH, root's included. A real node's login
// environment (pam_env, ~/.ssh/environment, sshd's AcceptEnv) can name
// FLEET_AUDIT_ROOT too, and then a login-owned bin/ would run as root. So
// the hook is opened by this process alone: a bundle honours
// FLEET_AUDIT_ROOT only when the session's environment also carries
// simKey, random per process and written into the bundle only once the
// process has simulated nodes (tests, demo). A real node never sees a key
// before its session starts, and the bundle of a process without simulated
// nodes carries none, so there it is ignored whatever the node sets.
var (
	simEnabled atomic.Bool
	simKey     = sync.OnceValue(NewNonce)
)

// EnableSimulatedNodes lets the bundles this process builds from now on
// honour FLEET_AUDIT_ROOT on the nodes whose environment SimulatedNodeEnv
// made. Only tests and the demo call it.
func EnableSimulatedNodes() { simEnabled.Store(true) }

// SimulatedNodeEnv is the environment that makes a session's node the
// simulated one at root, for this process's bundles; it enables them
// (EnableSimulatedNodes).
func SimulatedNodeEnv(root string) []string {
	EnableSimulatedNodes()
	return []string{"FLEET_AUDIT_ROOT=" + root, SimulatedNodeKeyEnv + "=" + simKey()}
}

// bundleSimKey is the key written into a bundle: none until the process
// has simulated nodes.
func bundleSimKey() string {
	if !simEnabled.Load() {
		return ""
	}
	return simKey()
}
