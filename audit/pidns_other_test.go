//go:build !linux

package audit

import "os/exec"

// inPIDNamespace: PID namespaces are Linux's.
func inPIDNamespace(*exec.Cmd) bool { return false }
