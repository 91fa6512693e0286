package nodesim

import (
	"fmt"
	"net/http"
	"time"
)

// ProxyHealth is the state of kube-proxy's health server on 127.0.0.1:10256,
// and Answers serves /healthz and /livez from it exactly as kube-proxy's
// ProxyHealthServer does (kubernetes pkg/proxy/healthcheck/proxy_health.go,
// healthzHandler.ServeHTTP and livezHandler.ServeHTTP, 1.28 and later):
//
//   - both endpoints run the same isHealthy test: unhealthy while an update
//     queued for some IP family has waited longer than healthTimeout without
//     a successful sync (QueuedUpdate without Updated);
//   - /healthz is additionally unhealthy while the node is not eligible
//     (SyncNode: the Node has a deletionTimestamp or the
//     ToBeDeletedByClusterAutoscaler taint);
//   - an unhealthy answer is 503, a healthy one 200 with lastUpdated set to
//     currentTime; the body is JSON, and only /healthz carries nodeEligible.
//
// So a stuck or failing sync loop answers 503 on both endpoints; /healthz
// 503 with /livez 200 is served only for an ineligible node. Before 1.28
// (KEP-3836, kubernetes PR 116470) there is no /livez (the ServeMux answers
// 404 "404 page not found") and /healthz ignores the Node.
type ProxyHealth struct {
	// Minor is kube-proxy's Kubernetes minor version (31 for v1.31.4).
	Minor int
	// SyncLate: an update has been queued for longer than healthTimeout
	// and not synced (isHealthy false).
	SyncLate bool
	// Ineligible: the Node is being deleted or carries the
	// ToBeDeletedByClusterAutoscaler taint.
	Ineligible bool
	// Started, LastUpdated and Now are kube-proxy's start, its last
	// successful sync and the time of the request.
	Started, LastUpdated, Now time.Time
}

// proxyHealthNow is the Now of every simulated ProxyHealth. The answers
// carry the times relative to it (goTime), and the curl stub turns them
// into the node's clock at request time: kube-proxy's currentTime is the
// node's time, as the sync timestamps of its metrics are.
var proxyHealthNow = time.Date(2026, 12, 2, 10, 0, 1, 200_000_000, time.UTC)

// HealthyProxy is a v1.31 kube-proxy that synced half a second ago.
func HealthyProxy() ProxyHealth {
	return ProxyHealth{Minor: 31, Started: proxyHealthNow.Add(-985 * time.Second),
		LastUpdated: proxyHealthNow.Add(-700 * time.Millisecond), Now: proxyHealthNow}
}

// LateProxy is a v1.31 kube-proxy whose rule syncs have failed for the last
// ago (its last success is that old) while updates keep being queued.
func LateProxy(ago time.Duration) ProxyHealth {
	p := HealthyProxy()
	p.SyncLate = true
	p.LastUpdated = p.Now.Add(-ago)
	return p
}

// Answers returns the two endpoints' answers, keyed by path as HealthHTTP is.
func (p ProxyHealth) Answers() map[string]HTTP {
	healthy := !p.SyncLate
	lastUpdated := p.LastUpdated
	if healthy {
		// "the returned lastUpdated value is 'recent' if the server is
		// healthy" (both handlers).
		lastUpdated = p.Now
	}
	code := func(ok bool) int {
		if ok {
			return http.StatusOK
		}
		return http.StatusServiceUnavailable
	}
	lu, now := p.goTime(lastUpdated), p.goTime(p.Now)
	if p.Minor < 28 {
		// proxier_health.go before KEP-3836: one endpoint, no Node.
		return map[string]HTTP{
			"/healthz": {Code: code(healthy), Body: fmt.Sprintf(`{"lastUpdated": %q,"currentTime": %q}`, lu, now)},
			"/livez":   {Code: http.StatusNotFound, Body: "404 page not found\n"},
		}
	}
	eligible := !p.Ineligible
	return map[string]HTTP{
		"/healthz": {Code: code(healthy && eligible), Body: fmt.Sprintf(`{"lastUpdated": %q,"currentTime": %q, "nodeEligible": %v}`, lu, now, eligible)},
		"/livez":   {Code: code(healthy), Body: fmt.Sprintf(`{"lastUpdated": %q,"currentTime": %q}`, lu, now)},
	}
}

// goTime is what %q prints for a time.Time kube-proxy read from its clock:
// Time.String(), with the monotonic reading ("m=+985.614392118") that
// clock.RealClock's time.Now() carries, counted from the process start.
// The wall clock part is @TIME-<seconds before Now>@, which the curl stub
// prints as Time.String() of that instant; the zero time (no sync ever)
// is printed as it is.
func (p ProxyHealth) goTime(t time.Time) string {
	s := t.String()
	if !t.IsZero() {
		s = "@TIME-" + ftoa(p.Now.Sub(t).Seconds()) + "@"
	}
	if !p.Started.IsZero() && !t.Before(p.Started) {
		s += fmt.Sprintf(" m=+%.9f", t.Sub(p.Started).Seconds())
	}
	return s
}

// WithProxyHealth sets the node's kube-proxy health server to p.
func WithProxyHealth(s State, p ProxyHealth) State {
	s.HealthHTTP = p.Answers()
	return s
}

// WithNodeBeingDeleted is a node on its way out (a deletionTimestamp or the
// cluster autoscaler's ToBeDeletedByClusterAutoscaler taint; cordon and
// drain set neither, kubernetes pkg/proxy/healthcheck/proxy_health.go
// SyncNode): kube-proxy itself is healthy, and only /healthz says 503 with
// nodeEligible false.
func WithNodeBeingDeleted(s State) State {
	p := HealthyProxy()
	p.Ineligible = true
	return WithProxyHealth(s, p)
}

// ClockFacts hold or are measured against the node's clock during the run:
// kube-proxy's health bodies carry its clock, which the curl stub serves
// as the real one, and the age of its last sync where no body carries a
// time is the node's clock minus a timestamp served the same way. On a
// simulated node they move from run to run, so a test comparing two runs
// (a facts fixture, a merge against a single run) sets them aside; what
// the probe makes of them is tested by TestKubeProxyHealthProbe and
// TestKubeProxyMetricsProbe. The age of the newest etcd snapshot is the
// node's clock minus an mtime Build set against the clock (FileAges):
// TestEtcdProbeFacts tests it. The certificates' dates are made against
// the hour the state is built (see certs.go), so their days left stay and
// their dates move.
var ClockFacts = []string{"kubeproxy.metrics.sync_age_seconds", "kubeproxy.healthz.body", "kubeproxy.livez.body",
	"etcd.snapshot.newest_age_seconds", "certs.leaf.not_after", "certs.ca.not_after"}
