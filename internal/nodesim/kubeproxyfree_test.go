//go:build unix

package nodesim

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRuleSetCanalIsIPTablesSave: RuleSet for Canal with kube-proxy is the
// rule set every healthy simulated node already shows, so the CNI shapes
// differ from it only by the chains of their CNI and of kube-proxy.
func TestRuleSetCanalIsIPTablesSave(t *testing.T) {
	want := IPTablesSave("iptables-nft-save", "v1.8.10 (nf_tables)", true, "ACCEPT")
	if got := RuleSet("iptables-nft-save", "v1.8.10 (nf_tables)", "canal", true, "ACCEPT"); got != want {
		t.Errorf("RuleSet(canal, kube-proxy) =\n%s\nwant IPTablesSave's\n%s", got, want)
	}
}

// TestRuleSetOwners: a kube-proxy-free node keeps kubelet's chains
// (kubernetes pkg/kubelet/kubelet_network_linux.go) and its CNI's, and
// none of kube-proxy's; Cilium's come with their feeder jumps.
func TestRuleSetOwners(t *testing.T) {
	cilium := RuleSet("iptables-nft-save", "v1.8.10 (nf_tables)", "cilium", false, "ACCEPT")
	for _, c := range []string{":KUBE-IPTABLES-HINT ", ":KUBE-KUBELET-CANARY ", ":KUBE-FIREWALL ", "-A INPUT -j KUBE-FIREWALL",
		":CILIUM_INPUT ", `-A POSTROUTING -m comment --comment "cilium-feeder: CILIUM_POST_nat" -j CILIUM_POST_nat`} {
		if !strings.Contains(cilium, c) {
			t.Errorf("cilium without kube-proxy lacks %q:\n%s", c, cilium)
		}
	}
	for _, c := range []string{"KUBE-SERVICES", "KUBE-SVC-", "KUBE-SEP-", "KUBE-PROXY-CANARY", "KUBE-MARK-MASQ", "cali-", "FLANNEL"} {
		if strings.Contains(cilium, c) {
			t.Errorf("cilium without kube-proxy holds %q", c)
		}
	}
	stale := RuleSet("iptables-nft-save", "v1.8.10 (nf_tables)", "cilium", true, "ACCEPT")
	if !strings.Contains(stale, ":KUBE-SVC-NPX46M4PTMTKRN6Y ") || !strings.Contains(stale, ":CILIUM_FORWARD ") {
		t.Errorf("cilium with kube-proxy's chains left:\n%s", stale)
	}
	calico := RuleSet("iptables-nft-save", "v1.8.10 (nf_tables)", "calico", false, "ACCEPT")
	if !strings.Contains(calico, ":cali-INPUT ") || strings.Contains(calico, "FLANNEL") || strings.Contains(calico, "CILIUM") {
		t.Errorf("calico's rule set:\n%s", calico)
	}
}

// TestCurlUnixSocket runs the curl stub against a node's sockets as
// curl(1) and connect(2) behave: the server behind a socket answers, a
// socket with nobody behind it, a missing one and one the caller may not
// write to fail with exit 7 and code 000, and no method but GET is sent.
func TestCurlUnixSocket(t *testing.T) {
	tmp := t.TempDir()
	// Another user must reach the node's stubs.
	for _, d := range []string{filepath.Dir(tmp), tmp} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	root := filepath.Join(tmp, "node")
	s := WithCiliumKPR(Healthy("n", false))
	s.Sockets = copySockets(s.Sockets)
	s.Sockets["run/dead.sock"] = nil
	if err := Build(root, s); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(root, CiliumSock)
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o660 {
		t.Fatalf("%s: %v, %v: want a socket, mode 0660", sock, fi, err)
	}
	curl := func(cred *syscall.Credential, args ...string) (string, int) {
		cmd := exec.Command(filepath.Join(root, "bin/curl"), args...)
		cmd.Env = append(os.Environ(), "FLEET_AUDIT_ROOT="+root, "PATH="+filepath.Join(root, "bin"))
		if cred != nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		}
		out, err := cmd.Output()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	out, rc := curl(nil, "-s", "--noproxy", "*", "--unix-socket", sock, "-w", `\n%{http_code}\n`, "http://localhost/v1/healthz")
	body, code, _ := strings.Cut(strings.TrimSuffix(out, "\n"), "\n\n")
	var st struct {
		Cilium struct{ State string } `json:"cilium"`
		KPR    struct{ Mode string }  `json:"kube-proxy-replacement"`
	}
	if rc != 0 || code != "200" || json.Unmarshal([]byte(body), &st) != nil || st.Cilium.State != "Ok" || st.KPR.Mode != "True" {
		t.Errorf("GET /v1/healthz: rc %d, code %q, %+v from %q", rc, code, st, out)
	}
	for name, path := range map[string]string{"nobody behind it": filepath.Join(root, "run/dead.sock"), "no socket": filepath.Join(root, "run/none.sock")} {
		if out, rc := curl(nil, "-s", "--unix-socket", path, "-w", "%{http_code}", "http://localhost/v1/healthz"); rc != 7 || out != "000" {
			t.Errorf("%s: rc %d, %q; want 7 and 000", name, rc, out)
		}
	}
	if out, rc := curl(nil, "-s", "-X", "PATCH", "--unix-socket", sock, "http://localhost/v1/config"); rc == 0 {
		t.Errorf("PATCH was sent: %q", out)
	}
	if os.Geteuid() == 0 {
		// nobody may not write the root-owned 0660 socket.
		if out, rc := curl(&syscall.Credential{Uid: 65534, Gid: 65534}, "-s", "--unix-socket", sock, "-w", "%{http_code}", "http://localhost/v1/healthz"); rc != 7 || out != "000" {
			t.Errorf("as nobody: rc %d, %q; want 7 and 000", rc, out)
		}
	}
}
