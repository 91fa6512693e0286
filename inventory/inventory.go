package inventory

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// LoadOptions are the facts about the local user that resolution needs. They
// are parameters rather than lookups so tests, and a command run for another
// user, never depend on the real $HOME.
type LoadOptions struct {
	// UserSSHConfig is the ssh_config consulted for hosts whose inventory
	// chain sets no ssh_config. Empty means Home/.ssh/config, which may be
	// missing; a file named here explicitly must exist. "none" consults no
	// file, as with ssh -F none. A leading ~/ is expanded with Home.
	UserSSHConfig string
	// Home expands ~/ in paths. Empty means os.UserHomeDir.
	Home string
	// CurrentUser is the SSH user of hosts that get no user from the
	// inventory or ssh_config. Empty means the user running the process.
	CurrentUser string
	// RoleMap maps Ansible group names to roles, on top of DefaultRoleMap
	// (--role-map).
	RoleMap map[string]string
	// Stdin is read for the inventory path "-" (ansible-inventory --list
	// piped in); nil means os.Stdin.
	Stdin io.Reader
	// CommandLine are ssh's own options given to the command: -o
	// KEY=VALUE (Options), -u/--user (User) and -J/--jump (Jump), and
	// Ansible's -b/--become and --become-user. They apply to every host
	// whose inventory sets the same thing nowhere, and win over
	// ssh_config, as ssh's command line does; an inventory's become or
	// ansible_become wins over -b, as Ansible's variables win over its
	// command-line options (Ansible docs, "Controlling how Ansible
	// behaves: precedence rules").
	CommandLine CommandLine
}

// CommandLine are ssh options from the command line; see LoadOptions.
type CommandLine struct {
	Options    []string // "KEY=VALUE" or "KEY VALUE", as after ssh -o
	User, Jump string
	// Become is -b: root probes through sudo -n; BecomeUser is
	// --become-user, sudo's -u user ("" = root).
	Become     bool
	BecomeUser string
}

// commandLineFile names the command line in errors about its options.
const commandLineFile = "command line"

// Inventory is a loaded, fully valid inventory.
type Inventory struct {
	// File is the path as given to Load or Parse.
	File string
	// Name is the name key, else the file's base name without extension.
	Name string
	// Change is the change key of fleet-audit's own format: the change
	// ticket the inventory's runs are for. The command line's flags
	// override it field by field. Zero when not given.
	Change Change
	// Hosts are in file order: every group's hosts in group order, then the
	// top-level hosts. There is at least one, and names are unique.
	Hosts []Host
	// Format is what the file was read as: native, ansible-ini,
	// ansible-yaml, ansible-json, ansible-dir (a directory of Ansible
	// sources) or host-list.
	Format string
	// Subset is set on an inventory Limit returned: the pattern, and how
	// many hosts the whole inventory had.
	Subset *Subset
	// Warnings are things the loader did not use and says so once, such
	// as Ansible variables fleet-audit does not honour. They never hold a
	// variable's value.
	Warnings []string
}

// Change names a change ticket: its id, title and who requested it.
type Change struct {
	ID, Title, RequestedBy string
}

// Host is one node with every setting resolved. No field needs further
// defaulting except where its comment says "not set" (the command line's
// defaults apply then): paths are absolute (except IdentityFile and
// UserKnownHostsFile values that ssh_config itself gives as relative), Port
// is 1..65535 and Address is an IP literal or a host name.
type Host struct {
	Name    string
	Address string
	Port    int
	User    string
	// IdentityFiles are private key files in preference order; empty means
	// none were configured and the SSH agent is the only source of keys.
	IdentityFiles []string
	// KnownHostsFiles empty means none were configured; the connecting side
	// picks its default.
	KnownHostsFiles []string
	// SSHConfigFile is the ssh_config file that was consulted, or "" when
	// none was (none configured, the default file is missing, or the host
	// is local).
	SSHConfigFile string
	// Become is "" (run as User) or "sudo".
	Become string
	// Connection is "ssh" or "local".
	Connection string
	// Roles is the sorted, deduplicated union of the roles of defaults,
	// group and host.
	Roles []string
	// Group is the group the host is listed under, "" for top-level hosts
	// (for an Ansible inventory, the first group it is listed in, "" for
	// an ungrouped host).
	Group string
	// Groups are every group the host belongs to: its group in a native
	// inventory; in an Ansible one, all of them, through children too
	// (but not all), least specific first.
	Groups []string
	// Line is the line of the host's key in the inventory file.
	Line int
	// Source maps each setting key (address, port, user, identity_files,
	// known_hosts, ssh_config, become, connection, roles, proxy_jump, proxy_command,
	// identities_only, passphrase_env, host_key_policy, connect_timeout,
	// server_alive_interval, server_alive_count_max, become_user) to where
	// its value came from: "host", "group:NAME", "defaults", "ssh_config"
	// or "builtin". An address taken from the host's own name is "builtin".
	// For roles, which are merged, it lists every contributing level
	// separated by commas, or "builtin" when there are no roles.
	Source map[string]string

	// Jumps are the ProxyJump hops, the first dialled first; empty for a direct connection.
	Jumps []Jump
	// ProxyCommand, when set, is the command, tokens expanded, whose
	// stdin and stdout carry the SSH connection instead of TCP, as with
	// ssh's ProxyCommand; it is never set together with Jumps. An
	// "ssh -W %h:%p HOST" command is resolved into Jumps instead.
	ProxyCommand string
	// IdentitiesOnly: offer only IdentityFiles, never other agent keys.
	IdentitiesOnly bool
	// PassphraseEnv names the environment variable holding the passphrase of encrypted identity files.
	PassphraseEnv string
	// HostKeyPolicy is "" (not set: the command line's default applies), "strict", "accept-new" or "insecure-ignore".
	HostKeyPolicy string
	// ConnectTimeout, ServerAliveInterval: 0 means not set. ServerAliveCountMax: 0 means not set.
	ConnectTimeout      time.Duration
	ServerAliveInterval time.Duration
	ServerAliveCountMax int
	// BecomeUser is the user sudo runs root probes as; "" means root.
	BecomeUser string
}

// Subset says which part of an inventory Limit kept.
type Subset struct {
	Pattern string
	Of      int
}

// Jump is one resolved ProxyJump hop.
//
// It is resolved as ssh -J does: the hop's own entry in the host's
// ssh_config gives HostName, User, Port, IdentityFile, UserKnownHostsFile
// and IdentitiesOnly; a user@ or :port in the hop as written wins over that
// entry; a hop without a user is logged into as the local user, not as the
// node's. Unlike ssh, a hop whose entry names no IdentityFile,
// UserKnownHostsFile or IdentitiesOnly takes the node's resolved values, so
// the inventory's identity_files, known_hosts and identities_only cover
// the whole path. Address, Port and User are validated like a host's.
type Jump struct {
	Name            string // as written in ProxyJump / proxy_jump, e.g. "ops@bastion:2222"
	Address         string
	Port            int
	User            string
	IdentityFiles   []string
	KnownHostsFiles []string
	IdentitiesOnly  bool
	// ProxyCommand, set only on the first hop, reaches it as
	// Host.ProxyCommand does.
	ProxyCommand string
}

// Roles returns the distinct roles of all hosts, sorted.
func (inv *Inventory) Roles() []string {
	var all []string
	for _, h := range inv.Hosts {
		all = append(all, h.Roles...)
	}
	slices.Sort(all)
	return slices.Compact(all)
}

// Bounds on what is read, so a mistaken path (a log file, a device) fails
// fast instead of exhausting memory.
const (
	maxInventorySize = 16 << 20
	maxSSHConfigSize = 4 << 20
)

// stdinName names the inventory read from standard input in errors.
const stdinName = "<stdin>"

// Load reads and parses the inventory at path: a native fleet-audit
// inventory, an Ansible one (INI, YAML, or the JSON of ansible-inventory
// --list, told apart by content, with the group_vars/ and host_vars/ next
// to the file), a file of one host per line, "-" for standard input, or
// Ansible's comma list of hosts ("node1,node2," — any path holding a comma
// that is not a file). On failure the inventory is nil and the error is an
// errors.Join of *Error values, including when the file cannot be read.
// A directory is read as Ansible reads one (loadDir).
func Load(path string, opts LoadOptions) (*Inventory, error) {
	if path == "-" {
		in := opts.Stdin
		if in == nil {
			in = os.Stdin
		}
		data, err := io.ReadAll(io.LimitReader(in, maxInventorySize+1))
		if err == nil && len(data) > maxInventorySize {
			err = fmt.Errorf("more than %d MiB", maxInventorySize>>20)
		}
		if err != nil {
			return nil, errors.Join(&Error{File: stdinName, Err: fmt.Errorf("cannot read inventory: %w", err)})
		}
		return Parse(stdinName, data, opts)
	}
	if strings.Contains(path, ",") {
		if _, err := os.Stat(path); err != nil {
			return parseHostList(path, opts)
		}
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return loadDir(path, opts)
	}
	data, err := readFile(path, maxInventorySize)
	if err != nil {
		return nil, errors.Join(&Error{File: path, Err: fmt.Errorf("cannot read inventory: %w", err)})
	}
	return Parse(path, data, opts)
}

// Parse is Load for data already read from file. file names the inventory in
// errors, gives the default Name, and is the directory relative paths in the
// inventory (and an Ansible inventory's group_vars/ and host_vars/) are
// resolved against.
func Parse(file string, data []byte, opts LoadOptions) (*Inventory, error) {
	p := newParser(file, opts)
	return p.result(p.parseAny(data, opts))
}

// parseHostList reads Ansible's host_list form: host names (each with an
// optional :port) separated by commas.
func parseHostList(list string, opts LoadOptions) (*Inventory, error) {
	p := newParser(list, opts)
	p.baseDir = p.workDir
	a := newAnsibleInventory()
	for _, h := range strings.Split(list, ",") {
		if h = strings.TrimSpace(h); h != "" {
			p.ansibleHostPattern(a, "", h, 0, h, nil)
		}
	}
	inv := p.fromAnsible(a, opts.RoleMap)
	if inv != nil {
		inv.File, inv.Name, inv.Format = "", "", "host-list"
	}
	return p.result(inv)
}

func (p *parser) result(inv *Inventory) (*Inventory, error) {
	if len(p.errs) > 0 {
		slices.SortStableFunc(p.errs, func(a, b *Error) int { return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line)) })
		// A problem is said once per place: a setting on a host range
		// (node[1:4]) or inherited by many hosts is checked for each, and
		// four copies of one file:line say nothing more than one.
		var errs []error
		seen := map[string]bool{}
		for _, e := range p.errs {
			if s := e.Error(); !seen[s] {
				seen[s] = true
				errs = append(errs, e)
			}
		}
		return nil, errors.Join(errs...)
	}
	return inv, nil
}

// parseAny tells the formats apart by content: a YAML or JSON mapping
// shaped like an Ansible inventory is one, any other mapping is native; a
// file that is no YAML mapping is Ansible INI (which covers a plain list of
// hosts, one per line), unless its name says YAML, whose errors then
// stand.
func (p *parser) parseAny(data []byte, opts LoadOptions) *Inventory {
	root, err := decodeYAML(data)
	mapping := err == nil && root != nil && deref(root) != nil && deref(root).Kind == yaml.MappingNode
	var a *ansibleInventory
	format := ""
	switch ext := strings.ToLower(filepath.Ext(p.file)); {
	case mapping && p.refusePlugin(root):
		return nil
	case mapping && looksAnsible(root):
		a = newAnsibleInventory()
		format = "ansible-yaml"
		if bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
			format = "ansible-json"
		}
		p.parseAnsibleYAML(a, root)
	case !mapping && len(bytes.TrimSpace(data)) > 0 && ext != ".yaml" && ext != ".yml" && ext != ".json":
		a = newAnsibleInventory()
		format = "ansible-ini"
		p.parseINI(a, data)
	default:
		inv := p.parse(data)
		if inv != nil {
			inv.Format = "native"
			inv.Warnings = p.conv.warnings()
		}
		return inv
	}
	// ansible-inventory --list has merged group_vars/ and host_vars/ into
	// its output already; YAML and INI files have them beside them.
	if p.file != stdinName && format != "ansible-json" {
		a.dir = p.baseDir
	}
	inv := p.fromAnsible(a, opts.RoleMap)
	inv.Format = format
	return inv
}

func newParser(file string, opts LoadOptions) *parser {
	p := &parser{file: file, home: opts.Home, currentUser: opts.CurrentUser, sshConfigs: map[string]*sshConfigEntry{}}
	if p.home == "" {
		p.home, _ = os.UserHomeDir()
	}
	if p.currentUser == "" {
		if u, err := user.Current(); err == nil {
			p.currentUser = u.Username
		}
	}
	p.workDir, _ = os.Getwd()
	p.baseDir = filepath.Dir(file)
	if file == stdinName {
		p.baseDir = p.workDir
	}
	if abs, err := filepath.Abs(p.baseDir); err == nil {
		p.baseDir = abs
	}
	p.conv = &ansibleConverter{p: p, unsupported: map[string]int{}}
	p.cmdline = p.commandLineLevel(opts.CommandLine, p.conv)
	switch {
	case opts.UserSSHConfig == "none":
	case opts.UserSSHConfig != "":
		p.userSSHConfig, p.userSSHConfigExplicit = opts.UserSSHConfig, true
		if opts.UserSSHConfig == "~" || strings.HasPrefix(opts.UserSSHConfig, "~/") {
			p.userSSHConfig = filepath.Join(p.home, opts.UserSSHConfig[1:])
		}
	case p.home != "":
		p.userSSHConfig = filepath.Join(p.home, ".ssh", "config")
	}
	return p
}

// readFile reads at most limit bytes. The error drops the path of
// *fs.PathError because every caller reports the path itself.
func readFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, unwrapPathError(err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, unwrapPathError(err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("file is larger than %d MiB", limit>>20)
	}
	return data, nil
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
