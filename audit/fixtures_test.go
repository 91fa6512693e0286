package audit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

// A facts fixture is what the real bundle reports on a simulated fleet
// (nodes, statuses, probe runs, the cluster view with its facts joined to
// the nodes), kept in testdata/facts. A full bundle is about 60 processes and a
// few hundred ms of CPU per node, so the tests that only judge (checks, correlation, drift,
// waivers, skew, the cluster join, rollout) read these files and call
// Analyze instead of running shells; TestFactsFixtures is the one test that
// runs each fleet for real and fails until the fixtures are regenerated
// after a probe or nodesim change:
//
//	go test ./audit -run TestFactsFixtures -update

// factScenario is a simulated fleet kept as a facts fixture.
type factScenario struct {
	fleet func() []nodesim.Member
	// probes are the ids of the probes run, nil for every built-in one.
	probes []string
}

// factScenarios names every fleet a judgement test reads. The tables of
// variants live beside the tests that judge them.
func factScenarios() map[string]factScenario {
	m := map[string]factScenario{
		"incident":           {fleet: nodesim.Incident},
		"clean-3":            {fleet: func() []nodesim.Member { return nodesim.Clean(3) }},
		"planted":            {fleet: nodesim.Planted},
		"kubeproxy-modes":    {fleet: kubeProxyModesFleet},
		"kubeproxy-ebpf":     {fleet: kubeProxyEBPFFleet},
		"netfilter-planted":  {fleet: netfilterPlantedFleet, probes: netfilterProbes},
		"kpfree-cilium":      {fleet: func() []nodesim.Member { return kubeProxyFreeFleet(nodesim.WithCiliumKPR, nil) }},
		"kpfree-calico-ebpf": {fleet: func() []nodesim.Member { return kubeProxyFreeFleet(nodesim.WithCalicoEBPF, nil) }},
		"kpfree-cilium-planted": {fleet: func() []nodesim.Member {
			return kubeProxyFreeFleet(nodesim.WithCiliumKPR, kubeProxyFreePlants)
		}},
	}
	add := func(name string, s factScenario) {
		if _, ok := m[name]; ok {
			panic("two facts fixtures named " + name)
		}
		m[name] = s
	}
	for _, c := range hostScenarios {
		add(c.fixture(), factScenario{fleet: c.fleet})
	}
	for _, c := range nmScenarios {
		add(c.fixture(), factScenario{fleet: c.fleet})
	}
	for _, c := range rbacDenialScenarios {
		add(c.fixture(), factScenario{fleet: c.fleet})
	}
	for _, c := range cniScenarios {
		add(c.fixture(), factScenario{fleet: c.fleet, probes: cniProbes})
	}
	for name, s := range osScenarios() {
		add(name, s)
	}
	for name, fleet := range cniAgentScenarios() {
		add(name, factScenario{fleet: fleet, probes: cniAgentProbes})
	}
	return m
}

// fixtureName turns a test case's name into a file name.
func fixtureName(prefix, name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	return prefix + "-" + strings.Trim(b.String(), "-")
}

// factsFixture is the part of a report the probes give, before judgement.
type factsFixture struct {
	Nodes   []result.Node   `json:"nodes"`
	Cluster *result.Cluster `json:"cluster,omitempty"`
}

func fixturePath(name string) string { return filepath.Join("testdata", "facts", name+".json") }

// encodeFixture keeps what the probes gave: timings, which change from run
// to run and are judged by nothing, are left out.
func encodeFixture(r *result.Report) ([]byte, error) {
	f := factsFixture{Nodes: slices.Clone(r.Nodes), Cluster: r.Cluster}
	for i := range f.Nodes {
		f.Nodes[i].DurationSeconds = 0
	}
	b, err := json.MarshalIndent(f, "", " ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// fixtureReport returns the unjudged report of fixture name: a fresh copy
// the caller may change.
func fixtureReport(t testing.TB, name string) *result.Report {
	t.Helper()
	if _, ok := factScenarios()[name]; !ok {
		t.Fatalf("no facts fixture %q in factScenarios", name)
	}
	b, err := os.ReadFile(fixturePath(name))
	if err != nil {
		t.Fatalf("%v (go test ./audit -run TestFactsFixtures -update writes it)", err)
	}
	var f factsFixture
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", fixturePath(name), err)
	}
	return &result.Report{SchemaVersion: result.SchemaVersion, Tool: result.Tool{Name: "fleet-audit"}, Inventory: "sim",
		StartedAt: time.Now().UTC(), FinishedAt: time.Now().UTC(), Nodes: f.Nodes, Cluster: f.Cluster}
}

// fixtureRules are the rules Run judges scenario name with: its probes in
// Run's order (node probes, then cluster probes), every built-in check, a
// gate failing on critical findings.
func fixtureRules(t testing.TB, name string) Rules {
	t.Helper()
	all, err := probe.BuiltinProbes()
	if err != nil {
		t.Fatal(err)
	}
	ids := factScenarios()[name].probes
	var ps []probe.Probe
	for _, p := range all {
		if ids == nil || slices.Contains(ids, p.ID) {
			ps = append(ps, p)
		}
	}
	if ids != nil && len(ps) != len(ids) {
		t.Fatalf("fixture %s runs probes %v; the built-in ones are %d of them", name, ids, len(ps))
	}
	nodeProbes, clusterProbes := probe.SplitScope(ps)
	checks, err := check.BuiltinChecks()
	if err != nil {
		t.Fatal(err)
	}
	return Rules{Probes: append(nodeProbes, clusterProbes...), Checks: checks, Gate: GatePolicy{FailOn: result.SeverityCritical}}
}

// judgeFixture judges fixture name as Run would, after edit (if any) has
// changed the report or the rules (a target version, waivers, a subset of
// checks). No shell runs.
func judgeFixture(t testing.TB, name string, edit func(*result.Report, *Rules)) *result.Report {
	t.Helper()
	r := fixtureReport(t, name)
	rules := fixtureRules(t, name)
	if edit != nil {
		edit(r, &rules)
	}
	Analyze(r, rules)
	return r
}

// TestFactsFixtures runs the real bundle on every fixture fleet, once, and
// holds the fixture to what it gave (a node whose nodesim state an earlier
// fleet's node had gets that real run's output, see onceTransport); it also judges the run's nodes with
// fixtureRules and holds that to Run's own judgement, so a test reading a
// fixture sees what an end to end run would. With -update it rewrites the fixtures instead: review
// the diff, it is what the probe or nodesim change did to the facts.
func TestFactsFixtures(t *testing.T) {
	testtools.SkipShort(t, "runs the full probe bundle on every fixture fleet")
	scenarios := factScenarios()
	names := make([]string, 0, len(scenarios))
	for name := range scenarios {
		names = append(names, name)
	}
	slices.Sort(names)
	if *update {
		// A fixture no scenario names any more would rot unseen.
		old, _ := filepath.Glob(filepath.Join("testdata", "facts", "*.json"))
		for _, p := range old {
			if _, ok := scenarios[strings.TrimSuffix(filepath.Base(p), ".json")]; !ok {
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	bundles := &bundleCache{runs: map[string]*bundleRun{}}
	t.Cleanup(func() {
		t.Logf("%d scripts asked for, %d run on a simulated node, the rest the output of an identical state's run", bundles.asked, bundles.ran)
	})
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			tr := simulateOnce(t, scenarios[name].fleet(), bundles)
			inv := tr.inv
			rules := fixtureRules(t, name)
			live, err := Run(context.Background(), RunOptions{Fleet: inv, Transport: tr, Forks: 4, NodeTimeout: time.Minute,
				Rules: Rules{Probes: rules.Probes, Checks: rules.Checks, Gate: rules.Gate}})
			if err != nil {
				t.Fatal(err)
			}
			// Judging the run's nodes with fixtureRules is judging them as
			// Run did: what every test reading a fixture relies on.
			rejudged := &result.Report{Nodes: live.Nodes, Cluster: live.Cluster, StartedAt: live.StartedAt}
			Analyze(rejudged, rules)
			for _, part := range []struct {
				what        string
				live, fixed any
			}{
				{"checks", live.Checks, rejudged.Checks},
				{"findings", live.Findings, rejudged.Findings},
				{"drift", live.Drift, rejudged.Drift},
				{"gate", live.Gate, rejudged.Gate},
			} {
				l, _ := json.Marshal(part.live)
				f, _ := json.Marshal(part.fixed)
				if !bytes.Equal(l, f) {
					t.Errorf("%s judged with fixtureRules differ from the run's:\n%s", part.what, testtools.FirstDiff(l, f))
				}
			}
			path := fixturePath(name)
			want, err := os.ReadFile(path)
			if err != nil && !*update {
				t.Fatalf("%v (go test ./audit -run TestFactsFixtures -update writes it)", err)
			}
			if err == nil {
				keepClockFacts(t, live, want)
			}
			got, err := encodeFixture(live)
			if err != nil {
				t.Fatal(err)
			}
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s is not what the bundle gives on its fleet (a probe or nodesim changed): "+
					"go test ./audit -run TestFactsFixtures -update, and review the diff\n%s", path, fixtureDiff(t, want, got))
			}
		})
	}
}

// keepClockFacts gives the run's nodes the fixture's values of
// nodesim.ClockFacts
// wherever both have them.
func keepClockFacts(t *testing.T, live *result.Report, fixture []byte) {
	t.Helper()
	var f factsFixture
	if err := json.Unmarshal(fixture, &f); err != nil {
		t.Fatal(err)
	}
	kept := map[string]map[string]string{}
	for _, n := range f.Nodes {
		kept[n.Name] = n.Facts
	}
	for _, n := range live.Nodes {
		for _, k := range nodesim.ClockFacts {
			if v, ok := kept[n.Name][k]; ok {
				if _, ok := n.Facts[k]; ok {
					n.Facts[k] = v
				}
			}
		}
	}
}

// fixtureDiff names the facts that differ, node by node, and the first
// differing line for what is not a fact.
func fixtureDiff(t *testing.T, want, got []byte) string {
	t.Helper()
	var w, g factsFixture
	if json.Unmarshal(want, &w) != nil || json.Unmarshal(got, &g) != nil || len(w.Nodes) != len(g.Nodes) {
		return testtools.FirstDiff(want, got)
	}
	var b strings.Builder
	for i := range w.Nodes {
		wf, gf := w.Nodes[i].Facts, g.Nodes[i].Facts
		for k := range mergeFacts(wf, gf) {
			if wv, ok := wf[k]; !ok || wv != gf[k] {
				fmt.Fprintf(&b, "%s: %s = %q, the bundle gives %q\n", w.Nodes[i].Name, k, wf[k], gf[k])
			}
		}
	}
	if b.Len() == 0 {
		return testtools.FirstDiff(want, got)
	}
	return b.String()
}

// Most fixture fleets are nodesim.Clean(3) with one node changed, so most of
// their nodes are in a state some earlier fixture's node was already in.
// What a script prints depends on nothing but the script and the simulated
// node it runs on (its tree is built from the nodesim.State alone), so the
// output of a real run on one state is the output on an identical state:
// onceTransport runs each script once per state and hands the others that
// run's output. Run itself and its judgement stay real, a node whose state
// no earlier fixture had runs for real, and so does every bundle of cluster
// probes: what a fleet's cluster judgement reads is never a replay.
type onceTransport struct {
	*shTransport
	inv    *Fleet
	cache  *bundleCache
	states map[string][]byte // node name → its nodesim.State as JSON, the identity of its output
	// cluster are the ids of the cluster-scoped probes, whose bundles always run.
	cluster map[string]bool
}

// bundleCache is shared by the fixtures of one TestFactsFixtures run.
type bundleCache struct {
	mu         sync.Mutex
	runs       map[string]*bundleRun
	asked, ran int
}

// bundleRun is one real run; done closes once res and err are set.
type bundleRun struct {
	done  chan struct{}
	nonce []byte // the bundle's, framing res
	res   ExecResult
	err   error
}

type onceSession struct {
	Session
	state   []byte
	cache   *bundleCache
	cluster map[string]bool
}

// simulateOnce is simulate, with the scripts of a node whose state an
// earlier fleet of the same cache had answered from that run.
func simulateOnce(t *testing.T, fleet []nodesim.Member, cache *bundleCache) *onceTransport {
	t.Helper()
	inv, tr := simulate(t, fleet)
	states := map[string][]byte{}
	for _, m := range fleet {
		b, err := json.Marshal(m.State)
		if err != nil {
			t.Fatal(err)
		}
		states[m.Name] = b
	}
	all, err := probe.BuiltinProbes()
	if err != nil {
		t.Fatal(err)
	}
	_, clusterProbes := probe.SplitScope(all)
	cluster := map[string]bool{}
	for _, p := range clusterProbes {
		cluster[p.ID] = true
	}
	return &onceTransport{shTransport: tr, inv: inv, cache: cache, states: states, cluster: cluster}
}

func (t *onceTransport) Open(ctx context.Context, h Target) (Session, error) {
	s, err := t.shTransport.Open(ctx, h)
	if err != nil {
		return nil, err
	}
	state, ok := t.states[h.Name]
	if !ok {
		return nil, fmt.Errorf("onceTransport: no state for host %q", h.Name)
	}
	return &onceSession{Session: s, state: state, cache: t.cache, cluster: t.cluster}, nil
}

// bundleNonce finds the nonce a bundle was built with, bundleProbe the
// probes it runs (probe.BuildBundle).
var update = flag.Bool("update", false, "rewrite the facts fixtures (testdata/facts) from the simulated nodes")

var (
	bundleNonce = regexp.MustCompile(`(?m)^fa_n=([0-9a-f]{16})$`)
	bundleProbe = regexp.MustCompile(`(?m)^fa_run (\S+) `)
)

// runsClusterProbe tells a bundle of cluster probes.
func (s *onceSession) runsClusterProbe(script []byte) bool {
	for _, m := range bundleProbe.FindAllSubmatch(script, -1) {
		if s.cluster[string(m[1])] {
			return true
		}
	}
	return false
}

func (s *onceSession) Exec(ctx context.Context, script Script) (ExecResult, error) {
	// Each bundle is framed by a fresh random nonce, the one thing in it
	// that is not the same from run to run: the key leaves it out, and a
	// replayed output is given this bundle's nonce in place of the run's.
	c := s.cache
	text := script.Text()
	m := bundleNonce.FindSubmatch(text)
	if m == nil || s.runsClusterProbe(text) {
		c.mu.Lock()
		c.asked++
		c.ran++
		c.mu.Unlock()
		return s.Session.Exec(ctx, script)
	}
	nonce := m[1]
	h := sha256.New()
	fmt.Fprintf(h, "%d\x00%d\x00", len(s.state), script.Timeout)
	h.Write(s.state)
	h.Write(bytes.ReplaceAll(text, nonce, []byte("NONCE")))
	key := string(h.Sum(nil))
	c.mu.Lock()
	c.asked++
	r, ok := c.runs[key]
	if !ok {
		r = &bundleRun{done: make(chan struct{})}
		c.runs[key] = r
		c.ran++
	}
	c.mu.Unlock()
	if ok {
		<-r.done
		if r.err == nil {
			return reframe(r.res, r.nonce, nonce), nil
		}
		// A run that failed to finish (a timeout, a cancelled context) says
		// nothing about the state: run it here.
		c.mu.Lock()
		c.ran++
		c.mu.Unlock()
		return s.Session.Exec(ctx, script)
	}
	r.nonce = bytes.Clone(nonce)
	r.res, r.err = s.Session.Exec(ctx, script)
	if r.err != nil {
		c.mu.Lock()
		delete(c.runs, key)
		c.mu.Unlock()
	}
	close(r.done)
	return reframe(r.res, nonce, nonce), r.err
}

// reframe copies a kept output (so no fleet's parse touches it) with the
// run's nonce from replaced by to. A node's own output holding a 16-digit
// random nonce it never saw is not a case worth guarding.
func reframe(r ExecResult, from, to []byte) ExecResult {
	return ExecResult{Stdout: bytes.ReplaceAll(r.Stdout, from, to), Stderr: bytes.ReplaceAll(r.Stderr, from, to), ExitCode: r.ExitCode}
}

// TestOnceTransportKeysByState holds the replay of TestFactsFixtures to
// its premise: a run is reused only for an identical nodesim state and
// script, whatever the node is named, and the reused output is framed by
// the asking bundle's nonce.
func TestOnceTransportKeysByState(t *testing.T) {
	testtools.SkipShort(t, "runs the probe bundle on a simulated fleet")
	a, b := nodesim.Healthy("node-1", false), nodesim.Healthy("node-1", false)
	b.Kernel = "6.1.0-99-amd64"
	for _, c := range []struct {
		name    string
		first   nodesim.Member
		second  nodesim.Member
		wantRan int
	}{
		{"identical state under another name is replayed", nodesim.Member{Name: "x", State: a}, nodesim.Member{Name: "y", State: a}, 1},
		{"another state under the same name runs", nodesim.Member{Name: "x", State: a}, nodesim.Member{Name: "x", State: b}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			cache := &bundleCache{runs: map[string]*bundleRun{}}
			for i, m := range []nodesim.Member{c.first, c.second} {
				nonce := probe.NewNonce()
				script := fmt.Sprintf("fa_n=%s\necho \"$fa_n $(cat \"$FLEET_AUDIT_ROOT/proc/sys/kernel/osrelease\")\"\n", nonce)
				tr := simulateOnce(t, []nodesim.Member{m}, cache)
				sess, err := tr.Open(context.Background(), tr.inv.Targets[0])
				if err != nil {
					t.Fatal(err)
				}
				res, err := sess.Exec(context.Background(), Script{Bundle: []byte(script), Timeout: time.Minute})
				if err != nil {
					t.Fatal(err)
				}
				if want := nonce + " " + m.State.Kernel + "\n"; string(res.Stdout) != want {
					t.Errorf("run %d printed %q, want %q", i+1, res.Stdout, want)
				}
			}
			if cache.asked != 2 || cache.ran != c.wantRan {
				t.Errorf("%d of %d scripts ran, want %d of 2", cache.ran, cache.asked, c.wantRan)
			}
		})
	}
}
