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
	simKeyMu   sync.Mutex
	simKeyVal  string
)

// simKey is this process's key, made on first use unless a test gave one
// (UseSimulatedNodeKey).
func simKey() string {
	simKeyMu.Lock()
	defer simKeyMu.Unlock()
	if simKeyVal == "" {
		simKeyVal = NewNonce()
	}
	return simKeyVal
}

// UseSimulatedNodeKey makes key this process's key and enables simulated
// nodes. It is for a test binary whose children, the same binary run as
// fleet-audit (testscript, a signal test), audit the simulated nodes the
// parent serves: parent and children must share one key. The key comes
// from the test's own environment, never a node's. Only tests call it.
func UseSimulatedNodeKey(key string) {
	simKeyMu.Lock()
	simKeyVal = key
	simKeyMu.Unlock()
	simEnabled.Store(true)
}

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
