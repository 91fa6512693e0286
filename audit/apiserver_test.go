package audit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/audit/catalog"
	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/internal/kubefake"
	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

// apiServerFleet is three servers and two agents, each server answering
// from its own API server's state; plant changes the named members first.
func apiServerFleet(plant func(byName map[string]*nodesim.State)) []nodesim.Member {
	fleet := []nodesim.Member{
		{Name: "server-1", Roles: []string{"etcd"}, State: nodesim.Healthy("server-1", true)},
		{Name: "server-2", Roles: []string{"etcd"}, State: nodesim.Healthy("server-2", true)},
		{Name: "server-3", Roles: []string{"etcd"}, State: nodesim.Healthy("server-3", true)},
		{Name: "agent-1", Roles: []string{"worker"}, State: nodesim.Healthy("agent-1", false)},
		{Name: "agent-2", Roles: []string{"worker"}, State: nodesim.Healthy("agent-2", false)},
	}
	if plant != nil {
		byName := map[string]*nodesim.State{}
		for i := range fleet {
			byName[fleet[i].Name] = &fleet[i].State
		}
		plant(byName)
	}
	return nodesim.WithCluster(fleet)
}

// removedFlowSchemas is a deprecated API that 1.32 removes, and
// componentStatuses one with no removal set.
var (
	removedFlowSchemas = nodesim.DeprecatedAPI{Group: "flowcontrol.apiserver.k8s.io", Version: "v1beta3", Resource: "flowschemas", RemovedRelease: "1.32"}
	componentStatuses  = nodesim.DeprecatedAPI{Version: "v1", Resource: "componentstatuses"}
)

// TestAPIServerPlantedOnItsServerOnly runs the whole audit on a fleet of
// three servers where one server's own API server has a problem the others
// do not: the finding names exactly that server, however many servers
// there are and whichever of them gave the cluster view, and nothing else
// is loud.
func TestAPIServerPlantedOnItsServerOnly(t *testing.T) {
	tests := []struct {
		name   string
		plant  func(map[string]*nodesim.State)
		target string
		want   map[string][]string
	}{
		{name: "healthy", want: map[string][]string{}},
		{name: "healthy, with a target", target: "v1.32.5+rke2r1", want: map[string][]string{}},
		{name: "readyz fails on server 2 only", plant: func(m map[string]*nodesim.State) {
			*m["server-2"] = nodesim.WithAPIServerChecksFailing(*m["server-2"], "etcd-readiness")
		}, want: map[string][]string{"server-2": {"critical apiserver.readyz-failing"}}},
		// etcd is a livez and a readyz check: one finding, not two.
		{name: "livez and readyz fail on server 1, the cluster view's", plant: func(m map[string]*nodesim.State) {
			*m["server-1"] = nodesim.WithAPIServerChecksFailing(*m["server-1"], "etcd")
		}, want: map[string][]string{"server-1": {"critical apiserver.livez-failing"}}},
		{name: "removed API requested on server 3 only", target: "v1.32.5+rke2r1", plant: func(m map[string]*nodesim.State) {
			m["server-3"].DeprecatedRequests = []nodesim.DeprecatedAPI{removedFlowSchemas, componentStatuses}
		}, want: map[string][]string{"server-3": {"critical apiserver.removed-api-requested"}}},
		{name: "removed API requested on server 3, no target", plant: func(m map[string]*nodesim.State) {
			m["server-3"].DeprecatedRequests = []nodesim.DeprecatedAPI{removedFlowSchemas}
		}, want: map[string][]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv, tr := simulate(t, apiServerFleet(tt.plant))
			r := runSim(t, inv, tr)
			if tt.target != "" {
				r.TargetVersion = tt.target
				probes, _ := probe.BuiltinProbes()
				checks, _ := check.BuiltinChecks()
				Analyze(r, Rules{Probes: probes, Checks: checks, Gate: GatePolicy{FailOn: result.SeverityCritical}})
			}
			if r.Cluster == nil || r.Cluster.Status != result.ClusterOK {
				t.Fatalf("cluster = %+v", r.Cluster)
			}
			if got := warningsByNode(t, r); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("findings by node =\n%v\nwant\n%v", got, tt.want)
			}
			for _, n := range r.Nodes {
				if n.Status != result.StatusOK {
					t.Errorf("node %s: %s (%s)", n.Name, n.Status, n.Message)
				}
			}
			// An agent has no API server: its checks do not apply.
			for _, c := range r.Checks {
				if strings.HasPrefix(c.Check, "apiserver.") && strings.HasPrefix(c.Node, "agent-") && c.Outcome != result.OutcomeNotApplicable {
					t.Errorf("%s on %s: %s (%s), want not applicable", c.Check, c.Node, c.Outcome, c.Detail)
				}
			}
		})
	}
}

// TestAPIServerDeprecatedBeforeTargetIsInfo: a removal after the target is
// the next upgrade's blocker, an info on the server that saw it.
func TestAPIServerDeprecatedBeforeTargetIsInfo(t *testing.T) {
	inv, tr := simulate(t, apiServerFleet(func(m map[string]*nodesim.State) {
		m["server-3"].DeprecatedRequests = []nodesim.DeprecatedAPI{removedFlowSchemas}
	}))
	r := runSim(t, inv, tr)
	r.TargetVersion = "v1.31.9+rke2r1"
	probes, _ := probe.BuiltinProbes()
	checks, _ := check.BuiltinChecks()
	Analyze(r, Rules{Probes: probes, Checks: checks, Gate: GatePolicy{FailOn: result.SeverityCritical}})
	var got []string
	for _, f := range r.Findings {
		if strings.HasPrefix(f.Check, "apiserver.") {
			got = append(got, fmt.Sprintf("%s %s %v", f.Severity, f.Check, f.Nodes))
		}
	}
	if want := []string{"info apiserver.deprecated-api-requested [server-3]"}; !reflect.DeepEqual(got, want) {
		t.Errorf("findings %q, want %q", got, want)
	}
}

// TestAPIServerProbeFacts pins what the probe says on each kind of node
// under every shell a probe runs under, and that rke2.yaml's key and token
// never reach its output.
func TestAPIServerProbeFacts(t *testing.T) {
	server := func(edit func(*nodesim.State)) nodesim.State {
		fleet := apiServerFleet(func(m map[string]*nodesim.State) {
			if edit != nil {
				edit(m["server-1"])
			}
		})
		return fleet[0].State
	}
	// answered changes a built server's kubectl answers, which WithCluster
	// would otherwise set again.
	answered := func(args, out string, rc int) nodesim.State {
		s := server(nil)
		kubectlAnswer(&s, args, out, rc)
		return s
	}
	agent := apiServerFleet(nil)[3].State
	remove := func(rel string) func(string) {
		return func(root string) {
			if err := os.Remove(filepath.Join(root, rel)); err != nil {
				t.Fatal(err)
			}
		}
	}
	healthy := map[string]string{"apiserver.readyz": "passed", "apiserver.readyz.failed": "none", "apiserver.livez": "passed",
		"apiserver.livez.failed": "none", "apiserver.deprecated_apis": "none", "apiserver.deprecated_apis.first_removal": "none",
		"apiserver.deprecated_apis.last_removal": "none"}
	every := func(v string) map[string]string {
		out := map[string]string{}
		for k := range healthy {
			out[k] = v
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		state nodesim.State
		tweak func(root string)
		want  map[string]string
	}{
		{"healthy server", server(nil), nil, healthy},
		{"agent", agent, nil, every("absent")},
		{"server without kube-apiserver (disable-apiserver)", server(nil), remove("var/lib/rancher/rke2/agent/pod-manifests/kube-apiserver.yaml"), every("absent")},
		{"server without RKE2's kubectl", server(nil), remove(nodesim.KubectlPath), every("no-kubectl")},
		{"server without rke2.yaml", server(nil), remove(nodesim.KubeconfigPath), every("no-kubeconfig")},
		{"a readyz-only check fails", server(func(s *nodesim.State) { *s = nodesim.WithAPIServerChecksFailing(*s, "etcd-readiness", "informer-sync") }), nil,
			mergeFacts(healthy, map[string]string{"apiserver.readyz": "failed", "apiserver.readyz.failed": "etcd-readiness,informer-sync"})},
		{"etcd fails: livez and readyz", server(func(s *nodesim.State) { *s = nodesim.WithAPIServerChecksFailing(*s, "etcd") }), nil,
			mergeFacts(healthy, map[string]string{"apiserver.readyz": "failed", "apiserver.readyz.failed": "etcd", "apiserver.livez": "failed", "apiserver.livez.failed": "etcd"})},
		{"deprecated APIs requested", server(func(s *nodesim.State) {
			s.DeprecatedRequests = []nodesim.DeprecatedAPI{removedFlowSchemas, componentStatuses,
				{Group: "autoscaling", Version: "v2beta2", Resource: "horizontalpodautoscalers", Subresource: "status", RemovedRelease: "1.26"}}
		}), nil, mergeFacts(healthy, map[string]string{
			"apiserver.deprecated_apis":               "horizontalpodautoscalers/status autoscaling/v2beta2 (removed in 1.26), componentstatuses v1 (no removal set), flowschemas flowcontrol.apiserver.k8s.io/v1beta3 (removed in 1.32)",
			"apiserver.deprecated_apis.first_removal": "v1.26.0", "apiserver.deprecated_apis.last_removal": "v1.32.0"})},
		{"API server refuses connections", answered(nodesim.KubectlReadyz, "The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?\n", 1), nil, map[string]string{"apiserver.readyz": "unreachable", "apiserver.readyz.failed": "none", "apiserver.livez": "unreachable",
			"apiserver.livez.failed": "none", "apiserver.deprecated_apis": "unknown", "apiserver.deprecated_apis.first_removal": "unknown",
			"apiserver.deprecated_apis.last_removal": "unknown"}},
		{"metrics forbidden", answered(nodesim.KubectlMetrics, "Error from server (Forbidden): forbidden\n", 1), nil, mergeFacts(healthy, map[string]string{"apiserver.deprecated_apis": "unknown", "apiserver.deprecated_apis.first_removal": "unknown", "apiserver.deprecated_apis.last_removal": "unknown"})},
	} {
		for _, sh := range probeShells {
			t.Run(tc.name+"/"+strings.Join(sh, "-"), func(t *testing.T) {
				shell := append([]string{testtools.Find(t, sh[0])}, sh[1:]...)
				p, out := runProbeOn(t, "apiserver", tc.state, tc.tweak, shell)
				if !reflect.DeepEqual(p.Facts, tc.want) {
					t.Errorf("facts\n%v\nwant\n%v", p.Facts, tc.want)
				}
				for _, secret := range []string{nodesim.FakeKubeconfigSecret, nodesim.FakeKubeconfigToken} {
					if strings.Contains(out, secret) {
						t.Errorf("the probe's output holds rke2.yaml's %q", secret)
					}
				}
			})
		}
	}
}

// TestKubeHealthParsing pins kube_health's reading of what kubectl prints
// for a verbose health endpoint: the 200 body, the HTTP 500 kubectl turns
// into an InternalError on stderr with the body %q-quoted (a failed first
// check right after the quote), and the errors of an API that did not
// answer as it should.
func TestKubeHealthParsing(t *testing.T) {
	internal := func(body string) string {
		return fmt.Sprintf("Error from server (InternalError): an error on the server (%q) has prevented the request from succeeding\n", body)
	}
	for _, tc := range []struct {
		name, out      string
		rc             int
		state, failed  string
		livez, livezOK bool // the same answer on livez
	}{
		{name: "passed", out: "[+]ping ok\n[+]etcd ok\nreadyz check passed\n", state: "passed", failed: "none"},
		{name: "HTTP 500, one check", out: internal("[+]ping ok\n[-]etcd failed: reason withheld\nreadyz check failed"), rc: 1, state: "failed", failed: "etcd"},
		{name: "HTTP 500, the first check and a poststarthook", out: internal("[-]ping failed: reason withheld\n[+]log ok\n[-]poststarthook/rbac/bootstrap-roles failed: reason withheld\nreadyz check failed"), rc: 1,
			state: "failed", failed: "ping,poststarthook/rbac/bootstrap-roles"},
		{name: "failed body on stdout (a proxy that passes the 500 on as text)", out: "[+]ping ok\n[-]shutdown failed: reason withheld\nreadyz check failed\n", rc: 1, state: "failed", failed: "shutdown"},
		{name: "passed text but kubectl failed", out: "[+]ping ok\nreadyz check passed\nerror: unexpected EOF\n", rc: 1, state: "unknown", failed: "none"},
		{name: "refused", out: "The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?\n", rc: 1, state: "unreachable", failed: "none"},
		{name: "timeout", out: "Unable to connect to the server: net/http: request canceled (Client.Timeout exceeded while awaiting headers)\n", rc: 1, state: "unreachable", failed: "none"},
		{name: "unauthorized", out: "error: You must be logged in to the server (Unauthorized)\n", rc: 1, state: "unknown", failed: "none"},
		{name: "forbidden", out: `Error from server (Forbidden): forbidden: User "system:anonymous" cannot get path "/readyz"` + "\n", rc: 1, state: "unknown", failed: "none"},
		{name: "empty answer", out: "", rc: 0, state: "unknown", failed: "none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := apiServerFleet(nil)[0].State
			kubectlAnswer(&s, nodesim.KubectlReadyz, tc.out, tc.rc)
			p := runProbe(t, "apiserver", s)
			if got := p.Facts["apiserver.readyz"]; got != tc.state {
				t.Errorf("apiserver.readyz = %q, want %q", got, tc.state)
			}
			if got := p.Facts["apiserver.readyz.failed"]; got != tc.failed {
				t.Errorf("apiserver.readyz.failed = %q, want %q", got, tc.failed)
			}
		})
	}
}

// TestAPIServerProbeThroughRealKubectl asks kubefake, serving the health
// endpoints as kube-apiserver does (a failed check is an HTTP 500 through
// http.Error), with a real kubectl: the facts must be those the simulated
// kubectl's answers give, so the simulator's InternalError line is
// kubectl's.
func TestAPIServerProbeThroughRealKubectl(t *testing.T) {
	kubectl := testtools.Find(t, "kubectl")
	for _, failing := range [][]string{nil, {"etcd-readiness"}, {"etcd", "poststarthook/rbac/bootstrap-roles"}} {
		t.Run(strings.Join(append([]string{"failing"}, failing...), " "), func(t *testing.T) {
			s := apiServerFleet(func(m map[string]*nodesim.State) {
				*m["server-1"] = nodesim.WithAPIServerChecksFailing(*m["server-1"], failing...)
				m["server-1"].DeprecatedRequests = []nodesim.DeprecatedAPI{removedFlowSchemas}
			})[0].State
			want := runProbe(t, "apiserver", s).Facts
			health := map[string]kubefake.HealthAnswer{}
			for _, ep := range []string{"readyz", "livez"} {
				body, code := nodesim.APIServerHealth(s, ep)
				if code != 200 {
					// http.Error appends the newline handleRootHealth leaves out.
					body = strings.TrimSuffix(body, "\n")
				}
				health["/"+ep] = kubefake.HealthAnswer{Code: code, Body: body}
			}
			srv := kubefake.StartCluster(kubefake.Cluster{Metrics: nodesim.APIServerMetrics(s), Health: health})
			defer srv.Close()
			t.Setenv("HOME", t.TempDir())
			got := runProbeTweaked(t, "apiserver", s, func(root string) {
				bin := filepath.Join(root, nodesim.KubectlPath)
				if err := os.Remove(bin); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(kubectl, bin); err != nil {
					t.Fatal(err)
				}
				if err := srv.WriteKubeconfig(filepath.Join(root, nodesim.KubeconfigPath)); err != nil {
					t.Fatal(err)
				}
			}).Facts
			if !reflect.DeepEqual(got, want) {
				t.Errorf("facts through kubectl %s:\n%v\nsimulated:\n%v\nrequests: %q", kubectl, got, want, srv.Requests())
			}
			// Word for word: what the real kubectl prints for each endpoint
			// is what the simulated one answers.
			kc := filepath.Join(t.TempDir(), "kubeconfig")
			if err := srv.WriteKubeconfig(kc); err != nil {
				t.Fatal(err)
			}
			for _, args := range []string{nodesim.KubectlReadyz, nodesim.KubectlLivez} {
				raw := "--raw=" + strings.TrimPrefix(args, "* get --raw=")
				out, err := exec.Command(kubectl, "--kubeconfig", kc, "--cache-dir=/dev/null", "get", raw).CombinedOutput()
				rc := 0
				if err != nil {
					rc = 1
				}
				compared := false
				for _, c := range s.Commands {
					if c.Name != "kubectl" || c.Args != args {
						continue
					}
					compared = true
					if c.Out != string(out) || c.RC != rc {
						t.Errorf("kubectl get %s: real (exit %d)\n%s\nsimulated (exit %d)\n%s", raw, rc, out, c.RC, c.Out)
					}
				}
				if !compared {
					t.Errorf("no simulated answer to %s", args)
				}
			}
			if len(failing) > 0 && got["apiserver.readyz"] != "failed" {
				t.Errorf("apiserver.readyz = %q with %v failing", got["apiserver.readyz"], failing)
			}
		})
	}
}

// TestAPIServerProbeAsUnprivilegedUser: a login without sudo meets RKE2's
// 0700 agent directory (and rke2.yaml, 0600): every fact is unreadable,
// and the checks on them could not judge the server, never pass it.
func TestAPIServerProbeAsUnprivilegedUser(t *testing.T) {
	facts := runAsNobody(t, "apiserver", nodesim.WithAPIServerChecksFailing(apiServerFleet(nil)[0].State, "etcd"), nil)
	p := builtinProbe(t, "apiserver")
	for _, f := range p[0].Facts {
		if got := facts[f]; got != "unreadable" {
			t.Errorf("%s = %q, want unreadable", f, got)
		}
	}
	byID := builtinChecksByID(t)
	for _, id := range []string{"apiserver.readyz-failing", "apiserver.livez-failing", "apiserver.removed-api-requested"} {
		facts := mergeFacts(facts, map[string]string{catalog.TargetVersionFact: "v1.32.5+rke2r1"})
		if got, detail := byID[id].Evaluate(facts); got != result.OutcomeUnjudged {
			t.Errorf("%s: %s (%s), want could not judge", id, got, detail)
		}
	}
}

// TestAPIServerChecksOnUnansweredCouldNotJudge: an API server that did not
// answer, or answered neither way, is never passed as ready or live.
func TestAPIServerChecksOnUnansweredCouldNotJudge(t *testing.T) {
	byID := builtinChecksByID(t)
	for _, v := range []string{"unreachable", "unknown"} {
		facts := map[string]string{"apiserver.readyz": v, "apiserver.readyz.failed": "none", "apiserver.livez": v, "apiserver.livez.failed": "none"}
		for _, id := range []string{"apiserver.readyz-failing", "apiserver.livez-failing"} {
			if got, detail := byID[id].Evaluate(facts); got != result.OutcomeUnjudged {
				t.Errorf("%s on %s: %s (%s), want could not judge", id, v, got, detail)
			}
		}
	}
	// The metrics unread: the deprecated APIs are not known to be none.
	facts := map[string]string{"apiserver.deprecated_apis": "unknown", "apiserver.deprecated_apis.first_removal": "unknown",
		"apiserver.deprecated_apis.last_removal": "unknown", catalog.TargetVersionFact: "v1.32.5+rke2r1"}
	for _, id := range []string{"apiserver.removed-api-requested", "apiserver.deprecated-api-requested"} {
		if got, detail := byID[id].Evaluate(facts); got != result.OutcomeUnjudged {
			t.Errorf("%s on unknown: %s (%s), want could not judge", id, got, detail)
		}
	}
}
