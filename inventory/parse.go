package inventory

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"gopkg.in/yaml.v3"
)

// The keys of each level. Defaults and groups share the setting keys so a
// setting can be moved between levels without renaming it.
var (
	topKeys     = []string{"name", "change", "defaults", "groups", "hosts"}
	changeKeys  = []string{"id", "title", "requested_by"}
	settingKeys = []string{"user", "port", "identity_files", "known_hosts", "ssh_config", "become", "connection", "roles",
		"proxy_jump", "proxy_command", "identities_only", "passphrase_env", "host_key_policy", "connect_timeout", "server_alive_interval",
		"server_alive_count_max", "become_user"}
	groupKeys = append(slices.Clone(settingKeys), "hosts")
	hostKeys  = append(slices.Clone(settingKeys), "address")
)

type state uint8

const (
	unset state = iota
	set
	// bad means the key was present but invalid and already reported; it
	// stops resolution from reporting the consequences a second time.
	bad
)

// field is one setting at one level, with where it was written.
type field[T any] struct {
	v     T
	line  int
	path  string
	state state
	// file is where it was written when that is not the inventory file
	// itself (an Ansible group_vars/ or host_vars/ file); "" otherwise.
	file string
}

type settings struct {
	address, user, sshConfig, become, connection field[string]
	passphraseEnv, hostKeyPolicy, becomeUser     field[string]
	port, serverAliveCountMax                    field[int]
	identityFiles, knownHosts, roles             field[[]string]
	// proxyJump set with no hops is an explicit "none".
	proxyJump field[[]hopSpec]
	// proxyCommand is the command as written, tokens unexpanded; set to
	// "" is an explicit "none".
	proxyCommand                        field[string]
	identitiesOnly                      field[bool]
	connectTimeout, serverAliveInterval field[time.Duration]
}

type groupDecl struct {
	name string
	s    settings
}

type hostDecl struct {
	name  string
	line  int
	path  string
	group *groupDecl
	s     settings
	// file is where the host is declared when that is not the inventory
	// file; "" otherwise.
	file string
	// levels, when set, is the whole inheritance chain, most specific
	// first (an Ansible inventory's); group and s are then unused.
	levels []level
}

type parser struct {
	file                  string
	baseDir               string
	home                  string
	currentUser           string
	userSSHConfig         string // "" when no file is to be consulted
	userSSHConfigExplicit bool
	sshConfigs            map[string]*sshConfigEntry
	errs                  []*Error
	// workDir resolves the relative paths that Ansible hands to ssh
	// as they are (its key files), which ssh reads relative to the
	// directory it runs in.
	workDir string
	// cmdline is the level of the command line's ssh options, below
	// every inventory level; nil when there are none.
	cmdline *settings
	// conv reads Ansible variables and ssh options, and keeps the
	// warnings about the ones fleet-audit does not use.
	conv *ansibleConverter
	// curFile, when set, is the file that problems reported with add
	// belong to: an Ansible vars file, or the file a host was declared in
	// while it is resolved.
	curFile string
	// reported holds the field paths of inherited settings already
	// reported as inconsistent, so a defaults key is blamed once, not
	// once per host.
	reported map[string]bool
}

// becomeRefused says why each other way of becoming root that Ansible
// knows is refused rather than run: fleet-audit becomes root only
// through sudo -n, which fails instead of prompting and whose refusals
// the probe bundle tells apart (audit/probe/bundle.go, sudoCheck).
var becomeRefused = map[string]string{
	// su(1) (util-linux, shadow, busybox) has no non-interactive mode:
	// it asks the target user's password through PAM or the terminal,
	// which an unattended audit over a non-interactive session cannot
	// answer, and fleet-audit keeps no root password.
	"su": "su has no non-interactive mode, it asks the target user's password, which fleet-audit never holds",
	// doas -n (OpenBSD doas(1), opendoas) would fail rather than prompt,
	// but the root probes' environment, signal relay and refusal
	// wording are built and tested on sudo only.
	"doas": "fleet-audit's root probes are built and tested on sudo -n only",
}

// becomeMethodError refuses a become method other than sudo, with the
// reason when it is one Ansible users choose, and the way out.
func becomeMethodError(key, method string) error {
	why := becomeRefused[method]
	if why == "" {
		why = "fleet-audit becomes root with sudo -n only"
	}
	return kindf(ErrInvalidValue, "%s %q is not supported: %s; give the login user password-less sudo, or log in as root without become", key, method, why)
}

func (p *parser) add(line int, path string, err error) {
	p.addIn(p.curFile, line, path, err)
}

// addIn reports a problem of file ("" meaning the inventory file).
func (p *parser) addIn(file string, line int, path string, err error) {
	if file == "" {
		file = p.file
	}
	p.errs = append(p.errs, &Error{File: file, Line: line, Field: path, Err: err})
}

func (p *parser) parse(data []byte) *Inventory {
	root, err := decodeYAML(data)
	if err != nil {
		p.add(syntaxError(data, err))
		return nil
	}
	inv := &Inventory{File: p.file, Name: strings.TrimSuffix(filepath.Base(p.file), filepath.Ext(p.file))}
	if p.file == "" {
		inv.Name = ""
	}
	var defaults settings
	// Group hosts come first wherever the groups key is, so the order of
	// Hosts does not depend on the order of the top-level keys.
	var groupHosts, topHosts []*hostDecl
	for _, e := range p.entries(root, "", "the inventory") {
		switch e.key {
		case "name":
			if s, st := p.str(e.v, e.path); st == set {
				if err := checkName("inventory name", s); err != nil {
					p.add(e.v.Line, e.path, err)
				} else {
					inv.Name = s
				}
			}
		case "change":
			inv.Change = p.change(e)
		case "defaults":
			for _, d := range p.entries(e.v, e.path, "defaults") {
				if !p.setting(&defaults, d) {
					p.unknownKey(d, settingKeys, "defaults")
				}
			}
		case "groups":
			groupHosts = append(groupHosts, p.groups(e.v, e.path)...)
		case "hosts":
			topHosts = append(topHosts, p.hosts(e.v, e.path, nil)...)
		default:
			p.unknownKey(e, topKeys, "top")
		}
	}

	hosts := append(groupHosts, topHosts...)
	first := map[string]*hostDecl{}
	var unique []*hostDecl
	for _, h := range hosts {
		if f, ok := first[h.name]; ok {
			p.add(h.line, h.path, kindf(ErrDuplicateHost, "duplicate host %q (first defined at line %d)", h.name, f.line))
			continue
		}
		first[h.name] = h
		unique = append(unique, h)
	}
	if len(hosts) == 0 && len(p.errs) == 0 {
		p.add(0, "hosts", kindf(ErrNoHosts, "the inventory lists no hosts; add them under hosts or groups.NAME.hosts"))
	}
	for _, h := range unique {
		inv.Hosts = append(inv.Hosts, p.resolve(h, &defaults))
	}
	return inv
}

// decodeYAML returns the root node of the only document in data, or nil for
// an empty file.
func decodeYAML(data []byte) (root *yaml.Node, err error) {
	// yaml.v3 recovers only its own panics; it is no longer maintained, so
	// a parser bug on hostile input must become an error, not a crash.
	defer func() {
		if r := recover(); r != nil {
			root, err = nil, fmt.Errorf("yaml: parser failure: %v", r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, err
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == nil:
		return nil, fmt.Errorf("yaml: line %d: a second YAML document starts here; an inventory is one document", max(next.Line, 1))
	case !errors.Is(err, io.EOF):
		return nil, err
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

var (
	yamlLineRE   = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
	yamlAnchorRE = regexp.MustCompile(`^yaml: unknown anchor '(.*)' referenced$`)
)

// yamlParserProblems are the messages of yaml.v3's parser (as opposed to its
// scanner). For these it prints the 0-based line of the mark, or no line at
// all for the first line (decode.go, parser.fail), so one is added.
var yamlParserProblems = map[string]bool{
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"did not find expected '-' indicator":    true,
	"did not find expected <document start>": true,
	"did not find expected <stream-start>":   true,
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"found duplicate %TAG directive":         true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found undefined tag handle":             true,
}

// syntaxError lifts the line number out of yaml.v3's message, which is the
// only place it keeps it. For an unknown alias, which it reports without a
// line, the first line using the alias is a good enough pointer.
func syntaxError(data []byte, err error) (int, string, error) {
	msg := err.Error()
	line, problem := 0, strings.TrimPrefix(msg, "yaml: ")
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		problem = m[2]
	}
	if yamlParserProblems[problem] {
		return line + 1, "", kindf(ErrSyntax, "invalid YAML: %s", problem)
	}
	if m := yamlAnchorRE.FindStringSubmatch(msg); m != nil {
		if i := bytes.Index(data, []byte("*"+m[1])); i >= 0 {
			line = bytes.Count(data[:i], []byte("\n")) + 1
		}
	}
	return line, "", kindf(ErrSyntax, "invalid YAML: %s", problem)
}

func (p *parser) groups(n *yaml.Node, path string) []*hostDecl {
	var hosts []*hostDecl
	for _, e := range p.entries(n, path, "groups") {
		// A bad group name is reported, and its hosts are still checked so
		// one pass finds everything.
		if err := checkName("group name", e.key); err != nil {
			p.add(e.k.Line, e.path, err)
		}
		g := &groupDecl{name: e.key}
		for _, ge := range p.entries(e.v, e.path, "a group") {
			switch {
			case ge.key == "hosts":
				hosts = append(hosts, p.hosts(ge.v, ge.path, g)...)
			case !p.setting(&g.s, ge):
				p.unknownKey(ge, groupKeys, "group")
			}
		}
	}
	return hosts
}

func (p *parser) hosts(n *yaml.Node, path string, g *groupDecl) []*hostDecl {
	var hosts []*hostDecl
	if n.Kind == yaml.SequenceNode {
		p.add(n.Line, path, kindf(ErrWrongType, "hosts must be a mapping of host name to settings, got a list; write each host as `name: {address: ...}`"))
		return nil
	}
	for _, e := range p.entries(n, path, "hosts") {
		h := &hostDecl{name: e.key, line: e.k.Line, path: e.path, group: g}
		// A host with a bad name is not resolved: resolution would only add
		// a second error about the same name.
		if err := checkName("host name", e.key); err != nil {
			p.add(e.k.Line, e.path, err)
		} else {
			hosts = append(hosts, h)
		}
		if e.v.Kind == yaml.ScalarNode && e.v.ShortTag() == "!!str" {
			p.add(e.v.Line, e.path, kindf(ErrWrongType, "host %q must be a mapping or empty, got %s; to set the address write {address: %s}", e.key, describe(e.v), e.v.Value))
			continue
		}
		for _, he := range p.entries(e.v, e.path, "a host") {
			switch {
			case he.key == "address":
				if s, st := p.str(he.v, he.path); st == set {
					if err := checkAddress(s); err != nil {
						p.add(he.v.Line, he.path, err)
						st = bad
					}
					h.s.address = field[string]{v: s, line: he.v.Line, path: he.path, state: st}
				} else {
					h.s.address = field[string]{line: he.v.Line, path: he.path, state: st}
				}
			case !p.setting(&h.s, he):
				p.unknownKey(he, hostKeys, "host")
			}
		}
	}
	return hosts
}

// setting stores a setting key shared by defaults, groups and hosts into s,
// reporting invalid values. It returns false for any other key.
func (p *parser) setting(s *settings, e entry) bool {
	strField := func(check func(string) (string, error)) field[string] {
		v, st := p.str(e.v, e.path)
		if st == set {
			var err error
			if v, err = check(v); err != nil {
				p.add(e.v.Line, e.path, err)
				st = bad
			}
		}
		return field[string]{v: v, line: e.v.Line, path: e.path, state: st}
	}
	switch e.key {
	case "user":
		s.user = strField(func(v string) (string, error) { return v, checkUser(v) })
	case "become":
		if e.v.Kind == yaml.ScalarNode && e.v.ShortTag() == "!!bool" {
			want := map[bool]string{true: "sudo", false: "none"}[e.v.Value == "true"]
			p.add(e.v.Line, e.path, kindf(ErrInvalidValue, `become must be "", none or sudo, got boolean %s; write %s`, e.v.Value, want))
			s.become = field[string]{line: e.v.Line, path: e.path, state: bad}
			return true
		}
		s.become = strField(func(v string) (string, error) {
			switch v {
			case "", "none":
				return "", nil
			case "sudo":
				return v, nil
			}
			if _, ok := becomeRefused[v]; ok {
				return "", becomeMethodError("become", v)
			}
			return "", kindf(ErrInvalidValue, `become must be "", none or sudo, got %q`, v)
		})
	case "connection":
		s.connection = strField(func(v string) (string, error) {
			if v == "ssh" || v == "local" {
				return v, nil
			}
			return "", kindf(ErrInvalidValue, "connection must be ssh or local, got %q", v)
		})
	case "ssh_config":
		s.sshConfig = strField(func(v string) (string, error) {
			if v == "" || v == "none" {
				return "", nil
			}
			return expandPath(v, p.home, p.baseDir)
		})
	case "port":
		s.port = field[int]{line: e.v.Line, path: e.path}
		s.port.v, s.port.state = p.port(e.v, e.path)
	case "identity_files", "known_hosts":
		f := field[[]string]{line: e.v.Line, path: e.path}
		f.v, f.state = p.list(e.v, e.path, func(v string) (string, error) { return expandPath(v, p.home, p.baseDir) })
		if e.key == "identity_files" {
			s.identityFiles = f
		} else {
			s.knownHosts = f
		}
	case "roles":
		s.roles = field[[]string]{line: e.v.Line, path: e.path}
		s.roles.v, s.roles.state = p.list(e.v, e.path, func(v string) (string, error) { return v, checkRole(v) })
	case "proxy_jump":
		s.proxyJump = field[[]hopSpec]{line: e.v.Line, path: e.path}
		s.proxyJump.v, s.proxyJump.state = p.proxyJump(e.v, e.path)
		p.bothRoutes(s, e)
	case "proxy_command":
		s.proxyCommand = strField(checkProxyCommand)
		p.bothRoutes(s, e)
	case "identities_only":
		s.identitiesOnly = field[bool]{line: e.v.Line, path: e.path}
		s.identitiesOnly.v, s.identitiesOnly.state = p.boolean(e.v, e.path)
	case "passphrase_env":
		s.passphraseEnv = strField(func(v string) (string, error) { return v, checkEnvName(v) })
	case "host_key_policy":
		s.hostKeyPolicy = strField(func(v string) (string, error) {
			if slices.Contains(hostKeyPolicies, v) {
				return v, nil
			}
			return "", kindf(ErrInvalidValue, "host_key_policy must be %s, got %q", strings.Join(hostKeyPolicies, ", "), v)
		})
	case "connect_timeout", "server_alive_interval":
		f := field[time.Duration]{line: e.v.Line, path: e.path}
		f.v, f.state = p.duration(e.v, e.path)
		if e.key == "connect_timeout" {
			s.connectTimeout = f
		} else {
			s.serverAliveInterval = f
		}
	case "server_alive_count_max":
		s.serverAliveCountMax = field[int]{line: e.v.Line, path: e.path}
		s.serverAliveCountMax.v, s.serverAliveCountMax.state = p.count(e.v, e.path)
	case "become_user":
		s.becomeUser = strField(func(v string) (string, error) { return v, checkBecomeUser(v) })
	default:
		return false
	}
	return true
}

// bothRoutes refuses proxy_jump and proxy_command together on one level,
// neither none: ssh takes whichever comes first in its file, and a YAML
// mapping has no order to decide by.
func (p *parser) bothRoutes(s *settings, e entry) {
	if s.proxyJump.state == set && len(s.proxyJump.v) > 0 && s.proxyCommand.state == set && s.proxyCommand.v != "" {
		p.add(e.v.Line, e.path, kindf(ErrInvalidValue, "proxy_jump and proxy_command are both set here; a host is reached through one of them, keep one"))
		s.proxyJump.state, s.proxyCommand.state = bad, bad
	}
}

// change reads the change key: the ticket the inventory's runs are for.
func (p *parser) change(e entry) Change {
	var c Change
	for _, d := range p.entries(e.v, e.path, "change") {
		to := c.field(d.key)
		if to == nil {
			p.unknownKey(d, changeKeys, "change")
			continue
		}
		s, st := p.str(d.v, d.path)
		if st != set {
			continue
		}
		s, err := changeValue(keyOf(d.path), s)
		if err != nil {
			p.add(d.v.Line, d.path, err)
			continue
		}
		*to = s
	}
	return c
}

// field is the field of c that the change key (one of changeKeys) fills;
// nil for any other key.
func (c *Change) field(key string) *string {
	switch key {
	case "id":
		return &c.ID
	case "title":
		return &c.Title
	case "requested_by":
		return &c.RequestedBy
	}
	return nil
}

// changeValue is a change field's value as reports print it, trimmed; an
// error when it holds a control character, since it is printed in every
// report's head line, which a line break or an escape would split or hide.
func changeValue(name, s string) (string, error) {
	s = strings.TrimSpace(s)
	if strings.ContainsFunc(s, unicode.IsControl) {
		return "", kindf(ErrInvalidValue, "%s %q contains a control character (a line break or an escape)", name, s)
	}
	return s, nil
}

// unknownKey reports e with the most useful hint for where it appears: keys
// that are valid elsewhere say where they belong.
func (p *parser) unknownKey(e entry, allowed []string, level string) {
	var hint string
	switch {
	case e.key == "address" && level != "host":
		hint = "; address can only be set on a host"
	case e.key == "hosts" && (level == "defaults" || level == "host"):
		hint = "; hosts can only be listed in a group or at the top level"
	case e.key == "children":
		hint = "; nested groups are not supported, list each host in one group"
	case e.key == "vars":
		hint = "; write group settings directly in the group, not under vars"
	case slices.Contains(settingKeys, e.key) && level == "top":
		hint = fmt.Sprintf("; settings for every host go under defaults (defaults.%s)", e.key)
	default:
		if s := suggestion(e.key, allowed); s != "" {
			hint = fmt.Sprintf(" (did you mean %q?)", s)
		} else {
			hint = fmt.Sprintf(" (valid keys: %s)", strings.Join(allowed, ", "))
		}
	}
	p.add(e.k.Line, e.path, kindf(ErrUnknownKey, "unknown key %q%s", e.key, hint))
}

type entry struct {
	key  string
	path string
	k, v *yaml.Node
}

// entries returns the key/value pairs of mapping n with aliases resolved,
// reporting a non-mapping, unusable keys and duplicate keys (which yaml.v3
// only detects when decoding into Go values, not into a Node). A null n is
// an empty mapping, so "defaults:" with nothing under it is fine.
func (p *parser) entries(n *yaml.Node, path, what string) []entry {
	n = deref(n)
	if n == nil || isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		p.add(n.Line, path, kindf(ErrWrongType, "%s must be a mapping, got %s", what, describe(n)))
		return nil
	}
	var out []entry
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), deref(n.Content[i+1])
		if k == nil || v == nil {
			continue
		}
		if k.Kind != yaml.ScalarNode || isNull(k) {
			p.add(k.Line, path, kindf(ErrWrongType, "keys in %s must be names, got %s", what, describe(k)))
			continue
		}
		kp := joinPath(path, k.Value)
		if k.ShortTag() == "!!merge" {
			p.add(k.Line, kp, kindf(ErrUnknownKey, "YAML merge keys (<<) are not supported; put shared settings in defaults or a group"))
			continue
		}
		if first, ok := seen[k.Value]; ok {
			p.add(k.Line, kp, kindf(ErrDuplicateKey, "duplicate key %q (first defined at line %d)", k.Value, first))
			continue
		}
		seen[k.Value] = k.Line
		out = append(out, entry{key: k.Value, path: kp, k: k, v: v})
	}
	return out
}

// keyOf is the setting name at the end of a field path, for messages. It is
// only used on paths that end in a setting key, never in a host name.
func keyOf(path string) string {
	return path[strings.LastIndex(path, ".")+1:]
}

func joinPath(path, key string) string {
	// A key is a host or group name straight from the file: one holding a
	// control character would print a line of its own, or drive the
	// terminal, in every error message naming it.
	if strings.ContainsFunc(key, func(r rune) bool { return !unicode.IsPrint(r) }) {
		key = strconv.Quote(key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// deref follows aliases. yaml.v3 rejects an anchor that contains itself, so
// the bound only guards against a malformed tree.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.AliasNode {
		return nil
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// str returns a string value. Only YAML strings qualify: `user: 1000` is
// more likely a slip than a numeric user name, and quoting makes it explicit.
func (p *parser) str(n *yaml.Node, path string) (string, state) {
	switch {
	case isNull(n):
		return "", unset
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str":
		return n.Value, set
	}
	msg := fmt.Sprintf("%s must be a string, got %s", keyOf(path), describe(n))
	if n.Kind == yaml.ScalarNode {
		msg += "; quote it if a string is meant"
	}
	p.add(n.Line, path, kindf(ErrWrongType, "%s", msg))
	return "", bad
}

func (p *parser) port(n *yaml.Node, path string) (int, state) {
	if isNull(n) {
		return 0, unset
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		p.add(n.Line, path, kindf(ErrWrongType, "port must be an integer from 1 to 65535, got %s", describe(n)))
		return 0, bad
	}
	var v int64
	if err := n.Decode(&v); err != nil || v < 1 || v > 65535 {
		p.add(n.Line, path, kindf(ErrInvalidValue, "port must be from 1 to 65535, got %s", n.Value))
		return 0, bad
	}
	return int(v), set
}

// list reads a list of strings, passing each through check. An explicit
// empty list is set (it replaces the inherited one); null is unset.
func (p *parser) list(n *yaml.Node, path string, check func(string) (string, error)) ([]string, state) {
	if isNull(n) {
		return nil, unset
	}
	if n.Kind != yaml.SequenceNode {
		msg := fmt.Sprintf("%s must be a list, got %s", keyOf(path), describe(n))
		if n.Kind == yaml.ScalarNode {
			msg += fmt.Sprintf("; write [%s]", n.Value)
		}
		p.add(n.Line, path, kindf(ErrWrongType, "%s", msg))
		return nil, bad
	}
	out := []string{}
	st := set
	for i, item := range n.Content {
		ip := fmt.Sprintf("%s[%d]", path, i)
		item = deref(item)
		if item == nil {
			continue
		}
		v, ist := p.str(item, ip)
		if ist == unset {
			p.add(item.Line, ip, kindf(ErrWrongType, "list items must be strings, got null"))
			ist = bad
		}
		if ist == bad {
			st = bad
			continue
		}
		v, err := check(v)
		if err != nil {
			p.add(item.Line, ip, err)
			st = bad
			continue
		}
		out = append(out, v)
	}
	return out, st
}

// describe names a node's type and value for "got ..." messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
	default:
		return "an unsupported YAML node"
	}
	v := n.Value
	if len(v) > 40 {
		v = v[:40] + "..."
	}
	switch n.ShortTag() {
	case "!!str":
		return fmt.Sprintf("string %q", v)
	case "!!int":
		return "integer " + bare(v)
	case "!!float":
		return "number " + bare(v)
	case "!!bool":
		return "boolean " + bare(v)
	case "!!null":
		return "null"
	}
	return fmt.Sprintf("%s value %q", bare(n.ShortTag()), v)
}

// bare prints v unquoted when that is unambiguous. An explicit tag such as
// `!!int x y` can put anything in a value that is usually tame.
func bare(v string) string {
	if q := strconv.Quote(v); v == "" || q[1:len(q)-1] != v || strings.ContainsAny(v, " \t") {
		return q
	}
	return v
}
