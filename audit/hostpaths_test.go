package audit

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
)

// hostPath finds an absolute path of a node's tree written in a probe. A
// character of a word, ".", ":" (a URL), "/", "\" (an awk regexp's
// escaped slash), "}" or "R" before it means it is not a path's start
// ($R/etc, ${R}/etc are the rooted forms); /dev/null is the shell's,
// never node state.
var hostPath = regexp.MustCompile(`(?:^|[^A-Za-z0-9_.:/\\}$\]-])(/(?:usr|etc|var|opt|proc|sys|run|bin|sbin|lib|lib64|boot|dev|home|root|srv|tmp|mnt)(?:/[A-Za-z0-9_.+%*-]*)*)`)

// rootedBefore is what may stand right before a path to put it under the
// simulated root: "$R" in the shell, awk's root variable concatenated.
var rootedBefore = regexp.MustCompile(`(?:"\$R"|\broot\s*")$`)

// unrootedPaths are the paths a probe writes without the root right before
// them, each with where the root is joined, or why the path is no file of
// the node. Keyed "FILE PATH".
var unrootedPaths = map[string]string{
	"_lib.sh /proc/sys/net/bridge/bridge-nf-call-iptables":                        `modules_state: fa_p, read as "$R$fa_p"`,
	"_lib.sh /proc/sys/net/netfilter/nf_conntrack_max":                            `modules_state: fa_p, read as "$R$fa_p"`,
	"_lib.sh /proc/net/ip_tables_names":                                           `modules_state: fa_p, read as "$R$fa_p"`,
	"_lib.sh /proc/net/ip_vs":                                                     `modules_state: fa_p, read as "$R$fa_p"`,
	"etcd.sh /etc/rancher/rke2/config.yaml":                                       `cfg, read as "$R$cfg" and "$R$cfg.d"/*.yaml`,
	"etcd.sh /var/lib/rancher/rke2/server/db/snapshots":                           `def, the default of dir, read as "$R$dir"; awk gets it only as the path's name`,
	"host.sh /var/lib/rancher":                                                    `rp, read as "$R$rp"; awk gets it only as the path's name`,
	"host.sh /var":                                                                `rp and kp, read as "$R$rp" and "$R$kp"`,
	"host.sh /var/lib/kubelet":                                                    `kp, read as "$R$kp"; awk gets it only as the path's name`,
	"kubeproxy.sh /proc/net/tcp":                                                  `awk: root (i == 1 ? "/proc/net/tcp" : ...)`,
	"kubeproxy.sh /proc/net/tcp6":                                                 `awk: root (... : "/proc/net/tcp6")`,
	"kubeproxy_mode.sh /var/lib/rancher/rke2/agent/pod-manifests/kube-proxy.yaml": `manifest, read as "$R$f" and "$R$manifest"`,
	"kubeproxy_mode.sh /proc/net/ip_vs":                                           `f, read as "$R$f"`,
	"kubeproxy_mode.sh /var/lib/rancher/rke2":                                     `d, read as "$R$d"`,
	"kubeproxy_mode.sh /var/lib/rancher/rke2/agent":                               `d, read as "$R$d"`,
	"kubeproxy_mode.sh /var/lib/rancher/rke2/agent/pod-manifests":                 `d, read as "$R$d"`,
	"network.sh /proc/net/tcp":                                                    `f, read as "$R$f"`,
	"network.sh /proc/net/tcp6":                                                   `f, read as "$R$f"`,
	"os.sh /proc/sys/kernel/osrelease":                                            "awk's first() reads root f",
	"os.sh /proc/sys/kernel/hostname":                                             "awk's first() reads root f",
	"rke2.sh /usr/local/bin/rke2":                                                 `x, read as "$R$x" (TestProbesReadNoHostPath plants it)`,
	"rke2.sh /opt/rke2/bin/rke2":                                                  `x, read as "$R$x" (TestProbesReadNoHostPath plants it)`,
	"rke2.sh /usr/bin/rke2":                                                       `x, read as "$R$x"`,
	"selinux.sh /etc/default/rke2-server":                                         `f, read as "$R$f" (TestProbesReadNoHostPath plants it)`,
	"selinux.sh /etc/sysconfig/rke2-server":                                       `f, read as "$R$f"`,
	"selinux.sh /etc/default/":                                                    "awk: split into ef, read as root ef[i]",
	"selinux.sh /etc/sysconfig/":                                                  "awk: split into ef, read as root ef[i]",
	"selinux.sh /usr/local/lib/systemd/system/":                                   "awk: split into ef, read as root ef[i]",
	"selinux.sh /usr/lib/systemd/system/":                                         "awk: split into ef, read as root ef[i]",
	"sysctl.sh /proc/sys/":                                                        "awk's key() path, read by rd(), which reads root path",
	"sysctl.sh /proc/sys/net/netfilter/nf_conntrack_count":                        "awk's rd() reads root path",
	"sysctl.sh /proc/sys/net/netfilter/nf_conntrack_max":                          "awk's rd() reads root path",
	"sysctl.sh /sys/devices/system/cpu/online":                                    "awk's rd() reads root path",
}

// TestProbesWriteNoUnrootedPath: every path of a node's tree that a probe
// or the library names is under the simulated root ($R, awk's root) where
// it is written, or listed in unrootedPaths with where the root is joined,
// so that no test reads the test machine's own files (issue 28: the rke2
// probe once looked for /usr/local/bin/rke2 on the host, and failed a
// test on an RKE2 engineer's machine).
func TestProbesWriteNoUnrootedPath(t *testing.T) {
	probes, err := probe.BuiltinProbes()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"_lib.sh": probe.Library()}
	for _, p := range probes {
		files[p.ID+".sh"] = p.Script
	}
	used := map[string]bool{}
	for name, text := range files {
		for i, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "#") {
				continue
			}
			for _, m := range hostPath.FindAllStringSubmatchIndex(line, -1) {
				path := line[m[2]:m[3]]
				if path == "/dev/null" || rootedBefore.MatchString(line[:m[2]]) {
					continue
				}
				key := name + " " + path
				if _, ok := unrootedPaths[key]; ok {
					used[key] = true
					continue
				}
				t.Errorf("%s:%d: %s is not under the simulated root: write \"$R%s\" (awk: root \"%s\"), or list it in unrootedPaths with where the root is joined\n%s", name, i+1, path, path, path, line)
			}
		}
	}
	for key := range unrootedPaths {
		if !used[key] {
			t.Errorf("unrootedPaths lists %q, which no probe writes any more", key)
		}
	}
}

// decoyScript plants, in a private mount namespace, an RKE2 install on
// the test machine's own paths: tmpfs over /usr/local, /opt, /etc/default
// and /var/lib (directories every Debian machine has, so nothing is made
// on the host), then install.sh's and the tarball's rke2, RKE2's data
// dir with its containerd, kubelet and static pods, and the environment
// files the selinux probe reads, each saying "decoy". It then runs the
// session's shell ("$@").
const decoyScript = `set -e
for d in /usr/local /opt /etc/default /var/lib; do mount -t tmpfs fleet-audit-decoy "$d"; done
mkdir -p /usr/local/bin /usr/local/lib/systemd/system /opt/rke2/bin /var/lib/rancher/rke2/bin \
	/var/lib/rancher/rke2/agent/pod-manifests /var/lib/kubelet
tool() { printf '#!/bin/sh\necho "%s"\n' "$2" >"$1" && chmod 755 "$1"; }
tool /usr/local/bin/rke2 'rke2 version v0.0.1+decoy (decoy)'
tool /opt/rke2/bin/rke2 'rke2 version v0.0.1+decoy (decoy)'
tool /var/lib/rancher/rke2/bin/containerd 'containerd decoy v0.0.1-decoy decoy'
tool /var/lib/rancher/rke2/bin/kubelet 'Kubernetes v0.0.1+decoy'
for m in etcd kube-apiserver kube-proxy; do
	printf '    - --proxy-mode=ipvs\n    - --ipvs-scheduler=sh\n' >/var/lib/rancher/rke2/agent/pod-manifests/$m.yaml
done
echo RKE2_SELINUX=true >/etc/default/rke2-server
echo RKE2_SELINUX=true >/usr/local/lib/systemd/system/rke2-server.env
exec "$@"`

// decoyShell is the session shell that runs a bundle with decoyScript's
// install on the host paths, or skips where no private mount namespace
// can be had (not root, and no user namespaces).
func decoyShell(t *testing.T) []string {
	t.Helper()
	unshare := testtools.Find(t, "unshare")
	shell := []string{unshare, "--mount", "--propagation", "private"}
	if os.Geteuid() != 0 {
		shell = append(shell, "--map-root-user")
	}
	shell = append(shell, "/bin/sh", "-c", decoyScript, "decoys", "/bin/sh")
	probe := exec.Command(shell[0], append(slices.Clip(shell[1:]), "-c", "[ -x /opt/rke2/bin/rke2 ]")...)
	if out, err := probe.CombinedOutput(); err != nil {
		t.Logf("no private mount namespace here: %v: %s", err, out)
		testtools.Require(t, "root")
	}
	return shell
}

// TestProbesReadNoHostPath runs every node probe on simulated nodes, once
// as usual and once with an RKE2 install planted on the test machine's own
// paths (decoyScript): a probe that reads one path outside the node's root
// answers differently, as the rke2 probe did on an RKE2 engineer's machine
// (issue 28). One node runs RKE2, one has none, where a probe looking
// outside its root would find the decoy's.
func TestProbesReadNoHostPath(t *testing.T) {
	testtools.SkipShort(t, "runs every probe in a shell under a path watch")
	shell := decoyShell(t)
	probes, err := probe.BuiltinProbes()
	if err != nil {
		t.Fatal(err)
	}
	noRKE2 := nodesim.Healthy("bare", false)
	noRKE2.RKE2Version = ""
	for _, node := range []struct {
		name  string
		state nodesim.State
	}{{"rke2 server", nodesim.Healthy("server", true)}, {"no rke2", noRKE2}} {
		for _, p := range probes {
			if p.Scope != probe.ScopeNode {
				continue
			}
			t.Run(node.name+"/"+p.ID, func(t *testing.T) {
				plain, _ := runProbeOn(t, p.ID, node.state, nil, nil)
				decoyed, out := runProbeOn(t, p.ID, node.state, nil, shell)
				for k, want := range plain.Facts {
					// A volatile fact differs between two runs by nature
					// (kube-proxy's health answer carries the time, which
					// can cross a second between them): no host path is in it.
					if slices.Contains(p.Volatile, k) {
						continue
					}
					if got := decoyed.Facts[k]; got != want {
						t.Errorf("%s = %q with an RKE2 install on the test machine, %q without", k, got, want)
					}
				}
				if strings.Contains(out, "decoy") {
					t.Errorf("the probe saw the test machine's files:\n%s", out)
				}
			})
		}
	}
}
