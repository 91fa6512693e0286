package inventory

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/kevinburke/ssh_config"
)

// sshConfigLookup reads one host's (or jump host's) options from the
// ssh_config in effect for an inventory host, and reports bad values against
// that inventory host: the inventory is what the operator runs, so its line
// is where the error points, and the message names the ssh_config file.
type sshConfigLookup struct {
	p     *parser
	cfg   *ssh_config.Config // nil when no file is consulted
	path  string
	line  int
	field string
}

func (sc *sshConfigLookup) get(alias, key string) string {
	if sc.cfg == nil {
		return ""
	}
	v, err := sc.cfg.Get(alias, key)
	if err != nil {
		sc.p.add(sc.line, sc.field, fmt.Errorf("%w %s: %s for %q: %w", ErrSSHConfig, sc.path, key, alias, err))
		return ""
	}
	return v
}

func (sc *sshConfigLookup) getAll(alias, key string) []string {
	if sc.cfg == nil {
		return nil
	}
	vals, err := sc.cfg.GetAll(alias, key)
	if err != nil {
		sc.p.add(sc.line, sc.field, fmt.Errorf("%w %s: %s for %q: %w", ErrSSHConfig, sc.path, key, alias, err))
	}
	return vals
}

// bad reports an unusable value; hop is "" for the inventory host itself.
func (sc *sshConfigLookup) bad(hop, key, value string, err error) {
	if hop == "" {
		sc.p.add(sc.line, sc.field, fmt.Errorf("ssh_config %s gives %s %q: %w", sc.path, key, value, err))
		return
	}
	sc.p.add(sc.line, sc.field, fmt.Errorf("ssh_config %s gives %s %q for jump host %q: %w", sc.path, key, value, hop, err))
}

// badCommand reports an unusable ProxyCommand without quoting it back: it
// may carry credentials.
func (sc *sshConfigLookup) badCommand(hop string, err error) {
	if hop == "" {
		sc.p.add(sc.line, sc.field, fmt.Errorf("ssh_config %s gives a ProxyCommand fleet-audit cannot run: %w", sc.path, err))
		return
	}
	sc.p.add(sc.line, sc.field, fmt.Errorf("ssh_config %s gives jump host %q a ProxyCommand fleet-audit cannot run: %w", sc.path, hop, err))
}

// cfgPath expands one path from ssh_config. OpenSSH leaves relative paths
// relative to the working directory, so only ~ is expanded, not made
// relative to the inventory.
func (sc *sshConfigLookup) cfgPath(v string, tokens map[byte]string) (string, error) {
	if strings.Contains(v, "${") {
		return "", kindf(ErrInvalidValue, "%q uses an environment variable, which fleet-audit does not expand", v)
	}
	path, err := percentExpand(v, tokens)
	if err != nil {
		return "", err
	}
	for _, c := range path {
		if unicode.IsControl(c) {
			return "", kindf(ErrInvalidValue, "path %q contains %s", path, describeRune(c))
		}
	}
	if strings.HasPrefix(path, "~") {
		return expandPath(path, sc.p.home, "")
	}
	return path, nil
}

// identityFiles returns every IdentityFile for alias, expanded, without
// duplicates and without "none".
func (sc *sshConfigLookup) identityFiles(hop, alias string, tokens map[byte]string) []string {
	var files []string
	for _, v := range sc.getAll(alias, "IdentityFile") {
		if strings.EqualFold(v, "none") {
			continue
		}
		path, err := sc.cfgPath(v, tokens)
		if err != nil {
			sc.bad(hop, "IdentityFile", v, err)
			continue
		}
		if !slices.Contains(files, path) {
			files = append(files, path)
		}
	}
	return files
}

// knownHostsFiles returns the UserKnownHostsFile list for alias; ok is
// false when the file sets none (or a bad one, which is reported). "none"
// and /dev/null are dropped: they mean "no file", and an empty list leaves
// the choice to the connecting side rather than pointing it at a device.
func (sc *sshConfigLookup) knownHostsFiles(hop, alias string, tokens map[byte]string) ([]string, bool) {
	raw := sc.get(alias, "UserKnownHostsFile")
	if raw == "" {
		return nil, false
	}
	words, err := splitArgs(raw)
	if err != nil {
		sc.bad(hop, "UserKnownHostsFile", raw, err)
		return nil, false
	}
	files := []string{}
	for _, w := range words {
		if strings.EqualFold(w, "none") || w == "/dev/null" {
			continue
		}
		path, err := sc.cfgPath(w, tokens)
		if err != nil {
			sc.bad(hop, "UserKnownHostsFile", raw, err)
			return nil, false
		}
		if !slices.Contains(files, path) {
			files = append(files, path)
		}
	}
	return files, true
}

func (sc *sshConfigLookup) identitiesOnly(hop, alias string) (bool, bool) {
	raw := sc.get(alias, "IdentitiesOnly")
	if raw == "" {
		return false, false
	}
	v, err := sshFlag(raw)
	if err != nil {
		sc.bad(hop, "IdentitiesOnly", raw, err)
		return false, false
	}
	return v, true
}

// route returns alias's ProxyJump hops or ProxyCommand, calling found
// with the key that decided (none included). As in ssh, the first of the
// two in the file wins: a ProxyJump sets the proxy command to none
// (readconf.c parse_jump), a ProxyCommand makes a later ProxyJump
// inactive, and "ProxyJump none" leaves the ProxyCommand free.
func (sc *sshConfigLookup) route(hop, alias string, found func(key string)) route {
	rawJump := sc.get(alias, "ProxyJump")
	rawCommand := sc.get(alias, "ProxyCommand")
	useCommand := rawCommand != "" && (rawJump == "" || strings.EqualFold(rawJump, "none"))
	if rawCommand != "" && rawJump != "" && !strings.EqualFold(rawJump, "none") {
		first, ok := sc.firstKey(alias, "ProxyJump", "ProxyCommand")
		if !ok {
			whom := fmt.Sprintf("%q", alias)
			if hop != "" {
				whom = fmt.Sprintf("jump host %q", hop)
			}
			sc.p.add(sc.line, sc.field, kindf(ErrInvalidValue, "ssh_config %s: an included file gives %s both ProxyJump and ProxyCommand, and ssh uses whichever comes first, which fleet-audit cannot tell there; keep one",
				sc.path, whom))
			return route{}
		}
		useCommand = strings.EqualFold(first, "ProxyCommand")
	}
	switch {
	case useCommand && strings.EqualFold(rawCommand, "none"):
		found("ProxyCommand")
	case useCommand:
		command, err := checkProxyCommand(rawCommand)
		if err != nil {
			sc.badCommand(hop, err)
			return route{}
		}
		found("ProxyCommand")
		return routeOf(command)
	case rawJump != "":
		hops, err := parseJumpList(rawJump)
		if err != nil {
			sc.bad(hop, "ProxyJump", rawJump, err)
			return route{}
		}
		found("ProxyJump")
		return route{hops: hops}
	}
	return route{}
}

// firstKey says which of keys comes first in the blocks that apply to
// alias. ok is false when the first is inside an Include that sets more
// than one of them: the library keeps an included file's order to itself.
func (sc *sshConfigLookup) firstKey(alias string, keys ...string) (string, bool) {
	for _, host := range sc.cfg.Hosts {
		if !host.Matches(alias) {
			continue
		}
		for _, node := range host.Nodes {
			switch n := node.(type) {
			case *ssh_config.KV:
				for _, k := range keys {
					if strings.EqualFold(n.Key, k) {
						return k, true
					}
				}
			case *ssh_config.Include:
				var set []string
				for _, k := range keys {
					if n.Get(alias, k) != "" {
						set = append(set, k)
					}
				}
				switch len(set) {
				case 1:
					return set[0], true
				case 0:
				default:
					return "", false
				}
			}
		}
	}
	return "", false
}

// jumpResolver turns an inventory host's hop specs into Jumps the way
// OpenSSH does for ssh -J a,b: each hop is looked up in the same ssh_config
// as the host; an explicit user@ or :port wins over that lookup; the first
// hop's own ProxyJump is prepended, recursively. Later hops are reached
// through the hop before them, so, as with OpenSSH, their own ProxyJump is
// not used.
type jumpResolver struct {
	p    *parser
	sc   *sshConfigLookup
	node *Host
}

func (r *jumpResolver) resolve(node string, hops []hopSpec) []Jump {
	jumps, names, ok := r.expand(hops, []string{node})
	if !ok {
		return nil
	}
	if len(jumps) > maxJumps {
		r.p.add(r.sc.line, r.sc.field, kindf(ErrInvalidValue, "host %q is behind %d ProxyJump hops (%s), the limit is %d",
			node, len(jumps), strings.Join(names, " → "), maxJumps))
		return nil
	}
	// OpenSSH refuses a hop that jumps to itself ("jumphost loop"); a host
	// twice anywhere in one chain is the same mistake further apart.
	chain := append(slices.Clone(names), node)
	for i, n := range chain {
		if j := slices.Index(chain[i+1:], n); j >= 0 {
			r.p.add(r.sc.line, r.sc.field, kindf(ErrInvalidValue, "ProxyJump loop: %q is reached through %s, which passes %q twice",
				node, strings.Join(chain, " → "), n))
			return nil
		}
	}
	return jumps
}

// expand resolves hops; stack is the chain of hosts whose first hop led
// here, so a loop through ssh_config Host patterns ends with an error
// instead of recursing forever.
func (r *jumpResolver) expand(hops []hopSpec, stack []string) ([]Jump, []string, bool) {
	var jumps []Jump
	var names []string
	for i, s := range hops {
		j, own, ok := r.hop(s, i == 0)
		if !ok {
			return nil, nil, false
		}
		if len(own) > 0 {
			next := append(slices.Clone(stack), s.host)
			chain := strings.Join(append(slices.Clone(next), own[0].host), " → ")
			switch {
			case slices.Contains(next, own[0].host):
				r.p.add(r.sc.line, r.sc.field, kindf(ErrInvalidValue, "ProxyJump loop: %s, each reached through the next (ProxyJump of %q in %s); if a pattern such as \"Host *\" also matches the jump host, exclude it: \"Host * !%s\"",
					chain, s.host, r.sc.path, own[0].host))
				return nil, nil, false
			case len(next) > maxJumps:
				r.p.add(r.sc.line, r.sc.field, kindf(ErrInvalidValue, "ProxyJump chain %s is deeper than %d hops (ProxyJump of %q in %s)",
					chain, maxJumps, s.host, r.sc.path))
				return nil, nil, false
			}
			pre, preNames, ok := r.expand(own, next)
			if !ok {
				return nil, nil, false
			}
			jumps, names = append(jumps, pre...), append(names, preNames...)
		}
		jumps, names = append(jumps, j), append(names, s.host)
	}
	return jumps, names, true
}

// hop resolves one hop spec. own is the hop's own ProxyJump, only looked up
// for the first hop of a list (see jumpResolver).
func (r *jumpResolver) hop(s hopSpec, first bool) (Jump, []hopSpec, bool) {
	sc, alias := r.sc, s.host
	j := Jump{Name: s.raw, Port: 22}
	ok := true
	fail := func(key, value string, err error) {
		sc.bad(alias, key, value, err)
		ok = false
	}

	if raw := sc.get(alias, "HostName"); raw != "" {
		v, err := percentExpand(raw, map[byte]string{'h': alias, 'n': alias})
		if err == nil {
			err = checkAddress(v)
		}
		if err != nil {
			fail("HostName", raw, err)
		}
		j.Address = v
	} else if checkAddress(alias) == nil {
		j.Address = alias
	} else {
		r.p.add(sc.line, sc.field, kindf(ErrNoAddress, "jump host %q has no address: give it a HostName in %s or name it by its DNS name or IP",
			alias, cmpOr(sc.path, "an ssh_config")))
		ok = false
	}

	switch v := sc.get(alias, "User"); {
	case s.user != "":
		j.User = s.user
	case v != "":
		if err := checkUser(v); err != nil {
			fail("User", v, err)
		}
		j.User = v
	default:
		// Like ssh -J: a hop without a user is logged into as the local
		// user, not as the node's user.
		if err := checkUser(r.p.currentUser); err != nil {
			r.p.add(sc.line, sc.field, fmt.Errorf("jump host %q has no user and the current user cannot be used, write user@%s: %w", alias, alias, err))
			ok = false
		}
		j.User = r.p.currentUser
	}

	switch v := sc.get(alias, "Port"); {
	case s.port != 0:
		j.Port = s.port
	case v != "":
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 65535 {
			fail("Port", v, kindf(ErrInvalidValue, "port must be from 1 to 65535"))
		}
		j.Port = n
	}
	if !ok {
		return j, nil, false
	}

	tokens := map[byte]string{'d': r.p.home, 'u': r.p.currentUser, 'h': j.Address, 'n': alias, 'r': j.User, 'p': strconv.Itoa(j.Port)}
	// A hop the ssh_config says nothing about uses the node's keys and
	// known_hosts: the inventory's identity_files and known_hosts are meant
	// for the whole path, and a bastion usually shares them.
	j.IdentityFiles = sc.identityFiles(alias, alias, tokens)
	if len(j.IdentityFiles) == 0 {
		j.IdentityFiles = slices.Clone(r.node.IdentityFiles)
	}
	if files, found := sc.knownHostsFiles(alias, alias, tokens); found {
		j.KnownHostsFiles = files
	} else {
		j.KnownHostsFiles = slices.Clone(r.node.KnownHostsFiles)
	}
	j.IdentitiesOnly = r.node.IdentitiesOnly
	if v, found := sc.identitiesOnly(alias, alias); found {
		j.IdentitiesOnly = v
	}

	var own []hopSpec
	if first {
		rt := sc.route(alias, alias, func(string) {})
		own = rt.hops
		if rt.command != "" {
			cmd, err := expandProxyCommand(rt.command, proxyCommandTokens(alias, j.Address, j.User, j.Port))
			if err != nil {
				sc.badCommand(alias, err)
				ok = false
			}
			j.ProxyCommand = cmd
		}
	}
	return j, own, ok
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
