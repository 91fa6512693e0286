package inventory_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fleet-audit/fleet-audit/inventory"
)

// FuzzLoadAnsible is FuzzLoad for Ansible inventories: FuzzLoad's file is
// named inventory.yaml, which parseAny never reads as INI, so this one
// writes a file named hosts (no extension: INI unless it is an Ansible
// YAML or JSON mapping) seeded with the INI and YAML inventories of
// testdata/ansible. Errors name the file and a line of it; accepted
// inventories have valid hosts.
func FuzzLoadAnsible(f *testing.F) {
	for _, pattern := range []string{"hosts.ini", "hosts.yml"} {
		paths, err := filepath.Glob(filepath.Join("testdata", "ansible", "*", pattern))
		if err != nil || len(paths) == 0 {
			f.Fatalf("no seed %s: %v", pattern, err)
		}
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	for _, s := range []string{
		"a\nb ansible_host=10.0.0.2 ansible_port=2222\n",
		"[g]\nweb[01:10:3]\n[g:vars]\nansible_user=u\n[all:children]\ng\n",
		"[g]\nx[a:c] ansible_ssh_common_args='-o ProxyJump=j'\n",
		"[g:children]\ng\n",
		"all:\n  children:\n    s:\n      hosts:\n        n[1:2]:\n          ansible_host: 10.0.0.1\n",
		`{"_meta": {"hostvars": {"a": {"ansible_host": "10.0.0.1"}}}, "all": {"children": ["ungrouped"]}, "ungrouped": {"hosts": ["a"]}}`,
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	invPath := filepath.Join(dir, "hosts")
	cfgPath := filepath.Join(dir, "ssh_config")
	if err := os.WriteFile(cfgPath, nil, 0o644); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, inv []byte) {
		if err := os.WriteFile(invPath, inv, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := inventory.Load(invPath, inventory.LoadOptions{Home: dir, CurrentUser: "fuzz", UserSSHConfig: cfgPath})
		checkFuzzLoaded(t, invPath, inv, got, err)
	})
}
