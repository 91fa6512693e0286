package nodesim

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/audit/probe"
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

// TestCurlStubProxyRules pins the curl stub to curl's own proxy rules
// (curl(1) ENVIRONMENT, libcurl CURLOPT_NOPROXY): http_proxy in lower case
// only, ALL_PROXY as the fallback, no_proxy and --noproxy ("*" for every
// host, a host or a domain it is in, IPv6 without brackets, --noproxy
// winning over no_proxy, an empty --noproxy proxying every host); and to
// answering on the address a server listens on: kube-proxy's health on
// ::1 once RKE2 binds it there.
func TestCurlStubProxyRules(t *testing.T) {
	v4 := Healthy("n", false)
	v6 := WithIPv6Primary(v4)
	const proxy = "http_proxy=http://proxy.corp.example:3128"
	const tlsCA = "etc/ca.crt"
	tlsState := Healthy("n", false)
	tlsState.Files = hostFiles(tlsState)
	tlsState.Files[tlsCA] = "a CA certificate\n"
	tlsState.HTTP = map[string]HTTP{"9345/db/info": {Code: 200, Body: `{"members":[]}`}}
	tests := []struct {
		name  string
		state State
		env   []string
		args  []string
		want  string
	}{
		{"no proxy", v4, nil, []string{"http://127.0.0.1:10256/healthz"}, "200"},
		{"http_proxy takes 127.0.0.1 to the proxy", v4, []string{proxy}, []string{"http://127.0.0.1:10256/healthz"}, "000"},
		{"HTTP_PROXY is never read", v4, []string{"HTTP_PROXY=http://proxy.corp.example:3128"}, []string{"http://127.0.0.1:10256/healthz"}, "200"},
		{"ALL_PROXY is", v4, []string{"ALL_PROXY=http://proxy.corp.example:3128"}, []string{"http://127.0.0.1:10256/healthz"}, "000"},
		{"--noproxy '*'", v4, []string{proxy}, []string{"--noproxy", "*", "http://127.0.0.1:10256/healthz"}, "200"},
		{"no_proxy names the host", v4, []string{proxy, "no_proxy=localhost,127.0.0.1"}, []string{"http://127.0.0.1:10256/healthz"}, "200"},
		{"no_proxy names a domain only", v4, []string{proxy, "no_proxy=.corp.example"}, []string{"http://127.0.0.1:10256/healthz"}, "000"},
		{"NO_PROXY '*'", v4, []string{proxy, "NO_PROXY=*"}, []string{"http://127.0.0.1:10256/healthz"}, "200"},
		{"an empty --noproxy proxies all", v4, []string{proxy, "no_proxy=*"}, []string{"--noproxy", "", "http://127.0.0.1:10256/healthz"}, "000"},
		{"IPv6 no_proxy entry without brackets", v6, []string{proxy, "no_proxy=::1"}, []string{"http://[::1]:10256/healthz"}, "200"},
		{"IPv6-primary: health on ::1", v6, nil, []string{"http://[::1]:10256/healthz"}, "200"},
		{"IPv6-primary: nothing on 127.0.0.1:10256", v6, nil, []string{"http://127.0.0.1:10256/healthz"}, "000"},
		{"IPv6-primary: metrics stay on 127.0.0.1", v6, nil, []string{"http://127.0.0.1:10249/metrics"}, "200"},
		// https: answered once TLS is verified against the --cacert given.
		{"https with the CA", tlsState, nil, []string{"--cacert", "$ROOT/" + tlsCA, "https://127.0.0.1:9345/db/info"}, "200"},
		{"https without --cacert", tlsState, nil, []string{"https://127.0.0.1:9345/db/info"}, "000"},
		{"https with no such CA file", tlsState, nil, []string{"--cacert", "$ROOT/nowhere.crt", "https://127.0.0.1:9345/db/info"}, "000"},
		{"https_proxy takes https to the proxy", tlsState, []string{"https_proxy=http://proxy.corp.example:3128"}, []string{"--cacert", "$ROOT/" + tlsCA, "https://127.0.0.1:9345/db/info"}, "000"},
		{"http_proxy leaves https alone", tlsState, []string{proxy}, []string{"--cacert", "$ROOT/" + tlsCA, "https://127.0.0.1:9345/db/info"}, "200"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "node")
			if err := Build(root, tc.state); err != nil {
				t.Fatal(err)
			}
			args := make([]string, len(tc.args))
			for i, a := range tc.args {
				args[i] = strings.ReplaceAll(a, "$ROOT", root)
			}
			cmd := exec.Command(filepath.Join(root, "bin/curl"), append([]string{"-s", "-o", "/dev/null", "-w", "%{http_code}"}, args...)...)
			cmd.Env = append([]string{"PATH=" + filepath.Join(root, "bin"), "FLEET_AUDIT_ROOT=" + root}, tc.env...)
			out, _ := cmd.Output()
			if string(out) != tc.want {
				t.Errorf("curl %v with %v printed %q, want %q", tc.args, tc.env, out, tc.want)
			}
		})
	}
}

// A node's /etc/environment reaches its login sessions as pam_env puts it
// there: comments and lines without "=" skipped, "export " and matching
// quotes dropped.
func TestSessionEnvReadsEtcEnvironment(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	body := "# proxy\nhttp_proxy=\"http://p:3128\"\nexport no_proxy='.corp'\nPATHX\n\nLANG=C.UTF-8\n"
	if err := os.WriteFile(filepath.Join(root, "etc/environment"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	got := SessionEnv(root)
	want := append(probe.SimulatedNodeEnv(root), "http_proxy=http://p:3128", "no_proxy=.corp", "LANG=C.UTF-8")
	if !slices.Equal(got, want) {
		t.Errorf("SessionEnv = %q, want %q", got, want)
	}
}
