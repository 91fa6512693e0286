package inventory_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/inventory"
)

// dirLayout is an inventory directory as Ansible users keep one: sources
// of both formats, a subdirectory, the files Ansible skips, and the vars
// directories beside the sources. Its names avoid .ini, which Ansible
// releases before ansible/ansible#84001 skip, so that any ansible-inventory
// reads it alike (TestAnsibleInventoryAgrees).
var dirLayout = map[string]string{
	"10-servers":         "[servers]\ncp-1 ansible_host=10.0.0.1\ncp-2 ansible_host=10.0.0.2\n",
	"20-agents.yml":      "all:\n  children:\n    agents:\n      hosts:\n        w-1:\n          ansible_host: 10.0.1.1\n",
	"30-more/extra.yaml": "all:\n  hosts:\n    cp-2:\n      ansible_port: 2222\n",
	"README.md":          "# not inventory {{\n",
	"old.orig":           "[servers]\nstale-1\n",
	"notes.txt":          "stale-2\n",
	"hosts.retry":        "stale-3\n",
	".hidden":            "stale-4\n",
	"hosts~":             "stale-5\n",
	"group_vars/all.yml": "ansible_user: ops\n",
	"host_vars/w-1.yml":  "ansible_port: 2200\n",
	// Not a vars dir of the directory given: Ansible's vars plugin looks
	// beside the -i source only.
	"30-more/group_vars/all.yml": "ansible_user: nested\n",
}

func writeDirLayout(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range dirLayout {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestAnsibleDirectory: a directory given as -i is every source in it, in
// Ansible's order, with the files Ansible skips skipped and group_vars/
// and host_vars/ read as vars.
func TestAnsibleDirectory(t *testing.T) {
	dir := writeDirLayout(t)
	inv, err := inventory.Load(dir+string(filepath.Separator), layoutOpts(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	if inv.Format != "ansible-dir" {
		t.Errorf("read as %q", inv.Format)
	}
	var got []string
	for _, h := range inv.Hosts {
		got = append(got, h.Name+" "+h.Address+":"+itoa(h.Port)+" "+h.User)
	}
	want := []string{"cp-1 10.0.0.1:22 ops", "cp-2 10.0.0.2:2222 ops", "w-1 10.0.1.1:2200 ops"}
	if !slices.Equal(got, want) {
		t.Errorf("hosts %q; want %q", got, want)
	}
}

// TestAnsibleDirectoryErrors: what Ansible would run or could not read
// is refused with the file it is in.
func TestAnsibleDirectoryErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		exec  string
		want  []string
	}{
		{"an inventory script", map[string]string{"a": "[g]\nh1\n", "ec2.py": "print('{}')\n"}, "ec2.py",
			[]string{"ec2.py: an inventory script, which fleet-audit does not run: run ansible-inventory -i "}},
		{"a shebang", map[string]string{"gen": "#!/bin/sh\necho {}\n"}, "",
			[]string{"gen: an inventory script"}},
		{"a native inventory", map[string]string{"inv.yaml": "name: x\nhosts:\n  a:\n"}, "",
			[]string{"inv.yaml: not an Ansible inventory: an inventory directory holds Ansible sources only"}},
		{"bad YAML", map[string]string{"a.yml": "all: [\n"}, "",
			[]string{"a.yml:2: invalid YAML"}},
		{"nothing to read", map[string]string{"README.md": "x\n", "group_vars/all.yml": "ansible_user: x\n"}, "",
			[]string{": no inventory source in the directory"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			for name, text := range tc.files {
				e.write(t, name, text)
			}
			if tc.exec != "" {
				if err := os.Chmod(filepath.Join(e.dir, tc.exec), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			_, err := inventory.Load(e.dir, e.opts())
			if err == nil {
				t.Fatal("loaded")
			}
			var got []string
			for _, ie := range flatten(t, err) {
				got = append(got, strings.TrimPrefix(strings.TrimPrefix(ie.Error(), e.dir), string(filepath.Separator)))
			}
			if len(got) != len(tc.want) {
				t.Fatalf("errors:\n%s\nwant %d", strings.Join(got, "\n"), len(tc.want))
			}
			for i := range tc.want {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Errorf("error %d:\n got %s\nwant %s...", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// genPlugin configures ansible.builtin.generator, an inventory plugin that
// ships with ansible-core and needs no cloud account, in place of aws_ec2.
const genPlugin = `plugin: ansible.builtin.generator
hosts:
  name: "{{ role }}-{{ n }}"
  parents:
    - name: "{{ role }}"
layers:
  role: [rke2_servers, rke2_agents]
  n: ["1", "2"]
`

// TestAnsiblePluginConfig: an inventory plugin's configuration, alone or in
// a directory, is one error saying how to feed its hosts in, not the
// native format's errors about each of its keys.
func TestAnsiblePluginConfig(t *testing.T) {
	for _, tc := range []struct{ name, path, want string }{
		{"alone", "aws_ec2.yml", "aws_ec2.yml:1: plugin: an Ansible inventory plugin configuration (amazon.aws.aws_ec2), which only Ansible can run: run ansible-inventory -i "},
		{"in a directory", "", "aws_ec2.yml:1: plugin: an Ansible inventory plugin configuration (amazon.aws.aws_ec2)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.write(t, "aws_ec2.yml", "plugin: amazon.aws.aws_ec2\nregions: [eu-west-1]\nhosts: 3\n")
			_, err := inventory.Load(filepath.Join(e.dir, tc.path), e.opts())
			errs := flatten(t, err)
			if len(errs) != 1 {
				t.Fatalf("errors %v; want one", err)
			}
			got := strings.TrimPrefix(errs[0].Error(), e.dir+string(filepath.Separator))
			if !strings.HasPrefix(got, tc.want) || !strings.HasSuffix(got, " --list | fleet-audit run -i -") {
				t.Errorf("error %q; want %q... --list | fleet-audit run -i -", got, tc.want)
			}
		})
	}
}

// TestAnsiblePluginThroughList: what the hint says works: the JSON
// ansible-inventory --list prints for a plugin's configuration is read
// from standard input.
func TestAnsiblePluginThroughList(t *testing.T) {
	testtools.SkipShort(t, "runs ansible-inventory")
	ansibleInventory := testtools.Find(t, "ansible-inventory")
	e := newEnv(t)
	file := e.write(t, "gen.yml", genPlugin)
	cmd := exec.Command(ansibleInventory, "-i", file, "--list")
	cmd.Env = append(os.Environ(), "HOME="+e.home, "ANSIBLE_LOCAL_TEMP="+t.TempDir(), "ANSIBLE_NOCOLOR=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ansible-inventory: %v", err)
	}
	inv, err := inventory.Load("-", inventory.LoadOptions{Home: e.home, CurrentUser: "tester", UserSSHConfig: "none", Stdin: bytes.NewReader(out)})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range inv.Hosts {
		got = append(got, h.Name+" "+strings.Join(h.Roles, ","))
	}
	slices.Sort(got)
	want := []string{"rke2_agents-1 worker", "rke2_agents-2 worker", "rke2_servers-1 server", "rke2_servers-2 server"}
	if !slices.Equal(got, want) {
		t.Errorf("hosts %q; want %q", got, want)
	}
}
