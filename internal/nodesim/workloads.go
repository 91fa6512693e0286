package nodesim

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// The objects the drain checks and the deprecated-API check read through
// the API server: pods with their controller, volumes and labels,
// PodDisruptionBudgets, Deployments and StatefulSets, and what each API
// server was asked for. A member's State declares the pods scheduled to it
// and any cluster object (PDBs, workloads); the cluster is the union over
// the fleet. nodesim derives the rest: the mirror pods of RKE2's static
// pods, the CNI agents' DaemonSet pods, and rke2-coredns.

// Pod is a pod scheduled to the member whose State lists it.
type Pod struct {
	Namespace, Name string
	// Phase is the pod's status.phase; "" is Running.
	Phase string
	// OwnerKind and OwnerName are its controller ownerReference (the one
	// with controller: true); "" is a pod no controller manages.
	OwnerKind, OwnerName string
	// Mirror marks the API's mirror of a static pod (annotation
	// kubernetes.io/config.mirror, k8s.io/api core/v1
	// MirrorPodAnnotationKey).
	Mirror bool
	// EmptyDir names its emptyDir volumes.
	EmptyDir []string
	Labels   map[string]string
}

// PDB is a PodDisruptionBudget (policy/v1) with a matchLabels selector.
type PDB struct {
	Namespace, Name    string
	MatchLabels        map[string]string
	DisruptionsAllowed int
}

// Workload is a Deployment or StatefulSet (apps/v1) and its spec.replicas.
type Workload struct {
	Kind, Namespace, Name string
	Replicas              int
}

// DeprecatedAPI is one series of kube-apiserver's
// apiserver_requested_deprecated_apis gauge: a deprecated group/version
// of a resource that a client requested since the API server started
// (k8s.io/apiserver pkg/endpoints/metrics/metrics.go deprecatedRequestGauge;
// RemovedRelease "<major>.<minor>" or "").
type DeprecatedAPI struct {
	Group, Version, Resource, Subresource, RemovedRelease string
}

// The kubectl calls of the cluster probe's drain and deprecated-API part.
const (
	KubectlDrainPods = "* get pods -A -o jsonpath=*"
	KubectlPDBs      = "* get poddisruptionbudgets.policy -A -o jsonpath=*"
	KubectlWorkloads = "* get deployments.apps,statefulsets.apps -A -o jsonpath=*"
	KubectlMetrics   = "* get --raw /metrics"
)

// CoreDNSHash is the pod-template-hash of rke2-coredns' ReplicaSet.
const CoreDNSHash = "6b9548f79f"

// apiPod is a pod and the node it runs on.
type apiPod struct {
	Pod
	Node string
}

// APIObjects is the cluster's state as the API server lists it, one list
// of each kind in its JSON (k8s.io/api core/v1, policy/v1 and apps/v1
// types.go): what kubefake serves a real kubectl.
type APIObjects struct {
	Pods, PDBs, Deployments, StatefulSets []byte
}

type objects struct {
	pods      []apiPod
	pdbs      []PDB
	workloads []Workload
}

// clusterObjects gathers the fleet's objects, in fleet order.
func clusterObjects(fleet []Member) objects {
	var o objects
	var linux []string
	seenPDB, seenWL := map[string]bool{}, map[string]bool{}
	for _, m := range fleet {
		s := m.State
		if s.RKE2Version == "" {
			continue
		}
		name := K8sNodeName(m.Name)
		if s.KubeletOS == "" || s.KubeletOS == "linux" {
			linux = append(linux, name)
		}
		// RKE2's control plane and kube-proxy are static pods: the API
		// shows their mirror pods, named <component>-<node>.
		if isServer(s) {
			for _, c := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
				o.pods = append(o.pods, apiPod{Pod{Namespace: "kube-system", Name: c + "-" + name, Mirror: true,
					Labels: map[string]string{"component": c, "tier": "control-plane"}}, name})
			}
		}
		if listening(s, 10256) {
			o.pods = append(o.pods, apiPod{Pod{Namespace: "kube-system", Name: KubeProxyPod(m.Name), Mirror: true,
				Labels: map[string]string{"component": "kube-proxy", "tier": "control-plane"}}, name})
		}
		if s.KubeletOS == "" || s.KubeletOS == "linux" {
			for _, a := range nodeAgents(s) {
				o.pods = append(o.pods, apiPod{Pod{Namespace: a.namespace, Name: agentPodName(a.ds, name),
					OwnerKind: "DaemonSet", OwnerName: a.ds}, name})
			}
		}
		for _, p := range s.Pods {
			o.pods = append(o.pods, apiPod{p, name})
		}
		for _, p := range s.PDBs {
			if k := p.Namespace + "/" + p.Name; !seenPDB[k] {
				seenPDB[k] = true
				o.pdbs = append(o.pdbs, p)
			}
		}
		for _, w := range s.Workloads {
			if k := w.Kind + "/" + w.Namespace + "/" + w.Name; !seenWL[k] {
				seenWL[k] = true
				o.workloads = append(o.workloads, w)
			}
		}
	}
	// rke2-coredns: a Deployment of 2 replicas on two nodes (its
	// autoscaler keeps at least 2 on a cluster of 2 nodes or more), with
	// an emptyDir-free pod spec (rancher/rke2-charts rke2-coredns
	// deployment.yaml: config-volume is a ConfigMap). A one-node cluster
	// has none here, so that no shape gets a single-replica finding it
	// did not ask for.
	if len(linux) >= 2 {
		o.workloads = append(o.workloads, Workload{"Deployment", "kube-system", "rke2-coredns-rke2-coredns", 2})
		for i, n := range linux[:2] {
			o.pods = append(o.pods, apiPod{Pod{Namespace: "kube-system",
				Name:      fmt.Sprintf("rke2-coredns-rke2-coredns-%s-%c2k%dp", CoreDNSHash, 'a'+i, i),
				OwnerKind: "ReplicaSet", OwnerName: "rke2-coredns-rke2-coredns-" + CoreDNSHash,
				Labels: map[string]string{"k8s-app": "kube-dns", "pod-template-hash": CoreDNSHash}}, n})
		}
	}
	return o
}

// compact is a map as kubectl's jsonpath prints it: compact JSON with
// sorted keys (encoding/json sorts map keys), "" for none.
func compact(m map[string]string) string {
	if len(m) == 0 {
		return ""
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err) // a map of strings always marshals
	}
	return string(b)
}

// podLines, pdbLines and workloadLines are kubectl's output for the
// cluster probe's templates of KubectlDrainPods, KubectlPDBs and
// KubectlWorkloads: a field per {"\t"}, several matches of a filter joined
// by a space, an absent field empty.
func (o objects) podLines() string {
	var b strings.Builder
	for _, p := range o.pods {
		phase := p.Phase
		if phase == "" {
			phase = "Running"
		}
		mirror := ""
		if p.Mirror {
			mirror = "3f5c2b1d8e7a6f4c9b0a1d2e3f4a5b6c" // the static pod's hash, as kubelet sets it
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Namespace, p.Name, p.Node, phase,
			p.OwnerKind, p.OwnerName, mirror, strings.Join(p.EmptyDir, " "), compact(p.Labels))
	}
	return b.String()
}

func (o objects) pdbLines() string {
	var b strings.Builder
	for _, p := range o.pdbs {
		sel := map[string]any{}
		if len(p.MatchLabels) > 0 {
			sel["matchLabels"] = p.MatchLabels
		}
		sj, err := json.Marshal(sel)
		if err != nil {
			panic(err)
		}
		fmt.Fprintf(&b, "%s\t%s\t%d\t%s\t\t%s\n", p.Namespace, p.Name, p.DisruptionsAllowed, compact(p.MatchLabels), sj)
	}
	return b.String()
}

func (o objects) workloadLines() string {
	var b strings.Builder
	// kubectl lists the resources in the order given: deployments first.
	for _, kind := range []string{"Deployment", "StatefulSet"} {
		for _, w := range o.workloads {
			if w.Kind == kind {
				fmt.Fprintf(&b, "%s\t%s\t%s\t%d\n", w.Kind, w.Namespace, w.Name, w.Replicas)
			}
		}
	}
	return b.String()
}

// ClusterAPIObjects is the fleet's objects as the API server's lists.
func ClusterAPIObjects(fleet []Member) APIObjects {
	o := clusterObjects(fleet)
	var pods, pdbs, deps, sts []any
	for _, p := range o.pods {
		meta := map[string]any{"namespace": p.Namespace, "name": p.Name}
		if len(p.Labels) > 0 {
			meta["labels"] = p.Labels
		}
		if p.Mirror {
			meta["annotations"] = map[string]string{"kubernetes.io/config.mirror": "3f5c2b1d8e7a6f4c9b0a1d2e3f4a5b6c"}
		}
		if p.OwnerKind != "" {
			meta["ownerReferences"] = []any{map[string]any{"apiVersion": "apps/v1", "kind": p.OwnerKind, "name": p.OwnerName,
				"uid": "00000000-0000-4000-8000-000000000001", "controller": true, "blockOwnerDeletion": true}}
		}
		var vols []any
		for _, v := range p.EmptyDir {
			vols = append(vols, map[string]any{"name": v, "emptyDir": map[string]any{}})
		}
		// A volume of another kind, which no filter may take for emptyDir.
		vols = append(vols, map[string]any{"name": "kube-api-access", "projected": map[string]any{"sources": []any{}}})
		phase := p.Phase
		if phase == "" {
			phase = "Running"
		}
		pods = append(pods, map[string]any{"metadata": meta,
			"spec": map[string]any{"nodeName": p.Node, "volumes": vols}, "status": map[string]any{"phase": phase}})
	}
	for _, p := range o.pdbs {
		sel := map[string]any{}
		if len(p.MatchLabels) > 0 {
			sel["matchLabels"] = p.MatchLabels
		}
		pdbs = append(pdbs, map[string]any{"metadata": map[string]any{"namespace": p.Namespace, "name": p.Name},
			"spec": map[string]any{"selector": sel}, "status": map[string]any{"disruptionsAllowed": p.DisruptionsAllowed}})
	}
	for _, w := range o.workloads {
		obj := map[string]any{"metadata": map[string]any{"namespace": w.Namespace, "name": w.Name},
			"spec": map[string]any{"replicas": w.Replicas}}
		if w.Kind == "StatefulSet" {
			sts = append(sts, obj)
		} else {
			deps = append(deps, obj)
		}
	}
	list := func(kind, apiVersion string, items []any) []byte {
		if items == nil {
			items = []any{}
		}
		b, err := json.Marshal(map[string]any{"kind": kind, "apiVersion": apiVersion, "metadata": map[string]any{}, "items": items})
		if err != nil {
			panic(err)
		}
		return b
	}
	return APIObjects{
		Pods:         list("PodList", "v1", pods),
		PDBs:         list("PodDisruptionBudgetList", "policy/v1", pdbs),
		Deployments:  list("DeploymentList", "apps/v1", deps),
		StatefulSets: list("StatefulSetList", "apps/v1", sts),
	}
}

// APIServerMetrics is the text of GET /metrics on a server's API server,
// in the Prometheus text format (labels sorted by name, as prometheus
// expfmt writes them), with a series of apiserver_requested_deprecated_apis
// for each deprecated API its State says was requested, and one unrelated
// family a probe must pass over.
func APIServerMetrics(s State) string {
	var b strings.Builder
	b.WriteString("# HELP apiserver_request_total [STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.\n")
	b.WriteString("# TYPE apiserver_request_total counter\n")
	b.WriteString(`apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="cluster",subresource="",verb="LIST",version="v1"} 42` + "\n")
	if len(s.DeprecatedRequests) > 0 {
		b.WriteString("# HELP apiserver_requested_deprecated_apis [STABLE] Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.\n")
		b.WriteString("# TYPE apiserver_requested_deprecated_apis gauge\n")
		reqs := append([]DeprecatedAPI(nil), s.DeprecatedRequests...)
		sort.Slice(reqs, func(i, j int) bool { return reqs[i].Group+reqs[i].Resource < reqs[j].Group+reqs[j].Resource })
		for _, d := range reqs {
			fmt.Fprintf(&b, "apiserver_requested_deprecated_apis{group=%q,removed_release=%q,resource=%q,subresource=%q,version=%q} 1\n",
				d.Group, d.RemovedRelease, d.Resource, d.Subresource, d.Version)
		}
	}
	return b.String()
}
