package inventory

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

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
	levels := []level{{"host", &d.s}}
	h := Host{Name: d.name, Line: d.line, Source: map[string]string{}}
	if d.group != nil {
		h.Group = d.group.name
		levels = append(levels, level{"group:" + d.group.name, &d.group.s})
	}
	levels = append(levels, level{"defaults", defaults})

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

	known, src := pick(levels, func(s *settings) *field[[]string] { return &s.knownHosts })
	h.KnownHostsFiles, h.Source["known_hosts"] = known.v, src

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
	lookup := func(key string) string {
		if cfg == nil {
			return ""
		}
		v, err := cfg.Get(d.name, key)
		if err != nil {
			p.add(d.line, d.path, fmt.Errorf("%w %s: %s for %q: %w", ErrSSHConfig, cfgPath, key, d.name, err))
			return ""
		}
		return v
	}
	fromCfg := func(key, value string, err error) {
		p.add(d.line, d.path, fmt.Errorf("ssh_config %s gives %s %q: %w", cfgPath, key, value, err))
	}

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

	ids, src := pick(levels, func(s *settings) *field[[]string] { return &s.identityFiles })
	h.IdentityFiles, h.Source["identity_files"] = ids.v, src
	if ids.state == unset && cfg != nil {
		vals, err := cfg.GetAll(d.name, "IdentityFile")
		if err != nil {
			p.add(d.line, d.path, fmt.Errorf("%w %s: IdentityFile for %q: %w", ErrSSHConfig, cfgPath, d.name, err))
		}
		tokens := map[byte]string{'d': p.home, 'u': p.currentUser, 'h': h.Address, 'n': d.name, 'r': h.User, 'p': strconv.Itoa(h.Port)}
		for _, v := range vals {
			if strings.EqualFold(v, "none") {
				continue
			}
			path, err := percentExpand(v, tokens)
			if err == nil && strings.HasPrefix(path, "~") {
				// OpenSSH leaves relative IdentityFile paths relative to
				// the working directory, so only ~ is expanded, not made
				// relative to the inventory.
				path, err = expandPath(path, p.home, "")
			}
			if err != nil {
				fromCfg("IdentityFile", v, err)
				continue
			}
			if !slices.Contains(h.IdentityFiles, path) {
				h.IdentityFiles = append(h.IdentityFiles, path)
			}
		}
		if len(h.IdentityFiles) > 0 {
			h.Source["identity_files"] = "ssh_config"
		}
	}

	return h
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
