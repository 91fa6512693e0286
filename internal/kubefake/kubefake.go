// Package kubefake serves the one request fleet-audit discover makes of a
// Kubernetes API server, GET /api/v1/nodes, so tests can drive a real
// kubectl against a cluster that does not exist.
//
// It speaks TLS on 127.0.0.1 with httptest's certificate, which the
// kubeconfig it writes trusts by its CA data, and wants a bearer token, so
// a test sees kubectl use the kubeconfig's cluster, credentials and
// context, not just reach a port. What it serves follows the API server:
// the NodeList body is the caller's (k8s.io/api core/v1 types.go), an
// error is a metav1.Status (k8s.io/apimachinery pkg/apis/meta/v1
// types.go) with the HTTP code as its code, and /version is a version.Info
// (k8s.io/apimachinery pkg/version/types.go), which some kubectl builds
// ask for before anything else (the Google Cloud SDK's version-picking
// kubectl dispatcher does).
package kubefake

import (
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
)

// Token is the bearer token the server accepts.
const Token = "kubefake-token"

// The contexts of the kubeconfig WriteKubeconfig writes: Context (the
// current one) has Token; WrongContext has another token, so the server
// answers it 401 Unauthorized.
const (
	Context      = "kubefake"
	WrongContext = "kubefake-wrong-token"
)

// Server is a running fake API server.
type Server struct {
	srv   *httptest.Server
	nodes []byte
	state Cluster

	mu       sync.Mutex
	requests []string
}

// Start serves nodes, a NodeList's JSON, until Close.
func Start(nodes []byte) *Server {
	return StartCluster(Cluster{Nodes: nodes})
}

// Cluster is the state a Server answers from: each list is the JSON the
// API server sends for a list of every namespace (a PodList, a
// PodDisruptionBudgetList...: k8s.io/api core/v1, policy/v1, apps/v1
// types.go), nil for an empty list; Metrics is the Prometheus text of
// GET /metrics; Health answers the health endpoints by path ("/readyz",
// "/livez"), the query ignored.
type Cluster struct {
	Nodes, Pods, PDBs, Deployments, StatefulSets []byte
	Metrics                                      string
	Health                                       map[string]HealthAnswer
}

// HealthAnswer is a health endpoint's answer: its code and the text body
// k8s.io/apiserver pkg/server/healthz/healthz.go handleRootHealth writes,
// with 200, or, when a check failed, through http.Error with 500 (which
// sets text/plain and nosniff, and appends a newline).
type HealthAnswer struct {
	Code int
	Body string
}

// StartCluster serves c until Close, with the discovery documents kubectl
// resolves "pods", "poddisruptionbudgets.policy", "deployments.apps" and
// "statefulsets.apps" through before it lists them.
func StartCluster(c Cluster) *Server {
	s := &Server{nodes: c.Nodes, state: c}
	s.srv = httptest.NewTLSServer(http.HandlerFunc(s.serve))
	return s
}

// The legacy (unaggregated) discovery documents: APIVersions at /api,
// APIGroupList at /apis and an APIResourceList per group version
// (k8s.io/apimachinery pkg/apis/meta/v1 types.go). kubectl asks for the
// aggregated form first and takes these when the server answers plain JSON
// (client-go discovery/discovery_client.go, GroupsAndMaybeResources).
var discovery = map[string]any{
	"/api": map[string]any{"kind": "APIVersions", "versions": []string{"v1"},
		"serverAddressByClientCIDRs": []any{map[string]string{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:6443"}}},
	"/apis": map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": []any{
		group("apps", "v1"), group("policy", "v1"),
	}},
	"/api/v1": resources("v1", resource("nodes", "Node", false, "no"), resource("pods", "Pod", true, "po")),
	"/apis/apps/v1": resources("apps/v1", resource("deployments", "Deployment", true, "deploy"),
		resource("statefulsets", "StatefulSet", true, "sts")),
	"/apis/policy/v1": resources("policy/v1", resource("poddisruptionbudgets", "PodDisruptionBudget", true, "pdb")),
}

func group(name, version string) map[string]any {
	gv := map[string]string{"groupVersion": name + "/" + version, "version": version}
	return map[string]any{"name": name, "versions": []any{gv}, "preferredVersion": gv}
}

func resources(gv string, rs ...map[string]any) map[string]any {
	return map[string]any{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": rs}
}

func resource(name, kind string, namespaced bool, short string) map[string]any {
	return map[string]any{"name": name, "singularName": "", "namespaced": namespaced, "kind": kind,
		"verbs": []string{"get", "list", "watch"}, "shortNames": []string{short}}
}

// lists are the list paths, each with the kind of its list.
var lists = map[string]string{
	"/api/v1/pods":                         "PodList",
	"/apis/policy/v1/poddisruptionbudgets": "PodDisruptionBudgetList",
	"/apis/apps/v1/deployments":            "DeploymentList",
	"/apis/apps/v1/statefulsets":           "StatefulSetList",
}

func (s *Server) list(path string) []byte {
	var b []byte
	switch path {
	case "/api/v1/pods":
		b = s.state.Pods
	case "/apis/policy/v1/poddisruptionbudgets":
		b = s.state.PDBs
	case "/apis/apps/v1/deployments":
		b = s.state.Deployments
	case "/apis/apps/v1/statefulsets":
		b = s.state.StatefulSets
	}
	if b == nil {
		b = []byte(`{"kind":"` + lists[path] + `","apiVersion":"v1","metadata":{},"items":[]}`)
	}
	return b
}

// URL is the server's https://127.0.0.1:PORT.
func (s *Server) URL() string { return s.srv.URL }

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Requests are "METHOD PATH" of every request answered with Token, in order.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+Token {
		status(w, http.StatusUnauthorized, "Unauthorized", "Unauthorized")
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, r.Method+" "+r.URL.Path)
	s.mu.Unlock()
	switch {
	case r.Method != http.MethodGet:
		status(w, http.StatusMethodNotAllowed, "MethodNotAllowed", "the server does not allow this method on the requested resource")
	case r.URL.Path == "/version":
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"major": "1", "minor": "32", "gitVersion": "v1.32.5+rke2r1", "platform": "linux/amd64"})
	case r.URL.Path == "/api/v1/nodes":
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(s.nodes)
	case discovery[r.URL.Path] != nil:
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(discovery[r.URL.Path])
	case lists[r.URL.Path] != "":
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(s.list(r.URL.Path))
	case s.state.Health[r.URL.Path].Code != 0:
		a := s.state.Health[r.URL.Path]
		if a.Code != http.StatusOK {
			http.Error(w, a.Body, a.Code)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, _ = w.Write([]byte(a.Body))
	case r.URL.Path == "/metrics":
		// The text exposition format (k8s.io/component-base/metrics
		// legacyregistry handler, prometheus expfmt).
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = w.Write([]byte(s.state.Metrics))
	default:
		status(w, http.StatusNotFound, "NotFound", "the server could not find the requested resource")
	}
}

func status(w http.ResponseWriter, code int, reason, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{},
		"status": "Failure", "message": message, "reason": reason, "code": code,
	})
}

// WriteKubeconfig writes a kubeconfig (mode 0600, as kubectl writes its
// own) for the server, with the contexts Context (current) and
// WrongContext.
func (s *Server) WriteKubeconfig(path string) error {
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.srv.Certificate().Raw})
	cfg := map[string]any{
		"apiVersion": "v1", "kind": "Config", "current-context": Context,
		"clusters": []any{map[string]any{"name": "kubefake", "cluster": map[string]any{
			"server": s.srv.URL, "certificate-authority-data": ca,
		}}},
		"users": []any{
			map[string]any{"name": "good", "user": map[string]any{"token": Token}},
			map[string]any{"name": "bad", "user": map[string]any{"token": "not-" + Token}},
		},
		"contexts": []any{
			map[string]any{"name": Context, "context": map[string]any{"cluster": "kubefake", "user": "good"}},
			map[string]any{"name": WrongContext, "context": map[string]any{"cluster": "kubefake", "user": "bad"}},
		},
	}
	// JSON is YAML, and []byte marshals as the base64 the -data keys hold.
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	return nil
}
