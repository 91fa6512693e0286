package nodesim

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestStubSideEffects pins the writes the stubs simulate for their real
// commands (stubs/*.pre): kubectl's discovery and HTTP caches under
// --cache-dir, else $KUBECACHEDIR, else $HOME/.kube/cache, and none where
// that directory cannot be made (k8s.io/cli-runtime config_flags.go
// toDiscoveryClient; client-go discovery/cached/disk ignores a failed
// write); nf_tables loaded by any nft or iptables-nft-save request on a
// node without it (linux net/netfilter/nfnetlink.c request_module), and by
// none where it is loaded or built in. Each write lands under the node
// root, where a read-only test sees it.
func TestStubSideEffects(t *testing.T) {
	home := t.TempDir()
	server := Clean(1)[0].State
	builtin := WithoutNFTables(server)
	builtin.Files = copyFiles(builtin.Files)
	builtin.Files["lib/modules/6.1.0-28-amd64/modules.builtin"] = "kernel/net/netfilter/nf_tables.ko\n"
	tests := []struct {
		name  string
		state State
		cmd   string // relative to the node root
		args  []string
		env   []string
		want  []string // files added under the node root
	}{
		{"kubectl caches under $HOME", server, KubectlPath, []string{"--kubeconfig", "x", "get", "nodes", "-o", "jsonpath=x"}, nil, []string{
			filepath.Join(home, ".kube/cache/discovery/127.0.0.1_6443/servergroups.json"),
			filepath.Join(home, ".kube/cache/http/.diskv-temp")}},
		{"kubectl caches under $KUBECACHEDIR", server, KubectlPath, []string{"--kubeconfig", "x", "get", "--raw", "/version"}, []string{"KUBECACHEDIR=/var/kc"}, []string{
			"/var/kc/discovery/127.0.0.1_6443/servergroups.json", "/var/kc/http/.diskv-temp"}},
		{"kubectl --cache-dir DIR wins", server, KubectlPath, []string{"--kubeconfig", "x", "--cache-dir", "/c", "get", "--raw", "/version"}, []string{"KUBECACHEDIR=/var/kc"}, []string{
			"/c/discovery/127.0.0.1_6443/servergroups.json", "/c/http/.diskv-temp"}},
		{"kubectl --cache-dir=/dev/null writes nothing", server, KubectlPath, []string{"--kubeconfig", "x", "--cache-dir=/dev/null", "get", "--raw", "/version"}, nil, nil},
		{"iptables-nft-save loads nf_tables", WithoutNFTables(server), "bin/iptables-nft-save", nil, nil, []string{"nf_tables in /proc/modules"}},
		{"nft list tables loads nf_tables", WithoutNFTables(server), "bin/nft", []string{"list", "tables"}, nil, []string{"nf_tables in /proc/modules"}},
		{"nf_tables already loaded", server, "bin/nft", []string{"list", "tables"}, nil, nil},
		{"nf_tables built in", builtin, "bin/iptables-nft-save", nil, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "node")
			if err := Build(root, tc.state); err != nil {
				t.Fatal(err)
			}
			before := files(t, root)
			mods, err := os.ReadFile(filepath.Join(root, "proc/modules"))
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(filepath.Join(root, tc.cmd), tc.args...)
			cmd.Env = append([]string{"FLEET_AUDIT_ROOT=" + root, "HOME=" + home, "PATH=" + filepath.Join(root, "bin")}, tc.env...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", tc.cmd, err, out)
			}
			var got []string
			for _, f := range files(t, root) {
				if !slices.Contains(before, f) {
					got = append(got, strings.TrimPrefix(f, root))
				}
			}
			after, err := os.ReadFile(filepath.Join(root, "proc/modules"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(mods), "nf_tables ") && strings.Contains(string(after), "nf_tables ") {
				got = append(got, "nf_tables in /proc/modules")
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("added %q, want %q", got, tc.want)
			}
		})
	}
}

// files lists the regular files under root, sorted.
func files(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
