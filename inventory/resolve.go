package inventory

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kevinburke/ssh_config"
)

// level is one step of the inheritance chain, most specific first.
type level struct {
	label string // the Source value for settings taken from it
	s     *settings
}

// pick returns the most specific level's value of one setting.
func pick[T any](levels []level, get func(*settings) *field[T]) (field[T], string) {
	for _, l := range levels {
		if f := get(l.s); f.state != unset {
			return *f, l.label
		}
	}
	return field[T]{}, "builtin"
}

// resolve turns a declared host into a Host: inventory chain first, then
// ssh_config, then built-in defaults. It reports what cannot be resolved;
// the Host is only meaningful if nothing was reported in the whole file.
func (p *parser) resolve(d *hostDecl, defaults *settings) Host {
	h := Host{Name: d.name, Line: d.line, Source: map[string]string{}}
	levels := d.levels
	if levels == nil {
		levels = []level{{"host", &d.s}}
		if d.group != nil {
			h.Group = d.group.name
			h.Groups = []string{d.group.name}
			levels = append(levels, level{"group:" + d.group.name, &d.group.s})
		}
		levels = append(levels, level{"defaults", defaults})
	}
	if p.cmdline != nil {
		levels = append(slices.Clip(levels), level{"command line", p.cmdline})
	}
	saved := p.curFile
	p.curFile = d.file
	defer func() { p.curFile = saved }()

	conn, src := pick(levels, func(s *settings) *field[string] { return &s.connection })
	h.Connection, h.Source["connection"] = conn.v, src
	if conn.state == unset {
		h.Connection = "ssh"
	}

	become, src := pick(levels, func(s *settings) *field[string] { return &s.become })
	h.Become, h.Source["become"] = become.v, src

	var roleSrc []string
	for i := len(levels) - 1; i >= 0; i-- {
		f := levels[i].s.roles
		if len(f.v) > 0 {
			h.Roles = append(h.Roles, f.v...)
			roleSrc = append(roleSrc, levels[i].label)
		}
	}
	slices.Sort(h.Roles)
	h.Roles = slices.Compact(h.Roles)
	h.Source["roles"] = "builtin"
	if len(roleSrc) > 0 {
		h.Source["roles"] = strings.Join(roleSrc, ",")
	}

	// The ssh_config is only consulted for ssh hosts; a local host is this
	// machine whatever an alias says.
	scf, src := pick(levels, func(s *settings) *field[string] { return &s.sshConfig })
	h.Source["ssh_config"] = src
	cfgPath, explicit, cfgLine, cfgField := scf.v, true, scf.line, scf.path
	if scf.state == unset {
		cfgPath, explicit, cfgLine, cfgField = p.userSSHConfig, p.userSSHConfigExplicit, 0, "ssh_config"
	}
	var cfg *ssh_config.Config
	cfgOK := scf.state != bad
	if cfgOK && h.Connection == "ssh" {
		cfg, cfgOK = p.sshConfig(cfgPath, explicit, cfgLine, cfgField)
		if cfg != nil {
			h.SSHConfigFile = cfgPath
		}
	}
	// A missing address that follows from an error already reported (a
	// bad connection, an unusable ssh_config) would only be noise.
	explained := conn.state == bad || !cfgOK
	sc := &sshConfigLookup{p: p, cfg: cfg, path: cfgPath, line: d.line, field: d.path}
	lookup := func(key string) string { return sc.get(d.name, key) }
	fromCfg := func(key, value string, err error) { sc.bad("", key, value, err) }

	addr, src := pick(levels, func(s *settings) *field[string] { return &s.address })
	h.Address, h.Source["address"] = addr.v, src
	switch {
	case addr.state != unset:
	case h.Connection == "local":
		h.Address, h.Source["address"] = "localhost", "builtin"
	default:
		if raw := lookup("HostName"); raw != "" {
			v, err := percentExpand(raw, map[byte]string{'h': d.name, 'n': d.name})
			if err == nil {
				err = checkAddress(v)
			}
			if err != nil {
				fromCfg("HostName", raw, err)
				break
			}
			h.Address, h.Source["address"] = v, "ssh_config"
		} else if checkAddress(d.name) == nil {
			h.Address = d.name
		} else if !explained {
			where := "an ssh_config HostName"
			if h.SSHConfigFile != "" {
				where = "a HostName in " + h.SSHConfigFile
			}
			p.add(d.line, d.path, kindf(ErrNoAddress, "host %q has no address: set address, give it %s, or name it by its DNS name or IP", d.name, where))
		}
	}

	usr, src := pick(levels, func(s *settings) *field[string] { return &s.user })
	h.User, h.Source["user"] = usr.v, src
	switch {
	case usr.state != unset:
	default:
		if v := lookup("User"); v != "" {
			if err := checkUser(v); err != nil {
				fromCfg("User", v, err)
				break
			}
			h.User, h.Source["user"] = v, "ssh_config"
		} else if err := checkUser(p.currentUser); err != nil {
			p.add(d.line, d.path, fmt.Errorf("no user is set and the current user cannot be used, set user: %w", err))
		} else {
			h.User = p.currentUser
		}
	}

	port, src := pick(levels, func(s *settings) *field[int] { return &s.port })
	h.Port, h.Source["port"] = port.v, src
	if port.state == unset {
		h.Port = 22
		if v := lookup("Port"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 65535 {
				fromCfg("Port", v, kindf(ErrInvalidValue, "port must be from 1 to 65535"))
			} else {
				h.Port, h.Source["port"] = n, "ssh_config"
			}
		}
	}

	tokens := map[byte]string{'d': p.home, 'u': p.currentUser, 'h': h.Address, 'n': d.name, 'r': h.User, 'p': strconv.Itoa(h.Port)}
	ids, src := pick(levels, func(s *settings) *field[[]string] { return &s.identityFiles })
	h.IdentityFiles, h.Source["identity_files"] = ids.v, src
	if ids.state == unset {
		if files := sc.identityFiles("", d.name, tokens); len(files) > 0 {
			h.IdentityFiles, h.Source["identity_files"] = files, "ssh_config"
		}
	}

	known, src := pick(levels, func(s *settings) *field[[]string] { return &s.knownHosts })
	h.KnownHostsFiles, h.Source["known_hosts"] = known.v, src
	if known.state == unset {
		if files, ok := sc.knownHostsFiles("", d.name, tokens); ok {
			h.KnownHostsFiles, h.Source["known_hosts"] = files, "ssh_config"
		}
	}

	only, src := pick(levels, func(s *settings) *field[bool] { return &s.identitiesOnly })
	h.IdentitiesOnly, h.Source["identities_only"] = only.v, src
	if only.state == unset {
		if v, ok := sc.identitiesOnly("", d.name); ok {
			h.IdentitiesOnly, h.Source["identities_only"] = v, "ssh_config"
		}
	}

	policy, src := pick(levels, func(s *settings) *field[string] { return &s.hostKeyPolicy })
	h.HostKeyPolicy, h.Source["host_key_policy"] = policy.v, src
	if policy.state == unset {
		if raw := lookup("StrictHostKeyChecking"); raw != "" {
			if v, err := sshHostKeyPolicy(raw); err != nil {
				fromCfg("StrictHostKeyChecking", raw, err)
			} else {
				h.HostKeyPolicy, h.Source["host_key_policy"] = v, "ssh_config"
			}
		}
	}

	// ssh_config's 0 means "no timeout" or "no keepalives". The transport
	// always has a deadline, so 0 falls back to its default, like unset.
	durations := []struct {
		key, sshKey string
		dst         *time.Duration
		get         func(*settings) *field[time.Duration]
	}{
		{"connect_timeout", "ConnectTimeout", &h.ConnectTimeout, func(s *settings) *field[time.Duration] { return &s.connectTimeout }},
		{"server_alive_interval", "ServerAliveInterval", &h.ServerAliveInterval, func(s *settings) *field[time.Duration] { return &s.serverAliveInterval }},
	}
	for _, o := range durations {
		f, src := pick(levels, o.get)
		*o.dst, h.Source[o.key] = f.v, src
		if f.state != unset {
			continue
		}
		if raw := lookup(o.sshKey); raw != "" {
			v, err := sshTime(raw)
			switch {
			case err != nil:
				fromCfg(o.sshKey, raw, err)
			case v > 0:
				*o.dst, h.Source[o.key] = v, "ssh_config"
			}
		}
	}

	countMax, src := pick(levels, func(s *settings) *field[int] { return &s.serverAliveCountMax })
	h.ServerAliveCountMax, h.Source["server_alive_count_max"] = countMax.v, src
	if countMax.state == unset {
		if raw := lookup("ServerAliveCountMax"); raw != "" {
			n, err := strconv.Atoi(raw)
			switch {
			case err != nil || n < 0 || n > math.MaxInt32:
				fromCfg("ServerAliveCountMax", raw, kindf(ErrInvalidValue, "want a count of 0 or more"))
			case n > 0:
				h.ServerAliveCountMax, h.Source["server_alive_count_max"] = n, "ssh_config"
			}
		}
	}

	// The passphrase itself is never looked at here: only the name travels.
	pass, src := pick(levels, func(s *settings) *field[string] { return &s.passphraseEnv })
	h.PassphraseEnv, h.Source["passphrase_env"] = pass.v, src

	bu, src := pick(levels, func(s *settings) *field[string] { return &s.becomeUser })
	h.BecomeUser, h.Source["become_user"] = bu.v, src
	if bu.state == set && become.state != bad && h.Become != "sudo" {
		p.becomeUserWithoutSudo(bu, d.name, become, h.Source["become"])
	}

	// ProxyJump and ProxyCommand are one choice, made by the most
	// specific level that sets either: in ssh the first of them obtained
	// wins and the other is ignored (readconf.c parse_jump is inactive
	// once proxy_command is set).
	h.Source["proxy_jump"], h.Source["proxy_command"] = "builtin", "builtin"
	var rt route
	var cmdField *field[string]
	lvl, found := routeLevel(levels)
	switch {
	case h.Connection != "ssh":
		// This machine is not reached over SSH, so there is nothing to jump through.
	case !found:
		rt = sc.route("", d.name, func(key string) {
			h.Source[map[string]string{"ProxyJump": "proxy_jump", "ProxyCommand": "proxy_command"}[key]] = "ssh_config"
		})
	case lvl.s.proxyCommand.state == set:
		cmdField = &lvl.s.proxyCommand
		rt, h.Source["proxy_command"] = routeOf(cmdField.v), lvl.label
		if cmdField.v == "" {
			rt = route{}
		}
	case lvl.s.proxyJump.state == set:
		rt, h.Source["proxy_jump"] = route{hops: lvl.s.proxyJump.v}, lvl.label
	}
	if explained {
		return h
	}
	if rt.command != "" {
		cmd, err := expandProxyCommand(rt.command, proxyCommandTokens(d.name, h.Address, h.User, h.Port))
		switch {
		case err == nil:
			h.ProxyCommand = cmd
		case cmdField != nil:
			p.addIn(cmdField.file, cmdField.line, cmdField.path, err)
		default:
			sc.badCommand("", err)
		}
	}
	if len(rt.hops) > 0 {
		r := &jumpResolver{p: p, sc: sc, node: &h}
		h.Jumps = r.resolve(d.name, rt.hops)
	}
	return h
}

// routeLevel is the most specific level that sets ProxyJump or
// ProxyCommand (either may be none); found is false when none does, and
// the ssh_config decides.
func routeLevel(levels []level) (level, bool) {
	for _, l := range levels {
		if l.s.proxyJump.state != unset || l.s.proxyCommand.state != unset {
			return l, true
		}
	}
	return level{}, false
}

// percentExpand expands the ssh_config(5) TOKENS fleet-audit knows. An
// unknown token is an error rather than left in place, since a literal "%C"
// in a path or host name would only fail later and less clearly.
func percentExpand(s string, tokens map[byte]string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch {
		case i == len(s):
			return "", kindf(ErrInvalidValue, "%q ends with a lone %%", s)
		case s[i] == '%':
			b.WriteByte('%')
		default:
			v, ok := tokens[s[i]]
			if !ok {
				return "", kindf(ErrInvalidValue, "%q uses the token %%%c, which fleet-audit does not expand", s, s[i])
			}
			b.WriteString(v)
		}
	}
	return b.String(), nil
}

// becomeUserWithoutSudo reports a become_user that would be silently
// ignored: without sudo there is nobody to become. An inherited key is
// reported once, naming the first host that breaks it.
func (p *parser) becomeUserWithoutSudo(bu field[string], host string, become field[string], becomeSrc string) {
	if p.reported[bu.path] {
		return
	}
	if p.reported == nil {
		p.reported = map[string]bool{}
	}
	p.reported[bu.path] = true
	what := "no become"
	if become.state == set {
		what = fmt.Sprintf("become %q from %s", cmpOr(become.v, "none"), becomeSrc)
	}
	p.addIn(bu.file, bu.line, bu.path, kindf(ErrInvalidValue, "become_user %q needs become: sudo, but host %q has %s; set become: sudo or remove become_user", bu.v, host, what))
}
