package inventory_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/inventory"
)

// layoutHost is what a test expects of one host of an Ansible layout.
type layoutHost struct {
	name, address string
	port          int
	user          string
	roles         []string
	become        string
	key           string // the one identity file, "" for none
	jump          string // the one ProxyJump hop as written, "" for none
	groups        []string
	// sources are the Source entries the layout sets (the rest are
	// builtin or ssh_config).
	sources map[string]string
}

// rke2AnsibleHosts are the hosts of testdata/ansible/rke2-ansible, whose
// hosts.ini and hosts.yml describe the same fleet
// (rancherfederal/rke2-ansible's sample layout).
func rke2AnsibleHosts(home string) []layoutHost {
	serverKey := filepath.Join(home, ".ssh", "rke2_servers_ed25519")
	common := map[string]string{"user": "group:rke2_cluster", "become": "group_vars/all.yml", "proxy_jump": "group:rke2_cluster",
		"host_key_policy": "group:rke2_cluster", "known_hosts": "group:rke2_cluster"}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range common {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	server := func(name, address, addrSrc string) layoutHost {
		src := with(map[string]string{"identity_files": "group_vars/rke2_servers.yml", "roles": "group:rke2_servers"})
		if addrSrc != "" {
			src["address"] = addrSrc
		}
		return layoutHost{name: name, address: address, port: 22, user: "rke2admin", roles: []string{"server"}, become: "sudo",
			key: serverKey, jump: "ops@bastion.example.com:2200", groups: []string{"rke2_cluster", "rke2_servers"}, sources: src}
	}
	agent := func(name string) layoutHost {
		return layoutHost{name: name, address: name, port: 22, user: "rke2admin", roles: []string{"worker"}, become: "sudo",
			jump: "ops@bastion.example.com:2200", groups: []string{"rke2_cluster", "rke2_agents"}, sources: with(map[string]string{"roles": "group:rke2_agents"})}
	}
	a4 := agent("agent04")
	a4.address, a4.port = "10.10.10.24", 2222
	a4.sources["address"], a4.sources["port"] = "host", "host"
	return []layoutHost{
		server("server0", "10.10.10.10", "host_vars/server0.yml"), server("server1", "server1", ""), server("server2", "server2", ""),
		agent("agent01"), agent("agent02"), agent("agent03"), a4,
	}
}

// lablabsHosts are the hosts of testdata/ansible/lablabs
// (lablabs/ansible-role-rke2's README inventory).
func lablabsHosts() []layoutHost {
	host := func(name, address, role, group, user, userSrc string) layoutHost {
		return layoutHost{name: name, address: address, port: 22, user: user, roles: []string{role}, become: "sudo",
			groups:  []string{"k8s_cluster", group},
			sources: map[string]string{"address": "host", "user": userSrc, "become": "group_vars/all.yml", "roles": "group:" + group}}
	}
	m1 := host("master-01", "192.168.123.1", "server", "masters", "rocky", "group_vars/all.yml")
	m1.port, m1.sources["port"] = 2201, "host_vars/master-01/"
	return []layoutHost{
		m1,
		host("master-02", "192.168.123.2", "server", "masters", "rocky", "group_vars/all.yml"),
		host("master-03", "192.168.123.3", "server", "masters", "rocky", "group_vars/all.yml"),
		host("worker-01", "192.168.123.11", "worker", "workers", "ubuntu", "group_vars/workers.yml"),
		host("worker-02", "192.168.123.12", "worker", "workers", "ubuntu", "group_vars/workers.yml"),
		host("worker-03", "192.168.123.13", "worker", "workers", "ubuntu", "group_vars/workers.yml"),
	}
}

func checkLayout(t *testing.T, inv *inventory.Inventory, want []layoutHost) {
	t.Helper()
	if len(inv.Hosts) != len(want) {
		var names []string
		for _, h := range inv.Hosts {
			names = append(names, h.Name)
		}
		t.Fatalf("hosts %v; want %d hosts", names, len(want))
	}
	for i, w := range want {
		h := inv.Hosts[i]
		var key, jump string
		if len(h.IdentityFiles) == 1 {
			key = h.IdentityFiles[0]
		} else if len(h.IdentityFiles) > 1 {
			key = strings.Join(h.IdentityFiles, ",")
		}
		if len(h.Jumps) > 0 {
			jump = h.Jumps[0].Name
		}
		got := layoutHost{name: h.Name, address: h.Address, port: h.Port, user: h.User, roles: h.Roles, become: h.Become, key: key, jump: jump, groups: h.Groups}
		w2 := w
		w2.sources = nil
		if !reflect.DeepEqual(got, w2) {
			t.Errorf("host %d:\n got %+v\nwant %+v", i, got, w2)
		}
		for k, v := range w.sources {
			if h.Source[k] != v {
				t.Errorf("%s: %s comes from %q, want %q", h.Name, k, h.Source[k], v)
			}
		}
	}
}

func layoutOpts(home string) inventory.LoadOptions {
	return inventory.LoadOptions{Home: home, CurrentUser: "tester", UserSSHConfig: "none"}
}

// TestAnsibleLayouts reads the two RKE2 layouts operators use, each in INI
// and YAML with the group_vars/ and host_vars/ beside them: roles come from
// the group names, connection variables from where Ansible takes them, and
// the rest of the variables (rke2_config, tokens) are left alone.
func TestAnsibleLayouts(t *testing.T) {
	home := t.TempDir()
	for _, tc := range []struct {
		file   string
		format string
		want   []layoutHost
	}{
		{"rke2-ansible/hosts.ini", "ansible-ini", rke2AnsibleHosts(home)},
		{"rke2-ansible/hosts.yml", "ansible-yaml", rke2AnsibleHosts(home)},
		{"lablabs/hosts.ini", "ansible-ini", lablabsHosts()},
		{"lablabs/hosts.yml", "ansible-yaml", lablabsHosts()},
	} {
		t.Run(tc.file, func(t *testing.T) {
			inv, err := inventory.Load(filepath.Join("testdata", "ansible", tc.file), layoutOpts(home))
			if err != nil {
				t.Fatal(err)
			}
			if inv.Format != tc.format {
				t.Errorf("read as %q, want %q", inv.Format, tc.format)
			}
			checkLayout(t, inv, tc.want)
			for _, w := range inv.Warnings {
				if strings.Contains(w, "Secret") || strings.Contains(w, "python3") {
					t.Errorf("a warning carries a variable's value: %q", w)
				}
			}
		})
	}
}

// TestAnsibleLayoutWarnsOnceOfUnusedVariables: an ansible_ variable that
// fleet-audit does not use is named once for the whole inventory, never
// with its value.
func TestAnsibleLayoutWarnsOnceOfUnusedVariables(t *testing.T) {
	inv, err := inventory.Load(filepath.Join("testdata", "ansible", "rke2-ansible", "hosts.ini"), layoutOpts(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"inventory: ignored Ansible variables fleet-audit does not use: ansible_python_interpreter"}
	if !slices.Equal(inv.Warnings, want) {
		t.Errorf("warnings %q; want %q", inv.Warnings, want)
	}
}

// TestAnsibleInventoryAgrees holds the loader to Ansible itself: for every
// layout, ansible-inventory --list gives each host's merged variables, and
// the connection settings fleet-audit resolved must be what those variables
// say. The --list JSON, read back through stdin, must resolve to the same
// hosts as the file it came from.
func TestAnsibleInventoryAgrees(t *testing.T) {
	testtools.SkipShort(t, "runs ansible-inventory")
	ansibleInventory := testtools.Find(t, "ansible-inventory")
	home := t.TempDir()
	precedence := writePrecedenceLayout(t)
	for _, file := range []string{
		writeDirLayout(t),
		filepath.Join("testdata", "ansible", "rke2-ansible", "hosts.ini"),
		filepath.Join("testdata", "ansible", "rke2-ansible", "hosts.yml"),
		filepath.Join("testdata", "ansible", "lablabs", "hosts.ini"),
		filepath.Join("testdata", "ansible", "lablabs", "hosts.yml"),
		precedence,
	} {
		t.Run(file, func(t *testing.T) {
			cmd := exec.Command(ansibleInventory, "-i", file, "--list")
			cmd.Env = append(os.Environ(), "HOME="+home, "ANSIBLE_LOCAL_TEMP="+t.TempDir(), "ANSIBLE_NOCOLOR=1")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("ansible-inventory: %v\n%s", err, stderr.Bytes())
			}
			var list struct {
				Meta struct {
					Hostvars map[string]map[string]any `json:"hostvars"`
				} `json:"_meta"`
			}
			if err := json.Unmarshal(out, &list); err != nil {
				t.Fatal(err)
			}
			inv, err := inventory.Load(file, layoutOpts(home))
			if err != nil {
				t.Fatal(err)
			}
			if len(inv.Hosts) != len(list.Meta.Hostvars) {
				t.Fatalf("%d hosts; ansible-inventory lists %d", len(inv.Hosts), len(list.Meta.Hostvars))
			}
			for _, h := range inv.Hosts {
				vars, ok := list.Meta.Hostvars[h.Name]
				if !ok {
					vars = map[string]any{}
				}
				str := func(k, def string) string {
					if v, ok := vars[k]; ok {
						b, _ := json.Marshal(v)
						return strings.Trim(string(b), `"`)
					}
					return def
				}
				// Ansible reads become through its boolean() filter, so a
				// [group:vars] "true" (a string there) becomes too.
				become := ""
				switch b := vars["ansible_become"].(type) {
				case bool:
					if b {
						become = "sudo"
					}
				case string:
					if slices.Contains([]string{"y", "yes", "on", "1", "true", "t"}, strings.ToLower(b)) {
						become = "sudo"
					}
				}
				key := ""
				if k := str("ansible_ssh_private_key_file", ""); k != "" {
					key = strings.Replace(k, "~", home, 1)
				}
				got := []string{h.Address, itoa(h.Port), h.User, h.Become, strings.Join(h.IdentityFiles, ",")}
				want := []string{str("ansible_host", h.Name), str("ansible_port", "22"), str("ansible_user", "tester"), become, key}
				if !slices.Equal(got, want) {
					t.Errorf("%s: address, port, user, become, key = %q; ansible-inventory's variables say %q", h.Name, got, want)
				}
			}

			// The change variables are all's, so every host has the same.
			for _, h := range inv.Hosts {
				vars := list.Meta.Hostvars[h.Name]
				str := func(k string) string {
					s, _ := vars[k].(string)
					return s
				}
				want := inventory.Change{ID: str("fleet_audit_change_id"), Title: str("fleet_audit_change_title"), RequestedBy: str("fleet_audit_change_requested_by")}
				if inv.Change != want {
					t.Errorf("Change %+v; ansible-inventory's variables for %s say %+v", inv.Change, h.Name, want)
				}
			}

			fromList, err := inventory.Load("-", inventory.LoadOptions{Home: home, CurrentUser: "tester", UserSSHConfig: "none", Stdin: bytes.NewReader(out)})
			if err != nil {
				t.Fatalf("the --list JSON: %v", err)
			}
			if fromList.Format != "ansible-json" {
				t.Errorf("the --list JSON was read as %q", fromList.Format)
			}
			if fromList.Change != inv.Change {
				t.Errorf("Change from the --list JSON %+v; from the file %+v", fromList.Change, inv.Change)
			}
			byName := map[string]inventory.Host{}
			for _, h := range fromList.Hosts {
				byName[h.Name] = h
			}
			for _, h := range inv.Hosts {
				l := byName[h.Name]
				got := []any{l.Address, l.Port, l.User, l.Become, l.IdentityFiles, l.Roles, l.HostKeyPolicy, len(l.Jumps)}
				want := []any{h.Address, h.Port, h.User, h.Become, h.IdentityFiles, h.Roles, h.HostKeyPolicy, len(h.Jumps)}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s from the --list JSON: %v; from the file: %v", h.Name, got, want)
				}
			}
		})
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// writePrecedenceLayout writes an inventory whose variables are set at
// every level Ansible merges, each level overriding the one below it for
// one variable, so only Ansible's order gives the right answer:
// host_vars/ > the host line > group_vars/<child> > group_vars/<parent> >
// group_vars/all > [child:vars] > [parent:vars] > [all:vars], with
// ansible_group_priority reordering two groups of the same depth; the
// change variables in [all:vars] and group_vars/all.yml, the latter's null
// replacing a value.
func writePrecedenceLayout(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"inventory": `[parent:children]
child

[child]
h1 ansible_port=2201
h2

[aaa]
h2

[zzz]
h2

[all:vars]
ansible_host=10.0.0.1
ansible_user=from-all-vars
ansible_port=2000
fleet_audit_change_id=from-all-vars
fleet_audit_change_title="upgrade the fleet"
fleet_audit_change_requested_by=from-all-vars

[parent:vars]
ansible_user=from-parent-vars

[child:vars]
ansible_user=from-child-vars
ansible_become=true

[aaa:vars]
ansible_group_priority=2
ansible_port=2300
ansible_user=from-aaa-vars

[zzz:vars]
ansible_port=2400
ansible_user=from-zzz-vars
`,
		"group_vars/all.yml":    "ansible_become_user: svc\nfleet_audit_change_id: CHG-4711\nfleet_audit_change_requested_by:\n",
		"group_vars/parent.yml": "ansible_ssh_private_key_file: ~/.ssh/parent\n",
		"group_vars/child":      "ansible_ssh_private_key_file: ~/.ssh/child\n",
		"host_vars/h1.yaml":     "ansible_host: 10.0.0.11\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "inventory")
}

// TestAnsiblePrecedence pins the merge order writePrecedenceLayout sets
// up (TestAnsibleInventoryAgrees holds it to ansible-inventory too).
func TestAnsiblePrecedence(t *testing.T) {
	home := t.TempDir()
	inv, err := inventory.Load(writePrecedenceLayout(t), layoutOpts(home))
	if err != nil {
		t.Fatal(err)
	}
	type view struct {
		Address, User, Become, BecomeUser, Key string
		Port                                   int
		Groups                                 []string
	}
	want := map[string]view{
		"h1": {Address: "10.0.0.11", User: "from-child-vars", Become: "sudo", BecomeUser: "svc", Key: filepath.Join(home, ".ssh", "child"), Port: 2201, Groups: []string{"parent", "child"}},
		// aaa, zzz and parent are all at depth 1 and child at depth 2, so
		// child's user wins; aaa's priority 2 sorts it after zzz (which
		// its name alone would not), so aaa's port wins.
		"h2": {Address: "10.0.0.1", User: "from-child-vars", Become: "sudo", BecomeUser: "svc", Key: filepath.Join(home, ".ssh", "child"), Port: 2300, Groups: []string{"parent", "zzz", "aaa", "child"}},
	}
	for _, h := range inv.Hosts {
		got := view{h.Address, h.User, h.Become, h.BecomeUser, strings.Join(h.IdentityFiles, ","), h.Port, h.Groups}
		if !reflect.DeepEqual(got, want[h.Name]) {
			t.Errorf("%s:\n got %+v\nwant %+v", h.Name, got, want[h.Name])
		}
	}
	if want := (inventory.Change{ID: "CHG-4711", Title: "upgrade the fleet"}); inv.Change != want {
		t.Errorf("Change %+v; want %+v", inv.Change, want)
	}
}

// TestAnsibleSources reads each way an Ansible inventory reaches
// fleet-audit, detected by content.
func TestAnsibleSources(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name, path, content, stdin string
		format                     string
		hosts                      []string
		ports                      []int
	}{
		{name: "comma host list", path: "node1,node2:2222,", format: "host-list", hosts: []string{"node1", "node2"}, ports: []int{22, 2222}},
		{name: "one host per line", path: "hosts.txt", content: "# plain list\nnode1\nnode2:2200\n\n10.0.0.3\n", format: "ansible-ini",
			hosts: []string{"node1", "node2", "10.0.0.3"}, ports: []int{22, 2200, 22}},
		{name: "INI ranges", path: "inv", content: "[w]\nworker-[01:03]\nx[a:b]-[1:2]\n", format: "ansible-ini",
			hosts: []string{"worker-01", "worker-02", "worker-03", "xa-1", "xa-2", "xb-1", "xb-2"}, ports: []int{22, 22, 22, 22, 22, 22, 22}},
		{name: "--list JSON on stdin", path: "-", format: "ansible-json",
			stdin: `{"_meta": {"hostvars": {"a": {"ansible_host": "10.1.0.1", "ansible_port": 2022}, "b": {}}},
			 "all": {"children": ["ungrouped", "masters"]}, "masters": {"hosts": ["a"]}, "ungrouped": {"hosts": ["b"]}}`,
			hosts: []string{"a", "b"}, ports: []int{2022, 22}},
		{name: "YAML with only top-level groups", path: "inv.yaml", content: "masters:\n  hosts:\n    m1:\n", format: "ansible-yaml",
			hosts: []string{"m1"}, ports: []int{22}},
		{name: "native stays native", path: "native.yaml", content: "hosts:\n  n1: {address: 10.0.0.1}\n", format: "native",
			hosts: []string{"n1"}, ports: []int{22}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path
			opts := e.opts()
			if tc.content != "" {
				path = e.write(t, tc.path, tc.content)
			}
			if tc.stdin != "" {
				opts.Stdin = strings.NewReader(tc.stdin)
			}
			inv, err := inventory.Load(path, opts)
			if err != nil {
				t.Fatal(err)
			}
			var hosts []string
			var ports []int
			for _, h := range inv.Hosts {
				hosts, ports = append(hosts, h.Name), append(ports, h.Port)
			}
			if inv.Format != tc.format || !slices.Equal(hosts, tc.hosts) || !slices.Equal(ports, tc.ports) {
				t.Errorf("format %s hosts %v ports %v; want %s %v %v", inv.Format, hosts, ports, tc.format, tc.hosts, tc.ports)
			}
		})
	}
}

// TestAnsibleRoleMap: --role-map adds groups and replaces defaults, and
// fleet_audit_roles adds roles where no group name says them.
func TestAnsibleRoleMap(t *testing.T) {
	e := newEnv(t)
	path := e.write(t, "hosts", "[masters]\nm1\n[k8s_infra]\ni1 fleet_audit_roles=infra,worker\n[k8s_etcd]\ne1\n")
	roleMap, err := inventory.ParseRoleMap("k8s_etcd=etcd, masters=control-plane")
	if err != nil {
		t.Fatal(err)
	}
	opts := e.opts()
	opts.RoleMap = roleMap
	inv, err := inventory.Load(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"m1": {"control-plane"}, "i1": {"infra", "worker"}, "e1": {"etcd"}}
	for _, h := range inv.Hosts {
		if !slices.Equal(h.Roles, want[h.Name]) {
			t.Errorf("%s roles %v; want %v", h.Name, h.Roles, want[h.Name])
		}
	}
	for _, bad := range []string{"masters", "=x", "g=bad role"} {
		if _, err := inventory.ParseRoleMap(bad); err == nil {
			t.Errorf("ParseRoleMap(%q) accepted", bad)
		}
	}
}

// TestAnsibleSSHArgs: the ssh options users put in
// ansible_ssh_common_args and ansible_ssh_extra_args become settings.
func TestAnsibleSSHArgs(t *testing.T) {
	for _, tc := range []struct {
		name, args string
		jump       string
		command    string
		policy     string
		known      string
		only       bool
		key        string
		warning    string
	}{
		{name: "-o ProxyJump", args: "-o ProxyJump=ops@bastion:2222", jump: "ops@bastion:2222"},
		{name: "-J", args: "-J bastion", jump: "bastion"},
		{name: "-o KEY VALUE", args: `-o "StrictHostKeyChecking no"`, policy: "accept-new"},
		{name: "-oKEY=VALUE", args: "-oStrictHostKeyChecking=yes -oIdentitiesOnly=yes", policy: "strict", only: true},
		{name: "known hosts", args: "-o UserKnownHostsFile=/etc/k1", known: "/etc/k1"},
		{name: "-i", args: "-i /keys/id", key: "/keys/id"},
		{name: "first value wins", args: "-J first -o ProxyJump=second", jump: "first"},
		{name: "ProxyCommand through ssh -W", args: `-o ProxyCommand="ssh -W %h:%p -q ops@bastion -p 2200"`, jump: "ops@bastion:2200"},
		{name: "any other ProxyCommand is run", args: `-o ProxyCommand="ssh -o StrictHostKeyChecking=yes -W %h:%p %r@bastion"`, command: "ssh -o StrictHostKeyChecking=yes -W h1:22 tester@bastion"},
		// readconf.c: ProxyJump sets the proxy command to none, and a
		// ProxyCommand makes a later ProxyJump inactive; "none" does neither.
		{name: "ProxyJump before ProxyCommand", args: `-J gw -o "ProxyCommand nc %h %p"`, jump: "gw"},
		{name: "ProxyCommand before ProxyJump", args: `-o "ProxyCommand nc %h %p" -J gw`, command: "nc h1 22"},
		{name: "ProxyJump none before ProxyCommand", args: `-o ProxyJump=none -o "ProxyCommand nc %h %p"`, command: "nc h1 22"},
		{name: "options that change nothing", args: "-o ControlMaster=auto -o ControlPersist=60s -C", warning: "ignored ssh options fleet-audit does not use: -C, ControlMaster, ControlPersist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			path := e.write(t, "inventory.yml", "all:\n  hosts:\n    h1:\n      ansible_ssh_common_args: '"+strings.ReplaceAll(tc.args, "'", "''")+"'\n")
			inv, err := inventory.Load(path, e.opts())
			if err != nil {
				t.Fatal(err)
			}
			h := inv.Hosts[0]
			jump := ""
			if len(h.Jumps) > 0 {
				jump = h.Jumps[0].Name
			}
			got := []any{jump, h.ProxyCommand, h.HostKeyPolicy, strings.Join(h.KnownHostsFiles, ","), h.IdentitiesOnly, strings.Join(h.IdentityFiles, ",")}
			want := []any{tc.jump, tc.command, tc.policy, tc.known, tc.only, tc.key}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("jump, proxy command, policy, known_hosts, identities_only, key = %v; want %v", got, want)
			}
			if tc.warning != "" && !slices.Contains(inv.Warnings, "inventory: "+tc.warning) {
				t.Errorf("warnings %q lack %q", inv.Warnings, tc.warning)
			}
		})
	}
}

// TestAnsibleErrors: bad input names its file, line and field, all
// problems at once, and never echoes a secret.
func TestAnsibleErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{
			name:  "INI",
			files: map[string]string{"hosts": "[a]\nh1 ansible_port=abc\n[b:vars]\nx=1\n[c:children]\nmissing\n[a:oops]\n"},
			want: []string{
				`hosts:2: h1.ansible_port: ansible_port must be from 1 to 65535, got "abc"`,
				`hosts:3: [b:vars]: section [b:vars] is for a group declared nowhere`,
				`hosts:6: [c:children]: child group "missing" is declared nowhere`,
				`hosts:7: [a:oops]: section [a:oops] has unknown type "oops"`,
			},
		},
		{
			name:  "connection and templates",
			files: map[string]string{"hosts": "h1 ansible_connection=docker\nh2 ansible_host=\"{{ lookup('env','X') }}\"\nh3 ansible_become_method=su\n"},
			want: []string{
				`hosts:1: h1.ansible_connection: ansible_connection "docker" is not supported`,
				`hosts:2: h2.ansible_host: ansible_host is a Jinja template`,
				`hosts:3: h3.ansible_become_method: ansible_become_method "su" is not supported`,
			},
		},
		{
			// Checked once per host of the range and of the group, said
			// once per place.
			name:  "a refused become method on a range and a group",
			files: map[string]string{"hosts": "[s]\nnode[1:4] ansible_become_method=su\n[a]\nw[1:3]\n[a:vars]\nansible_become_method=doas\n"},
			want: []string{
				`hosts:2: node[1:4].ansible_become_method: ansible_become_method "su" is not supported: su has no non-interactive mode`,
				`hosts:6: [a:vars].ansible_become_method: ansible_become_method "doas" is not supported: fleet-audit's root probes are built and tested on sudo -n only`,
			},
		},
		{
			name:  "ranges",
			files: map[string]string{"hosts": "n[01:2]\nm[3:1]\n"},
			want: []string{
				`hosts:1: n[01:2]: host pattern "n[01:2]": host range must specify equal-length begin and end formats`,
				`hosts:2: m[3:1]: host pattern "m[3:1]": host range must have begin <= end`,
			},
		},
		{
			name: "a vars file",
			files: map[string]string{
				"hosts":                "[g]\nh1\n",
				"group_vars/g.yml":     "ansible_user: ok\nansible_port: [1, 2]\n",
				"host_vars/h1/bad.yml": "ansible_user: [\n",
			},
			want: []string{
				`group_vars/g.yml:2: ansible_port: ansible_port must be a string, got a list`,
				`host_vars/h1/bad.yml:2: invalid YAML`,
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			for name, text := range tc.files {
				e.write(t, name, text)
			}
			_, err := inventory.Load(filepath.Join(e.dir, "hosts"), e.opts())
			if err == nil {
				t.Fatal("loaded")
			}
			var got []string
			for _, ie := range flatten(t, err) {
				got = append(got, strings.TrimPrefix(ie.Error(), e.dir+string(filepath.Separator)))
			}
			if len(got) != len(tc.want) {
				t.Fatalf("errors:\n%s\nwant %d", strings.Join(got, "\n"), len(tc.want))
			}
			for i := range tc.want {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Errorf("error %d:\n got %s\nwant %s...", i, got[i], tc.want[i])
				}
			}
			if !errors.Is(err, inventory.ErrInvalidValue) && !errors.Is(err, inventory.ErrSyntax) && !errors.Is(err, inventory.ErrWrongType) {
				t.Errorf("%v wraps no inventory error kind", err)
			}
		})
	}
}

// TestAnsibleSecretsStayOut: passwords and vault files are never read
// into anything printed.
func TestAnsibleSecretsStayOut(t *testing.T) {
	e := newEnv(t)
	e.write(t, "group_vars/all/vault.yml", "$ANSIBLE_VAULT;1.1;AES256\n6162636465\n")
	path := e.write(t, "hosts", "h1 ansible_ssh_pass=hunter2secret ansible_become_password=hunter2secret\n")
	inv, err := inventory.Load(path, e.opts())
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(inv.Warnings, "\n")
	for _, want := range []string{"ansible_become_password, ansible_ssh_pass", "all/vault.yml"} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings %q lack %q", all, want)
		}
	}
	if strings.Contains(all, "hunter2") || strings.Contains(all, "6162") {
		t.Errorf("a warning carries a secret: %q", all)
	}
}

// TestCommandLineSSHOptions: -o, -u and -J apply to hosts whose inventory
// sets nothing, beat ssh_config as ssh's command line does, and bad values
// name the option.
func TestCommandLineSSHOptions(t *testing.T) {
	e := newEnv(t)
	cfg := e.write(t, "ssh_config", "Host h2\n  Port 2200\n  User cfguser\n")
	path := e.write(t, "inventory.yaml", "hosts:\n  h1: {address: 10.0.0.1, user: own, port: 2201}\n  h2: {address: 10.0.0.2}\n")
	opts := e.opts()
	opts.UserSSHConfig = cfg
	opts.CommandLine = inventory.CommandLine{User: "ops", Jump: "bastion:2022", Options: []string{"Port=2222", "StrictHostKeyChecking no", "ControlMaster=auto", "port=1"}}
	inv, err := inventory.Load(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	type view struct {
		User, Policy, Jump, UserSrc, PortSrc string
		Port                                 int
	}
	want := []view{
		{User: "own", Policy: "accept-new", Jump: "bastion:2022", UserSrc: "host", PortSrc: "host", Port: 2201},
		{User: "ops", Policy: "accept-new", Jump: "bastion:2022", UserSrc: "command line", PortSrc: "command line", Port: 2222},
	}
	for i, h := range inv.Hosts {
		jump := ""
		if len(h.Jumps) == 1 {
			jump = h.Jumps[0].Name
		}
		got := view{h.User, h.HostKeyPolicy, jump, h.Source["user"], h.Source["port"], h.Port}
		if got != want[i] {
			t.Errorf("%s:\n got %+v\nwant %+v", h.Name, got, want[i])
		}
	}
	if want := "inventory: ignored ssh options fleet-audit does not use: ControlMaster"; !slices.Contains(inv.Warnings, want) {
		t.Errorf("warnings %q lack %q", inv.Warnings, want)
	}

	opts.CommandLine = inventory.CommandLine{Options: []string{"Port=abc", "novalue"}}
	_, err = inventory.Load(path, opts)
	var msgs []string
	for _, ie := range flatten(t, err) {
		msgs = append(msgs, ie.Error())
	}
	for _, want := range []string{`command line: -o: Port "abc": port must be from 1 to 65535`, `command line: -o novalue: want -o KEY=VALUE`} {
		if !slices.ContainsFunc(msgs, func(m string) bool { return strings.HasPrefix(m, want) }) {
			t.Errorf("errors %q lack %q", msgs, want)
		}
	}
}

// TestAnsibleChange: the change variables are read from the all group of
// every source, group_vars/all over the inventory's own [all:vars] name by
// name, and set anywhere else, misspelt or not a plain string they are an
// error at their file and line.
func TestAnsibleChange(t *testing.T) {
	const list = `{"_meta": {"hostvars": {"a": {"fleet_audit_change_id": "CHG-7"}, "b": {"fleet_audit_change_id": %s}}},
	 "all": {"children": ["ungrouped"]}, "ungrouped": {"hosts": ["a", "b"]}}`
	for _, tc := range []struct {
		name  string
		inv   string // the inventory's file name in files
		files map[string]string
		want  inventory.Change
		errs  []string // each error's start, without the directory
	}{
		{
			name: "INI [all:vars]", inv: "hosts",
			files: map[string]string{"hosts": "[w]\nh1\n[all:vars]\nfleet_audit_change_id=CHG-4711\nfleet_audit_change_title=\"upgrade prod\"\nfleet_audit_change_requested_by= j.doe \n"},
			want:  inventory.Change{ID: "CHG-4711", Title: "upgrade prod", RequestedBy: "j.doe"},
		},
		{
			name: "INI integer id", inv: "hosts",
			files: map[string]string{"hosts": "h1\n[all:vars]\nfleet_audit_change_id=4711\n"},
			want:  inventory.Change{ID: "4711"},
		},
		{
			name: "YAML all: vars:", inv: "hosts.yml",
			files: map[string]string{"hosts.yml": "all:\n  vars:\n    fleet_audit_change_id: CHG-1\n    fleet_audit_change_title: upgrade\n  children:\n    w:\n      hosts:\n        h1:\n"},
			want:  inventory.Change{ID: "CHG-1", Title: "upgrade"},
		},
		{
			name: "script JSON all vars", inv: "inv.json",
			files: map[string]string{"inv.json": `{"all": {"vars": {"fleet_audit_change_requested_by": "ops"}}, "w": {"hosts": ["h1"]}}`},
			want:  inventory.Change{RequestedBy: "ops"},
		},
		{
			name: "group_vars/all.yml", inv: "hosts",
			files: map[string]string{"hosts": "h1\n", "group_vars/all.yml": "fleet_audit_change_id: CHG-2\n"},
			want:  inventory.Change{ID: "CHG-2"},
		},
		{
			name: "group_vars/all/ files merged", inv: "hosts",
			files: map[string]string{"hosts": "h1\n", "group_vars/all/a.yml": "fleet_audit_change_id: CHG-3\n", "group_vars/all/b.yml": "fleet_audit_change_title: t\n"},
			want:  inventory.Change{ID: "CHG-3", Title: "t"},
		},
		{
			// Ansible merges by name: group_vars/all wins for the id only,
			// and its null is None, no value, over [all:vars]'s title.
			name: "group_vars/all over [all:vars]", inv: "hosts",
			files: map[string]string{
				"hosts":              "h1\n[all:vars]\nfleet_audit_change_id=from-ini\nfleet_audit_change_title=from-ini\nfleet_audit_change_requested_by=from-ini\n",
				"group_vars/all.yml": "fleet_audit_change_id: from-group-vars\nfleet_audit_change_title:\n",
			},
			want: inventory.Change{ID: "from-group-vars", RequestedBy: "from-ini"},
		},
		{
			name: "--list JSON, alike on every host", inv: "list.json",
			files: map[string]string{"list.json": strings.Replace(list, "%s", `"CHG-7"`, 1)},
			want:  inventory.Change{ID: "CHG-7"},
		},
		{
			name: "--list JSON, hosts disagree", inv: "list.json",
			files: map[string]string{"list.json": strings.Replace(list, "%s", `"CHG-8"`, 1)},
			errs: []string{
				`list.json:1: _meta.hostvars.a.fleet_audit_change_id: fleet_audit_change_id is set on host a and not alike on every host of _meta.hostvars`,
				`list.json:1: _meta.hostvars.b.fleet_audit_change_id: fleet_audit_change_id is set on host b and not alike`,
			},
		},
		{
			name: "on a host or another group", inv: "hosts",
			files: map[string]string{"hosts": "[w]\nh1 fleet_audit_change_id=CHG-1\nh2\n[w:vars]\nfleet_audit_change_title=t\n"},
			errs: []string{
				`hosts:2: h1.fleet_audit_change_id: fleet_audit_change_id is set on host h1: a change ticket is one per run, not per host or group; set it for all ([all:vars], all: vars: or group_vars/all.yml)`,
				`hosts:5: [w:vars].fleet_audit_change_title: fleet_audit_change_title is set on group w: a change ticket is one per run`,
			},
		},
		{
			name: "on a YAML host", inv: "hosts.yml",
			files: map[string]string{"hosts.yml": "all:\n  hosts:\n    h1:\n      fleet_audit_change_id: CHG-1\n"},
			errs:  []string{`hosts.yml:4: all.hosts.h1.fleet_audit_change_id: fleet_audit_change_id is set on host h1: a change ticket is one per run`},
		},
		{
			name: "in group_vars/ and host_vars/ files", inv: "hosts",
			files: map[string]string{"hosts": "[w]\nh1\n", "group_vars/w.yml": "ansible_user: u\nfleet_audit_change_id: CHG-1\n", "host_vars/h1/change.yml": "fleet_audit_change_requested_by: me\n"},
			errs: []string{
				`group_vars/w.yml:2: fleet_audit_change_id: fleet_audit_change_id is set for group w (group_vars/): a change ticket is one per run`,
				`host_vars/h1/change.yml:1: fleet_audit_change_requested_by: fleet_audit_change_requested_by is set for host h1 (host_vars/): a change ticket is one per run`,
			},
		},
		{
			name: "not a plain string", inv: "hosts.yml",
			files: map[string]string{"hosts.yml": "all:\n  vars:\n    fleet_audit_change_id: [CHG-1]\n    fleet_audit_change_title: {a: b}\n    fleet_audit_change_requested_by: true\n  hosts:\n    h1:\n"},
			errs: []string{
				`hosts.yml:3: all.vars.fleet_audit_change_id: fleet_audit_change_id must be a string, got a list`,
				`hosts.yml:4: all.vars.fleet_audit_change_title: fleet_audit_change_title must be a string, got a mapping`,
				`hosts.yml:5: all.vars.fleet_audit_change_requested_by: fleet_audit_change_requested_by must be a string, got boolean true`,
			},
		},
		{
			name: "a template or a line break", inv: "hosts",
			files: map[string]string{"hosts": "h1\n[all:vars]\nfleet_audit_change_id=\"{{ lookup('env', 'CHG') }}\"\n", "group_vars/all.yml": "fleet_audit_change_title: \"two\\nlines\"\n"},
			errs: []string{
				`group_vars/all.yml:1: fleet_audit_change_title: fleet_audit_change_title "two\nlines" contains a control character`,
				`hosts:3: [all:vars].fleet_audit_change_id: fleet_audit_change_id is a Jinja template; fleet-audit does not evaluate templates, write the value itself`,
			},
		},
		{
			name: "misspelt", inv: "hosts",
			files: map[string]string{"hosts": "h1\n[all:vars]\nfleet_audit_change_requestedby=me\n"},
			errs:  []string{`hosts:3: [all:vars].fleet_audit_change_requestedby: unknown change variable "fleet_audit_change_requestedby" (did you mean fleet_audit_change_requested_by?)`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			for name, text := range tc.files {
				e.write(t, name, text)
			}
			inv, err := inventory.Load(filepath.Join(e.dir, tc.inv), e.opts())
			if tc.errs == nil {
				if err != nil {
					t.Fatal(err)
				}
				if inv.Change != tc.want {
					t.Errorf("Change = %+v; want %+v", inv.Change, tc.want)
				}
				// Not ansible_ variables, so never "unused" ones.
				if len(inv.Warnings) != 0 {
					t.Errorf("warnings %q", inv.Warnings)
				}
				return
			}
			if err == nil {
				t.Fatalf("loaded, Change %+v", inv.Change)
			}
			var got []string
			for _, ie := range flatten(t, err) {
				got = append(got, strings.TrimPrefix(ie.Error(), e.dir+string(filepath.Separator)))
			}
			if len(got) != len(tc.errs) {
				t.Fatalf("errors:\n%s\nwant %d", strings.Join(got, "\n"), len(tc.errs))
			}
			for i := range tc.errs {
				if !strings.HasPrefix(got[i], tc.errs[i]) {
					t.Errorf("error %d:\n got %s\nwant %s...", i, got[i], tc.errs[i])
				}
			}
		})
	}
}
