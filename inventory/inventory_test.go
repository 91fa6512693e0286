package inventory_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/fleet-audit/fleet-audit/inventory"
)

// env is a hermetic home and inventory directory: no test reads the real
// user's ~/.ssh.
type env struct {
	home, dir string
}

func newEnv(t *testing.T) env {
	t.Helper()
	root := t.TempDir()
	e := env{home: filepath.Join(root, "home"), dir: filepath.Join(root, "inv")}
	for _, d := range []string{e.home, e.dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func (e env) opts() inventory.LoadOptions {
	return inventory.LoadOptions{Home: e.home, CurrentUser: "tester"}
}

func (e env) write(t *testing.T, path, content string) string {
	t.Helper()
	if !filepath.IsAbs(path) {
		path = filepath.Join(e.dir, path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// flatten returns the *inventory.Error values of a Load error, failing the
// test on anything else: the contract is a join of *Error and nothing more.
func flatten(t testing.TB, err error) []*inventory.Error {
	t.Helper()
	var out []*inventory.Error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			out = append(out, flatten(t, e)...)
		}
		return out
	}
	ie, ok := err.(*inventory.Error)
	if !ok {
		t.Fatalf("error %T is neither *inventory.Error nor a join of them: %v", err, err)
	}
	return append(out, ie)
}

// newSettingKeys are the Source keys of the connection options (see
// options_test.go); the cases here set none of them.
var newSettingKeys = []string{"proxy_jump", "proxy_command", "identities_only", "passphrase_env", "host_key_policy",
	"connect_timeout", "server_alive_interval", "server_alive_count_max", "become_user"}

// withBuiltinSources returns src with every key of newSettingKeys it lacks
// set to "builtin", so expectations only spell out what a case is about.
func withBuiltinSources(src map[string]string) map[string]string {
	out := maps.Clone(src)
	for _, k := range newSettingKeys {
		if _, ok := out[k]; !ok {
			out[k] = "builtin"
		}
	}
	return out
}

func TestInheritance(t *testing.T) {
	e := newEnv(t)
	keys := filepath.Join(e.dir, "keys")
	tests := []struct {
		name string
		yaml string
		want []inventory.Host
	}{
		{
			name: "defaults, group and host",
			yaml: `name: cluster-a
defaults:
  user: rancher
  port: 22
  identity_files: [~/.ssh/id_ed25519]
  known_hosts: [~/.ssh/known_hosts]
  become: sudo
  roles: [rke2]
groups:
  etcd:
    roles: [etcd]
    user: etcduser
    hosts:
      cluster-a-etcd-1: {address: 10.0.0.11}
      cluster-a-etcd-2:
  workers:
    roles: [worker]
    identity_files: [keys/worker]
    hosts:
      w1: {address: 10.0.0.21, roles: [infra, worker], port: 2222, become: none, identity_files: []}
hosts:
  lb-1: {address: 10.0.0.5, roles: [lb], connection: local}
`,
			want: []inventory.Host{
				{
					Name: "cluster-a-etcd-1", Address: "10.0.0.11", Port: 22, User: "etcduser",
					IdentityFiles:   []string{filepath.Join(e.home, ".ssh/id_ed25519")},
					KnownHostsFiles: []string{filepath.Join(e.home, ".ssh/known_hosts")},
					Become:          "sudo", Connection: "ssh", Roles: []string{"etcd", "rke2"}, Group: "etcd", Line: 14,
					Source: map[string]string{
						"address": "host", "port": "defaults", "user": "group:etcd", "identity_files": "defaults",
						"known_hosts": "defaults", "ssh_config": "builtin", "become": "defaults", "connection": "builtin",
						"roles": "defaults,group:etcd",
					},
				},
				{
					Name: "cluster-a-etcd-2", Address: "cluster-a-etcd-2", Port: 22, User: "etcduser",
					IdentityFiles:   []string{filepath.Join(e.home, ".ssh/id_ed25519")},
					KnownHostsFiles: []string{filepath.Join(e.home, ".ssh/known_hosts")},
					Become:          "sudo", Connection: "ssh", Roles: []string{"etcd", "rke2"}, Group: "etcd", Line: 15,
					Source: map[string]string{
						"address": "builtin", "port": "defaults", "user": "group:etcd", "identity_files": "defaults",
						"known_hosts": "defaults", "ssh_config": "builtin", "become": "defaults", "connection": "builtin",
						"roles": "defaults,group:etcd",
					},
				},
				{
					Name: "w1", Address: "10.0.0.21", Port: 2222, User: "rancher",
					IdentityFiles:   []string{},
					KnownHostsFiles: []string{filepath.Join(e.home, ".ssh/known_hosts")},
					Become:          "", Connection: "ssh", Roles: []string{"infra", "rke2", "worker"}, Group: "workers", Line: 20,
					Source: map[string]string{
						"address": "host", "port": "host", "user": "defaults", "identity_files": "host",
						"known_hosts": "defaults", "ssh_config": "builtin", "become": "host", "connection": "builtin",
						"roles": "defaults,group:workers,host",
					},
				},
				{
					Name: "lb-1", Address: "10.0.0.5", Port: 22, User: "rancher",
					IdentityFiles:   []string{filepath.Join(e.home, ".ssh/id_ed25519")},
					KnownHostsFiles: []string{filepath.Join(e.home, ".ssh/known_hosts")},
					Become:          "sudo", Connection: "local", Roles: []string{"lb", "rke2"}, Line: 22,
					Source: map[string]string{
						"address": "host", "port": "defaults", "user": "defaults", "identity_files": "defaults",
						"known_hosts": "defaults", "ssh_config": "builtin", "become": "defaults", "connection": "host",
						"roles": "defaults,host",
					},
				},
			},
		},
		{
			name: "group list replaces defaults list, relative to the inventory",
			yaml: `defaults:
  known_hosts: [a, b]
  identity_files: [keys/default]
groups:
  g:
    known_hosts: [c]
    hosts:
      h1: {address: h1.example.com}
`,
			want: []inventory.Host{{
				Name: "h1", Address: "h1.example.com", Port: 22, User: "tester",
				IdentityFiles:   []string{filepath.Join(keys, "default")},
				KnownHostsFiles: []string{filepath.Join(e.dir, "c")},
				Connection:      "ssh", Group: "g", Line: 8,
				Source: map[string]string{
					"address": "host", "port": "builtin", "user": "builtin", "identity_files": "defaults",
					"known_hosts": "group:g", "ssh_config": "builtin", "become": "builtin", "connection": "builtin",
					"roles": "builtin",
				},
			}},
		},
		{
			name: "local host needs no address; null values inherit",
			yaml: `defaults:
  connection: local
  become:
hosts:
  me:
    roles: [control-plane, etcd, etcd]
    port: ~
`,
			want: []inventory.Host{{
				Name: "me", Address: "localhost", Port: 22, User: "tester",
				Connection: "local", Roles: []string{"control-plane", "etcd"}, Line: 5,
				Source: map[string]string{
					"address": "builtin", "port": "builtin", "user": "builtin", "identity_files": "builtin",
					"known_hosts": "builtin", "ssh_config": "builtin", "become": "builtin", "connection": "defaults",
					"roles": "host",
				},
			}},
		},
		{
			name: "IPv6 address, anchors and become none",
			yaml: `defaults: &d
  become: ""
hosts:
  v6: {address: "fd00::1", become: none}
  v6-zone: {address: "fe80::1%eth0"}
`,
			want: []inventory.Host{
				{
					Name: "v6", Address: "fd00::1", Port: 22, User: "tester", Connection: "ssh", Line: 4,
					Source: map[string]string{
						"address": "host", "port": "builtin", "user": "builtin", "identity_files": "builtin",
						"known_hosts": "builtin", "ssh_config": "builtin", "become": "host", "connection": "builtin",
						"roles": "builtin",
					},
				},
				{
					Name: "v6-zone", Address: "fe80::1%eth0", Port: 22, User: "tester", Connection: "ssh", Line: 5,
					Source: map[string]string{
						"address": "host", "port": "builtin", "user": "builtin", "identity_files": "builtin",
						"known_hosts": "builtin", "ssh_config": "builtin", "become": "defaults", "connection": "builtin",
						"roles": "builtin",
					},
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := e.write(t, "inventory.yaml", tt.yaml)
			inv, err := inventory.Load(path, e.opts())
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if len(inv.Hosts) != len(tt.want) {
				t.Fatalf("got %d hosts, want %d: %+v", len(inv.Hosts), len(tt.want), inv.Hosts)
			}
			for i := range tt.want {
				tt.want[i].Source = withBuiltinSources(tt.want[i].Source)
				tt.want[i] = withNativeGroups(tt.want[i])
				if !reflect.DeepEqual(inv.Hosts[i], tt.want[i]) {
					t.Errorf("host %d:\n got %+v\nwant %+v", i, inv.Hosts[i], tt.want[i])
				}
			}
		})
	}
}

func TestNameRolesOrder(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		file, yaml string
		wantName   string
		wantRoles  []string
		wantOrder  []string
	}{
		{"prod-east.yaml", "hosts: {a: {roles: [worker]}, b: {roles: [etcd, worker]}}\n", "prod-east", []string{"etcd", "worker"}, []string{"a", "b"}},
		{"lab.inventory.yml", "name: lab-1\nhosts: {a: }\n", "lab-1", nil, []string{"a"}},
		{"noext", "hosts: {a: }\n", "noext", nil, []string{"a"}},
		{"hosts-first.yaml", "hosts: {z: }\ngroups: {g: {hosts: {b: , a: }}}\n", "hosts-first", nil, []string{"b", "a", "z"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			inv, err := inventory.Load(e.write(t, tt.file, tt.yaml), e.opts())
			if err != nil {
				t.Fatal(err)
			}
			if inv.Name != tt.wantName {
				t.Errorf("Name = %q, want %q", inv.Name, tt.wantName)
			}
			if got := inv.Roles(); !slices.Equal(got, tt.wantRoles) {
				t.Errorf("Roles() = %q, want %q", got, tt.wantRoles)
			}
			var order []string
			for _, h := range inv.Hosts {
				order = append(order, h.Name)
			}
			if !slices.Equal(order, tt.wantOrder) {
				t.Errorf("host order = %q, want %q", order, tt.wantOrder)
			}
		})
	}
}

func TestChange(t *testing.T) {
	e := newEnv(t)
	inv, err := inventory.Load(e.write(t, "c.yaml", "change:\n  id: \" CHG-4711 \"\n  title: upgrade prod\n  requested_by: j.doe\nhosts: {a: }\n"), e.opts())
	if err != nil {
		t.Fatal(err)
	}
	if want := (inventory.Change{ID: "CHG-4711", Title: "upgrade prod", RequestedBy: "j.doe"}); inv.Change != want {
		t.Errorf("Change = %+v, want %+v", inv.Change, want)
	}
}

func TestPathExpansion(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		value string
		want  string
	}{
		{"~/.ssh/id", filepath.Join(e.home, ".ssh/id")},
		{"~", e.home},
		{"key", filepath.Join(e.dir, "key")},
		{"./sub/../key", filepath.Join(e.dir, "key")},
		{"../shared/key", filepath.Join(filepath.Dir(e.dir), "shared/key")},
		{"/etc/fleet/key", "/etc/fleet/key"},
		{"/etc//fleet/./key", "/etc/fleet/key"},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			yaml := fmt.Sprintf("hosts:\n  a: {identity_files: [%q], known_hosts: [%q], ssh_config: %q}\n", tt.value, tt.value, tt.value)
			inv, err := inventory.Parse(filepath.Join(e.dir, "inv.yaml"), []byte(yaml), inventory.LoadOptions{Home: e.home, CurrentUser: "tester"})
			// The ssh_config named does not exist: that error carries the
			// expanded path, which is what is checked for that key.
			if err == nil {
				t.Fatalf("want the missing ssh_config reported, got %+v", inv)
			}
			errs := flatten(t, err)
			if len(errs) != 1 || errs[0].Field != "hosts.a.ssh_config" || !strings.Contains(errs[0].Error(), tt.want+":") {
				t.Errorf("ssh_config error = %v, want it to name %s", err, tt.want)
			}
			yaml = fmt.Sprintf("hosts:\n  a: {identity_files: [%q], known_hosts: [%q]}\n", tt.value, tt.value)
			inv, err = inventory.Parse(filepath.Join(e.dir, "inv.yaml"), []byte(yaml), e.opts())
			if err != nil {
				t.Fatal(err)
			}
			h := inv.Hosts[0]
			if !slices.Equal(h.IdentityFiles, []string{tt.want}) || !slices.Equal(h.KnownHostsFiles, []string{tt.want}) {
				t.Errorf("got identity %q, known_hosts %q, want %q", h.IdentityFiles, h.KnownHostsFiles, tt.want)
			}
		})
	}
}

const userSSHConfig = `# a user config with the features real ones have
Include conf.d/*.conf

Host alias1
  HostName 10.1.0.1
  User sshuser
  Port 2200
  IdentityFile ~/.ssh/alias1_key
  IdentityFile %d/.ssh/second_%r@%h

Host pat-*
  HostName %h.example.com

Match host matched-host,matched-other
  HostName 10.9.9.9
  User matchuser

Match exec "test -e /nonexistent"
  HostName 10.6.6.6

Match host other user someone
  User never

Host badport
  Port ssh

Host badhostname
  HostName "not a host"

Host *
  IdentityFile ~/.ssh/id_common
`

func TestSSHConfig(t *testing.T) {
	e := newEnv(t)
	userCfg := e.write(t, filepath.Join(e.home, ".ssh/config"), userSSHConfig)
	e.write(t, filepath.Join(e.home, ".ssh/conf.d/extra.conf"), "Host included\n  HostName 10.7.7.7\n")
	otherCfg := e.write(t, "ssh/other_config", "Host alias1\n  HostName 10.2.0.1\n")
	common := filepath.Join(e.home, ".ssh/id_common")
	allCfg := func(src map[string]string) map[string]string {
		m := map[string]string{
			"address": "ssh_config", "port": "ssh_config", "user": "ssh_config", "identity_files": "ssh_config",
			"known_hosts": "builtin", "ssh_config": "builtin", "become": "builtin", "connection": "builtin", "roles": "builtin",
		}
		for k, v := range src {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name string
		yaml string
		opts func(*inventory.LoadOptions)
		want inventory.Host
	}{
		{
			name: "everything from ssh_config",
			yaml: "hosts:\n  alias1:\n",
			want: inventory.Host{
				Name: "alias1", Address: "10.1.0.1", Port: 2200, User: "sshuser",
				IdentityFiles: []string{filepath.Join(e.home, ".ssh/alias1_key"), filepath.Join(e.home, ".ssh/second_sshuser@10.1.0.1"), common},
				SSHConfigFile: userCfg, Connection: "ssh", Line: 2, Source: allCfg(nil),
			},
		},
		{
			name: "inventory host wins over ssh_config",
			yaml: "hosts:\n  alias1: {address: 10.0.0.1, user: inv, port: 2022, identity_files: [~/inv_key]}\n",
			want: inventory.Host{
				Name: "alias1", Address: "10.0.0.1", Port: 2022, User: "inv", IdentityFiles: []string{filepath.Join(e.home, "inv_key")},
				SSHConfigFile: userCfg, Connection: "ssh", Line: 2,
				Source: allCfg(map[string]string{"address": "host", "port": "host", "user": "host", "identity_files": "host"}),
			},
		},
		{
			name: "inventory defaults win over ssh_config",
			yaml: "defaults: {user: defuser, port: 22}\nhosts:\n  alias1:\n",
			want: inventory.Host{
				Name: "alias1", Address: "10.1.0.1", Port: 22, User: "defuser",
				IdentityFiles: []string{filepath.Join(e.home, ".ssh/alias1_key"), filepath.Join(e.home, ".ssh/second_defuser@10.1.0.1"), common},
				SSHConfigFile: userCfg, Connection: "ssh", Line: 3,
				Source: allCfg(map[string]string{"port": "defaults", "user": "defaults"}),
			},
		},
		{
			name: "HostName with %h",
			yaml: "hosts:\n  pat-db:\n",
			want: inventory.Host{
				Name: "pat-db", Address: "pat-db.example.com", Port: 22, User: "tester", IdentityFiles: []string{common},
				SSHConfigFile: userCfg, Connection: "ssh", Line: 2,
				Source: allCfg(map[string]string{"port": "builtin", "user": "builtin"}),
			},
		},
		{
			name: "Match host with a comma list",
			yaml: "hosts:\n  matched-other:\n",
			want: inventory.Host{
				Name: "matched-other", Address: "10.9.9.9", Port: 22, User: "matchuser", IdentityFiles: []string{common},
				SSHConfigFile: userCfg, Connection: "ssh", Line: 2,
				Source: allCfg(map[string]string{"port": "builtin"}),
			},
		},
		{
			name: "Match exec and multi-criteria Match apply to nobody",
			yaml: "hosts:\n  other:\n",
			want: inventory.Host{
				Name: "other", Address: "other", Port: 22, User: "tester", IdentityFiles: []string{common},
				SSHConfigFile: userCfg, Connection: "ssh", Line: 2,
				Source: allCfg(map[string]string{"address": "builtin", "port": "builtin", "user": "builtin"}),
			},
		},
		{
			name: "Include relative to ~/.ssh of LoadOptions.Home",
			yaml: "hosts:\n  included:\n",
			want: inventory.Host{
				Name: "included", Address: "10.7.7.7", Port: 22, User: "tester", IdentityFiles: []string{common},
				SSHConfigFile: userCfg, Connection: "ssh", Line: 2,
				Source: allCfg(map[string]string{"port": "builtin", "user": "builtin"}),
			},
		},
		{
			name: "ssh_config none in the inventory",
			yaml: "hosts:\n  alias1: {ssh_config: none}\n",
			want: inventory.Host{
				Name: "alias1", Address: "alias1", Port: 22, User: "tester", Connection: "ssh", Line: 2,
				Source: allCfg(map[string]string{"address": "builtin", "port": "builtin", "user": "builtin", "identity_files": "builtin", "ssh_config": "host"}),
			},
		},
		{
			name: "group ssh_config relative to the inventory",
			yaml: "groups:\n  g:\n    ssh_config: ssh/other_config\n    hosts:\n      alias1:\n",
			want: inventory.Host{
				Name: "alias1", Address: "10.2.0.1", Port: 22, User: "tester", Group: "g",
				SSHConfigFile: otherCfg, Connection: "ssh", Line: 5,
				Source: allCfg(map[string]string{"port": "builtin", "user": "builtin", "identity_files": "builtin", "ssh_config": "group:g"}),
			},
		},
		{
			name: "LoadOptions.UserSSHConfig",
			yaml: "hosts:\n  alias1:\n",
			opts: func(o *inventory.LoadOptions) { o.UserSSHConfig = otherCfg },
			want: inventory.Host{
				Name: "alias1", Address: "10.2.0.1", Port: 22, User: "tester",
				SSHConfigFile: otherCfg, Connection: "ssh", Line: 2,
				Source: allCfg(map[string]string{"port": "builtin", "user": "builtin", "identity_files": "builtin"}),
			},
		},
		{
			name: "LoadOptions.UserSSHConfig none",
			yaml: "hosts:\n  alias1:\n",
			opts: func(o *inventory.LoadOptions) { o.UserSSHConfig = "none" },
			want: inventory.Host{
				Name: "alias1", Address: "alias1", Port: 22, User: "tester", Connection: "ssh", Line: 2,
				Source: allCfg(map[string]string{"address": "builtin", "port": "builtin", "user": "builtin", "identity_files": "builtin"}),
			},
		},
		{
			name: "local hosts ignore ssh_config",
			yaml: "hosts:\n  alias1: {connection: local}\n",
			want: inventory.Host{
				Name: "alias1", Address: "localhost", Port: 22, User: "tester", Connection: "local", Line: 2,
				Source: allCfg(map[string]string{"address": "builtin", "port": "builtin", "user": "builtin", "identity_files": "builtin", "connection": "host"}),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := e.opts()
			if tt.opts != nil {
				tt.opts(&opts)
			}
			inv, err := inventory.Load(e.write(t, "inventory.yaml", tt.yaml), opts)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			tt.want.Source = withBuiltinSources(tt.want.Source)
			tt.want = withNativeGroups(tt.want)
			if len(inv.Hosts) != 1 || !reflect.DeepEqual(inv.Hosts[0], tt.want) {
				t.Errorf("\n got %+v\nwant %+v", inv.Hosts, tt.want)
			}
		})
	}
}

// A missing default ~/.ssh/config is normal; the same file named on purpose
// is a mistake worth stopping for.
func TestMissingDefaultSSHConfigIsFine(t *testing.T) {
	e := newEnv(t)
	inv, err := inventory.Parse("inv.yaml", []byte("hosts: {a: }\n"), e.opts())
	if err != nil {
		t.Fatal(err)
	}
	if h := inv.Hosts[0]; h.SSHConfigFile != "" || h.Address != "a" {
		t.Errorf("got %+v", h)
	}
}

type wantErr struct {
	line  int
	field string
	kind  error  // errors.Is target
	msg   string // substring of the message
}

func TestInvalid(t *testing.T) {
	e := newEnv(t)
	badCfg := e.write(t, filepath.Join(e.home, ".ssh/config"), userSSHConfig)
	e.write(t, filepath.Join(e.home, ".ssh/conf.d/extra.conf"), "Host included\n  HostName 10.7.7.7\n")
	e.write(t, "include_device", "Host *\n  User x\nInclude /dev/null\n")
	e.write(t, "token_config", "Host *\n  HostName %C.example.com\n")
	tests := []struct {
		name string
		yaml string
		opts func(*inventory.LoadOptions)
		want []wantErr
	}{
		// Unknown keys, at every level.
		{"unknown top key", "nmae: x\nhosts: {a: }\n",
			nil, []wantErr{{1, "nmae", inventory.ErrUnknownKey, `unknown key "nmae" (did you mean "name"?)`}}},
		{"unknown defaults key", "defaults:\n  usr: x\nhosts: {a: }\n",
			nil, []wantErr{{2, "defaults.usr", inventory.ErrUnknownKey, `(did you mean "user"?)`}}},
		{"unknown group key", "groups:\n  g:\n    rols: [x]\n    hosts: {a: }\n",
			nil, []wantErr{{3, "groups.g.rols", inventory.ErrUnknownKey, `(did you mean "roles"?)`}}},
		{"unknown host key", "hosts:\n  node-1:\n    prot: 22\n    address: 127.0.0.1\n",
			nil, []wantErr{{3, "hosts.node-1.prot", inventory.ErrUnknownKey, `(did you mean "port"?)`}}},
		{"ansible name", "hosts:\n  a: {ansible_host: 10.0.0.1}\n",
			nil, []wantErr{{2, "hosts.a.ansible_host", inventory.ErrUnknownKey, `(did you mean "address"?)`}}},
		{"unknown key without a near miss", "hosts:\n  a: {colour: blue}\n",
			nil, []wantErr{{2, "hosts.a.colour", inventory.ErrUnknownKey, "valid keys: user, port"}}},
		{"address outside a host", "defaults:\n  address: 10.0.0.1\nhosts: {a: }\n",
			nil, []wantErr{{2, "defaults.address", inventory.ErrUnknownKey, "address can only be set on a host"}}},
		{"setting at the top level", "user: x\nhosts: {a: }\n",
			nil, []wantErr{{1, "user", inventory.ErrUnknownKey, "go under defaults (defaults.user)"}}},
		{"ansible children", "groups:\n  g:\n    children: {h: }\n",
			nil, []wantErr{{3, "groups.g.children", inventory.ErrUnknownKey, "nested groups are not supported"}}},
		{"merge key", "defaults: &d {user: x}\nhosts:\n  a:\n    <<: *d\n",
			nil, []wantErr{{4, "hosts.a.<<", inventory.ErrUnknownKey, "merge keys"}}},

		// Wrong types and ranges.
		{"port string", "hosts:\n  a: {port: \"abc\"}\n",
			nil, []wantErr{{2, "hosts.a.port", inventory.ErrWrongType, `port must be an integer from 1 to 65535, got string "abc"`}}},
		{"port float", "defaults:\n  port: 22.5\nhosts: {a: }\n",
			nil, []wantErr{{2, "defaults.port", inventory.ErrWrongType, "got number 22.5"}}},
		{"port zero", "hosts:\n  a: {port: 0}\n",
			nil, []wantErr{{2, "hosts.a.port", inventory.ErrInvalidValue, "from 1 to 65535, got 0"}}},
		{"port too large", "hosts:\n  a: {port: 65536}\n",
			nil, []wantErr{{2, "hosts.a.port", inventory.ErrInvalidValue, "got 65536"}}},
		{"port overflows int64", "hosts:\n  a: {port: 99999999999999999999999}\n",
			nil, []wantErr{{2, "hosts.a.port", inventory.ErrWrongType, ""}}},
		{"roles as a string", "groups:\n  g:\n    roles: etcd\n    hosts: {a: }\n",
			nil, []wantErr{{3, "groups.g.roles", inventory.ErrWrongType, "roles must be a list, got string \"etcd\"; write [etcd]"}}},
		{"identity_files as a string", "hosts:\n  a:\n    identity_files: ~/.ssh/id\n",
			nil, []wantErr{{3, "hosts.a.identity_files", inventory.ErrWrongType, "must be a list"}}},
		{"null list item", "hosts:\n  a:\n    roles:\n      - etcd\n      -\n",
			nil, []wantErr{{5, "hosts.a.roles[1]", inventory.ErrWrongType, "list items must be strings"}}},
		{"numeric user", "hosts:\n  a: {user: 1000}\n",
			nil, []wantErr{{2, "hosts.a.user", inventory.ErrWrongType, "user must be a string, got integer 1000; quote it"}}},
		{"groups as a list", "groups: [etcd]\n",
			nil, []wantErr{{1, "groups", inventory.ErrWrongType, "groups must be a mapping, got a list"}}},
		{"hosts as a list", "hosts:\n  - a\n  - b\n",
			nil, []wantErr{{2, "hosts", inventory.ErrWrongType, "got a list"}}},
		{"host as an address", "hosts:\n  a: 10.0.0.1\n",
			nil, []wantErr{{2, "hosts.a", inventory.ErrWrongType, "write {address: 10.0.0.1}"}}},
		{"document not a mapping", "just text\n",
			nil, []wantErr{{1, "", inventory.ErrWrongType, "the inventory must be a mapping"}}},
		{"null key", "hosts:\n  ~: {}\n",
			nil, []wantErr{{2, "hosts", inventory.ErrWrongType, "keys in hosts must be names, got null"}}},

		// Duplicates.
		{"host in two groups", "groups:\n  a:\n    hosts:\n      n1:\n  b:\n    hosts:\n      n1:\n",
			nil, []wantErr{{7, "groups.b.hosts.n1", inventory.ErrDuplicateHost, `duplicate host "n1" (first defined at line 4)`}}},
		{"host in a group and in hosts", "groups:\n  a:\n    hosts:\n      n1:\nhosts:\n  n1:\n",
			nil, []wantErr{{6, "hosts.n1", inventory.ErrDuplicateHost, `duplicate host "n1" (first defined at line 4)`}}},
		{"duplicate YAML key", "defaults:\n  user: a\n  user: b\nhosts:\n  n1:\n  n1:\n",
			nil, []wantErr{
				{3, "defaults.user", inventory.ErrDuplicateKey, `duplicate key "user" (first defined at line 2)`},
				{6, "hosts.n1", inventory.ErrDuplicateKey, `duplicate key "n1" (first defined at line 5)`},
			}},

		// Addresses.
		{"name is not an address", "hosts:\n  10.0.0:\n",
			nil, []wantErr{{2, "hosts.10.0.0", inventory.ErrNoAddress, `host "10.0.0" has no address: set address, give it an ssh_config HostName, or name it`}}},
		{"no address names the ssh_config", "hosts:\n  node:1:\n",
			func(o *inventory.LoadOptions) {}, []wantErr{{2, "hosts.node:1", inventory.ErrNoAddress, "a HostName in " + badCfg}}},
		{"address with a port", "hosts:\n  a: {address: \"10.0.0.1:22\"}\n",
			nil, []wantErr{{2, "hosts.a.address", inventory.ErrInvalidValue, "set the port with the port key"}}},
		{"address in brackets", "hosts:\n  a: {address: \"[::1]\"}\n",
			nil, []wantErr{{2, "hosts.a.address", inventory.ErrInvalidValue, "without them"}}},
		{"address as a URL", "hosts:\n  a: {address: \"ssh://h\"}\n",
			nil, []wantErr{{2, "hosts.a.address", inventory.ErrInvalidValue, "is a URL"}}},
		{"address with a space", "hosts:\n  a: {address: \"h 1\"}\n",
			nil, []wantErr{{2, "hosts.a.address", inventory.ErrInvalidValue, "neither an IP address nor a valid host name"}}},
		{"address mistyped IP", "hosts:\n  a: {address: 10.0.0.256}\n",
			nil, []wantErr{{2, "hosts.a.address", inventory.ErrInvalidValue, "neither"}}},
		{"address empty", "hosts:\n  a: {address: \"\"}\n",
			nil, []wantErr{{2, "hosts.a.address", inventory.ErrInvalidValue, "must not be empty"}}},
		{"address option-like", "hosts:\n  a: {address: -oProxyCommand=x}\n",
			nil, []wantErr{{2, "hosts.a.address", inventory.ErrInvalidValue, "neither"}}},
		{"ssh_config HostName invalid", "hosts:\n  badhostname:\n",
			func(o *inventory.LoadOptions) {}, []wantErr{{2, "hosts.badhostname", inventory.ErrInvalidValue, `ssh_config ` + badCfg + ` gives HostName "not a host"`}}},
		{"ssh_config Port invalid", "hosts:\n  badport:\n",
			func(o *inventory.LoadOptions) {}, []wantErr{{2, "hosts.badport", inventory.ErrInvalidValue, `gives Port "ssh"`}}},

		// ssh_config files.
		{"explicit UserSSHConfig missing", "hosts: {a: }\n",
			func(o *inventory.LoadOptions) { o.UserSSHConfig = filepath.Join(e.dir, "nope") },
			[]wantErr{{0, "ssh_config", fs.ErrNotExist, "unusable ssh_config " + filepath.Join(e.dir, "nope") + ": no such file"}}},
		{"inventory ssh_config missing", "defaults:\n  ssh_config: missing_config\nhosts: {a: , b: }\n",
			nil, []wantErr{{2, "defaults.ssh_config", inventory.ErrSSHConfig, filepath.Join(e.dir, "missing_config")}}},
		{"ssh_config is a directory", "defaults:\n  ssh_config: " + e.dir + "\nhosts: {a: }\n",
			nil, []wantErr{{2, "defaults.ssh_config", inventory.ErrSSHConfig, "is a directory"}}},
		{"ssh_config is a device", "defaults:\n  ssh_config: /dev/null\nhosts: {a: }\n",
			nil, []wantErr{{2, "defaults.ssh_config", inventory.ErrSSHConfig, "not a regular file"}}},

		{"ssh_config includes a device", "hosts:\n  a: {ssh_config: include_device}\n",
			nil, []wantErr{{2, "hosts.a.ssh_config", inventory.ErrSSHConfig, "line 3: Include: /dev/null: not a regular file"}}},
		{"ssh_config HostName token", "hosts:\n  a: {ssh_config: token_config}\n",
			nil, []wantErr{{2, "hosts.a", inventory.ErrInvalidValue, "uses the token %C"}}},

		// Empty inventories.
		{"empty file", "", nil, []wantErr{{0, "hosts", inventory.ErrNoHosts, "lists no hosts"}}},
		{"only comments", "# nothing yet\n", nil, []wantErr{{0, "hosts", inventory.ErrNoHosts, ""}}},
		{"groups without hosts", "name: x\ngroups:\n  etcd: {roles: [etcd]}\nhosts: {}\n",
			nil, []wantErr{{0, "hosts", inventory.ErrNoHosts, ""}}},

		// YAML syntax.
		{"mapping in a scalar", "hosts:\n  a: {}\n  b: c: d\n",
			nil, []wantErr{{3, "", inventory.ErrSyntax, "invalid YAML: mapping values are not allowed in this context"}}},
		{"unclosed flow mapping", "hosts:\n  a: {address: 1\n  b:\n",
			nil, []wantErr{{2, "", inventory.ErrSyntax, "invalid YAML: did not find expected ',' or '}'"}}},
		// yaml.v3 names the line where the broken construct starts, or where
		// it noticed the problem when that construct starts on line 1.
		{"unclosed flow mapping at end of file", "hosts: {a: {address: 1}\n",
			nil, []wantErr{{2, "", inventory.ErrSyntax, "invalid YAML: did not find expected ',' or '}'"}}},
		{"bad indentation", "hosts:\n  a:\n    address: x\n   port: 22\n",
			nil, []wantErr{{2, "", inventory.ErrSyntax, "invalid YAML: did not find expected key"}}},
		{"sequence broken on line 2", "- a\nb: c\n",
			nil, []wantErr{{2, "", inventory.ErrSyntax, "invalid YAML: did not find expected '-' indicator"}}},
		{"tab indentation", "hosts:\n\ta: {}\n",
			nil, []wantErr{{2, "", inventory.ErrSyntax, "found character that cannot start any token"}}},
		{"two documents", "hosts: {a: }\n---\nhosts: {b: }\n",
			nil, []wantErr{{2, "", inventory.ErrSyntax, "a second YAML document"}}},
		{"unknown alias", "hosts:\n  a: *nope\n",
			nil, []wantErr{{2, "", inventory.ErrSyntax, "unknown anchor 'nope'"}}},

		// become and connection.
		{"become su", "hosts:\n  a: {become: su}\n",
			nil, []wantErr{{2, "hosts.a.become", inventory.ErrInvalidValue, `become "su" is not supported: su has no non-interactive mode`}}},
		{"become doas", "hosts:\n  a: {become: doas}\n",
			nil, []wantErr{{2, "hosts.a.become", inventory.ErrInvalidValue, `become "doas" is not supported: fleet-audit's root probes are built and tested on sudo -n only; give the login user password-less sudo`}}},
		{"become other", "hosts:\n  a: {become: pbrun}\n",
			nil, []wantErr{{2, "hosts.a.become", inventory.ErrInvalidValue, `become must be "", none or sudo, got "pbrun"`}}},
		{"become true", "defaults:\n  become: true\nhosts: {a: }\n",
			nil, []wantErr{{2, "defaults.become", inventory.ErrInvalidValue, "got boolean true; write sudo"}}},
		{"become false", "defaults:\n  become: false\nhosts: {a: }\n",
			nil, []wantErr{{2, "defaults.become", inventory.ErrInvalidValue, "write none"}}},
		{"connection winrm", "hosts:\n  a: {connection: winrm}\n",
			nil, []wantErr{{2, "hosts.a.connection", inventory.ErrInvalidValue, `connection must be ssh or local, got "winrm"`}}},
		{"connection empty", "groups:\n  g:\n    connection: \"\"\n    hosts: {a: }\n",
			nil, []wantErr{{3, "groups.g.connection", inventory.ErrInvalidValue, `got ""`}}},

		// Names and users.
		{"change title with a line break", "change:\n  id: CHG-1\n  title: \"a\\nb\"\nhosts: {a: }\n",
			nil, []wantErr{{3, "change.title", inventory.ErrInvalidValue, `contains a control character`}}},
		{"change unknown key", "change:\n  requested: x\nhosts: {a: }\n",
			nil, []wantErr{{2, "change.requested", inventory.ErrUnknownKey, `(did you mean "requested_by"?)`}}},
		{"change id not a string", "change: {id: 4711}\nhosts: {a: }\n",
			nil, []wantErr{{1, "change.id", inventory.ErrWrongType, `quote it`}}},
		{"inventory name", "name: \"a b\"\nhosts: {a: }\n",
			nil, []wantErr{{1, "name", inventory.ErrInvalidValue, `inventory name "a b" contains a space`}}},
		{"group name", "groups:\n  \"etcd;x\":\n    hosts: {a: }\n",
			nil, []wantErr{{2, "groups.etcd;x", inventory.ErrInvalidValue, "group name \"etcd;x\" contains shell metacharacter ';'"}}},
		{"role name", "hosts:\n  a: {roles: [\"control plane\"]}\n",
			nil, []wantErr{{2, "hosts.a.roles[0]", inventory.ErrInvalidValue, `role "control plane" contains a space`}}},
		{"path ~user", "hosts:\n  a: {known_hosts: [\"~bob/kh\"]}\n",
			nil, []wantErr{{2, "hosts.a.known_hosts[0]", inventory.ErrInvalidValue, "only ~/ is expanded"}}},
		{"path with a newline", "hosts:\n  a: {known_hosts: [\"kh\\n\"]}\n",
			nil, []wantErr{{2, "hosts.a.known_hosts[0]", inventory.ErrInvalidValue, "contains a newline"}}},

		// Everything at once: one pass reports all of it, in line order.
		{"many problems", `defaults:
  usr: rancher
  port: 70000
groups:
  etcd:
    become: yes
    hosts:
      e1: {address: "10.0.0.1:22"}
      "e 2":
hosts:
  e1: {connection: telnet}
`, nil, []wantErr{
			{2, "defaults.usr", inventory.ErrUnknownKey, ""},
			{3, "defaults.port", inventory.ErrInvalidValue, ""},
			{6, "groups.etcd.become", inventory.ErrInvalidValue, ""},
			{8, "groups.etcd.hosts.e1.address", inventory.ErrInvalidValue, ""},
			{9, "groups.etcd.hosts.e 2", inventory.ErrInvalidValue, ""},
			{11, "hosts.e1.connection", inventory.ErrInvalidValue, ""},
			{11, "hosts.e1", inventory.ErrDuplicateHost, "first defined at line 8"},
		}},
	}

	// Shell metacharacters, whitespace and control characters in host
	// names and users, one case each.
	for _, bad := range []string{"a;b", "a$b", "a`b", `a"b`, "a'b", "a|b", "a&b", "a b", "a\tb", "a\nb", "a\x01b", "a>b", "a(b", "a\\b", "-oProxyCommand=x", "é"} {
		q := fmt.Sprintf("%q", bad) // a YAML double-quoted string is a Go one for these
		tests = append(tests,
			struct {
				name string
				yaml string
				opts func(*inventory.LoadOptions)
				want []wantErr
			}{"host name " + q, "hosts:\n  " + q + ": {address: 10.0.0.1}\n", nil,
				[]wantErr{{2, "hosts." + fieldKey(bad), inventory.ErrInvalidValue, "host name " + q}}},
			struct {
				name string
				yaml string
				opts func(*inventory.LoadOptions)
				want []wantErr
			}{"user " + q, "hosts:\n  a:\n    user: " + q + "\n", nil,
				[]wantErr{{3, "hosts.a.user", inventory.ErrInvalidValue, "user " + q}}},
		)
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Cases that need no ssh_config run with none, so the user config
			// written above cannot interfere.
			opts := e.opts()
			opts.UserSSHConfig = "none"
			if tt.opts != nil {
				opts.UserSSHConfig = ""
				tt.opts(&opts)
			}
			path := e.write(t, "inventory.yaml", tt.yaml)
			inv, err := inventory.Load(path, opts)
			if err == nil {
				t.Fatalf("Load succeeded: %+v", inv)
			}
			if inv != nil {
				t.Errorf("Load returned an inventory with an error")
			}
			got := flatten(t, err)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d errors, want %d:\n%v", len(got), len(tt.want), err)
			}
			for i, w := range tt.want {
				g := got[i]
				if g.File != path || g.Line != w.line || g.Field != w.field || !errors.Is(g, w.kind) || !strings.Contains(g.Error(), w.msg) {
					t.Errorf("error %d:\n got %s:%d field=%q %q\nwant %s:%d field=%q kind=%q containing %q",
						i, g.File, g.Line, g.Field, g.Err, path, w.line, w.field, w.kind, w.msg)
				}
			}
		})
	}
}

func TestUnreadable(t *testing.T) {
	e := newEnv(t)
	noPerm := e.write(t, "secret.yaml", "hosts: {a: }\n")
	if err := os.Chmod(noPerm, 0); err != nil {
		t.Fatal(err)
	}
	huge := e.write(t, "huge.yaml", "")
	if err := os.Truncate(huge, 17<<20); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		kind error
		msg  string
	}{
		{"missing", filepath.Join(e.dir, "missing.yaml"), fs.ErrNotExist, "cannot read inventory: no such file or directory"},
		{"permission", noPerm, fs.ErrPermission, "cannot read inventory: permission denied"},
		{"too large", huge, nil, "larger than 16 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "permission" && os.Geteuid() == 0 {
				t.Skip("root reads files whatever their mode")
			}
			_, err := inventory.Load(tt.path, e.opts())
			errs := flatten(t, err)
			if len(errs) != 1 {
				t.Fatalf("got %v", err)
			}
			g := errs[0]
			if g.File != tt.path || g.Line != 0 || g.Field != "" || !strings.Contains(g.Error(), tt.msg) || (tt.kind != nil && !errors.Is(err, tt.kind)) {
				t.Errorf("got %q (file %q line %d field %q), want %q", g, g.File, g.Line, g.Field, tt.msg)
			}
			if want := tt.path + ": "; !strings.HasPrefix(g.Error(), want) {
				t.Errorf("%q does not start with %q", g, want)
			}
		})
	}
}

func TestErrorFormat(t *testing.T) {
	cause := errors.New("boom")
	tests := []struct {
		err  inventory.Error
		want string
	}{
		{inventory.Error{File: "inv.yaml", Line: 3, Field: "hosts.a.port", Err: cause}, "inv.yaml:3: hosts.a.port: boom"},
		{inventory.Error{File: "inv.yaml", Line: 3, Err: cause}, "inv.yaml:3: boom"},
		{inventory.Error{File: "inv.yaml", Field: "hosts", Err: cause}, "inv.yaml: hosts: boom"},
		{inventory.Error{File: "inv.yaml", Err: cause}, "inv.yaml: boom"},
		{inventory.Error{Line: 2, Field: "name", Err: cause}, "line 2: name: boom"},
		{inventory.Error{}, "invalid inventory"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
		if tt.err.Err != nil && !errors.Is(&tt.err, cause) {
			t.Errorf("%q does not unwrap to its cause", tt.want)
		}
	}
}

// The shipped example must stay loadable; it is what people copy.
func TestExampleInventory(t *testing.T) {
	e := newEnv(t)
	opts := e.opts()
	opts.UserSSHConfig = "none"
	inv, err := inventory.Load(filepath.Join("..", "examples", "inventory.yaml"), opts)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, h := range inv.Hosts {
		for _, r := range h.Roles {
			count[r]++
		}
	}
	if count["etcd"] != 3 || count["control-plane"] != 2 || count["worker"] != 4 {
		t.Errorf("roles per host = %v, want 3 etcd, 2 control-plane, 4 worker", count)
	}
}

// TestExampleBastion: the bastion example resolves as its comments say.
func TestExampleBastion(t *testing.T) {
	e := newEnv(t)
	inv, err := inventory.Load(filepath.Join("..", "examples", "bastion", "inventory.yaml"), e.opts())
	if err != nil {
		t.Fatal(err)
	}
	hops := map[string]string{}
	for _, h := range inv.Hosts {
		var via []string
		for _, j := range h.Jumps {
			via = append(via, fmt.Sprintf("%s@%s:%d", j.User, j.Address, j.Port))
		}
		hops[h.Name] = strings.Join(via, " > ")
		if h.PassphraseEnv != "FLEET_AUDIT_KEY_PASSPHRASE" || h.ConnectTimeout != 15*time.Second || h.ServerAliveInterval != 10*time.Second {
			t.Errorf("%s: passphrase_env %q connect_timeout %s server_alive_interval %s", h.Name, h.PassphraseEnv, h.ConnectTimeout, h.ServerAliveInterval)
		}
	}
	want := map[string]string{
		"prod-etcd-1":   "jump@bastion.example.net:2222 > jump@10.10.0.5:22",
		"prod-worker-1": "jump@bastion.example.net:2222 > jump@10.10.0.5:22",
		"prod-worker-2": "ops@bastion.example.net:2200",
	}
	for name, w := range want {
		if hops[name] != w {
			t.Errorf("%s via %q, want %q", name, hops[name], w)
		}
	}
}

func FuzzLoad(f *testing.F) {
	for _, s := range [][2]string{
		{"name: c\ndefaults: {user: u, port: 22, roles: [x]}\ngroups:\n  g:\n    roles: [etcd]\n    hosts:\n      a: {address: 10.0.0.1}\n      b:\nhosts:\n  c: {connection: local}\n", ""},
		{"hosts:\n  alias1:\n  m:\n", "Host alias1\n  HostName 10.1.0.1\n  Port 2200\nMatch host m\n  User x\nMatch exec true\n"},
		{"defaults: &d {user: a}\nhosts: {a: *d, b: {<<: *d}}\n", "Include conf.d/*\n"},
		{"hosts: [a]\n", "Host *\n  IdentityFile %d/%r@%h\n"},
		{"hosts:\n  a: {port: 99999999999999999999, roles: x, become: true}\n---\n", ""},
		{"groups: {g: {hosts: {a: , b: }}, h: {hosts: {a: }}}\nhosts: {b: }\n", "HostName %\n"},
		{"{", "Host"},
		{"defaults:\n  proxy_jump: \"ops@gw:2222,[fd00::1]:22\"\n  identities_only: true\n  passphrase_env: KEY_PASS\n  host_key_policy: accept-new\n" +
			"  connect_timeout: 5s\n  server_alive_interval: 30\n  server_alive_count_max: 3\n  become: sudo\n  become_user: auditor\nhosts:\n  a: {proxy_jump: none}\n  b: {proxy_jump: [x, \"u@y:1\"]}\n", ""},
		{"hosts:\n  a:\n  b: {become_user: x, connect_timeout: 1.5, identities_only: yes}\n",
			"Host a\n  ProxyJump gw,inner\n  IdentitiesOnly yes\n  StrictHostKeyChecking accept-new\n  ConnectTimeout 1m30s\n  ServerAliveInterval 15\n  ServerAliveCountMax 3\n" +
				"  UserKnownHostsFile ~/kh_%n \"/x y\" /dev/null\nHost gw\n  HostName 10.0.0.1\n  User ops\n  ProxyJump gw0\nHost gw0\n  ProxyCommand nc %h %p\n"},
		{"hosts:\n  a:\n", "Host *\n  ProxyJump bastion\nMatch host * exec \"true\"\n  ProxyJump x\nMatch user u\n  User v\n"},
	} {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	// One directory for all iterations: the target runs sequentially within
	// a worker, and a fresh t.TempDir each time halves the exec rate.
	dir := f.TempDir()
	invPath := filepath.Join(dir, "inventory.yaml")
	cfgPath := filepath.Join(dir, "ssh_config")
	f.Fuzz(func(t *testing.T, inv, sshConfig []byte) {
		if err := os.WriteFile(invPath, inv, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cfgPath, sshConfig, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := inventory.Load(invPath, inventory.LoadOptions{Home: dir, CurrentUser: "fuzz", UserSSHConfig: cfgPath})
		checkFuzzLoaded(t, invPath, inv, got, err)
	})
}

// yamlBreaks counts the line breaks of data as YAML does: CR LF, a lone
// CR and LF each end a line (YAML 1.2, b-break), so "\r\r0" has its 0 on
// line 3, as yaml.v3 reports it.
func yamlBreaks(data []byte) int {
	crlf := bytes.Count(data, []byte("\r\n"))
	return bytes.Count(data, []byte("\r")) + bytes.Count(data, []byte("\n")) - crlf
}

// checkFuzzLoaded holds what the fuzz targets of Load assert of any input
// data read from invPath: an error names the file and a line of it (0 for
// the whole file; one past the last line is the end of the file, where
// YAML reports an unclosed flow mapping), and an inventory it accepts has
// valid hosts.
func checkFuzzLoaded(t *testing.T, invPath string, data []byte, got *inventory.Inventory, err error) {
	t.Helper()
	if err != nil {
		if got != nil {
			t.Fatal("inventory returned with an error")
		}
		for _, e := range flatten(t, err) {
			if e.File != invPath || e.Err == nil || e.Line < 0 || e.Line > yamlBreaks(data)+2 {
				t.Fatalf("malformed error %#v", e)
			}
		}
		return
	}
	if len(got.Hosts) == 0 {
		t.Fatal("valid inventory without hosts")
	}
	seen := map[string]bool{}
	for _, h := range got.Hosts {
		if seen[h.Name] || h.Address == "" || h.User == "" || h.Port < 1 || h.Port > 65535 ||
			(h.Connection != "ssh" && h.Connection != "local") || (h.Become != "" && h.Become != "sudo") {
			t.Fatalf("invalid host %+v", h)
		}
		seen[h.Name] = true
		if len(h.Jumps) > 8 || (h.BecomeUser != "" && h.Become != "sudo") || h.ConnectTimeout < 0 || h.ServerAliveInterval < 0 ||
			h.ServerAliveCountMax < 0 || !slices.Contains([]string{"", "strict", "accept-new", "insecure-ignore"}, h.HostKeyPolicy) {
			t.Fatalf("invalid options %+v", h)
		}
		for _, j := range h.Jumps {
			if j.Name == "" || j.Address == "" || j.User == "" || j.Port < 1 || j.Port > 65535 {
				t.Fatalf("invalid jump %+v of %s", j, h.Name)
			}
		}
	}
}

// fieldKey is how an error's field path shows a key: quoted when it holds
// a character that is not printable, which would otherwise reach the
// terminal raw.
func fieldKey(key string) string {
	for _, r := range key {
		if !unicode.IsPrint(r) {
			return strconv.Quote(key)
		}
	}
	return key
}

// withNativeGroups fills Groups as a native inventory does: a host's
// groups are the one group it is listed in.
func withNativeGroups(h inventory.Host) inventory.Host {
	if h.Group != "" && h.Groups == nil {
		h.Groups = []string{h.Group}
	}
	return h
}

// TestExportedChecks holds the exported checks to the rules Parse applies to
// the same fields, so a writer that trusts them never writes a file Load
// refuses.
func TestExportedChecks(t *testing.T) {
	for _, tc := range []struct {
		name, role, address string
	}{
		{"node-1", "worker", "10.0.0.1"},
		{"bad name", "worker", "10.0.0.1"},
		{"-flag", "worker", "10.0.0.1"},
		{"node-1", "a:b", "10.0.0.1"},
		{"node-1", "worker", "10.0.0.1:22"},
		{"node-1", "worker", "10.0.0.256"},
		{"fd00::1", "etcd", "fd00::1"},
	} {
		text := fmt.Sprintf("groups:\n  g:\n    roles: [%q]\n    hosts:\n      %q: {address: %q}\n", tc.role, tc.name, tc.address)
		_, err := inventory.Parse("x.yaml", []byte(text), inventory.LoadOptions{UserSSHConfig: "none", Home: "/nonexistent", CurrentUser: "u"})
		valid := inventory.CheckName("host name", tc.name) == nil && inventory.CheckRole(tc.role) == nil && inventory.CheckAddress(tc.address) == nil
		if valid != (err == nil) {
			t.Errorf("%+v: exported checks say valid=%v, Parse says %v", tc, valid, err)
		}
	}
}
