package inventory_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/inventory"
)

// options is the part of a Host the connection options fill in, with empty
// slices made nil so expectations need not care which of the two they get.
type options struct {
	Jumps               []inventory.Jump
	ProxyCommand        string
	KnownHostsFiles     []string
	IdentitiesOnly      bool
	PassphraseEnv       string
	HostKeyPolicy       string
	ConnectTimeout      time.Duration
	ServerAliveInterval time.Duration
	ServerAliveCountMax int
	BecomeUser          string
}

func optionsOf(h inventory.Host) options {
	nilIfEmpty := func(s []string) []string {
		if len(s) == 0 {
			return nil
		}
		return s
	}
	o := options{
		ProxyCommand:    h.ProxyCommand,
		KnownHostsFiles: nilIfEmpty(h.KnownHostsFiles), IdentitiesOnly: h.IdentitiesOnly, PassphraseEnv: h.PassphraseEnv,
		HostKeyPolicy: h.HostKeyPolicy, ConnectTimeout: h.ConnectTimeout, ServerAliveInterval: h.ServerAliveInterval,
		ServerAliveCountMax: h.ServerAliveCountMax, BecomeUser: h.BecomeUser,
	}
	for _, j := range h.Jumps {
		j.IdentityFiles, j.KnownHostsFiles = nilIfEmpty(j.IdentityFiles), nilIfEmpty(j.KnownHostsFiles)
		o.Jumps = append(o.Jumps, j)
	}
	return o
}

// loadOne loads yaml with the given ssh_config ("" for none) and returns the
// host named name.
func loadOne(t *testing.T, e env, yaml, sshConfig, name string) inventory.Host {
	t.Helper()
	opts := e.opts()
	opts.UserSSHConfig = "none"
	if sshConfig != "" {
		opts.UserSSHConfig = e.write(t, "ssh_config", sshConfig)
	}
	inv, err := inventory.Load(e.write(t, "inventory.yaml", yaml), opts)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	for _, h := range inv.Hosts {
		if h.Name == name {
			return h
		}
	}
	t.Fatalf("no host %q in %+v", name, inv.Hosts)
	return inventory.Host{}
}

func checkOptions(t *testing.T, h inventory.Host, want options, wantSource map[string]string) {
	t.Helper()
	if got := optionsOf(h); !reflect.DeepEqual(got, want) {
		t.Errorf("options of %s:\n got %+v\nwant %+v", h.Name, got, want)
	}
	for k, v := range wantSource {
		if h.Source[k] != v {
			t.Errorf("Source[%q] = %q, want %q", k, h.Source[k], v)
		}
	}
	for _, k := range newSettingKeys {
		if h.Source[k] == "" {
			t.Errorf("Source[%q] missing", k)
		}
	}
}

func TestOptionsFromInventory(t *testing.T) {
	e := newEnv(t)
	key := filepath.Join(e.home, ".ssh/id_fleet")
	kh := filepath.Join(e.home, ".ssh/kh")
	tests := []struct {
		name, yaml, host string
		want             options
		source           map[string]string
	}{
		{
			name: "every key in defaults, inherited",
			yaml: `defaults:
  identity_files: [~/.ssh/id_fleet]
  known_hosts: [~/.ssh/kh]
  proxy_jump: ops@bastion.example.com:2222
  identities_only: true
  passphrase_env: FLEET_KEY_PASSPHRASE
  host_key_policy: accept-new
  connect_timeout: 5s
  server_alive_interval: 30
  server_alive_count_max: 4
  become: sudo
  become_user: auditor
hosts:
  n1: {address: 10.0.0.1}
`,
			host: "n1",
			want: options{
				Jumps: []inventory.Jump{{Name: "ops@bastion.example.com:2222", Address: "bastion.example.com", Port: 2222, User: "ops",
					IdentityFiles: []string{key}, KnownHostsFiles: []string{kh}, IdentitiesOnly: true}},
				KnownHostsFiles: []string{kh}, IdentitiesOnly: true, PassphraseEnv: "FLEET_KEY_PASSPHRASE", HostKeyPolicy: "accept-new",
				ConnectTimeout: 5 * time.Second, ServerAliveInterval: 30 * time.Second, ServerAliveCountMax: 4, BecomeUser: "auditor",
			},
			source: map[string]string{"proxy_jump": "defaults", "identities_only": "defaults", "passphrase_env": "defaults",
				"host_key_policy": "defaults", "connect_timeout": "defaults", "server_alive_interval": "defaults",
				"server_alive_count_max": "defaults", "become_user": "defaults"},
		},
		{
			name: "host beats group beats defaults",
			yaml: `defaults: {host_key_policy: strict, connect_timeout: 30, proxy_jump: far}
groups:
  g:
    host_key_policy: insecure-ignore
    connect_timeout: 1m30s
    identities_only: false
    proxy_jump: [near]
    hosts:
      n1: {host_key_policy: accept-new, identities_only: true}
      n2:
`,
			host: "n1",
			want: options{
				Jumps:          []inventory.Jump{{Name: "near", Address: "near", Port: 22, User: "tester", IdentitiesOnly: true}},
				IdentitiesOnly: true, HostKeyPolicy: "accept-new", ConnectTimeout: 90 * time.Second,
			},
			source: map[string]string{"host_key_policy": "host", "identities_only": "host", "connect_timeout": "group:g",
				"proxy_jump": "group:g", "become_user": "builtin", "server_alive_count_max": "builtin"},
		},
		{
			name: "the group's host without settings of its own",
			yaml: `defaults: {host_key_policy: strict, proxy_jump: far}
groups:
  g:
    host_key_policy: insecure-ignore
    hosts:
      n2:
`,
			host:   "n2",
			want:   options{Jumps: []inventory.Jump{{Name: "far", Address: "far", Port: 22, User: "tester"}}, HostKeyPolicy: "insecure-ignore"},
			source: map[string]string{"host_key_policy": "group:g", "proxy_jump": "defaults"},
		},
		{
			name: "proxy_jump none disables an inherited chain",
			yaml: "defaults: {proxy_jump: \"a,b\"}\nhosts:\n  n1: {proxy_jump: none}\n",
			host: "n1", want: options{}, source: map[string]string{"proxy_jump": "host"},
		},
		{
			name: "multi-hop string with user@host:port forms, IPv6 and ssh://",
			yaml: `hosts:
  n1:
    identity_files: [~/.ssh/id_fleet]
    proxy_jump: "ops@gw1.example.com:2201, gw2 ,root@[fd00::1]:2200,fd00::2,ssh://dom@corp@gw3:2203"
`,
			host: "n1",
			want: options{Jumps: []inventory.Jump{
				{Name: "ops@gw1.example.com:2201", Address: "gw1.example.com", Port: 2201, User: "ops", IdentityFiles: []string{key}},
				{Name: "gw2", Address: "gw2", Port: 22, User: "tester", IdentityFiles: []string{key}},
				{Name: "root@[fd00::1]:2200", Address: "fd00::1", Port: 2200, User: "root", IdentityFiles: []string{key}},
				{Name: "fd00::2", Address: "fd00::2", Port: 22, User: "tester", IdentityFiles: []string{key}},
				{Name: "ssh://dom@corp@gw3:2203", Address: "gw3", Port: 2203, User: "dom@corp", IdentityFiles: []string{key}},
			}},
			source: map[string]string{"proxy_jump": "host"},
		},
		{
			name: "proxy_jump as a list",
			yaml: "hosts:\n  n1:\n    proxy_jump:\n      - ops@10.1.0.1\n      - 10.2.0.1:2222\n",
			host: "n1",
			want: options{Jumps: []inventory.Jump{
				{Name: "ops@10.1.0.1", Address: "10.1.0.1", Port: 22, User: "ops"},
				{Name: "10.2.0.1:2222", Address: "10.2.0.1", Port: 2222, User: "tester"},
			}},
		},
		{
			name: "local hosts jump through nothing",
			yaml: "defaults: {proxy_jump: bastion}\nhosts:\n  me: {connection: local}\n",
			host: "me", want: options{}, source: map[string]string{"proxy_jump": "builtin"},
		},
		{
			name: "become_user with become: sudo from another level",
			yaml: "groups:\n  g:\n    become: sudo\n    hosts:\n      n1: {become_user: auditor}\n",
			host: "n1", want: options{BecomeUser: "auditor"}, source: map[string]string{"become_user": "host"},
		},
		{
			name: "durations and counts at their bounds",
			yaml: "hosts:\n  n1: {connect_timeout: 24h, server_alive_interval: 1, server_alive_count_max: 2147483647}\n",
			host: "n1", want: options{ConnectTimeout: 24 * time.Hour, ServerAliveInterval: time.Second, ServerAliveCountMax: 2147483647},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkOptions(t, loadOne(t, e, tt.yaml, "", tt.host), tt.want, tt.source)
		})
	}
}

// sshConfigOptions is a user config exercising every honoured option, plus
// the Match blocks real configs have (Debian's and Ubuntu's defaults, corporate
// snippets), which must neither break parsing nor apply.
const sshConfigOptions = `Match host * exec "test -z $SSH_NO_JUMP"
  ProxyJump evil-from-match-exec
  StrictHostKeyChecking no

Match user someone
  ProxyCommand nc evil 22
  IdentitiesOnly no

Match host node1,node9
  ServerAliveCountMax 5

Host node1
  HostName 10.0.0.1
  IdentitiesOnly yes
  StrictHostKeyChecking accept-new
  ConnectTimeout 7
  ServerAliveInterval 1m30s
  UserKnownHostsFile ~/.ssh/kh_%n "/etc/ssh/known hosts" /dev/null
  ProxyJump ops@bastion:2222,inner

Host bastion
  HostName 192.0.2.10
  User jumpuser
  Port 2000
  IdentityFile ~/.ssh/bastion_%r
  UserKnownHostsFile ~/.ssh/bastion_kh
  IdentitiesOnly no

Host inner
  HostName 10.0.0.254
  User inneruser
  Port 2022
  # Not the first hop of node1's chain: reached through bastion, as ssh -J does.
  ProxyJump not-used

Host node2
  ProxyJump gw2
Host gw2
  ProxyJump gw1
Host gw1
  ProxyJump "gw0a,gw0b"
  HostName 10.9.0.1

Host node3
  ProxyJump none
  ProxyCommand ssh -W %h:%p legacy

Host node8
  HostName 10.0.0.8
  User core
  ProxyJump gw
  ProxyCommand nc %h %p
Host node9
  HostName 10.0.0.9
  User core
  Port 2222
  ProxyCommand aws ssm start-session --target i-%n --document-name AWS-StartSSHSession --parameters portNumber=%p --reason %r@%h/%k/%%
  ProxyJump gw
Host node10
  ProxyCommand none
  ProxyJump gw
Host ssm-bastion
  HostName 10.1.0.1
  ProxyCommand tsh proxy ssh --cluster=prod %r@%h:%p
Host node11
  ProxyJump ssm-bastion

Host node4
  ProxyCommand none
  StrictHostKeyChecking yes
  ConnectTimeout 0
  ServerAliveInterval 0
  ServerAliveCountMax 0
  UserKnownHostsFile none

Host node5
  StrictHostKeyChecking ask
Host node6
  StrictHostKeyChecking off
  UserKnownHostsFile /dev/null
Host node7
  StrictHostKeyChecking No

Host *
  IdentityFile ~/.ssh/id_common
`

func TestOptionsFromSSHConfig(t *testing.T) {
	e := newEnv(t)
	common := filepath.Join(e.home, ".ssh/id_common")
	nodeKH := []string{filepath.Join(e.home, ".ssh/kh_node1"), "/etc/ssh/known hosts"}
	tests := []struct {
		name, yaml, host string
		want             options
		source           map[string]string
	}{
		{
			name: "every option from ssh_config; the hop's own entry; explicit user@ and :port win",
			yaml: "hosts:\n  node1:\n", host: "node1",
			want: options{
				Jumps: []inventory.Jump{
					{Name: "ops@bastion:2222", Address: "192.0.2.10", Port: 2222, User: "ops",
						IdentityFiles: []string{filepath.Join(e.home, ".ssh/bastion_ops"), common}, KnownHostsFiles: []string{filepath.Join(e.home, ".ssh/bastion_kh")}},
					{Name: "inner", Address: "10.0.0.254", Port: 2022, User: "inneruser",
						IdentityFiles: []string{common}, KnownHostsFiles: nodeKH, IdentitiesOnly: true},
				},
				KnownHostsFiles: nodeKH, IdentitiesOnly: true, HostKeyPolicy: "accept-new",
				ConnectTimeout: 7 * time.Second, ServerAliveInterval: 90 * time.Second, ServerAliveCountMax: 5,
			},
			source: map[string]string{"proxy_jump": "ssh_config", "identities_only": "ssh_config", "host_key_policy": "ssh_config",
				"connect_timeout": "ssh_config", "server_alive_interval": "ssh_config", "server_alive_count_max": "ssh_config",
				"known_hosts": "ssh_config", "passphrase_env": "builtin", "become_user": "builtin"},
		},
		{
			name: "the inventory wins over ssh_config",
			yaml: `defaults:
  identities_only: false
  host_key_policy: strict
  connect_timeout: 3s
  server_alive_interval: 10s
  server_alive_count_max: 2
  known_hosts: [~/kh]
hosts:
  node1: {proxy_jump: none}
`, host: "node1",
			want: options{KnownHostsFiles: []string{filepath.Join(e.home, "kh")}, HostKeyPolicy: "strict",
				ConnectTimeout: 3 * time.Second, ServerAliveInterval: 10 * time.Second, ServerAliveCountMax: 2},
			source: map[string]string{"proxy_jump": "host", "identities_only": "defaults", "host_key_policy": "defaults",
				"connect_timeout": "defaults", "known_hosts": "defaults"},
		},
		{
			name: "an inventory chain through hosts the ssh_config knows",
			yaml: "hosts:\n  n9: {address: 10.0.0.9, proxy_jump: \"bastion,inner\"}\n", host: "n9",
			want: options{Jumps: []inventory.Jump{
				{Name: "bastion", Address: "192.0.2.10", Port: 2000, User: "jumpuser",
					IdentityFiles: []string{filepath.Join(e.home, ".ssh/bastion_jumpuser"), common}, KnownHostsFiles: []string{filepath.Join(e.home, ".ssh/bastion_kh")}},
				{Name: "inner", Address: "10.0.0.254", Port: 2022, User: "inneruser", IdentityFiles: []string{common}},
			}},
			source: map[string]string{"proxy_jump": "host", "identities_only": "builtin"},
		},
		{
			name: "the first hop's own ProxyJump is prepended, recursively",
			yaml: "hosts:\n  node2: {address: 10.0.0.2}\n", host: "node2",
			want: options{Jumps: []inventory.Jump{
				{Name: "gw0a", Address: "gw0a", Port: 22, User: "tester", IdentityFiles: []string{common}},
				{Name: "gw0b", Address: "gw0b", Port: 22, User: "tester", IdentityFiles: []string{common}},
				{Name: "gw1", Address: "10.9.0.1", Port: 22, User: "tester", IdentityFiles: []string{common}},
				{Name: "gw2", Address: "gw2", Port: 22, User: "tester", IdentityFiles: []string{common}},
			}},
			source: map[string]string{"proxy_jump": "ssh_config"},
		},
		{
			// readconf.c parse_jump: "none" leaves the proxy command unset,
			// so the ProxyCommand after it applies (as ssh -G shows), and
			// its ssh -W form is dialled as the jump it stands for.
			name: "ProxyJump none leaves ProxyCommand in force",
			yaml: "hosts:\n  node3:\n", host: "node3",
			want:   options{Jumps: []inventory.Jump{{Name: "legacy", Address: "legacy", Port: 22, User: "tester", IdentityFiles: []string{common}}}},
			source: map[string]string{"proxy_jump": "builtin", "proxy_command": "ssh_config"},
		},
		{
			name: "the first of ProxyJump and ProxyCommand wins: ProxyJump",
			yaml: "hosts:\n  node8:\n", host: "node8",
			want:   options{Jumps: []inventory.Jump{{Name: "gw", Address: "gw", Port: 22, User: "tester", IdentityFiles: []string{common}}}},
			source: map[string]string{"proxy_jump": "ssh_config", "proxy_command": "builtin"},
		},
		{
			name: "the first of ProxyJump and ProxyCommand wins: ProxyCommand, with every token expanded",
			yaml: "hosts:\n  node9:\n", host: "node9",
			want: options{ProxyCommand: "aws ssm start-session --target i-node9 --document-name AWS-StartSSHSession --parameters portNumber=2222 --reason core@10.0.0.9/node9/%",
				ServerAliveCountMax: 5},
			source: map[string]string{"proxy_jump": "builtin", "proxy_command": "ssh_config"},
		},
		{
			name: "ProxyCommand none first: a direct connection",
			yaml: "hosts:\n  node10:\n", host: "node10", want: options{},
			source: map[string]string{"proxy_jump": "builtin", "proxy_command": "ssh_config"},
		},
		{
			name: "the first hop's own ProxyCommand, with the hop's tokens",
			yaml: "hosts:\n  node11:\n", host: "node11",
			want: options{Jumps: []inventory.Jump{{Name: "ssm-bastion", Address: "10.1.0.1", Port: 22, User: "tester", IdentityFiles: []string{common},
				ProxyCommand: "tsh proxy ssh --cluster=prod tester@10.1.0.1:22"}}},
			source: map[string]string{"proxy_jump": "ssh_config", "proxy_command": "builtin"},
		},
		{
			name: "the inventory's proxy_command wins over ssh_config's ProxyJump",
			yaml: "hosts:\n  node8: {proxy_command: \"nc -X connect -x proxy:3128 %h %p\"}\n", host: "node8",
			want:   options{ProxyCommand: "nc -X connect -x proxy:3128 10.0.0.8 22"},
			source: map[string]string{"proxy_jump": "builtin", "proxy_command": "host"},
		},
		{
			name: "the inventory's proxy_command none wins over ssh_config's ProxyCommand",
			yaml: "defaults: {proxy_command: none}\nhosts:\n  node9:\n", host: "node9",
			want:   options{ServerAliveCountMax: 5},
			source: map[string]string{"proxy_jump": "builtin", "proxy_command": "defaults"},
		},
		{
			name: "zero means not set; ProxyCommand none; UserKnownHostsFile none",
			yaml: "hosts:\n  node4:\n", host: "node4",
			want: options{HostKeyPolicy: "strict"},
			source: map[string]string{"proxy_jump": "builtin", "connect_timeout": "builtin", "server_alive_interval": "builtin",
				"server_alive_count_max": "builtin", "known_hosts": "ssh_config", "host_key_policy": "ssh_config"},
		},
		{name: "StrictHostKeyChecking ask", yaml: "hosts:\n  node5:\n", host: "node5", want: options{HostKeyPolicy: "strict"}},
		{name: "StrictHostKeyChecking off, known hosts /dev/null", yaml: "hosts:\n  node6:\n", host: "node6",
			want: options{HostKeyPolicy: "accept-new"}, source: map[string]string{"known_hosts": "ssh_config"}},
		{name: "StrictHostKeyChecking No", yaml: "hosts:\n  node7:\n", host: "node7", want: options{HostKeyPolicy: "accept-new"}},
		{
			// Negative control for the Match blocks: a host no Host block
			// names gets nothing from "Match host * exec" or "Match user".
			name: "Match exec and Match user apply to nobody",
			yaml: "hosts:\n  elsewhere:\n", host: "elsewhere", want: options{},
			source: map[string]string{"proxy_jump": "builtin", "host_key_policy": "builtin", "identities_only": "builtin"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkOptions(t, loadOne(t, e, tt.yaml, sshConfigOptions, tt.host), tt.want, tt.source)
		})
	}
}

func TestOptionsInvalid(t *testing.T) {
	e := newEnv(t)
	type tc struct {
		name, yaml, sshConfig string
		want                  []wantErr
	}
	tests := []tc{
		// Types and ranges of the inventory keys.
		{"identities_only yes", "hosts:\n  a: {identities_only: yes}\n", "",
			[]wantErr{{2, "hosts.a.identities_only", inventory.ErrWrongType, "identities_only must be true or false, got string \"yes\"; write true"}}},
		{"identities_only number", "defaults:\n  identities_only: 1\nhosts: {a: }\n", "",
			[]wantErr{{2, "defaults.identities_only", inventory.ErrWrongType, "got integer 1"}}},
		{"passphrase_env starts with a digit", "hosts:\n  a: {passphrase_env: 1PASS}\n", "",
			[]wantErr{{2, "hosts.a.passphrase_env", inventory.ErrInvalidValue, "must be the name of an environment variable"}}},
		{"passphrase_env with a dash", "hosts:\n  a: {passphrase_env: MY-PASS}\n", "",
			[]wantErr{{2, "hosts.a.passphrase_env", inventory.ErrInvalidValue, `got "MY-PASS"`}}},
		{"passphrase_env empty", "hosts:\n  a: {passphrase_env: \"\"}\n", "",
			[]wantErr{{2, "hosts.a.passphrase_env", inventory.ErrInvalidValue, `got ""`}}},
		{"host_key_policy ask", "groups:\n  g:\n    host_key_policy: ask\n    hosts: {a: }\n", "",
			[]wantErr{{3, "groups.g.host_key_policy", inventory.ErrInvalidValue, `host_key_policy must be strict, accept-new, insecure-ignore, got "ask"`}}},
		{"host_key_policy boolean", "hosts:\n  a: {host_key_policy: false}\n", "",
			[]wantErr{{2, "hosts.a.host_key_policy", inventory.ErrWrongType, "got boolean false"}}},
		{"connect_timeout zero", "hosts:\n  a: {connect_timeout: 0}\n", "",
			[]wantErr{{2, "hosts.a.connect_timeout", inventory.ErrInvalidValue, "connect_timeout must be from 1 second to 24h0m0s, got 0"}}},
		{"connect_timeout negative", "hosts:\n  a: {connect_timeout: -5s}\n", "",
			[]wantErr{{2, "hosts.a.connect_timeout", inventory.ErrInvalidValue, "must be positive"}}},
		{"connect_timeout bad unit", "hosts:\n  a: {connect_timeout: 5x}\n", "",
			[]wantErr{{2, "hosts.a.connect_timeout", inventory.ErrInvalidValue, `a duration such as 10s or 1m30s, or a number of seconds, got string "5x"`}}},
		{"connect_timeout float", "hosts:\n  a: {connect_timeout: 1.5}\n", "",
			[]wantErr{{2, "hosts.a.connect_timeout", inventory.ErrWrongType, "write fractions with a unit"}}},
		{"server_alive_interval too long", "hosts:\n  a: {server_alive_interval: 25h}\n", "",
			[]wantErr{{2, "hosts.a.server_alive_interval", inventory.ErrInvalidValue, "at most 24h0m0s"}}},
		{"server_alive_interval huge integer", "hosts:\n  a: {server_alive_interval: 99999999999999999999}\n", "",
			[]wantErr{{2, "hosts.a.server_alive_interval", inventory.ErrWrongType, "got number 99999999999999999999"}}},
		{"server_alive_interval list", "hosts:\n  a: {server_alive_interval: [1]}\n", "",
			[]wantErr{{2, "hosts.a.server_alive_interval", inventory.ErrWrongType, "got a list"}}},
		{"server_alive_count_max zero", "hosts:\n  a: {server_alive_count_max: 0}\n", "",
			[]wantErr{{2, "hosts.a.server_alive_count_max", inventory.ErrInvalidValue, "from 1 to 2147483647, got 0"}}},
		{"server_alive_count_max string", "hosts:\n  a: {server_alive_count_max: \"3\"}\n", "",
			[]wantErr{{2, "hosts.a.server_alive_count_max", inventory.ErrWrongType, `got string "3"`}}},
		{"unknown key suggests the new one", "hosts:\n  a: {StrictHostKeyChecking: no}\n", "",
			[]wantErr{{2, "hosts.a.StrictHostKeyChecking", inventory.ErrUnknownKey, `(did you mean "host_key_policy"?)`}}},
		{"ProxyJump spelled the ssh_config way", "hosts:\n  a: {ProxyJump: b}\n", "",
			[]wantErr{{2, "hosts.a.ProxyJump", inventory.ErrUnknownKey, `(did you mean "proxy_jump"?)`}}},

		// become_user.
		{"become_user without become", "hosts:\n  a: {become_user: auditor}\n", "",
			[]wantErr{{2, "hosts.a.become_user", inventory.ErrInvalidValue, `become_user "auditor" needs become: sudo, but host "a" has no become`}}},
		{"become_user reported once for every host that inherits it", "defaults:\n  become: sudo\n  become_user: auditor\ngroups:\n  g:\n    become: none\n    hosts: {a: , b: }\n", "",
			[]wantErr{{3, "defaults.become_user", inventory.ErrInvalidValue, `host "a" has become "none" from group:g`}}},
		{"become_user with a bad become: only become is reported", "hosts:\n  a: {become: su, become_user: x}\n", "",
			[]wantErr{{2, "hosts.a.become", inventory.ErrInvalidValue, ""}}},

		// proxy_jump syntax.
		{"proxy_jump empty string", "hosts:\n  a: {proxy_jump: \"\"}\n", "",
			[]wantErr{{2, "hosts.a.proxy_jump", inventory.ErrInvalidValue, "must not be empty; write none"}}},
		{"proxy_jump empty list", "hosts:\n  a: {proxy_jump: []}\n", "",
			[]wantErr{{2, "hosts.a.proxy_jump", inventory.ErrInvalidValue, "write proxy_jump: none"}}},
		{"proxy_jump empty hop", "hosts:\n  a: {proxy_jump: \"b,,c\"}\n", "",
			[]wantErr{{2, "hosts.a.proxy_jump", inventory.ErrInvalidValue, "jump host must not be empty"}}},
		{"proxy_jump none among hops", "hosts:\n  a: {proxy_jump: \"b,none\"}\n", "",
			[]wantErr{{2, "hosts.a.proxy_jump", inventory.ErrInvalidValue, "none cannot be one hop"}}},
		{"proxy_jump none in a list", "hosts:\n  a:\n    proxy_jump: [b, none]\n", "",
			[]wantErr{{3, "hosts.a.proxy_jump[1]", inventory.ErrInvalidValue, "write proxy_jump: none"}}},
		{"proxy_jump null item", "hosts:\n  a:\n    proxy_jump:\n      - b\n      -\n", "",
			[]wantErr{{5, "hosts.a.proxy_jump[1]", inventory.ErrWrongType, "list items must be strings"}}},
		{"proxy_jump number", "hosts:\n  a: {proxy_jump: 22}\n", "",
			[]wantErr{{2, "hosts.a.proxy_jump", inventory.ErrWrongType, "got integer 22"}}},
		{"proxy_jump trailing colon", "hosts:\n  a: {proxy_jump: \"b:\"}\n", "",
			[]wantErr{{2, "hosts.a.proxy_jump", inventory.ErrInvalidValue, `"b:" ends with ':' and no port`}}},
		{"proxy_jump port zero", "hosts:\n  a: {proxy_jump: \"b:0\"}\n", "",
			[]wantErr{{2, "hosts.a.proxy_jump", inventory.ErrInvalidValue, `port must be from 1 to 65535, got "0"`}}},
		{"proxy_jump port name", "hosts:\n  a: {proxy_jump: \"b:ssh\"}\n", "",
			[]wantErr{{2, "hosts.a.proxy_jump", inventory.ErrInvalidValue, `got "ssh"`}}},
		{"proxy_jump unclosed bracket", "hosts:\n  a: {proxy_jump: \"[fd00::1:22\"}\n", "",
			[]wantErr{{2, "hosts.a.proxy_jump", inventory.ErrInvalidValue, "unclosed ["}}},
		{"proxy_jump brackets around a name", "hosts:\n  a: {proxy_jump: \"[gw]:22\"}\n", "",
			[]wantErr{{2, "hosts.a.proxy_jump", inventory.ErrInvalidValue, "brackets are for IPv6 addresses"}}},
		{"proxy_jump URL", "hosts:\n  a: {proxy_jump: \"https://gw\"}\n", "",
			[]wantErr{{2, "hosts.a.proxy_jump", inventory.ErrInvalidValue, "scheme other than ssh://"}}},
		{"proxy_jump empty user", "hosts:\n  a: {proxy_jump: \"@gw\"}\n", "",
			[]wantErr{{2, "hosts.a.proxy_jump", inventory.ErrInvalidValue, "user must not be empty"}}},
		{"proxy_jump too many", "hosts:\n  a: {proxy_jump: \"h1,h2,h3,h4,h5,h6,h7,h8,h9\"}\n", "",
			[]wantErr{{2, "hosts.a.proxy_jump", inventory.ErrInvalidValue, "9 hops, the limit is 8"}}},
		{"proxy_jump list too many", "hosts:\n  a: {proxy_jump: [h1, h2, h3, h4, h5, h6, h7, h8, h9]}\n", "",
			[]wantErr{{2, "hosts.a.proxy_jump", inventory.ErrInvalidValue, "9 hops, the limit is 8"}}},
		{"proxy_jump hop without an address", "hosts:\n  a: {address: 10.0.0.1, proxy_jump: \"10.0.0\"}\n", "",
			[]wantErr{{2, "hosts.a", inventory.ErrNoAddress, `jump host "10.0.0" has no address`}}},
		{"proxy_jump through itself", "hosts:\n  a: {address: 10.0.0.1, proxy_jump: \"x,a\"}\n", "",
			[]wantErr{{2, "hosts.a", inventory.ErrInvalidValue, `ProxyJump loop: "a" is reached through x → a → a`}}},
		{"proxy_jump through the same hop twice", "hosts:\n  a: {address: 10.0.0.1, proxy_jump: \"x,y,x\"}\n", "",
			[]wantErr{{2, "hosts.a", inventory.ErrInvalidValue, `passes "x" twice`}}},

		// Values taken from ssh_config, reported at the host's line.
		// ssh_config(5): ProxyCommand "accepts the tokens %%, %h, %k, %n, %p, and %r".
		{"ProxyCommand with a token ssh does not expand there", "hosts:\n  a:\n", "Host a\n  ProxyCommand connect --token s3cret %C\n",
			[]wantErr{{2, "hosts.a", inventory.ErrInvalidValue, `gives a ProxyCommand fleet-audit cannot run: ProxyCommand uses the token %C`}}},
		{"ProxyCommand of the first hop with a lone %", "hosts:\n  a: {proxy_jump: gw}\n", "Host gw\n  ProxyCommand nc %h %p %\n",
			[]wantErr{{2, "hosts.a", inventory.ErrInvalidValue, `gives jump host "gw" a ProxyCommand fleet-audit cannot run: ProxyCommand ends with a lone %`}}},
		{"ProxyCommand -", "hosts:\n  a:\n", "Host a\n  ProxyCommand -\n",
			[]wantErr{{2, "hosts.a", inventory.ErrInvalidValue, `ProxyCommand - (use the connection on ssh's own stdin and stdout) is not supported`}}},
		{"proxy_command and proxy_jump on one level", "hosts:\n  a: {proxy_jump: gw, proxy_command: nc %h %p}\n", "",
			[]wantErr{{2, "hosts.a.proxy_command", inventory.ErrInvalidValue, `proxy_jump and proxy_command are both set here`}}},
		{"proxy_command empty", "hosts:\n  a: {proxy_command: \"\"}\n", "",
			[]wantErr{{2, "hosts.a.proxy_command", inventory.ErrInvalidValue, `ProxyCommand is empty; write none`}}},
		{"ProxyCommand overridden by the inventory is no error, but a bad value is", "hosts:\n  a: {proxy_jump: none, host_key_policy: nope}\n", "Host a\n  ProxyCommand nc %h %p\n",
			[]wantErr{{2, "hosts.a.host_key_policy", inventory.ErrInvalidValue, ""}}},
		{"IdentitiesOnly bogus", "hosts:\n  a:\n", "Host a\n  IdentitiesOnly maybe\n",
			[]wantErr{{2, "hosts.a", inventory.ErrInvalidValue, `gives IdentitiesOnly "maybe": want yes or no`}}},
		{"StrictHostKeyChecking bogus", "hosts:\n  a:\n", "Host a\n  StrictHostKeyChecking sometimes\n",
			[]wantErr{{2, "hosts.a", inventory.ErrInvalidValue, `gives StrictHostKeyChecking "sometimes": want yes, ask, accept-new, no or off`}}},
		{"ConnectTimeout bogus", "hosts:\n  a:\n", "Host a\n  ConnectTimeout 10x\n",
			[]wantErr{{2, "hosts.a", inventory.ErrInvalidValue, `gives ConnectTimeout "10x"`}}},
		{"ServerAliveInterval too long", "hosts:\n  a:\n", "Host a\n  ServerAliveInterval 2d\n",
			[]wantErr{{2, "hosts.a", inventory.ErrInvalidValue, `gives ServerAliveInterval "2d": longer than 24h0m0s`}}},
		{"ServerAliveCountMax negative", "hosts:\n  a:\n", "Host a\n  ServerAliveCountMax -1\n",
			[]wantErr{{2, "hosts.a", inventory.ErrInvalidValue, `gives ServerAliveCountMax "-1"`}}},
		{"UserKnownHostsFile unterminated quote", "hosts:\n  a:\n", "Host a\n  UserKnownHostsFile \"~/kh\n",
			[]wantErr{{2, "hosts.a", inventory.ErrInvalidValue, "unterminated quote"}}},
		{"UserKnownHostsFile unknown token", "hosts:\n  a:\n", "Host a\n  UserKnownHostsFile ~/.ssh/kh_%C\n",
			[]wantErr{{2, "hosts.a", inventory.ErrInvalidValue, "uses the token %C"}}},
		{"UserKnownHostsFile environment variable", "hosts:\n  a:\n", "Host a\n  UserKnownHostsFile ${HOME}/kh\n",
			[]wantErr{{2, "hosts.a", inventory.ErrInvalidValue, "environment variable"}}},
		{"ProxyJump bad port", "hosts:\n  a:\n", "Host a\n  ProxyJump gw:99999\n",
			[]wantErr{{2, "hosts.a", inventory.ErrInvalidValue, `gives ProxyJump "gw:99999"`}}},
		{"jump host Port bad", "hosts:\n  a: {proxy_jump: gw}\n", "Host gw\n  Port ssh\n",
			[]wantErr{{2, "hosts.a", inventory.ErrInvalidValue, `gives Port "ssh" for jump host "gw"`}}},
		{"jump host HostName without address", "hosts:\n  a: {proxy_jump: gw}\n", "Host gw\n  HostName %C\n",
			[]wantErr{{2, "hosts.a", inventory.ErrInvalidValue, `for jump host "gw"`}}},

		// Loops and depth.
		{"Host * ProxyJump matches the jump host too", "hosts:\n  a:\n", "Host *\n  ProxyJump bastion\n",
			[]wantErr{{2, "hosts.a", inventory.ErrInvalidValue, `ProxyJump loop: a → bastion → bastion, each reached through the next (ProxyJump of "bastion" in ` + filepath.Join(e.dir, "ssh_config") + `); if a pattern such as "Host *" also matches the jump host, exclude it: "Host * !bastion"`}}},
		{"cycle through two jump hosts", "hosts:\n  a:\n", "Host a\n  ProxyJump b\nHost b\n  ProxyJump c\nHost c\n  ProxyJump b\n",
			[]wantErr{{2, "hosts.a", inventory.ErrInvalidValue, "ProxyJump loop: a → b → c → b"}}},
		{"cycle back to the node", "hosts:\n  a:\n", "Host a\n  ProxyJump b\nHost b\n  ProxyJump a\n",
			[]wantErr{{2, "hosts.a", inventory.ErrInvalidValue, "ProxyJump loop: a → b → a"}}},
		{"chain deeper than 8", "hosts:\n  a:\n", deepChain(10),
			[]wantErr{{2, "hosts.a", inventory.ErrInvalidValue, "deeper than 8 hops"}}},
		// One rule with the probe bundle (username.CheckBecome): what the
		// run would refuse after connecting is refused here, at load.
		{"become_user with a dot", "defaults:\n  become: sudo\nhosts:\n  a: {become_user: svc.audit}\n", "",
			[]wantErr{{4, "hosts.a.become_user", inventory.ErrInvalidValue, `become_user "svc.audit" is not a portable user name`}}},
		{"become_user with a domain", "groups:\n  g:\n    become: sudo\n    become_user: audit@corp.example\n    hosts: {a: }\n", "",
			[]wantErr{{4, "groups.g.become_user", inventory.ErrInvalidValue, `become_user "audit@corp.example" is not a portable user name`}}},
		{"become_user in capitals", "defaults:\n  become: sudo\n  become_user: Auditor\nhosts: {a: }\n", "",
			[]wantErr{{3, "defaults.become_user", inventory.ErrInvalidValue, "want a lowercase letter or _"}}},
		{"become_user of 33 bytes", "defaults:\n  become: sudo\n  become_user: " + strings.Repeat("a", 33) + "\nhosts: {a: }\n", "",
			[]wantErr{{3, "defaults.become_user", inventory.ErrInvalidValue, "up to 31"}}},
		{"chain of 9 hops through a list", "hosts:\n  a:\n", "Host a\n  ProxyJump g1,h2\nHost g1\n  ProxyJump g2,h3,h4,h5,h6,h7,h8\n",
			[]wantErr{{2, "hosts.a", inventory.ErrInvalidValue, "behind 9 ProxyJump hops (g2 → h3 → h4 → h5 → h6 → h7 → h8 → g1 → h2), the limit is 8"}}},
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := e.opts()
			opts.UserSSHConfig = "none"
			if tt.sshConfig != "" {
				opts.UserSSHConfig = e.write(t, "ssh_config", tt.sshConfig)
			}
			path := e.write(t, "inventory.yaml", tt.yaml)
			inv, err := inventory.Load(path, opts)
			if err == nil {
				t.Fatalf("Load succeeded: %+v", inv)
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

// deepChain is an ssh_config in which a jumps through g1, g1 through g2, and
// so on up to gN.
func deepChain(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Host a\n  ProxyJump g1\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "Host g%d\n  ProxyJump g%d\n", i, i+1)
	}
	return b.String()
}

// A chain of exactly the limit loads: the negative control for the depth
// and loop errors above, which could otherwise fire on any chain.
func TestJumpChainAtTheLimit(t *testing.T) {
	e := newEnv(t)
	h := loadOne(t, e, "hosts:\n  a:\n", deepChain(8), "a")
	var names []string
	for _, j := range h.Jumps {
		names = append(names, j.Name)
	}
	if want := []string{"g8", "g7", "g6", "g5", "g4", "g3", "g2", "g1"}; !slices.Equal(names, want) {
		t.Errorf("jumps = %q, want %q", names, want)
	}
}

// hostile are values that must never reach a host, user or address field:
// shell metacharacters, quotes, whitespace and option-like values.
var hostile = []string{"a;b", "$(id)", "a`id`", `a"b`, "a'b", "a\nb", "-oProxyCommand=x", "a b", "a|b", "a&b", "a\\b"}

func TestHostileValues(t *testing.T) {
	e := newEnv(t)
	type tc struct {
		name, yaml, sshConfig string
		line                  int
		field, msg            string
	}
	var tests []tc
	// Each template is checked with a benign value first (the negative
	// control: the template itself loads) and then with every hostile one.
	templates := []struct {
		name       string
		build      func(v string) (yaml, sshConfig string)
		line       int
		field, msg string
		noNewline  bool // ssh_config is line-based: a newline ends the value
	}{
		{"host name", func(v string) (string, string) { return fmt.Sprintf("hosts:\n  %q: {address: 10.0.0.1}\n", v), "" }, 2, "hosts.", "host name", false},
		{"user", func(v string) (string, string) { return fmt.Sprintf("hosts:\n  a:\n    user: %q\n", v), "" }, 3, "hosts.a.user", "user", false},
		{"address", func(v string) (string, string) { return fmt.Sprintf("hosts:\n  a:\n    address: %q\n", v), "" }, 3, "hosts.a.address", "address", false},
		{"proxy_jump string", func(v string) (string, string) {
			return fmt.Sprintf("hosts:\n  a:\n    proxy_jump: %q\n", "ops@"+v+":22"), ""
		}, 3, "hosts.a.proxy_jump", "jump host", false},
		{"proxy_jump user", func(v string) (string, string) {
			return fmt.Sprintf("hosts:\n  a:\n    proxy_jump: [%q]\n", v+"@gw"), ""
		}, 3, "hosts.a.proxy_jump[0]", "user", false},
		{"proxy_jump list", func(v string) (string, string) { return fmt.Sprintf("hosts:\n  a:\n    proxy_jump: [gw, %q]\n", v), "" }, 3, "hosts.a.proxy_jump[1]", "jump host", false},
		{"become_user", func(v string) (string, string) {
			return fmt.Sprintf("hosts:\n  a:\n    become: sudo\n    become_user: %q\n", v), ""
		}, 4, "hosts.a.become_user", "become_user", false},
		{"passphrase_env", func(v string) (string, string) {
			return fmt.Sprintf("hosts:\n  a:\n    passphrase_env: %q\n", "P"+v), ""
		}, 3, "hosts.a.passphrase_env", "passphrase_env", false},
		{"ssh_config User", func(v string) (string, string) { return "hosts:\n  a:\n", "Host a\n  User " + v + "\n" }, 2, "hosts.a", "gives User", true},
		{"ssh_config HostName", func(v string) (string, string) { return "hosts:\n  a:\n", "Host a\n  HostName " + v + "\n" }, 2, "hosts.a", "gives HostName", true},
		{"ssh_config ProxyJump", func(v string) (string, string) { return "hosts:\n  a:\n", "Host a\n  ProxyJump gw," + v + "\n" }, 2, "hosts.a", "gives ProxyJump", true},
		{"ssh_config jump host HostName", func(v string) (string, string) {
			return "hosts:\n  a: {proxy_jump: gw}\n", "Host gw\n  HostName " + v + "\n"
		}, 2, "hosts.a", `for jump host "gw"`, true},
		{"ssh_config jump host User", func(v string) (string, string) {
			return "hosts:\n  a: {proxy_jump: gw}\n", "Host gw\n  User " + v + "\n"
		}, 2, "hosts.a", `gives User`, true},
	}
	for _, tp := range templates {
		good := "ok"
		if tp.name == "ssh_config HostName" || tp.name == "address" || tp.name == "ssh_config jump host HostName" {
			good = "10.0.0.7"
		}
		yaml, sshCfg := tp.build(good)
		t.Run(tp.name+"/benign", func(t *testing.T) {
			loadOne(t, e, yaml, sshCfg, map[bool]string{true: "ok", false: "a"}[tp.name == "host name"])
		})
		for _, v := range hostile {
			if tp.noNewline && strings.Contains(v, "\n") {
				continue
			}
			yaml, sshCfg := tp.build(v)
			field := tp.field
			if tp.name == "host name" {
				field += fieldKey(v)
			}
			tests = append(tests, tc{tp.name + "/" + fmt.Sprintf("%q", v), yaml, sshCfg, tp.line, field, tp.msg})
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := e.opts()
			opts.UserSSHConfig = "none"
			if tt.sshConfig != "" {
				opts.UserSSHConfig = e.write(t, "ssh_config", tt.sshConfig)
			}
			path := e.write(t, "inventory.yaml", tt.yaml)
			inv, err := inventory.Load(path, opts)
			if err == nil {
				t.Fatalf("Load accepted a hostile value: %+v", inv.Hosts)
			}
			errs := flatten(t, err)
			var found bool
			for _, g := range errs {
				if g.File == path && g.Line == tt.line && g.Field == tt.field && errors.Is(g, inventory.ErrInvalidValue) && strings.Contains(g.Error(), tt.msg) {
					found = true
				}
			}
			if !found {
				t.Errorf("no error at %s:%d field %q containing %q:\n%v", path, tt.line, tt.field, tt.msg, err)
			}
		})
	}
}
