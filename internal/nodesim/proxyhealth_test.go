package nodesim

import (
	"strings"
	"testing"
	"time"
)

// TestProxyHealthUpstreamSemantics pins the simulated health server to
// kube-proxy's (pkg/proxy/healthcheck/proxy_health.go): the combinations of
// version, sync state and node eligibility, and what each endpoint answers.
func TestProxyHealthUpstreamSemantics(t *testing.T) {
	cases := []struct {
		name             string
		minor            int
		late, ineligible bool
		healthz, livez   int
		eligibleInBody   string // "" = no nodeEligible in the /healthz body
		lastUpdatedIsNow bool
	}{
		{"healthy", 31, false, false, 200, 200, "true", true},
		{"sync loop late", 31, true, false, 503, 503, "true", false},
		{"node being deleted", 31, false, true, 503, 200, "false", true},
		{"node being deleted with a late sync loop", 31, true, true, 503, 503, "false", false},
		{"1.28, the first with /livez", 28, true, false, 503, 503, "true", false},
		{"1.27 healthy: no /livez", 27, false, false, 200, 404, "", true},
		{"1.27 late", 27, true, false, 503, 404, "", false},
		{"1.27 ignores the Node", 27, false, true, 200, 404, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := LateProxy(20 * time.Minute)
			p.Minor, p.SyncLate, p.Ineligible = c.minor, c.late, c.ineligible
			a := p.Answers()
			hz, lz := a["/healthz"], a["/livez"]
			if hz.Code != c.healthz || lz.Code != c.livez {
				t.Fatalf("healthz %d livez %d, want %d %d", hz.Code, lz.Code, c.healthz, c.livez)
			}
			for _, want := range []string{`"nodeEligible": true`, `"nodeEligible": false`} {
				if has := strings.Contains(hz.Body, want); has != (c.eligibleInBody != "" && strings.HasSuffix(want, c.eligibleInBody)) {
					t.Errorf("healthz body %s: contains %s = %v", hz.Body, want, has)
				}
			}
			if strings.Contains(lz.Body, "nodeEligible") {
				t.Errorf("livez body carries nodeEligible: %s", lz.Body)
			}
			last, now := between(hz.Body, `"lastUpdated": "`, `"`), between(hz.Body, `"currentTime": "`, `"`)
			if (last == now) != c.lastUpdatedIsNow {
				t.Errorf("lastUpdated %q currentTime %q: equal = %v, want %v", last, now, last == now, c.lastUpdatedIsNow)
			}
			if !strings.Contains(now, " m=+") {
				t.Errorf("currentTime %q lacks the monotonic reading time.Now() prints", now)
			}
		})
	}
}

// An eligible node never serves /healthz 503 with /livez 200: that is the
// answer of a node being deleted only, whatever the sync state.
func TestProxyHealthEligibleNeverSplits(t *testing.T) {
	for _, minor := range []int{27, 28, 31, 34} {
		for _, late := range []bool{false, true} {
			p := HealthyProxy()
			p.Minor, p.SyncLate = minor, late
			a := p.Answers()
			if a["/healthz"].Code == 503 && a["/livez"].Code == 200 {
				t.Errorf("eligible node, 1.%d, late=%v: healthz 503 with livez 200", minor, late)
			}
		}
	}
}

func between(s, from, to string) string {
	_, rest, ok := strings.Cut(s, from)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, to)
	return v
}
