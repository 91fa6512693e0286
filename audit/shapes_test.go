package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

// The healthy-shape matrix is the ground truth that fleet-audit does not cry
// wolf on any fleet RKE2 supports: a healthy fleet of every shape gets no
// warning and no critical finding, and one problem planted on one node of
// it is found on exactly that node. The shapes cover every distribution,
// every CNI and Service-proxy layout, every address family, both logins
// (root, and a user whose root probes go through sudo) and a login
// environment with and without an HTTP proxy; every value of every axis
// appears, and the network layouts meet each of the other axes' values.

// shapeCase is one fleet shape and how its probes are run.
type shapeCase struct {
	shape nodesim.Shape
	// sudo logs in as a user without root, whose root probes run through
	// sudo -n (become: sudo).
	sudo bool
}

func (c shapeCase) String() string {
	login := "root"
	if c.sudo {
		login = "sudo"
	}
	return c.shape.String() + "/" + login
}

// shapeMatrix is the covering list: every network layout once, rotating
// through the distributions, address families, logins and proxy settings,
// then every distribution with RKE2's default layout (Canal, kube-proxy
// in iptables mode) under the other login.
func shapeMatrix() []shapeCase {
	var cases []shapeCase
	for i, n := range nodesim.Nets {
		cases = append(cases, shapeCase{
			shape: nodesim.Shape{OS: nodesim.AllOS[i%len(nodesim.AllOS)], Net: n,
				Family: nodesim.Families[i%len(nodesim.Families)], HTTPProxy: i%2 == 1},
			sudo: (i/2)%2 == 1,
		})
	}
	for i, os := range nodesim.AllOS {
		cases = append(cases, shapeCase{
			shape: nodesim.Shape{OS: os, Net: nodesim.Nets[0], Family: nodesim.Families[(i+1)%len(nodesim.Families)], HTTPProxy: i%2 == 0},
			sudo:  i%2 == 0,
		})
	}
	return cases
}

// TestShapeMatrixCoversEveryAxis keeps the covering list honest: a new
// distribution, layout or family that no case runs fails here.
func TestShapeMatrixCoversEveryAxis(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range shapeMatrix() {
		seen["os "+c.shape.OS.Name] = true
		seen["net "+c.shape.Net.Name] = true
		seen["family "+c.shape.Family.Name] = true
		seen[fmt.Sprintf("proxy %v", c.shape.HTTPProxy)] = true
		seen[fmt.Sprintf("sudo %v", c.sudo)] = true
		seen["family "+c.shape.Family.Name+" net "+c.shape.Net.Name] = true
	}
	var missing []string
	for _, o := range nodesim.AllOS {
		if !seen["os "+o.Name] {
			missing = append(missing, "os "+o.Name)
		}
	}
	for _, n := range nodesim.Nets {
		if !seen["net "+n.Name] {
			missing = append(missing, "net "+n.Name)
		}
	}
	for _, f := range nodesim.Families {
		if !seen["family "+f.Name] {
			missing = append(missing, "family "+f.Name)
		}
	}
	for _, k := range []string{"proxy true", "proxy false", "sudo true", "sudo false"} {
		if !seen[k] {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		t.Errorf("the shape matrix never runs: %s", strings.Join(missing, ", "))
	}
}

// runShape runs the real bundle on a simulated fleet of the case's shape,
// under the shape's distribution's /bin/sh and awk, as the case's login:
// root, or login (a real unprivileged user whose root probes escalate
// through this machine's real sudo) against RKE2's 0700 directories.
func runShape(t *testing.T, c shapeCase, login *testtools.SudoUser, fleet []nodesim.Member) *result.Report {
	t.Helper()
	testtools.SkipShort(t, "audits a simulated fleet of each shape")
	awk := shapeAwk(t, c.shape.OS)
	shell := shapeShell(t, c.shape.OS)
	dir := t.TempDir()
	tr := &shTransport{roots: map[string]string{}, fail: map[string]error{}, calls: map[string]int{}, shell: shell}
	if c.sudo {
		if login == nil {
			testtools.Require(t, testtools.SudoLoginMissing())
		}
		dir = testtools.PublicDir(t)
		tr.attr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: login.UID, Gid: login.GID}}
	}
	inv := &Fleet{Name: "shape"}
	for _, m := range fleet {
		m.State.Awk = awk
		root := filepath.Join(dir, m.Name)
		if err := nodesim.Build(root, m.State); err != nil {
			t.Fatal(err)
		}
		// The node's own sh, which the probes' pipes and command
		// substitutions start: bash called as sh runs in POSIX mode
		// (bash(1), INVOCATION).
		link := filepath.Join(root, "bin", "sh")
		if err := os.Remove(link); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if err := os.Symlink(shell[0], link); err != nil {
			t.Fatal(err)
		}
		tr.roots[m.Name] = root
		target := Target{Name: m.Name, Address: "127.0.0.1", Roles: m.Roles}
		if c.sudo {
			target.Become = probe.Become{Method: "sudo"}
		}
		inv.Targets = append(inv.Targets, target)
	}
	return runSim(t, inv, tr)
}

// shapeLogin is the real non-root login the sudo cases run as, nil where
// this machine cannot make one (not root, no sudo): those cases then skip,
// or fail under testtools.RequireEnv.
func shapeLogin(t *testing.T) *testtools.SudoUser {
	t.Helper()
	if testtools.SudoLoginMissing() != "" {
		return nil
	}
	u := testtools.SudoLogin(t)
	return &u
}

// loud returns the warning and critical findings of r, one line each.
func loud(r *result.Report) []string {
	var out []string
	for _, f := range r.Findings {
		if f.Severity >= result.SeverityWarning {
			out = append(out, fmt.Sprintf("%s %s on %s: %s", f.Severity, f.Check, strings.Join(f.Nodes, ","), f.Summary))
		}
	}
	return out
}

func TestHealthyShapesRaiseNothing(t *testing.T) {
	testtools.SkipShort(t, "audits a healthy fleet of every shape")
	login := shapeLogin(t)
	for _, c := range shapeMatrix() {
		t.Run(c.String(), func(t *testing.T) {
			r := runShape(t, c, login, c.shape.Fleet(3))
			for _, n := range r.Nodes {
				if n.Status != result.StatusOK {
					t.Errorf("node %s: status %s (%s)", n.Name, n.Status, n.Message)
				}
				// RKE2's pod-manifests directory is 0700 root: only a root
				// probe, through sudo for the non-root login, sees the API
				// server's manifest on the server.
				if slices.Contains(n.Roles, "control-plane") && n.Facts["rke2.manifest.kube-apiserver"] != "present" {
					t.Errorf("node %s: rke2.manifest.kube-apiserver = %q, want present", n.Name, n.Facts["rke2.manifest.kube-apiserver"])
				}
			}
			if r.Cluster == nil || r.Cluster.Status != result.ClusterOK {
				t.Errorf("cluster = %+v", r.Cluster)
			}
			if l := loud(r); len(l) > 0 {
				t.Errorf("a healthy %s fleet got %d warning or critical findings:\n%s", c, len(l), strings.Join(l, "\n"))
			}
			// Every area is judged ready; the removed APIs too, since
			// no client requested a deprecated one, whatever the target.
			for _, a := range r.Readiness {
				if a.Verdict != result.VerdictReady {
					t.Errorf("readiness of %s: %s: %s, want ready", a.Area, a.Verdict, a.Summary())
				}
			}
			// With a target one minor ahead, too: no deprecated API
			// requested is a pass, not "not a version".
			r.TargetVersion = nodesim.DemoTarget
			Analyze(r, simRules(t, GatePolicy{FailOn: result.SeverityCritical}))
			if l := loud(r); len(l) > 0 {
				t.Errorf("a healthy %s fleet against %s got %d warning or critical findings:\n%s", c, r.TargetVersion, len(l), strings.Join(l, "\n"))
			}
			for _, a := range r.Readiness {
				if a.Verdict != result.VerdictReady {
					t.Errorf("against %s, readiness of %s: %s: %s, want ready", r.TargetVersion, a.Area, a.Verdict, a.Summary())
				}
			}
		})
	}
}

// shapePlant is a problem planted on one node of a shape and the finding
// that must name that node.
type shapePlant struct {
	what  string
	apply func(nodesim.State) nodesim.State
	want  string // a check id, or a finding kind's word for drift and correlation
}

// plantFor picks a problem that matters on the shape: on kube-proxy-free
// layouts the replacement's own failures, on SELinux distributions a node
// left Permissive, elsewhere the seed's own UFW.
func plantFor(c shapeCase) shapePlant {
	switch {
	case strings.HasSuffix(c.shape.Net.Name, "cilium-kpr"):
		return shapePlant{"Cilium agent crash-looping", nodesim.WithCiliumAgentDown, "cilium"}
	case c.shape.Net.Name == "calico-ebpf":
		return shapePlant{"kube-proxy's chains left behind", nodesim.WithStaleKubeProxyChains, "stale"}
	case c.shape.OS.SELinux:
		return shapePlant{"SELinux left Permissive", nodesim.WithSELinuxPermissive, "selinux"}
	default:
		return shapePlant{"UFW active", nodesim.WithUFWActive, "ufw"}
	}
}

func TestPlantedProblemFoundOnItsNodeInEveryShape(t *testing.T) {
	testtools.SkipShort(t, "audits a planted fleet of every shape")
	login := shapeLogin(t)
	for _, c := range shapeMatrix() {
		p := plantFor(c)
		t.Run(c.String()+"/"+p.what, func(t *testing.T) {
			fleet := c.shape.Members(3)
			planted := fleet[2].Name
			fleet[2].State = p.apply(fleet[2].State)
			fleet = nodesim.WithCluster(fleet)
			r := runShape(t, c, login, fleet)
			found := false
			for _, f := range r.Findings {
				if f.Severity < result.SeverityWarning {
					continue
				}
				if !slices.Equal(f.Nodes, []string{planted}) {
					t.Errorf("%s %s names %v, want only %s: %s", f.Severity, f.Check, f.Nodes, planted, f.Summary)
				}
				if strings.Contains(f.Check, p.want) || (f.Cause != nil && strings.Contains(f.Cause.Fact, p.want)) {
					found = true
				}
			}
			if !found {
				t.Errorf("%s planted on %s: no warning or critical finding about %q; loud findings:\n%s", p.what, planted, p.want, strings.Join(loud(r), "\n"))
			}
		})
	}
}

// shapeShell is the shell a distribution runs the session's sh as: dash on
// Debian and Ubuntu (their /bin/sh), bash on RHEL and SUSE, whose /bin/sh
// is bash, which runs in POSIX mode when invoked as sh (bash(1), INVOCATION).
func shapeShell(t *testing.T, os nodesim.OS) []string {
	t.Helper()
	if os.BinSh == "bash" {
		return []string{testtools.Find(t, "bash"), "--posix"}
	}
	return []string{testtools.Find(t, os.BinSh)}
}

// shapeAwk is the awk the distribution installs, put first on the
// simulated node's PATH, or "" for this machine's (Debian 12's mawk
// 20200120, which Ubuntu 22.04 and 24.04 ship too, both before 20241117):
// gawk on RHEL and SUSE, and on Debian 13 its own mawk 20250131, whose
// srand() seeds with nanoseconds (see TestKubeProxySyncAgeUnderEachAwk).
func shapeAwk(t *testing.T, o nodesim.OS) string {
	t.Helper()
	switch {
	case strings.HasPrefix(o.Awk, "GNU Awk"):
		return testtools.Find(t, "gawk")
	case strings.HasPrefix(o.Awk, "mawk") && mawkDate(o.Awk) >= 20241117:
		p := os.Getenv(newerMawkEnv)
		if p == "" {
			t.Logf("%s is unset: %s's %s is not tried", newerMawkEnv, o.Name, o.Awk)
			testtools.Require(t, "newer-mawk")
		}
		return p
	}
	return ""
}

// mawkDate is the snapshot date of a "mawk 1.3.4 20250131" version.
func mawkDate(v string) int {
	f := strings.Fields(v)
	n, _ := strconv.Atoi(f[len(f)-1])
	return n
}

// TestKubeProxyFreeRHELFleetFindsEachPlantOnItsNode is the issue's
// acceptance on the shape it was wrong on: a Rocky 9 fleet on Cilium's
// kube-proxy replacement, audited by a non-root login through sudo. With
// a crash-looping agent on one node, kube-proxy's chains left behind on
// another and SELinux left Permissive on a third among Enforcing peers,
// each is found on exactly its node, and nothing else is.
func TestKubeProxyFreeRHELFleetFindsEachPlantOnItsNode(t *testing.T) {
	testtools.SkipShort(t, "audits a kube-proxy-free RHEL fleet")
	login := shapeLogin(t)
	c := shapeCase{shape: nodesim.Shape{OS: nodesim.Rocky9, Net: netNamed(t, "cilium-kpr"), Family: nodesim.Families[0]}, sudo: true}
	fleet := c.shape.Members(5)
	plants := map[string]struct {
		apply func(nodesim.State) nodesim.State
		want  []string
	}{
		fleet[1].Name: {nodesim.WithCiliumAgentDown, []string{"critical k8s.cni-agent-unhealthy-no-kube-proxy", "critical kubeproxy.cilium-agent-down"}},
		fleet[2].Name: {nodesim.WithStaleKubeProxyChains, []string{"warning kubeproxy.stale-iptables-chains"}},
		fleet[3].Name: {nodesim.WithSELinuxPermissive, []string{"warning selinux.mode-changes-at-reboot", "warning selinux.mode-mixed"}},
	}
	for i := range fleet {
		if p, ok := plants[fleet[i].Name]; ok {
			fleet[i].State = p.apply(fleet[i].State)
		}
	}
	r := runShape(t, c, login, nodesim.WithCluster(fleet))
	got := warningsByNode(t, r)
	want := map[string][]string{}
	for n, p := range plants {
		want[n] = p.want
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("findings by node =\n%v\nwant\n%v", got, want)
	}
}

func netNamed(t *testing.T, name string) nodesim.Net {
	t.Helper()
	for _, n := range nodesim.Nets {
		if n.Name == name {
			return n
		}
	}
	t.Fatalf("no network shape %q", name)
	return nodesim.Net{}
}
