package audit

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/result"
)

// clusterEndRe is the end marker of the cluster probe in a bundle's
// output (probe.ParseOutput's "@@FA:<nonce>:end:<id>:<rc>").
var clusterEndRe = regexp.MustCompile(`(?m)^(@@FA:[^:\n]+:end:cluster:)[0-9-]+\n`)

// editTransport runs the real bundle on the simulated node and hands back
// its output through edit: what the node printed, changed where only the
// framing of the probe's end can be (an exit status, a lost marker).
type editTransport struct {
	*shTransport
	edit func([]byte) []byte
}

func (t *editTransport) Open(ctx context.Context, h Target) (Session, error) {
	s, err := t.shTransport.Open(ctx, h)
	if err != nil {
		return nil, err
	}
	return &editSession{Session: s, edit: t.edit}, nil
}

type editSession struct {
	Session
	edit func([]byte) []byte
}

func (s *editSession) Exec(ctx context.Context, script Script) (ExecResult, error) {
	res, err := s.Session.Exec(ctx, script)
	res.Stdout = s.edit(res.Stdout)
	return res, err
}

// TestFailedClusterProbeFailsTheAudit: the cluster probe printed its
// view (kubectl ok, API ok) and then did not finish: killed by its
// watchdog, exited non-zero, or lost its end marker. Before, the view was
// taken as ok, "Cluster: ok", and the gate passed with the Kubernetes
// checks skipped. A cluster view that did not finish is a failed audit of
// the cluster: status failed, the probe named, the gate exits 3 unless
// --allow-unreachable.
func TestFailedClusterProbeFailsTheAudit(t *testing.T) {
	for _, tc := range []struct {
		name string
		// hang makes kubectl's pod list never answer, with the cluster
		// probe's timeout cut to a few seconds: a real watchdog kill.
		hang bool
		edit func([]byte) []byte
		why  string
	}{
		{name: "watchdog kill (kubectl pods hangs)", hang: true, why: "probe cluster: timeout (exit 137)"},
		{name: "exit 137", edit: func(b []byte) []byte { return clusterEndRe.ReplaceAll(b, []byte("${1}137\n")) }, why: "probe cluster: timeout (exit 137)"},
		{name: "exit 2", edit: func(b []byte) []byte { return clusterEndRe.ReplaceAll(b, []byte("${1}2\n")) }, why: "probe cluster: failed (exit 2)"},
		{name: "end marker lost", edit: func(b []byte) []byte { return clusterEndRe.ReplaceAll(b, nil) }, why: "probe cluster: truncated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fleet := nodesim.WithCluster([]nodesim.Member{
				{Name: "etcd-1", Roles: []string{"etcd"}, State: nodesim.Healthy("etcd-1", true)},
				{Name: "worker-1", Roles: []string{"worker"}, State: nodesim.Healthy("worker-1", false)},
			})
			probes, err := probe.BuiltinProbes()
			if err != nil {
				t.Fatal(err)
			}
			if tc.hang {
				// kubectl's own --request-timeout is not reached: the
				// probe's watchdog (probe header timeout) is what ends it.
				fleet[0].State.SetCommand(nodesim.Command{Name: "kubectl", Path: nodesim.KubectlPath, Args: nodesim.KubectlPods, Hang: true})
				for i := range probes {
					if probes[i].Scope == probe.ScopeCluster {
						probes[i].Timeout = 3 * time.Second
					}
				}
			}
			inv, sh := simulate(t, fleet)
			var tr Transport = sh
			if tc.edit != nil {
				tr = &editTransport{shTransport: sh, edit: tc.edit}
			}
			checks, err := check.BuiltinChecks()
			if err != nil {
				t.Fatal(err)
			}
			r, err := Run(context.Background(), RunOptions{Fleet: inv, Transport: tr, Forks: 2, NodeTimeout: time.Minute,
				Rules: Rules{Probes: probes, Checks: checks, Gate: GatePolicy{FailOn: result.SeverityCritical}}})
			if err != nil {
				t.Fatal(err)
			}
			c := r.Cluster
			if c == nil || c.Status != result.ClusterFailed || !strings.Contains(c.Message, tc.why) {
				t.Fatalf("cluster = %+v\nwant failed, message naming %q", c, tc.why)
			}
			if r.Gate.ExitCode != result.ExitUnaudited || !strings.Contains(strings.Join(r.Gate.Reasons, "; "), "cluster") {
				t.Errorf("gate exit %d, reasons %q; want 3 naming the cluster view", r.Gate.ExitCode, r.Gate.Reasons)
			}
			allowed := EvaluateGate(r, GatePolicy{FailOn: result.SeverityCritical, AllowUnreachable: true})
			if allowed.ExitCode != result.ExitOK || !strings.Contains(strings.Join(allowed.Reasons, "; "), "allowed by --allow-unreachable") {
				t.Errorf("with --allow-unreachable: exit %d, reasons %q", allowed.ExitCode, allowed.Reasons)
			}
		})
	}
}
