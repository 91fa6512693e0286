package audit

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/result"
)

// rocky is a healthy Rocky Linux 9 node: RKE2 from its RPMs, SELinux
// enforcing, rke2-selinux installed, RKE2_SELINUX=true.
func rocky(name string, server bool) nodesim.State {
	return nodesim.WithOS(nodesim.Healthy(name, server), nodesim.Rocky9)
}

func TestSELinuxProbe(t *testing.T) {
	const cfg = "etc/rancher/rke2/config.yaml"
	token := "token: K10aaaabbbbccccddddeeeeffff0000111122223333::server:s3cr3t-demo-token\n"
	cases := []struct {
		name  string
		state nodesim.State
		want  map[string]string
	}{
		{"debian without selinux", nodesim.Healthy("n1", false),
			map[string]string{"selinux.mode": "disabled", "selinux.boot_mode": "absent", "selinux.rke2": "false", "selinux.rke2_module": "absent"}},
		{"rocky rpm install", rocky("n1", false),
			map[string]string{"selinux.mode": "enforcing", "selinux.boot_mode": "enforcing", "selinux.rke2": "true", "selinux.rke2_module": "installed"}},
		{"rocky server reads rke2-server's sysconfig", rocky("n1", true),
			map[string]string{"selinux.rke2": "true"}},
		{"setenforce 0 left behind", nodesim.WithSELinuxPermissive(rocky("n1", false)),
			map[string]string{"selinux.mode": "permissive", "selinux.boot_mode": "enforcing"}},
		{"rke2 module removed", nodesim.WithoutRKE2SELinuxModule(rocky("n1", false)),
			map[string]string{"selinux.rke2_module": "absent", "selinux.rke2": "true"}},
		{"not root: no module list", nfNotRoot(rocky("n1", false)),
			map[string]string{"selinux.rke2_module": "not-root", "selinux.mode": "enforcing", "selinux.rke2": "true"}},
		{"config.yaml selinux: false wins over RKE2_SELINUX", withFile(rocky("n1", false), cfg, token+"selinux: false # tarball habit\n"),
			map[string]string{"selinux.rke2": "false"}},
		{"config.yaml.d overrides config.yaml", withFile(withFile(nodesim.Healthy("n1", false), cfg, token+"selinux: \"false\"\n"), cfg+".d/50-selinux.yaml", "selinux: yes\n"),
			map[string]string{"selinux.rke2": "true"}},
		{"a value that is no boolean is unknown", withFile(nodesim.Healthy("n1", false), cfg, token+"selinux: maybe\n"),
			map[string]string{"selinux.rke2": "unknown"}},
		{"kernel command line enforcing=0 wins over the config", withFile(rocky("n1", false), "proc/cmdline", "BOOT_IMAGE=(hd0,gpt2)/vmlinuz root=/dev/mapper/rl-root ro enforcing=0 crashkernel=1G-4G:192M\n"),
			map[string]string{"selinux.boot_mode": "permissive", "selinux.mode": "enforcing"}},
		{"selinux=0 disables it whatever the config", withFile(rocky("n1", false), "proc/cmdline", "root=/dev/sda1 selinux=0\n"),
			map[string]string{"selinux.boot_mode": "disabled"}},
		{"selinuxfs at the old /selinux", func() nodesim.State {
			s := rocky("n1", false)
			s = withFile(s, "selinux/enforce", "0")
			s = withFile(s, "proc/self/mounts", "selinuxfs /selinux selinuxfs rw,relatime 0 0\n")
			return withFile(s, "sys/fs/selinux/enforce", "\x00delete")
		}(), map[string]string{"selinux.mode": "permissive"}},
		{"sles 15: apparmor, no selinux", nodesim.WithOS(nodesim.Healthy("n1", false), nodesim.SLES15),
			map[string]string{"selinux.mode": "disabled", "selinux.boot_mode": "absent", "selinux.rke2": "false", "selinux.rke2_module": "absent"}},
		{"sle micro 6", nodesim.WithOS(nodesim.Healthy("n1", true), nodesim.SLEMicro6),
			map[string]string{"selinux.mode": "enforcing", "selinux.boot_mode": "enforcing", "selinux.rke2": "true", "selinux.rke2_module": "installed"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := runProbe(t, "selinux", c.state).Facts
			nfWantFacts(t, got, c.want)
			for k, v := range got {
				if strings.Contains(v, "K10") || strings.Contains(v, "s3cr3t") {
					t.Errorf("%s=%q carries the join token", k, v)
				}
			}
		})
	}
}

// TestSELinuxProbeUnderEveryShell runs the probe where the OS shapes run
// it: dash (Debian, Ubuntu), bash as sh (RHEL, SUSE) and busybox sh.
func TestSELinuxProbeUnderEveryShell(t *testing.T) {
	want := map[string]string{"selinux.mode": "permissive", "selinux.boot_mode": "enforcing", "selinux.rke2": "true", "selinux.rke2_module": "installed"}
	for _, sh := range [][]string{{"dash"}, {"bash", "--posix"}, {"busybox", "sh"}} {
		t.Run(sh[0], func(t *testing.T) {
			parsed, _ := runProbeUnder(t, sh, "selinux", nodesim.WithSELinuxPermissive(rocky("n1", false)))
			nfWantFacts(t, parsed.Facts, want)
		})
	}
}

func TestRKE2ProbeFindsRPMAndTarballInstalls(t *testing.T) {
	for _, os := range []nodesim.OS{nodesim.Rocky9, nodesim.Ubuntu2404} {
		t.Run(os.Name, func(t *testing.T) {
			s := nodesim.WithOS(nodesim.Healthy("n1", false), os)
			if s.RKE2Path == "" {
				t.Fatalf("%s: rke2 would be on the simulated PATH, not where its install puts it", os.Name)
			}
			got := runProbe(t, "rke2", s).Facts
			if got["rke2.version"] != "v1.31.4+rke2r1" {
				t.Errorf("rke2.version = %q with rke2 at /%s, want v1.31.4+rke2r1", got["rke2.version"], s.RKE2Path)
			}
		})
	}
}

// selinuxFacts are the selinux facts of a healthy Rocky node.
func selinuxFacts(set map[string]string) map[string]string {
	f := map[string]string{"selinux.mode": "enforcing", "selinux.boot_mode": "enforcing", "selinux.rke2": "true", "selinux.rke2_module": "installed"}
	for k, v := range set {
		f[k] = v
	}
	return f
}

func TestSELinuxChecks(t *testing.T) {
	byID := builtinChecksByID(t)
	var checks []string
	for id := range byID {
		if strings.HasPrefix(id, "selinux.") {
			checks = append(checks, id)
		}
	}
	sort.Strings(checks)
	cases := []struct {
		name string
		set  map[string]string
		fail []string
	}{
		{"healthy rocky", nil, nil},
		{"no selinux at all (debian)", map[string]string{"selinux.mode": "disabled", "selinux.boot_mode": "absent", "selinux.rke2": "false", "selinux.rke2_module": "absent"}, nil},
		{"permissive until reboot", map[string]string{"selinux.mode": "permissive"}, []string{"selinux.mode-changes-at-reboot"}},
		{"enforcing now, disabled at boot", map[string]string{"selinux.boot_mode": "disabled"}, []string{"selinux.mode-changes-at-reboot"}},
		{"disabled now, enforcing at boot: a relabel", map[string]string{"selinux.mode": "disabled", "selinux.rke2_module": "absent"}, []string{"selinux.mode-changes-at-reboot", "selinux.rke2-module-missing"}},
		{"permissive on purpose", map[string]string{"selinux.mode": "permissive", "selinux.boot_mode": "permissive"}, nil},
		{"config unreadable is not judged", map[string]string{"selinux.mode": "permissive", "selinux.boot_mode": "unreadable"}, nil},
		// k3s config_linux.go: selinux set but not running in
		// container_runtime_t ("rke2-selinux policy may need to be applied").
		{"module missing", map[string]string{"selinux.rke2_module": "absent"}, []string{"selinux.rke2-module-missing"}},
		{"module unknown without root", map[string]string{"selinux.rke2_module": "not-root"}, nil},
		{"selinux setting unreadable", map[string]string{"selinux.rke2": "unreadable", "selinux.rke2_module": "absent"}, nil},
		// k3s config_linux.go: "SELinux is enabled on this host, but rke2
		// has not been started with --selinux".
		{"host enforcing, rke2 without selinux", map[string]string{"selinux.rke2": "false"}, []string{"selinux.rke2-without-selinux"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			facts := selinuxFacts(c.set)
			var got []string
			for _, id := range checks {
				if id == "selinux.mode-mixed" {
					continue // compares nodes: TestOSShapesHealthyAndPermissiveFound
				}
				if out, detail := byID[id].Evaluate(facts); out == result.OutcomeFail {
					got = append(got, id)
				} else if out == result.OutcomeSkip && !strings.Contains(detail, "=unreadable") {
					// An unreadable fact is "could not judge" (a skip with
					// its reason); anything else must be judged.
					t.Errorf("%s skipped: %s", id, detail)
				}
			}
			if !reflect.DeepEqual(got, c.fail) {
				t.Errorf("failing = %v, want %v", got, c.fail)
			}
		})
	}
	if byID["selinux.rke2-without-selinux"].Severity != result.SeverityInfo {
		t.Errorf("selinux.rke2-without-selinux is %s: RKE2 runs that way by design (tarball installs), so info", byID["selinux.rke2-without-selinux"].Severity)
	}
}

// osFleet is a healthy fleet of one OS shape: a server and two agents,
// Canal with kube-proxy in iptables mode, audited as root. With
// permissive, node-3 is left Permissive at runtime among Enforcing peers.
func osFleet(os nodesim.OS, permissive bool) []nodesim.Member {
	var fleet []nodesim.Member
	for i := 1; i <= 3; i++ {
		name := "node-" + string(rune('0'+i))
		role := map[bool]string{true: "control-plane", false: "worker"}[i == 1]
		s := nodesim.WithOS(nodesim.Healthy(name, i == 1), os)
		if permissive && i == 3 {
			s = nodesim.WithSELinuxPermissive(s)
		}
		fleet = append(fleet, nodesim.Member{Name: name, Roles: []string{role}, State: s})
	}
	return nodesim.WithCluster(fleet)
}

// osFixture names the facts fixture of an OS shape's fleet.
func osFixture(os nodesim.OS) string { return "os-" + os.Name }

// osPermissiveFixture is the Rocky 9 fleet whose node-3 runs Permissive.
const osPermissiveFixture = "os-rocky9-permissive"

// osScenarios are the OS shapes' fleets kept as facts fixtures.
func osScenarios() map[string]factScenario {
	m := map[string]factScenario{
		osPermissiveFixture: {fleet: func() []nodesim.Member { return osFleet(nodesim.Rocky9, true) }},
	}
	for _, os := range nodesim.AllOS {
		m[osFixture(os)] = factScenario{fleet: func() []nodesim.Member { return osFleet(os, false) }}
	}
	return m
}

// TestOSShapesHealthyAndPermissiveFound holds every OS shape's healthy
// fleet (Canal, kube-proxy, a root login) to silence from the whole
// catalogue, then finds a Permissive node among Enforcing Rocky 9 peers on
// exactly that node. The fixtures are the real bundle's facts on those
// fleets (TestFactsFixtures).
func TestOSShapesHealthyAndPermissiveFound(t *testing.T) {
	for _, os := range nodesim.AllOS {
		t.Run(os.Name, func(t *testing.T) {
			r := judgeFixture(t, osFixture(os), nil)
			for _, n := range r.Nodes {
				if n.Status != result.StatusOK {
					t.Fatalf("node %s: status %s (%s)", n.Name, n.Status, n.Message)
				}
				if n.Facts["os.id"] == "" || !strings.Contains(os.OSRelease, "ID="+n.Facts["os.id"]) && !strings.Contains(os.OSRelease, "ID=\""+n.Facts["os.id"]+"\"") {
					t.Errorf("node %s: os.id=%q is not %s's", n.Name, n.Facts["os.id"], os.Name)
				}
			}
			if got := warningsByNode(t, r); len(got) > 0 {
				t.Errorf("a healthy %s fleet gets %v", os.Name, got)
			}
			if !r.Gate.Passed {
				t.Errorf("gate = %+v", r.Gate)
			}
		})
	}
	t.Run("rocky9 permissive node", func(t *testing.T) {
		r := judgeFixture(t, osPermissiveFixture, nil)
		want := map[string][]string{"node-3": {"warning selinux.mode-changes-at-reboot", "warning selinux.mode-mixed"}}
		if got := warningsByNode(t, r); !reflect.DeepEqual(got, want) {
			t.Errorf("findings by node = %v, want %v", got, want)
		}
		var drift bool
		for _, d := range r.Drift {
			if d.Fact == "selinux.mode" && d.Majority == "enforcing" && len(d.Groups) == 2 && reflect.DeepEqual(d.Groups[1].Nodes, []string{"node-3"}) {
				drift = true
			}
		}
		if !drift {
			t.Errorf("no drift row shows node-3 permissive among enforcing peers: %+v", r.Drift)
		}
	})
}

// TestSELinuxProbeAsUnprivilegedUser runs the probe as a real unprivileged
// uid (nobody) on a Rocky node whose config.yaml is 0600, as an admin who
// keeps the join token private leaves it: the modes and the RPM's
// RKE2_SELINUX are still read, RKE2's setting is unreadable (config.yaml
// could override the environment), and the module list needs root.
func TestSELinuxProbeAsUnprivilegedUser(t *testing.T) {
	private := func(root string) {
		if err := os.Chmod(filepath.Join(root, "etc/rancher/rke2/config.yaml"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	facts := runAsNobody(t, "selinux", nodesim.WithSELinuxPermissive(rocky("n1", false)), private)
	nfWantFacts(t, facts, map[string]string{"selinux.mode": "permissive", "selinux.boot_mode": "enforcing",
		"selinux.rke2": "unreadable", "selinux.rke2_module": "not-root"})
}
