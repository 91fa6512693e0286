// Package username holds the one rule for a user name fleet-audit passes
// to sudo -u (become_user): the inventory refuses any other when it loads,
// and the probe bundle, whose shell text the name is spliced into, holds
// it to the same rule. Two rules let an inventory load that the run then
// refused after connecting to every node.
package username

import (
	"fmt"
	"regexp"
)

// portable is a portable user name (POSIX, as useradd accepts by default:
// NAME_REGEX in adduser.conf(5), useradd(8) "CAVEATS"), at most 32 bytes:
// no character in it means anything to a shell.
var portable = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,31}$`)

// CheckBecome says why s cannot be become_user, or nil.
func CheckBecome(s string) error {
	if portable.MatchString(s) {
		return nil
	}
	return fmt.Errorf("become_user %q is not a portable user name: want a lowercase letter or _, then up to 31 lowercase letters, digits, _ or - (the name is passed to sudo -u inside the probes' shell text)", s)
}
