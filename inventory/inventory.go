package inventory

import (
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
}

// Inventory is a loaded, fully valid inventory.
type Inventory struct {
	// File is the path as given to Load or Parse.
	File string
	// Name is the name key, else the file's base name without extension.
	Name string
	// Hosts are in file order: every group's hosts in group order, then the
	// top-level hosts. There is at least one, and names are unique.
	Hosts []Host
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
	// Group is the group the host is listed under, "" for top-level hosts.
	Group string
	// Line is the line of the host's key in the inventory file.
	Line int
	// Source maps each setting key (address, port, user, identity_files,
	// known_hosts, ssh_config, become, connection, roles, proxy_jump,
	// identities_only, passphrase_env, host_key_policy, connect_timeout,
	// server_alive_interval, server_alive_count_max, become_user) to where
	// its value came from: "host", "group:NAME", "defaults", "ssh_config"
	// or "builtin". An address taken from the host's own name is "builtin".
	// For roles, which are merged, it lists every contributing level
	// separated by commas, or "builtin" when there are no roles.
	Source map[string]string

	// Jumps are the ProxyJump hops, the first dialled first; empty for a direct connection.
	Jumps []Jump
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

// Load reads and parses the inventory at path. On failure the inventory is
// nil and the error is an errors.Join of *Error values, including when the
// file cannot be read.
func Load(path string, opts LoadOptions) (*Inventory, error) {
	data, err := readFile(path, maxInventorySize)
	if err != nil {
		return nil, errors.Join(&Error{File: path, Err: fmt.Errorf("cannot read inventory: %w", err)})
	}
	return Parse(path, data, opts)
}

// Parse is Load for data already read from file. file names the inventory in
// errors, gives the default Name, and is the directory relative paths in the
// inventory are resolved against.
func Parse(file string, data []byte, opts LoadOptions) (*Inventory, error) {
	p := newParser(file, opts)
	inv := p.parse(data)
	if len(p.errs) > 0 {
		slices.SortStableFunc(p.errs, func(a, b *Error) int { return cmp.Compare(a.Line, b.Line) })
		errs := make([]error, len(p.errs))
		for i, e := range p.errs {
			errs[i] = e
		}
		return nil, errors.Join(errs...)
	}
	return inv, nil
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
	p.baseDir = filepath.Dir(file)
	if abs, err := filepath.Abs(p.baseDir); err == nil {
		p.baseDir = abs
	}
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
