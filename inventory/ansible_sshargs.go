package inventory

import (
	"strconv"
	"strings"
)

// sshArgs reads the ssh command-line options users put in
// ansible_ssh_common_args and ansible_ssh_extra_args: -o KEY=VALUE (or
// "KEY VALUE"), -J, -i, -p, -l and -F. As in ssh, the first value given for
// an option is the one used (ssh_config(5): "the first obtained value will
// be used"), and anything the level already set from its own ansible_
// variable wins over both. Options that change nothing fleet-audit does are
// listed in the warning; ones it cannot honour are errors.
func (c *ansibleConverter) sshArgs(s *settings, v ansibleVar) {
	p := c.p
	bad := func(err error) { p.addIn(v.file, v.line, v.path, err) }
	if v.value.kind != valueString {
		if v.value.kind != valueNull {
			bad(kindf(ErrWrongType, "%s must be a string of ssh options, got %s", v.name, v.value.describe()))
		}
		return
	}
	args, err := shlexSplit(v.value.s, false)
	if err != nil {
		bad(kindf(ErrInvalidValue, "%s: %v", v.name, err))
		return
	}
	first := firstWins{}
	option := func(key, value string) {
		if first.take(key) {
			c.sshOption(s, v, key, value)
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) < 2 || a[0] != '-' {
			bad(kindf(ErrInvalidValue, "%s: %q is not an ssh option", v.name, a))
			return
		}
		flag := a[1]
		value := a[2:]
		takesValue := strings.IndexByte("oJiplFcmDLRWbBeEIQSw", flag) >= 0
		if takesValue && value == "" {
			if i+1 >= len(args) {
				bad(kindf(ErrInvalidValue, "%s: %s needs a value", v.name, a))
				return
			}
			i++
			value = args[i]
		}
		switch flag {
		case 'o':
			key, val, ok := splitSSHOption(value)
			if !ok {
				bad(kindf(ErrInvalidValue, "%s: -o %q: want KEY=VALUE", v.name, value))
				return
			}
			option(key, val)
		case 'J':
			option("ProxyJump", value)
		case 'i':
			option("IdentityFile", value)
		case 'p':
			option("Port", value)
		case 'l':
			option("User", value)
		case 'F':
			option("F", value)
		default:
			c.ignoredOption("-" + string(flag))
		}
	}
}

func (c *ansibleConverter) ignoredOption(name string) {
	if c.sshOptions == nil {
		c.sshOptions = map[string]int{}
	}
	c.sshOptions[name]++
}

// sshOption applies one ssh option unless the level set that setting
// already.
func (c *ansibleConverter) sshOption(s *settings, v ansibleVar, key, value string) {
	p := c.p
	bad := func(err error) {
		p.addIn(v.file, v.line, v.path, kindf(ErrInvalidValue, "%s: %s %q: %v", v.name, key, value, err))
	}
	switch strings.ToLower(key) {
	case "proxyjump":
		// A ProxyCommand given first makes ssh ignore ProxyJump
		// (readconf.c parse_jump).
		if s.proxyJump.state != unset || s.proxyCommand.state != unset {
			return
		}
		hops, err := parseJumpList(value)
		if err != nil {
			bad(err)
			return
		}
		s.proxyJump = fieldAt(v, hops, set)
	case "proxycommand":
		if s.proxyCommand.state != unset {
			return
		}
		// A ProxyJump given first sets ssh's proxy command to none
		// (readconf.c parse_jump); "ProxyJump none" does not.
		if s.proxyJump.state == set && len(s.proxyJump.v) > 0 {
			return
		}
		command, err := checkProxyCommand(value)
		if err != nil {
			// Not quoted back: the command may carry credentials.
			p.addIn(v.file, v.line, v.path, kindf(ErrInvalidValue, "%s: ProxyCommand: %v", v.name, err))
			return
		}
		s.proxyCommand = fieldAt(v, command, set)
	case "userknownhostsfile":
		if s.knownHosts.state != unset {
			return
		}
		var files []string
		for _, f := range strings.Fields(value) {
			if strings.EqualFold(f, "none") || f == "/dev/null" {
				// ssh's way to record nothing; fleet-audit checks keys
				// against an empty list then, which host_key_policy
				// governs.
				continue
			}
			path, err := expandPath(f, p.home, p.workDir)
			if err != nil {
				bad(err)
				return
			}
			files = append(files, path)
		}
		s.knownHosts = fieldAt(v, files, set)
	case "stricthostkeychecking":
		if s.hostKeyPolicy.state != unset {
			return
		}
		policy, err := sshHostKeyPolicy(value)
		if err != nil {
			bad(err)
			return
		}
		s.hostKeyPolicy = fieldAt(v, policy, set)
	case "identitiesonly":
		if s.identitiesOnly.state != unset {
			return
		}
		b, err := sshFlag(value)
		if err != nil {
			bad(err)
			return
		}
		s.identitiesOnly = fieldAt(v, b, set)
	case "identityfile":
		if s.identityFiles.state != unset {
			return
		}
		path, err := expandPath(value, p.home, p.workDir)
		if err != nil {
			bad(err)
			return
		}
		s.identityFiles = fieldAt(v, []string{path}, set)
	case "port":
		if s.port.state != unset {
			return
		}
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 || n > 65535 {
			bad(kindf(ErrInvalidValue, "port must be from 1 to 65535"))
			return
		}
		s.port = fieldAt(v, n, set)
	case "user":
		if s.user.state != unset {
			return
		}
		if err := checkUser(value); err != nil {
			bad(err)
			return
		}
		s.user = fieldAt(v, value, set)
	case "f":
		if s.sshConfig.state != unset {
			return
		}
		if value == "none" {
			s.sshConfig = fieldAt(v, "", set)
			return
		}
		cfg, err := expandPath(value, p.home, p.workDir)
		if err != nil {
			bad(err)
			return
		}
		s.sshConfig = fieldAt(v, cfg, set)
	case "connecttimeout", "serveraliveinterval":
		d, err := sshTime(value)
		if err != nil {
			bad(err)
			return
		}
		f := fieldAt(v, d, set)
		if strings.EqualFold(key, "ConnectTimeout") {
			if s.connectTimeout.state == unset {
				s.connectTimeout = f
			}
		} else if s.serverAliveInterval.state == unset {
			s.serverAliveInterval = f
		}
	case "serveralivecountmax":
		if s.serverAliveCountMax.state != unset {
			return
		}
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 {
			bad(kindf(ErrInvalidValue, "want a count of 1 or more"))
			return
		}
		s.serverAliveCountMax = fieldAt(v, n, set)
	default:
		c.ignoredOption(key)
	}
}

// proxyCommandAsJump recognises the ProxyCommand that only forwards
// through a bastion, `ssh [-q] [-p PORT] [-l USER] -W %h:%p [USER@]HOST`,
// which is what ProxyJump does (ssh(1): "-J ... is a shortcut to specify a
// ProxyJump configuration directive"; -W forwards stdio to host:port).
func proxyCommandAsJump(cmd string) (hopSpec, bool) {
	args, err := shlexSplit(cmd, false)
	if err != nil || len(args) < 2 || (args[0] != "ssh" && !strings.HasSuffix(args[0], "/ssh")) {
		return hopSpec{}, false
	}
	var user, port, target string
	forwards := false
	for i := 1; i < len(args); i++ {
		a := args[i]
		next := func() (string, bool) {
			if len(a) > 2 {
				return a[2:], true
			}
			if i+1 < len(args) {
				i++
				return args[i], true
			}
			return "", false
		}
		switch {
		case a == "-q":
		case strings.HasPrefix(a, "-W"):
			w, ok := next()
			if !ok || (w != "%h:%p" && w != "[%h]:%p") {
				return hopSpec{}, false
			}
			forwards = true
		case strings.HasPrefix(a, "-p"):
			v, ok := next()
			if !ok {
				return hopSpec{}, false
			}
			port = v
		case strings.HasPrefix(a, "-l"):
			v, ok := next()
			if !ok {
				return hopSpec{}, false
			}
			user = v
		case strings.HasPrefix(a, "-"), target != "":
			return hopSpec{}, false
		default:
			target = a
		}
	}
	if !forwards || target == "" {
		return hopSpec{}, false
	}
	spec := target
	if user != "" && !strings.Contains(target, "@") {
		spec = user + "@" + spec
	}
	if port != "" {
		spec += ":" + port
	}
	hop, err := parseHopSpec(spec)
	return hop, err == nil
}

// commandLineLevel reads the command line's ssh options into the level
// below the inventory's, with ssh's meaning (the first value of an option
// wins) and its errors naming the option.
func (p *parser) commandLineLevel(cl CommandLine, conv *ansibleConverter) *settings {
	if len(cl.Options) == 0 && cl.User == "" && cl.Jump == "" && !cl.Become && cl.BecomeUser == "" {
		return nil
	}
	s := &settings{}
	if cl.Become {
		s.become = field[string]{v: "sudo", path: "-b", file: commandLineFile, state: set}
	}
	if cl.BecomeUser != "" {
		s.becomeUser = field[string]{v: cl.BecomeUser, path: "--become-user", file: commandLineFile, state: set}
		if err := checkBecomeUser(cl.BecomeUser); err != nil {
			p.addIn(commandLineFile, 0, "--become-user", err)
			s.becomeUser.state = bad
		}
	}
	first := firstWins{}
	apply := func(flag, key, value string) {
		if first.take(key) {
			conv.sshOption(s, ansibleVar{name: flag, file: commandLineFile}, key, value)
		}
	}
	// -u and -J are given explicitly; like ssh, they are taken before -o.
	if cl.User != "" {
		apply("-u", "User", cl.User)
	}
	if cl.Jump != "" {
		apply("-J", "ProxyJump", cl.Jump)
	}
	for _, o := range cl.Options {
		key, value, ok := splitSSHOption(o)
		if !ok {
			p.addIn(commandLineFile, 0, "-o "+o, kindf(ErrInvalidValue, "want -o KEY=VALUE"))
			continue
		}
		apply("-o", key, value)
	}
	return s
}

// splitSSHOption splits what follows ssh -o: KEY=VALUE, or KEY VALUE as
// ssh_config writes it.
func splitSSHOption(o string) (key, value string, ok bool) {
	key, value, ok = strings.Cut(o, "=")
	if !ok {
		key, value, ok = strings.Cut(strings.TrimSpace(o), " ")
	}
	key, value = strings.TrimSpace(key), strings.TrimSpace(value)
	return key, value, ok && key != ""
}

// firstWins keeps, per ssh option (case-insensitive, as ssh reads them),
// the first value given: ssh_config(5) "the first obtained value will be
// used", and ssh's command line alike.
type firstWins map[string]bool

// take says whether key is seen for the first time.
func (f firstWins) take(key string) bool {
	k := strings.ToLower(key)
	if f[k] {
		return false
	}
	f[k] = true
	return true
}
