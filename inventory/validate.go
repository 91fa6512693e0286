package inventory

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/fleet-audit/fleet-audit/internal/textdist"
)

const (
	maxNameLen = 253 // a DNS name's limit, since host names usually are one
	maxUserLen = 256
)

// Names are allow-listed rather than deny-listed: a host name, group, role or
// user that needs anything beyond these characters is a typo or a paste
// accident far more often than a real name, and a leading '-' would read as
// an option to any tool the value is handed to.
func isNameByte(c rune, extra string) bool {
	return c < utf8.RuneSelf && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune(extra, c))
}

// CheckName, CheckRole and CheckAddress hold a value to the rules Load holds
// the same field to, for a program that writes an inventory (fleet-audit
// discover) and must leave out what Load would refuse instead of writing a
// file that cannot be read back. what is the noun of the message ("host
// name", "group name").
func CheckName(what, s string) error { return checkName(what, s) }

// CheckRole: see CheckName.
func CheckRole(s string) error { return checkRole(s) }

// CheckAddress: see CheckName.
func CheckAddress(s string) error { return checkAddress(s) }

// checkName validates host, group and inventory names; what is the noun
// used in the message ("host name"). ':' is allowed for IPv6 literals.
func checkName(what, s string) error {
	return checkChars(what, s, "._-:", maxNameLen)
}

// checkRole is checkName without ':'.
func checkRole(s string) error {
	return checkChars("role", s, "._-", maxNameLen)
}

func checkUser(s string) error {
	return checkChars("user", s, "._-@", maxUserLen)
}

func checkChars(what, s, extra string, limit int) error {
	if s == "" {
		return kindf(ErrInvalidValue, "%s must not be empty", what)
	}
	if len(s) > limit {
		return kindf(ErrInvalidValue, "%s is %d bytes long, the limit is %d", what, len(s), limit)
	}
	for i, c := range s {
		if !isNameByte(c, extra) {
			return kindf(ErrInvalidValue, "%s %q contains %s; allowed are letters, digits and %s",
				what, s, describeRune(c), quoteChars(extra))
		}
		if i == 0 && (c == '-' || c == '.') {
			return kindf(ErrInvalidValue, "%s %q must not start with %q", what, s, c)
		}
	}
	return nil
}

func quoteChars(extra string) string {
	var parts []string
	for _, c := range extra {
		parts = append(parts, fmt.Sprintf("%q", c))
	}
	return strings.Join(parts, " ")
}

// describeRune names the offending character so that an invisible one (a
// tab, a newline pasted from a terminal) is visible in the message.
func describeRune(c rune) string {
	switch {
	case c == utf8.RuneError:
		return "invalid UTF-8"
	case c == ' ':
		return "a space"
	case c == '\n':
		return "a newline"
	case c == '\t':
		return "a tab"
	case unicode.IsSpace(c):
		return fmt.Sprintf("whitespace %U", c)
	case unicode.IsControl(c):
		return fmt.Sprintf("control character %U", c)
	case strings.ContainsRune(";&|$`'\"\\<>(){}[]*?!~#", c):
		return fmt.Sprintf("shell metacharacter %q", c)
	case c >= utf8.RuneSelf:
		return fmt.Sprintf("non-ASCII character %q (%U)", c, c)
	default:
		return fmt.Sprintf("%q", c)
	}
}

// checkAddress accepts an IP literal or a DNS name. It rejects the forms a
// person reaches for by habit but that do not belong in the field: a port
// suffix, URL brackets, a scheme.
func checkAddress(s string) error {
	if s == "" {
		return kindf(ErrInvalidValue, "address must not be empty")
	}
	if a, err := netip.ParseAddr(s); err == nil {
		if z := a.Zone(); z != "" {
			if err := checkChars("IPv6 zone", z, "._-", 64); err != nil {
				return err
			}
		}
		return nil
	}
	switch {
	case strings.Contains(s, "://"):
		return kindf(ErrInvalidValue, "address %q is a URL; give only the host name or IP", s)
	case strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]"):
		return kindf(ErrInvalidValue, "address %q has brackets; write the IPv6 address without them", s)
	case strings.Count(s, ":") == 1:
		return kindf(ErrInvalidValue, "address %q looks like host:port; set the port with the port key", s)
	}
	if !isHostname(s) {
		return kindf(ErrInvalidValue, "address %q is neither an IP address nor a valid host name", s)
	}
	return nil
}

// isHostname is RFC 1123 with '_' allowed (common in internal zones and
// /etc/hosts). The last label must not be all digits: "10.0.0.256" or
// "10.0.1" is a mistyped IP, not a name, and resolvers disagree about it.
func isHostname(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	labels := strings.Split(s, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for _, c := range l {
			if !isNameByte(c, "-_") {
				return false
			}
		}
	}
	last := labels[len(labels)-1]
	return strings.Trim(last, "0123456789") != ""
}

// expandPath makes an inventory path absolute: "~" and "~/" are the home
// directory, other relative paths are relative to the inventory's directory
// so the file means the same thing whatever the working directory is.
func expandPath(p, home, baseDir string) (string, error) {
	if p == "" {
		return "", kindf(ErrInvalidValue, "path must not be empty")
	}
	for _, c := range p {
		if unicode.IsControl(c) {
			return "", kindf(ErrInvalidValue, "path %q contains %s", p, describeRune(c))
		}
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home == "" {
			return "", kindf(ErrInvalidValue, "cannot expand %q: the home directory is unknown", p)
		}
		return filepath.Join(home, p[1:]), nil
	}
	if strings.HasPrefix(p, "~") {
		return "", kindf(ErrInvalidValue, "path %q: only ~/ is expanded, not ~user/", p)
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p), nil
	}
	return filepath.Join(baseDir, p), nil
}

// suggestion returns the allowed key the user most likely meant, or "".
// Besides near-misses it knows the names Ansible and ssh_config use for the
// same settings, since that is what people type from memory.
func suggestion(key string, allowed []string) string {
	aliases := map[string]string{
		"hostname": "address", "ansiblehost": "address", "ip": "address", "addr": "address", "host": "address",
		"ansibleuser": "user", "username": "user", "remoteuser": "user",
		"ansibleport": "port", "sshport": "port",
		"identityfile": "identity_files", "key": "identity_files", "keys": "identity_files", "privatekey": "identity_files",
		"userknownhostsfile": "known_hosts", "knownhostsfile": "known_hosts",
		"sshconfigfile": "ssh_config", "configfile": "ssh_config",
		"sudo": "become", "ansiblebecome": "become", "ansibleconnection": "connection",
		"group": "groups", "role": "roles",
		"jump": "proxy_jump", "jumphost": "proxy_jump", "jumphosts": "proxy_jump", "bastion": "proxy_jump",
		"stricthostkeychecking": "host_key_policy", "hostkeychecking": "host_key_policy",
		"ansiblebecomeuser": "become_user", "sudouser": "become_user",
		"timeout": "connect_timeout", "keepalive": "server_alive_interval", "keepaliveinterval": "server_alive_interval",
		"passphrase": "passphrase_env",
	}
	norm := func(s string) string {
		return strings.NewReplacer("_", "", "-", "", " ", "").Replace(strings.ToLower(s))
	}
	k := norm(key)
	in := func(s string) bool {
		for _, a := range allowed {
			if a == s {
				return true
			}
		}
		return false
	}
	if a, ok := aliases[k]; ok && in(a) {
		return a
	}
	best, bestD := "", 3
	if len(k) < 5 {
		bestD = 2
	}
	for _, a := range allowed {
		if d := textdist.Distance(k, norm(a)); d < bestD {
			best, bestD = a, d
		}
	}
	return best
}
