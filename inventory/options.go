package inventory

import (
	"fmt"
	"math"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fleet-audit/fleet-audit/internal/username"
)

// hostKeyPolicies are the host_key_policy values, in the order messages list
// them. They are the names remote.ParseHostKeyPolicy reads.
var hostKeyPolicies = []string{"strict", "accept-new", "insecure-ignore"}

// maxTimeout bounds connect_timeout and server_alive_interval. Nothing
// sensible is longer, and the bound keeps seconds × time.Second from
// overflowing.
const maxTimeout = 24 * time.Hour

// maxJumps is the most ProxyJump hops a host may be behind, counting those a
// hop's own ssh_config entry adds. Real fleets use one or two; a longer chain
// is almost always a loop through Host patterns.
const maxJumps = 8

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// checkEnvName validates passphrase_env. Only the name is checked: the
// inventory never reads the variable, so a passphrase cannot end up in an
// Inventory, an error or a report.
func checkEnvName(s string) error {
	if !envNameRE.MatchString(s) {
		if len(s) > 40 {
			s = s[:40] + "..."
		}
		return kindf(ErrInvalidValue, "passphrase_env must be the name of an environment variable (letters, digits and '_', not starting with a digit), got %q", s)
	}
	return nil
}

// checkBecomeUser is checkUser worded for the become_user key.
// checkBecomeUser holds become_user to the rule the probe bundle applies
// (username.CheckBecome), so a name the run would refuse after connecting
// is an inventory error, with its file and line, at load.
func checkBecomeUser(s string) error {
	if err := checkChars("become_user", s, "._-@", maxUserLen); err != nil {
		return err
	}
	if err := username.CheckBecome(s); err != nil {
		return kindf(ErrInvalidValue, "%s", err.Error())
	}
	return nil
}

// boolean reads a YAML boolean. The strings yes and no are YAML 1.1
// booleans that yaml.v3 reads as strings; they get a hint rather than a
// silent reinterpretation.
func (p *parser) boolean(n *yaml.Node, path string) (bool, state) {
	switch {
	case isNull(n):
		return false, unset
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!bool":
		var v bool
		if err := n.Decode(&v); err == nil {
			return v, set
		}
	}
	msg := fmt.Sprintf("%s must be true or false, got %s", keyOf(path), describe(n))
	if n.Kind == yaml.ScalarNode {
		switch strings.ToLower(n.Value) {
		case "yes", "on":
			msg += "; write true"
		case "no", "off":
			msg += "; write false"
		}
	}
	p.add(n.Line, path, kindf(ErrWrongType, "%s", msg))
	return false, bad
}

// duration reads a Go duration string ("5s", "1m30s") or an integer number
// of seconds, as ssh_config writes them.
func (p *parser) duration(n *yaml.Node, path string) (time.Duration, state) {
	key := keyOf(path)
	var d time.Duration
	switch {
	case isNull(n):
		return 0, unset
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!int":
		var v int64
		if err := n.Decode(&v); err != nil || v < 1 || v > int64(maxTimeout/time.Second) {
			p.add(n.Line, path, kindf(ErrInvalidValue, "%s must be from 1 second to %s, got %s", key, maxTimeout, bare(n.Value)))
			return 0, bad
		}
		return time.Duration(v) * time.Second, set
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str":
		var err error
		if d, err = time.ParseDuration(n.Value); err != nil {
			p.add(n.Line, path, kindf(ErrInvalidValue, "%s must be a duration such as 10s or 1m30s, or a number of seconds, got %s", key, describe(n)))
			return 0, bad
		}
	default:
		msg := fmt.Sprintf("%s must be a duration such as 10s or a number of seconds, got %s", key, describe(n))
		if n.ShortTag() == "!!float" && strings.Contains(n.Value, ".") {
			msg += "; write fractions with a unit, such as 1500ms"
		}
		p.add(n.Line, path, kindf(ErrWrongType, "%s", msg))
		return 0, bad
	}
	if d <= 0 || d > maxTimeout {
		p.add(n.Line, path, kindf(ErrInvalidValue, "%s must be positive and at most %s, got %s", key, maxTimeout, n.Value))
		return 0, bad
	}
	return d, set
}

// count reads server_alive_count_max: an integer of at least 1.
func (p *parser) count(n *yaml.Node, path string) (int, state) {
	if isNull(n) {
		return 0, unset
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		p.add(n.Line, path, kindf(ErrWrongType, "%s must be an integer of at least 1, got %s", keyOf(path), describe(n)))
		return 0, bad
	}
	var v int64
	if err := n.Decode(&v); err != nil || v < 1 || v > math.MaxInt32 {
		p.add(n.Line, path, kindf(ErrInvalidValue, "%s must be from 1 to %d, got %s", keyOf(path), math.MaxInt32, bare(n.Value)))
		return 0, bad
	}
	return int(v), set
}

// proxyJump reads proxy_jump: a comma-separated string as in ssh_config, or
// a list with one hop per item. "none" (alone) is set with no hops, so it
// replaces an inherited chain and keeps ssh_config's ProxyJump out.
func (p *parser) proxyJump(n *yaml.Node, path string) ([]hopSpec, state) {
	switch {
	case isNull(n):
		return nil, unset
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str":
		hops, err := parseJumpList(n.Value)
		if err != nil {
			p.add(n.Line, path, err)
			return nil, bad
		}
		return hops, set
	case n.Kind != yaml.SequenceNode:
		p.add(n.Line, path, kindf(ErrWrongType, "proxy_jump must be a string such as \"ops@bastion:2222,inner\" or a list of hops, got %s", describe(n)))
		return nil, bad
	}
	raw, st := p.list(n, path, func(v string) (string, error) {
		if strings.EqualFold(v, "none") {
			return "", kindf(ErrInvalidValue, "none cannot be one hop of several; write proxy_jump: none to disable jumping")
		}
		_, err := parseHopSpec(v)
		return v, err
	})
	hops := []hopSpec{}
	for _, v := range raw {
		h, _ := parseHopSpec(v) // checked by list
		hops = append(hops, h)
	}
	if st == set && len(hops) == 0 {
		p.add(n.Line, path, kindf(ErrInvalidValue, "proxy_jump is an empty list; write proxy_jump: none for a direct connection"))
		st = bad
	}
	if len(hops) > maxJumps {
		p.add(n.Line, path, kindf(ErrInvalidValue, "proxy_jump has %d hops, the limit is %d", len(hops), maxJumps))
		st = bad
	}
	return hops, st
}

// hopSpec is one ProxyJump hop as written: [user@]host[:port]. host is the
// name looked up in ssh_config, as with ssh -J.
type hopSpec struct {
	raw  string
	user string // "" when not given
	host string
	port int // 0 when not given
}

// parseJumpList parses a ProxyJump value: "none", or comma-separated hops.
// It returns an empty, non-nil slice for none.
func parseJumpList(s string) ([]hopSpec, error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "none") {
		return []hopSpec{}, nil
	}
	if s == "" {
		return nil, kindf(ErrInvalidValue, "ProxyJump must not be empty; write none for a direct connection")
	}
	var hops []hopSpec
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if strings.EqualFold(part, "none") {
			return nil, kindf(ErrInvalidValue, "none cannot be one hop of several in %q", s)
		}
		h, err := parseHopSpec(part)
		if err != nil {
			return nil, err
		}
		hops = append(hops, h)
	}
	if len(hops) > maxJumps {
		return nil, kindf(ErrInvalidValue, "%d hops, the limit is %d", len(hops), maxJumps)
	}
	return hops, nil
}

// parseHopSpec parses [ssh://][user@]host[:port], with an IPv6 host in
// brackets when a port follows, as OpenSSH's parse_user_host_port does. The
// user is everything before the last '@', so domain users work.
func parseHopSpec(s string) (hopSpec, error) {
	h := hopSpec{raw: s}
	rest := s
	if strings.HasPrefix(strings.ToLower(rest), "ssh://") {
		rest = strings.TrimSuffix(rest[len("ssh://"):], "/")
	} else if strings.Contains(rest, "://") {
		return h, kindf(ErrInvalidValue, "jump host %q is a URL of a scheme other than ssh://", s)
	}
	if rest == "" {
		return h, kindf(ErrInvalidValue, "jump host must not be empty")
	}
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		h.user, rest = rest[:i], rest[i+1:]
		if err := checkUser(h.user); err != nil {
			return h, fmt.Errorf("jump host %q: %w", s, err)
		}
	}
	var port string
	switch {
	case strings.HasPrefix(rest, "["):
		end := strings.Index(rest, "]")
		if end < 0 {
			return h, kindf(ErrInvalidValue, "jump host %q has an unclosed [", s)
		}
		h.host, port = rest[1:end], rest[end+1:]
		if a, err := netip.ParseAddr(h.host); err != nil || !a.Is6() {
			return h, kindf(ErrInvalidValue, "jump host %q: brackets are for IPv6 addresses, got %q", s, h.host)
		}
		if port != "" && !strings.HasPrefix(port, ":") {
			return h, kindf(ErrInvalidValue, "jump host %q: expected :PORT after ]", s)
		}
		port = strings.TrimPrefix(port, ":")
		if port == "" && rest[end+1:] != "" {
			return h, kindf(ErrInvalidValue, "jump host %q ends with ':' and no port", s)
		}
	case strings.Count(rest, ":") == 1:
		h.host, port, _ = strings.Cut(rest, ":")
		if port == "" {
			return h, kindf(ErrInvalidValue, "jump host %q ends with ':' and no port", s)
		}
	default:
		// Several colons without brackets can only be a bare IPv6 address.
		h.host = rest
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return h, kindf(ErrInvalidValue, "jump host %q: port must be from 1 to 65535, got %q", s, port)
		}
		h.port = n
	}
	what := "jump host"
	if h.host != s {
		what = "host"
	}
	var err error
	if _, perr := netip.ParseAddr(h.host); perr == nil {
		err = checkAddress(h.host)
	} else {
		err = checkName(what, h.host)
	}
	if err != nil && h.host != s {
		err = fmt.Errorf("jump host %q: %w", s, err)
	}
	return h, err
}

// sshFlag reads an ssh_config yes/no option, as OpenSSH's multistate_flag.
func sshFlag(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "yes", "true":
		return true, nil
	case "no", "false":
		return false, nil
	}
	return false, kindf(ErrInvalidValue, "want yes or no")
}

// sshHostKeyPolicy maps StrictHostKeyChecking to a host_key_policy. ask
// becomes strict: fleet-audit never prompts, and refusing is what ask does
// when nobody answers. no becomes accept-new: OpenSSH's no also records new
// keys, and a "Host *" line written for convenience must not make a CI gate
// trust a changed key; ignoring keys takes host_key_policy insecure-ignore
// (or the flag), said in so many words.
func sshHostKeyPolicy(v string) (string, error) {
	switch strings.ToLower(v) {
	case "yes", "true", "ask":
		return "strict", nil
	case "accept-new":
		return "accept-new", nil
	case "no", "false", "off":
		return "accept-new", nil
	}
	return "", kindf(ErrInvalidValue, "want yes, ask, accept-new, no or off")
}

// sshTime reads an ssh_config time value as OpenSSH's convtime: a sequence
// of numbers each with an optional unit s, m, h, d or w (seconds without a
// unit), so "30", "1m30s" and "2M" all work.
func sshTime(v string) (time.Duration, error) {
	if v == "" {
		return 0, kindf(ErrInvalidValue, "empty time")
	}
	units := map[byte]time.Duration{'s': time.Second, 'm': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour, 'w': 7 * 24 * time.Hour}
	var total time.Duration
	for i := 0; i < len(v); {
		j := i
		for j < len(v) && v[j] >= '0' && v[j] <= '9' {
			j++
		}
		if j == i {
			return 0, kindf(ErrInvalidValue, "want seconds or a time such as 1m30s")
		}
		n, err := strconv.ParseInt(v[i:j], 10, 64)
		if err != nil {
			return 0, kindf(ErrInvalidValue, "number out of range")
		}
		unit := time.Second
		if j < len(v) {
			u, ok := units[v[j]|0x20]
			if !ok {
				return 0, kindf(ErrInvalidValue, "want seconds or a time such as 1m30s")
			}
			unit = u
			j++
		}
		if n > int64(maxTimeout/unit) {
			return 0, kindf(ErrInvalidValue, "longer than %s", maxTimeout)
		}
		total += time.Duration(n) * unit
		if total > maxTimeout {
			return 0, kindf(ErrInvalidValue, "longer than %s", maxTimeout)
		}
		i = j
	}
	return total, nil
}

// splitArgs splits an ssh_config value into words as OpenSSH's argv_split
// does for lists such as UserKnownHostsFile: on spaces and tabs, with double
// or single quotes grouping a word that contains spaces.
func splitArgs(s string) ([]string, error) {
	var out []string
	var b strings.Builder
	inWord := false
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				b.WriteByte(c)
			}
		case c == '"' || c == '\'':
			quote, inWord = c, true
		case c == ' ' || c == '\t':
			if inWord {
				out = append(out, b.String())
				b.Reset()
				inWord = false
			}
		default:
			b.WriteByte(c)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, kindf(ErrInvalidValue, "unterminated quote")
	}
	if inWord {
		out = append(out, b.String())
	}
	return out, nil
}
