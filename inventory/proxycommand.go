package inventory

import (
	"strconv"
	"strings"
	"unicode"
)

// proxyCommandTokens are the tokens ssh_config(5) lets ProxyCommand use,
// as OpenSSH expands them (sshconnect.c expand_proxy_command): %h the
// host name to connect to (after HostName), %k the host key alias (the
// name as given, since fleet-audit has no HostKeyAlias), %n the name as
// given, %p the port, %r the remote user. OpenSSH refuses any other.
func proxyCommandTokens(name, address, user string, port int) map[byte]string {
	return map[byte]string{'h': address, 'k': name, 'n': name, 'p': strconv.Itoa(port), 'r': user}
}

// checkProxyCommand validates a ProxyCommand as written: "none" is no
// command (""), and anything ssh would not run the same way is refused.
func checkProxyCommand(v string) (string, error) {
	v = strings.TrimSpace(v)
	switch {
	case v == "":
		return "", kindf(ErrInvalidValue, "ProxyCommand is empty; write none for a direct connection")
	case strings.EqualFold(v, "none"):
		return "", nil
	case v == "-":
		return "", kindf(ErrInvalidValue, "ProxyCommand - (use the connection on ssh's own stdin and stdout) is not supported")
	}
	for _, c := range v {
		if unicode.IsControl(c) && c != '\t' {
			return "", kindf(ErrInvalidValue, "ProxyCommand contains %s", describeRune(c))
		}
	}
	// The command is not quoted back in errors: it may carry credentials.
	known := proxyCommandTokens("", "", "", 0)
	for i := 0; i < len(v); i++ {
		if v[i] != '%' {
			continue
		}
		i++
		switch {
		case i == len(v):
			return "", kindf(ErrInvalidValue, "ProxyCommand ends with a lone %%")
		case v[i] == '%':
		default:
			if _, ok := known[v[i]]; !ok {
				return "", kindf(ErrInvalidValue, "ProxyCommand uses the token %%%c; ssh expands only %%h, %%k, %%n, %%p, %%r and %%%% there", v[i])
			}
		}
	}
	return v, nil
}

// expandProxyCommand expands the tokens of a checked ProxyCommand for one
// host. The shell runs the result, as with ssh, so every value spliced in
// must be inert there: OpenSSH refuses host and user names holding shell
// metacharacters for the same reason (readconf.c ssh_valid_hostname,
// ssh_valid_ruser). The inventory's own name, address and user checks
// already keep them out; this is the check that makes splicing safe, not
// a restatement of those.
func expandProxyCommand(command string, tokens map[byte]string) (string, error) {
	for t, v := range tokens {
		if !shellInert(v) {
			return "", kindf(ErrInvalidValue, "%%%c would be %q, which is not safe to pass to the shell", t, v)
		}
	}
	return percentExpand(command, tokens)
}

// shellInert reports whether s means itself in any position of sh text,
// quoted or not: letters, digits and . _ - : @ %, not starting with '-'.
func shellInert(s string) bool {
	if s == "" || s[0] == '-' {
		return false
	}
	for _, c := range s {
		if !isNameByte(c, "._-:@%") {
			return false
		}
	}
	return true
}

// route is how a host or the first hop of its chain is reached: through
// ProxyJump hops, or over a ProxyCommand (tokens unexpanded), or, when both
// are empty, directly.
type route struct {
	hops    []hopSpec
	command string
}

// routeOf is the route a ProxyCommand takes. The one that only forwards
// through a bastion, ssh -W %h:%p (see proxyCommandAsJump), is dialled as
// the ProxyJump it stands for, so the nodes behind one bastion share one
// connection to it instead of one ssh process and login each (dozens of
// logins at once would trip the bastion's MaxStartups).
func routeOf(command string) route {
	if hop, ok := proxyCommandAsJump(command); ok {
		return route{hops: []hopSpec{hop}}
	}
	return route{command: command}
}
