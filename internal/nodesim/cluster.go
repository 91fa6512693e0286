package nodesim

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// The Kubernetes view of a simulated fleet, as RKE2's node-local kubectl
// (/var/lib/rancher/rke2/bin/kubectl --kubeconfig /etc/rancher/rke2/rke2.yaml)
// shows it on a server node. Every answer is derived from the members'
// states, so a node whose kube-proxy /healthz fails shows a CrashLoopBackOff
// pod, and the output is what kubectl prints for the cluster probe's own
// -o jsonpath templates (tab-separated fields, maps as compact JSON, several
// matches of a filter joined by a space).

// Paths of RKE2's kubectl and admin kubeconfig, relative to the node root.
const (
	KubectlPath    = "var/lib/rancher/rke2/bin/kubectl"
	KubeconfigPath = "etc/rancher/rke2/rke2.yaml"
)

// Argument globs (matched against "$*") of the kubectl calls the cluster
// probe makes; SetCommand with the same glob replaces an answer.
const (
	KubectlReadyz  = "* get --raw=/readyz?verbose"
	KubectlLivez   = "* get --raw=/livez?verbose"
	KubectlVersion = "* get --raw /version"
	KubectlNodes   = "* get nodes -o jsonpath=*"
	KubectlPods    = "* -n kube-system get pods -o jsonpath=*"
	KubectlDS      = "* -n kube-system get ds kube-proxy *"
	KubectlCanI    = "* auth can-i get nodes --as=system:kube-proxy" // KubectlCanIFor("get", "nodes")
	KubectlCRB     = "* get clusterrolebinding system:kube-proxy system:node-proxier *"
	// kubelet's Unhealthy events of kube-system's pods (events).
	KubectlEvents = "* -n kube-system get events --field-selector involvedObject.kind=Pod,reason=Unhealthy -o jsonpath=*"
	// The CNI agents' pods, by their two label keys (cniAgents).
	KubectlAgentPodsK8sApp = "* get pods -A -l k8s-app in (canal,calico-node,cilium) -o jsonpath=*"
	KubectlAgentPodsApp    = "* get pods -A -l app in (flannel,rke2-multus) -o jsonpath=*"
)

// KubectlCanIFor is the glob of `auth can-i VERB RESOURCE --as=system:kube-proxy`
// as the cluster probe asks it: resource is "nodes", "endpointslices.discovery.k8s.io"
// (resource.group) or "nodes/proxy" (a subresource, passed as --subresource).
func KubectlCanIFor(verb, resource string) string {
	if res, sub, ok := strings.Cut(resource, "/"); ok {
		return "* auth can-i " + verb + " " + res + " --subresource=" + sub + " --as=system:kube-proxy"
	}
	return "* auth can-i " + verb + " " + resource + " --as=system:kube-proxy"
}

// kubectlCanIAny answers every can-i for kube-proxy that no rule of
// nodeProxierRules grants: RBAC denies by default, and kubectl prints "no"
// and exits 1 (kubectl pkg/cmd/auth/cani.go, RunAccessCheck and the
// os.Exit(1) in NewCmdCanI). It must stay the last can-i answer, as the stub
// takes the first glob that matches.
const kubectlCanIAny = "* auth can-i * --as=system:kube-proxy"

// nodeProxierRules are the verb/resource pairs ClusterRole
// system:node-proxier grants kube-proxy (kubernetes
// plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go, ClusterRoles:
// list/watch services and endpoints, get/list/watch nodes, eventsRule()'s
// create/update/patch events in the core and events.k8s.io groups, and
// list/watch endpointslices.discovery.k8s.io), in the form the probe asks
// them. RKE2 binds it to User system:kube-proxy (ClusterRoleBinding
// system:node-proxier).
var nodeProxierRules = []struct{ Verb, Resource string }{
	{"list", "services"}, {"watch", "services"}, {"list", "endpoints"}, {"watch", "endpoints"},
	{"get", "nodes"}, {"list", "nodes"}, {"watch", "nodes"},
	{"create", "events"}, {"update", "events"}, {"patch", "events"},
	{"create", "events.events.k8s.io"}, {"update", "events.events.k8s.io"}, {"patch", "events.events.k8s.io"},
	{"list", "endpointslices.discovery.k8s.io"}, {"watch", "endpointslices.discovery.k8s.io"},
}

// canIAnswer is kubectl's answer to one can-i: "yes" and exit 0, or "no"
// and exit 1.
func canIAnswer(args string, allowed bool) Command {
	c := Command{Name: "kubectl", Path: KubectlPath, Args: args, Out: "yes\n"}
	if !allowed {
		c.Out, c.RC = "no\n", 1
	}
	return c
}

// WithKubeProxyCanI makes `auth can-i VERB RESOURCE --as=system:kube-proxy`
// answer allowed, keeping the deny-by-default answer last.
func WithKubeProxyCanI(s State, verb, resource string, allowed bool) State {
	var last []Command
	out := make([]Command, 0, len(s.Commands))
	for _, c := range s.Commands {
		if c.Name == "kubectl" && c.Args == kubectlCanIAny {
			last = append(last, c)
			continue
		}
		out = append(out, c)
	}
	s.Commands = out
	s.SetCommand(canIAnswer(KubectlCanIFor(verb, resource), allowed))
	s.Commands = append(s.Commands, last...)
	return s
}

// KubectlCurrentLogs is the glob of `logs <pod> -c kube-proxy --tail=500`.
func KubectlCurrentLogs(pod string) string {
	return "* -n kube-system logs " + pod + " -c kube-proxy --tail=500"
}

// KubectlPreviousLogs is the glob of `logs <pod> -c kube-proxy --previous`.
func KubectlPreviousLogs(pod string) string {
	return "* -n kube-system logs " + pod + " -c kube-proxy --previous --tail=200"
}

// ClusterName prefixes the Kubernetes node names, as in the seed
// ("cluster-a-etcd-1" for inventory host etcd-1).
const ClusterName = "cluster-a"

// K8sNodeName is the Kubernetes node name of a fleet member.
func K8sNodeName(member string) string { return ClusterName + "-" + member }

// KubeProxyPod is the name of a member's kube-proxy mirror pod.
func KubeProxyPod(member string) string { return "kube-proxy-" + K8sNodeName(member) }

// FakeKubeconfigSecret and FakeKubeconfigToken are in every simulated
// rke2.yaml; no probe output may ever contain them.
const (
	FakeKubeconfigSecret = "LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0tCk1IY0NBUUVFSUZha2VLZXlEYXRhRm9yRmxlZXRBdWRpdFRlc3RzT25seQo="
	FakeKubeconfigToken  = "K10fa4e5e55ce55a9d2b1c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6a7b8::server:f1eetaudit5ecret"
)

const rke2Kubeconfig = `apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJkekNDQVIyZ0F3SUJBZ0lCQURBS0JnZ3Foa2pPUFFRREFqQWpNU0V3SHdZRFZRUUREQmh5YTJVeUxYTmwKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=
    server: https://127.0.0.1:6443
  name: default
contexts:
- context:
    cluster: default
    user: default
  name: default
current-context: default
kind: Config
preferences: {}
users:
- name: default
  user:
    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJrVENDQVRlZ0F3SUJBZ0lJRmFrZUNlcnQKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=
    client-key-data: ` + FakeKubeconfigSecret + `
    token: ` + FakeKubeconfigToken + `
`

// readyzChecks are the checks kube-apiserver 1.31 lists on /readyz?verbose.
var readyzChecks = []string{
	"ping", "log", "etcd", "etcd-readiness", "informer-sync",
	"poststarthook/start-apiserver-admission-initializer", "poststarthook/generic-apiserver-start-informers",
	"poststarthook/priority-and-fairness-config-consumer", "poststarthook/priority-and-fairness-filter",
	"poststarthook/storage-object-count-tracker-hook", "poststarthook/start-apiextensions-informers",
	"poststarthook/start-apiextensions-controllers", "poststarthook/crd-informer-synced",
	"poststarthook/start-system-namespaces-controller", "poststarthook/start-cluster-authentication-info-controller",
	"poststarthook/start-kube-apiserver-identity-lease-controller", "poststarthook/start-legacy-token-tracking-controller",
	"poststarthook/start-service-ip-repair-controllers", "poststarthook/rbac/bootstrap-roles",
	"poststarthook/scheduling/bootstrap-system-priority-classes", "poststarthook/priority-and-fairness-config-producer",
	"poststarthook/bootstrap-controller", "poststarthook/aggregator-reload-proxy-client-cert",
	"poststarthook/start-kube-aggregator-informers", "poststarthook/apiservice-status-local-available-controller",
	"poststarthook/apiservice-registration-controller", "poststarthook/apiservice-discovery-controller",
	"poststarthook/kube-apiserver-autoregistration", "autoregister-completion",
	"poststarthook/apiservice-openapi-controller", "poststarthook/apiservice-openapiv3-controller", "shutdown",
}

// readyzOnly are the checks /livez does not run: genericapiserver adds
// etcd-readiness (options/etcd.go addEtcdHealthEndpoint), informer-sync
// (config.go) and shutdown (healthz.go addReadyzShutdownCheck) with
// AddReadyzChecks, every other one with AddHealthChecks or
// AddBootSequenceHealthChecks, which add it to healthz, livez and readyz
// alike (k8s.io/apiserver pkg/server/healthz.go).
var readyzOnly = map[string]bool{"etcd-readiness": true, "informer-sync": true, "shutdown": true}

// healthBody is the verbose body of /readyz or /livez (endpoint "readyz",
// "livez") with the given checks failing, and whether one did, as
// k8s.io/apiserver pkg/server/healthz/healthz.go handleRootHealth writes
// it: "[+]NAME ok" or "[-]NAME failed: reason withheld" per check, then
// "<endpoint> check passed" and a newline, or, on failure, "<endpoint>
// check failed" through http.Error (500, newline appended).
func healthBody(endpoint string, failed map[string]bool) (string, bool) {
	var b strings.Builder
	bad := false
	for _, c := range readyzChecks {
		if endpoint == "livez" && readyzOnly[c] {
			continue
		}
		if failed[c] {
			bad = true
			fmt.Fprintf(&b, "[-]%s failed: reason withheld\n", c)
		} else {
			fmt.Fprintf(&b, "[+]%s ok\n", c)
		}
	}
	if bad {
		fmt.Fprintf(&b, "%s check failed\n", endpoint)
	} else {
		fmt.Fprintf(&b, "%s check passed\n", endpoint)
	}
	return b.String(), bad
}

// APIServerHealth is what this node's API server answers on /readyz?verbose
// or /livez?verbose (endpoint "readyz", "livez"), from the checks it fails
// (State.APIServerFailing): the body and the HTTP code, 200 or 500.
func APIServerHealth(s State, endpoint string) (string, int) {
	failed := map[string]bool{}
	for _, c := range s.APIServerFailing {
		failed[c] = true
	}
	body, bad := healthBody(endpoint, failed)
	if bad {
		return body, 500
	}
	return body, 200
}

// healthAnswer is kubectl's answer to `get --raw=/<endpoint>?verbose` on
// this node. On the HTTP 500 of a failed check kubectl prints, on stderr
// and exiting 1, the body trimmed of surrounding blanks and %q-quoted:
// client-go rest/request.go newUnstructuredResponseError
// (strings.TrimSpace) and apimachinery errors.NewGenericServerResponse
// ("an error on the server (%q) has prevented the request from
// succeeding", reason InternalError), with kubectl's "Error from server
// (InternalError): " prefix (kubectl cmdutil.StandardErrorMessage).
// TestAPIServerProbeThroughRealKubectl pins this against a real kubectl.
func healthAnswer(s State, endpoint, args string) Command {
	body, code := APIServerHealth(s, endpoint)
	c := Command{Name: "kubectl", Path: KubectlPath, Args: args, Out: body}
	if code != 200 {
		c.RC = 1
		c.Out = fmt.Sprintf("Error from server (InternalError): an error on the server (%q) has prevented the request from succeeding\n", strings.TrimSpace(body))
	}
	return c
}

// setAPIServerHealth makes this server's kubectl answer /readyz and
// /livez from its own API server's state: rke2.yaml points at
// 127.0.0.1:6443, so each server's kubectl asks its own kube-apiserver,
// and each instance answers for itself.
func setAPIServerHealth(s *State) {
	s.SetCommand(healthAnswer(*s, "readyz", KubectlReadyz))
	s.SetCommand(healthAnswer(*s, "livez", KubectlLivez))
}

// WithAPIServerChecksFailing makes this node's kube-apiserver fail the
// named health checks (e.g. "etcd", which /readyz and /livez both run, or
// "etcd-readiness", which only /readyz does).
func WithAPIServerChecksFailing(s State, checks ...string) State {
	s.APIServerFailing = append(slices.Clone(s.APIServerFailing), checks...)
	setAPIServerHealth(&s)
	return s
}

// WithKubeProxyRBACBroken removes the system:node-proxier binding, so
// kube-proxy really has none of its rules (can-i says no to each).
func WithKubeProxyRBACBroken(s State) State {
	for _, r := range nodeProxierRules {
		s = WithKubeProxyCanI(s, r.Verb, r.Resource, false)
	}
	s.SetCommand(Command{Name: "kubectl", Path: KubectlPath, Args: KubectlCRB, RC: 1,
		Out: "system:kube-proxy\tsystem:kube-proxy\n" +
			`Error from server (NotFound): clusterrolebindings.rbac.authorization.k8s.io "system:node-proxier" not found` + "\n"})
	return s
}

func isServer(s State) bool {
	_, ok := s.Units["rke2-server"]
	return ok
}

func listening(s State, port int) bool {
	for _, p := range s.Listening {
		if p == port {
			return true
		}
	}
	return false
}

// rke2LivenessFailureThreshold is the liveness failureThreshold of the
// static pods RKE2 writes, kube-proxy's among them, unless
// control-plane-probe-configuration changes it (rancher/rke2
// pkg/podtemplate/config.go, defaultProbeConf).
const rke2LivenessFailureThreshold = 8

// WithCluster returns a copy of fleet whose server members carry RKE2's
// kubectl and rke2.yaml, answering for the whole fleet: a member with RKE2
// installed is a Kubernetes node (Ready while its rke2 unit is active), one
// listening on 10256 has a kube-proxy mirror pod, Running 1/1 where its
// /healthz answers 200 and CrashLoopBackOff with climbing restarts
// elsewhere. A Linux member has a pod of each CNI agent its
// /etc/cni/net.d says it runs (cniAgents), in CrashLoopBackOff where the
// agent is not alive (WithCNIAgentCrashLoop). The first crash-looping pod's previous log holds the seed's
// transient RBAC denial, while can-i says yes: the red herring.
func WithCluster(fleet []Member) []Member {
	var nodes, pods, events strings.Builder
	agentPods := map[string]string{}
	var logs []Command
	server := ""
	herring := false
	for i, m := range fleet {
		s := m.State
		if s.RKE2Version == "" {
			continue // not a Kubernetes node
		}
		if server == "" && isServer(s) {
			server = s.RKE2Version
		}
		name := K8sNodeName(m.Name)
		ip := nodeIP(i)
		ready := "Unknown" // the kubelet stopped posting status
		if s.Units["rke2-server"].Active == "active" || s.Units["rke2-agent"].Active == "active" || s.Units[windowsService].Active == "active" {
			ready = "True"
		}
		// kubelet labels its node kubernetes.io/os with its runtime.GOOS
		// and reports the same as nodeInfo.operatingSystem (kubernetes
		// pkg/kubelet/kubelet_node_status.go initialNode,
		// nodestatus.MachineInfo).
		goos := s.KubeletOS
		if goos == "" {
			goos = "linux"
		}
		labels := map[string]string{
			"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/instance-type": "rke2", "beta.kubernetes.io/os": goos,
			"kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name, "kubernetes.io/os": goos,
			"node.kubernetes.io/instance-type": "rke2",
		}
		if isServer(s) {
			for _, r := range []string{"control-plane", "master"} {
				labels["node-role.kubernetes.io/"+r] = "true"
			}
		}
		// k3s labels a Node node-role.kubernetes.io/etcd=true only where
		// etcd runs (pkg/util ETCDRoleLabelKey, set by pkg/etcd's node
		// handler): not on a server started with disable-etcd.
		if runsEtcd(s) {
			labels["node-role.kubernetes.io/etcd"] = "true"
		}
		// kubectl prints a map in a jsonpath template as compact JSON with
		// sorted keys (what kubectl shows; the client-go util/jsonpath code
		// path was not checked).
		lj, err := json.Marshal(labels)
		if err != nil {
			panic(err) // a map of strings always marshals
		}
		fmt.Fprintf(&nodes, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, ready, s.RKE2Version, s.RKE2Version, ip, lj, goos)
		// The agents' DaemonSets select kubernetes.io/os: linux nodes
		// (rke2-canal daemonset.yaml nodeSelector).
		if goos == "linux" {
			for k, v := range agentPodLines(s, name, 17+2*i) {
				agentPods[k] += v
			}
		}
		if isServer(s) {
			for _, c := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
				fmt.Fprintf(&pods, "%s-%s\t%s\tRunning\t%s\t\t\t\t\t\t\t\t\t\t\n", c, name, name, c)
			}
		}
		if !listening(s, 10256) {
			continue // kube-proxy never started: no mirror pod
		}
		pod := KubeProxyPod(m.Name)
		// The current log of a running kube-proxy, healthy or about to be
		// killed by its liveness probe alike: the seed's "the logs look
		// normal" (a late sync logs nothing at the default verbosity).
		logs = append(logs, Command{Name: "kubectl", Path: KubectlPath, Args: KubectlCurrentLogs(pod), Out: kubeProxyStartLog(ip)})
		if s.HealthHTTP["/healthz"].Code == 200 {
			fmt.Fprintf(&pods, "%s\t%s\tRunning\tkube-proxy\t\ttrue\t0\t\t2026-12-02T09:12:%02dZ\t\t\t\t/healthz\t/healthz\n", pod, name, i)
			continue
		}
		restarts := 14 + 3*i
		if s.HealthHTTP["/healthz"].Code == 503 {
			// kubelet's prober records each failed liveness probe as a
			// Warning event, reason Unhealthy, "Liveness probe failed: "
			// + the HTTP prober's output (kubernetes pkg/kubelet/prober/
			// prober.go, pkg/probe/http/http.go DoHTTPProbe), folded into
			// one event whose count climbs (client-go tools/record
			// events_cache.go). It restarts the container after
			// failureThreshold failures in a row: 8 in the kube-proxy
			// static pod RKE2 writes (rancher/rke2
			// pkg/podtemplate/config.go, defaultProbeConf Liveness, taken
			// from kubeadm's staticpod utils; the API's own default is 3).
			fmt.Fprintf(&events, "%s\t%d\tLiveness probe failed: HTTP probe failed with statuscode: 503\n", pod, rke2LivenessFailureThreshold*restarts)
		}
		fmt.Fprintf(&pods, "%s\t%s\tRunning\tkube-proxy\t\tfalse\t%d\tCrashLoopBackOff\t\t\tError\t2\t/healthz\t/healthz\n", pod, name, restarts)
		log := kubeProxyStartLog(ip)
		if !herring {
			herring = true
			log = fmt.Sprintf(`E1202 09:41:02.118327       1 server.go:666] "Failed to retrieve node info" err="nodes \"%s\" is forbidden: User \"system:kube-proxy\" cannot get resource \"nodes\" in API group \"\" at the cluster scope"`+"\n", name) + log
		}
		logs = append(logs, Command{Name: "kubectl", Path: KubectlPath, Args: KubectlPreviousLogs(pod), Out: log})
	}
	if len(fleet) > 0 {
		// A pod of another component, which the probe must leave out.
		pods.WriteString("rke2-coredns-rke2-coredns-6b9548f79f-x7k2p\t" + K8sNodeName(fleet[0].Name) + "\tRunning\t\tkube-dns\t\t\t\t\t\t\t\t\t\n")
		// Its readiness probe failed once while it started: an event of
		// another pod and another probe, which the probe must not count.
		events.WriteString("rke2-coredns-rke2-coredns-6b9548f79f-x7k2p\t1\tReadiness probe failed: HTTP probe failed with statuscode: 503\n")
	}
	if server == "" {
		server = "v1.31.4+rke2r1"
	}
	objs := clusterObjects(fleet)
	answers := append([]Command{
		{Args: KubectlVersion, Out: versionJSON(server)},
		{Args: KubectlNodes, Out: nodes.String()},
		{Args: KubectlPods, Out: pods.String()},
		{Args: KubectlEvents, Out: events.String()},
		{Args: KubectlAgentPodsK8sApp, Out: agentPods["k8s-app"]},
		{Args: KubectlAgentPodsApp, Out: agentPods["app"]},
		// RKE2 runs kube-proxy as a static pod, not a DaemonSet: the API's
		// NotFound status message (apimachinery errors.NewNotFound,
		// `<resource>.<group> "<name>" not found`) behind kubectl's prefix.
		{Args: KubectlDS, RC: 1, Out: `Error from server (NotFound): daemonsets.apps "kube-proxy" not found` + "\n"},
		{Args: KubectlCRB, Out: "system:kube-proxy\tsystem:kube-proxy\nsystem:node-proxier\tsystem:node-proxier\n"},
		{Args: KubectlDrainPods, Out: objs.podLines()},
		{Args: KubectlPDBs, Out: objs.pdbLines()},
		{Args: KubectlWorkloads, Out: objs.workloadLines()},
		{Args: KubectlETCDSnapshotFiles, Out: etcdSnapshotFileLines(fleet, time.Now())},
	}, logs...)
	for _, r := range nodeProxierRules {
		answers = append(answers, canIAnswer(KubectlCanIFor(r.Verb, r.Resource), true))
	}
	answers = append(answers, canIAnswer(kubectlCanIAny, false))
	out := make([]Member, len(fleet))
	for i, m := range fleet {
		out[i] = m
		if !isServer(m.State) {
			continue
		}
		s := m.State
		files := make(map[string]string, len(s.Files)+1)
		for k, v := range s.Files {
			files[k] = v
		}
		files[KubeconfigPath] = rke2Kubeconfig
		s.Files = files
		for _, a := range answers {
			a.Name, a.Path = "kubectl", KubectlPath
			s.SetCommand(a)
		}
		// Each server's kubectl asks its own API server (127.0.0.1:6443):
		// its health and metrics are that process's.
		setAPIServerHealth(&s)
		s.SetCommand(Command{Name: "kubectl", Path: KubectlPath, Args: KubectlMetrics, Out: APIServerMetrics(s)})
		out[i].State = s
	}
	etcdMemberLists(out)
	return out
}

// nodeIP is the InternalIP of the fleet's i-th member.
func nodeIP(i int) string { return fmt.Sprintf("10.0.0.%d", 11+i) }

// kubeProxyStartLog is a clean kube-proxy 1.31 start in klog's header
// format ("Lmmdd hh:mm:ss.uuuuuu threadid file:line] msg", k8s.io/klog
// formatHeader) with structured key="value" pairs: the seed's "the logs
// looked normal". The injected RBAC denial carries the API's forbidden
// message (k8s.io/apiserver endpoints/handlers/responsewriters
// forbiddenMessage: `User "X" cannot VERB resource "R" in API group "" at
// the cluster scope`).
func kubeProxyStartLog(ip string) string {
	return `I1202 09:41:01.902114       1 server_linux.go:66] "Using iptables proxy"
I1202 09:41:02.120904       1 server.go:677] "Successfully retrieved node IP(s)" IPs=["` + ip + `"]
I1202 09:41:02.123411       1 server_linux.go:146] "No iptables support for family" ipFamily="IPv6"
I1202 09:41:02.125501       1 server.go:243] "kube-proxy running in dual-stack mode" primary ipFamily="IPv4"
I1202 09:41:02.126002       1 server_linux.go:169] "Using iptables Proxier"
I1202 09:41:02.131877       1 server.go:483] "Version info" version="v1.31.4+rke2r1"
I1202 09:41:02.134120       1 config.go:199] "Starting service config controller"
I1202 09:41:02.134161       1 shared_informer.go:313] Waiting for caches to sync for service config
I1202 09:41:02.134190       1 config.go:105] "Starting endpoint slice config controller"
I1202 09:41:02.134204       1 shared_informer.go:313] Waiting for caches to sync for endpoint slice config
I1202 09:41:02.134772       1 config.go:328] "Starting node config controller"
I1202 09:41:02.234520       1 shared_informer.go:320] Caches are synced for node config
I1202 09:41:02.234561       1 shared_informer.go:320] Caches are synced for service config
I1202 09:41:02.234597       1 shared_informer.go:320] Caches are synced for endpoint slice config
`
}

// versionJSON is kube-apiserver's /version, as kubectl get --raw prints it:
// version.Info indented by two spaces (k8s.io/apiserver
// responsewriters.WriteRawJSON uses json.MarshalIndent(obj, "", "  ")).
func versionJSON(git string) string {
	minor := "31"
	if v := strings.SplitN(strings.TrimPrefix(git, "v"), ".", 3); len(v) >= 2 {
		minor = v[1]
	}
	return `{
  "major": "1",
  "minor": "` + minor + `",
  "gitVersion": "` + git + `",
  "gitCommit": "48d9a5a4b0ca3bb1d8e1f87e1e8b48c2da14e3e0",
  "gitTreeState": "clean",
  "buildDate": "2024-12-10T18:48:04Z",
  "goVersion": "go1.22.9 X:boringcrypto",
  "compiler": "gc",
  "platform": "linux/amd64"
}`
}
