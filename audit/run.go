package audit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/fleet-audit/fleet-audit/audit/catalog"
	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/result"
)

// Transport opens a session to one node. Package audit knows neither SSH
// nor the inventory; the caller adapts package remote to this interface and
// keeps, per target name, how to reach it.
type Transport interface {
	Open(ctx context.Context, t Target) (Session, error)
}

// Fleet is what one run audits, as the caller builds it from an inventory.
type Fleet struct {
	// Name names the inventory in the report (Report.Inventory).
	Name    string
	Targets []Target
}

// Target is one node to audit: what the report says about it and how its
// root probes get root. How to connect is the Transport's business.
type Target struct {
	Name    string
	Address string
	Roles   []string
	Become  probe.Become
}

// Session runs one script on a node.
type Session interface {
	// Exec feeds the script's bundle to /bin/sh -s on the node. The
	// returned output is valid, possibly partial, even with an error.
	Exec(ctx context.Context, script Script) (ExecResult, error)
	Close() error
}

// Script is one probe bundle for a session to run.
type Script struct {
	// Head then Bundle are the program, fed on stdin: Head is the node's
	// own first lines (probe.BundleHead), Bundle the rest, one slice that
	// every node of a run is sent (probe.BundleBody) and a Session must
	// not change.
	Head   []byte
	Bundle []byte
	// Timeout bounds the whole run.
	Timeout time.Duration
	// RunMarker is the value of shproc.RunMarkerEnv that the bundle gives
	// its probes (probe.RunMarker): a transport that stops the run kills
	// what carries it too, what left the bundle's session included.
	RunMarker string
	// MaxOutput is the stdout the transport must keep for this bundle
	// (probe.OutputCap); 0 leaves the transport's own cap.
	MaxOutput int64
}

// ExecResult is the raw output of one script.
type ExecResult struct {
	Stdout   []byte
	Stderr   []byte
	ExitCode int
}

// NodeError is how a Transport tells Run which node status an error means
// and gives the operator a one-line message with the fix.
type NodeError struct {
	Status  result.NodeStatus
	Message string
	Err     error
}

func (e *NodeError) Error() string {
	if e.Err == nil {
		return e.Message
	}
	return result.ErrorText(e.Message, e.Err.Error())
}

func (e *NodeError) Unwrap() error { return e.Err }

// RunOptions is everything one audit needs.
type RunOptions struct {
	Fleet     *Fleet
	Transport Transport
	// Forks bounds how many nodes are audited at once.
	Forks int
	// NodeTimeout bounds everything done for one node: connect, probes, close.
	NodeTimeout time.Duration
	// Rules are what the run probes and judges with. Their Probes are node
	// and cluster probes (Scope); cluster probes run once, on one reachable
	// server node, after the node probes.
	Rules Rules
	// TargetVersion is the RKE2 version the fleet is about to be upgraded
	// to ("" = none); version-skew checks judge the path to it.
	TargetVersion string
	// Thresholds are --etcd-snapshot-max-age and --ca-horizon; nil is
	// DefaultThresholds.
	Thresholds *result.Thresholds
	// Change is the change ticket the run is for (nil = none), for the
	// report's head; it does not change how anything is judged.
	Change      *result.Change
	ToolVersion string
	// Now is the clock; tests inject a fixed one.
	Now func() time.Time
	// Progress, when set, is called after each node with the running totals.
	Progress func(done, total, failed int)
	// Limit, when set, says the fleet is the part of an inventory that
	// --limit selected (Report.Limit).
	Limit *result.Limit
	// Shard, when set, says the fleet is shard K of N (SelectShard): the
	// report carries it, and keeps what merge needs (Cluster.NodeFacts).
	Shard *result.Shard
	// Logger traces each node's session and probes (--debug); nil
	// traces nothing.
	Logger *slog.Logger
	// Warnings go into the report as they are (Report.Warnings).
	Warnings []string
	// LateWarnings, when set, is called once every node and the cluster
	// probes are done, for what only dialling could tell (host keys
	// trusted on first use or not verified); they follow Warnings.
	LateWarnings func() []string
}

// Run audits every target of the fleet and builds the report. Node
// failures are recorded in the report, never returned; Run returns an error
// only when it could not start. When ctx is cancelled the nodes not yet done
// are marked interrupted and the report is still returned.
func Run(ctx context.Context, o RunOptions) (*result.Report, error) {
	if o.Fleet == nil || o.Transport == nil {
		return nil, errors.New("audit.Run: fleet and transport are required")
	}
	if o.Forks <= 0 {
		o.Forks = 10
	}
	if o.NodeTimeout <= 0 {
		o.NodeTimeout = 2 * time.Minute
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	started := o.Now()
	nodeProbes, clusterProbes := probe.SplitScope(o.Rules.Probes)
	nodeBundle := newBundle(nodeProbes)
	nodes := make([]result.Node, len(o.Fleet.Targets))
	var mu sync.Mutex
	done, failed := 0, 0
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(o.Forks)
	// Every node starts as interrupted, so a node that a cancelled run
	// never reaches is still named in the report.
	for i, h := range o.Fleet.Targets {
		nodes[i] = result.Node{Name: h.Name, Address: h.Address, Roles: append([]string{}, h.Roles...), Status: result.StatusInterrupted,
			Message: result.StatusInterrupted.Meaning() + " before this node was audited", Facts: map[string]string{}, Probes: []result.ProbeRun{}}
	}
	for i, h := range o.Fleet.Targets {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			n := auditNode(gctx, o, nodeBundle, h)
			mu.Lock()
			nodes[i] = n
			done++
			if n.Status != result.StatusOK {
				failed++
			}
			if o.Progress != nil {
				o.Progress(done, len(nodes), failed)
			}
			mu.Unlock()
			return nil // a node's failure is data, not an error
		})
	}
	_ = g.Wait()
	if nodes == nil {
		nodes = []result.Node{}
	}
	var cluster *result.Cluster
	if len(clusterProbes) > 0 && ctx.Err() == nil {
		cluster = runCluster(ctx, o, clusterProbes, nodes)
	}
	redactNodeText(nodes, cluster)
	warnings := o.Warnings
	if o.LateWarnings != nil {
		warnings = append(slices.Clip(warnings), o.LateWarnings()...)
	}
	r := &result.Report{
		SchemaVersion: result.SchemaVersion,
		Tool:          result.Tool{Name: "fleet-audit", Version: o.ToolVersion},
		Inventory:     o.Fleet.Name,
		StartedAt:     started.UTC(),
		FinishedAt:    o.Now().UTC(),
		Interrupted:   ctx.Err() != nil,
		Nodes:         nodes,
		Cluster:       cluster,
		TargetVersion: o.TargetVersion,
		Thresholds:    thresholdsOrDefault(o.Thresholds),
		Change:        o.Change,
		Limit:         o.Limit,
		Shard:         o.Shard,
		Warnings:      warnings,
	}
	Analyze(r, o.Rules)
	return r, nil
}

// DefaultThresholds are the thresholds of a run given none: a newest etcd
// snapshot 24 h old is two missed schedules of RKE2's default "0 */12 * * *"
// (k3s pkg/cli/cmds/server.go etcd-snapshot-schedule-cron), and a year is
// about the time to the next planned upgrade.
func DefaultThresholds() result.Thresholds {
	return result.Thresholds{EtcdSnapshotMaxAgeSeconds: 24 * 3600, CAHorizonDays: 365}
}

// thresholdsOrDefault is t, or the defaults for a run or a saved report
// that has none.
func thresholdsOrDefault(t *result.Thresholds) *result.Thresholds {
	if t == nil {
		d := DefaultThresholds()
		return &d
	}
	return t
}

// Rules is everything a run probes with and Analyze judges a report's
// nodes with: a catalogue's probes and selected checks (package catalog),
// the waivers read against it, and the gate.
type Rules struct {
	Probes  []probe.Probe
	Checks  []check.Check
	Gate    GatePolicy
	Waivers []result.Waiver
	// Selection is --only/--skip; Checks are already the selected ones,
	// and it also selects the findings built in Go.
	Selection check.Selection
}

// Analyze fills the judgement part of a report (checks, findings, drift,
// gate) from its nodes and cluster facts. It is also used to re-judge a
// saved run. Waivers are judged against the report's start time, so a
// re-rendered run is judged as it was on the day.
func Analyze(r *result.Report, rules Rules) {
	globals := map[string]string{}
	if r.TargetVersion != "" {
		globals[catalog.TargetVersionFact] = r.TargetVersion
	}
	th := thresholdsOrDefault(r.Thresholds)
	globals[catalog.EtcdSnapshotMaxAgeFact] = strconv.FormatInt(th.EtcdSnapshotMaxAgeSeconds, 10)
	globals[catalog.CAHorizonFact] = strconv.FormatInt(th.CAHorizonDays, 10)
	r.Checks = check.Judge(r.Nodes, r.Cluster, rules.Checks, globals)
	for i, c := range r.Checks {
		// A check that reads --target-version says how to have it judged.
		if c.Outcome == result.OutcomeSkip && c.Detail == catalog.TargetVersionFact+" not collected" {
			r.Checks[i].Detail = catalog.TargetVersionNotGiven
		}
	}
	markNotApplicable(r.Nodes, r.Checks, rules.Checks, rules.Probes)
	markPartial(r.Nodes, r.Checks)
	r.Findings = append(Correlate(r.Nodes, rules.Checks, r.Checks, rules.Probes), check.CheckFindings(rules.Checks, r.Checks)...)
	goFindings := append(VersionSkew(r.Nodes, r.TargetVersion), EtcdMembers(r)...)
	for _, f := range append(goFindings, clusterFindings(r.Cluster, r.Partial())...) {
		if rules.Selection.Selects(f.Check) {
			r.Findings = append(r.Findings, f)
		}
	}
	addRollouts(r.Findings, r.Nodes, rules.Checks, r.Checks)
	r.Findings = ApplyWaivers(r, rules.Waivers, r.StartedAt)
	result.SortFindings(r.Findings)
	r.Drift = ComputeDrift(r.Nodes, rules.Probes)
	if r.Findings == nil {
		r.Findings = []result.Finding{}
	}
	if r.Drift == nil {
		r.Drift = []result.Drift{}
	}
	r.Gate = EvaluateGate(r, rules.Gate)
	Readiness(r, rules)
}

// auditNode runs b, the node probes of o.Rules, on h.
func auditNode(ctx context.Context, o RunOptions, b bundle, h Target) (n result.Node) {
	probes := b.probes
	n = result.Node{Name: h.Name, Address: h.Address, Roles: append([]string{}, h.Roles...), Facts: map[string]string{}, Probes: []result.ProbeRun{}}
	if n.Roles == nil {
		n.Roles = []string{}
	}
	start := o.Now()
	defer func() {
		n.DurationSeconds = o.Now().Sub(start).Seconds()
		// The error and message can quote the node (its stderr, its SSH
		// banner): stored as valid UTF-8 like the facts.
		n.Error, n.Message = probe.ValidUTF8(n.Error), probe.ValidUTF8(n.Message)
	}()
	ctx, cancel := context.WithTimeout(ctx, o.NodeTimeout)
	defer cancel()

	log := o.logger().With("node", h.Name)
	log.Debug("open session", "address", h.Address, "become", h.Become.Method)
	sess, err := o.Transport.Open(ctx, h)
	if err != nil {
		setFailure(&n, err, ctx)
		log.Debug("session failed", "status", n.Status.String(), "error", err)
		return n
	}
	defer sess.Close()

	log.Debug("run probes", "probes", len(probes))
	parsed, res, err := execBundle(ctx, sess, b, h.Become)
	log.Debug("probes ended", "exit", res.ExitCode, "stdout_bytes", len(res.Stdout), "stderr_bytes", len(res.Stderr), "error", err)
	for _, r := range parsed.Runs {
		log.Debug("probe", "probe", r.ID, "status", string(r.Status), "exit", r.ExitCode, "bytes", parsed.Bytes[r.ID])
	}
	n.Facts = parsed.Facts
	markNotRoot(n.Facts, parsed.Meta, probes)
	deriveCertFacts(n.Facts, o.Now())
	dropServerOnly(&n, probes)
	if parsed.Runs != nil {
		n.Probes = parsed.Runs
	}
	if err != nil {
		setFailure(&n, err, ctx)
		return n
	}
	var timedOut, missing, failed []string
	for _, r := range parsed.Runs {
		switch r.Status {
		case result.ProbeTimeout:
			timedOut = append(timedOut, r.ID)
		case result.ProbeMissing, result.ProbeTruncated:
			missing = append(missing, r.ID)
		case result.ProbeFailed:
			failed = append(failed, fmt.Sprintf("%s (exit %d)", r.ID, r.ExitCode))
		}
	}
	switch {
	case len(timedOut) > 0:
		n.Status = result.StatusProbeTimeout
		n.Message = fmt.Sprintf("probe %s did not finish within its timeout; the facts of the other probes are kept", strings.Join(timedOut, ", "))
	case len(missing) > 0:
		n.Status = result.StatusError
		n.Message = fmt.Sprintf("probe %s produced no complete output (exit %d); is /bin/sh a POSIX shell on this node?", strings.Join(missing, ", "), res.ExitCode)
		if s := strings.TrimSpace(string(res.Stderr)); s != "" {
			n.Error = firstLine(s)
		}
	case len(failed) > 0:
		// The checks that read a failed probe's facts skip; a node left
		// ok would let the gate pass on checks that never ran.
		n.Status = result.StatusProbeFailed
		n.Message = fmt.Sprintf("probe %s failed; checks on the facts it did not print were skipped, all other facts are kept (exit 126 or 127: the node could not run it)", strings.Join(failed, ", "))
	case parsed.Meta[probe.MetaSudo] == "password_required":
		n.Status = result.StatusSudoPasswordRequired
		n.Message = "become: sudo, but sudo -n asks for a password; probes needing root ran unprivileged. Allow NOPASSWD for the audit user or connect as root"
	case parsed.Meta[probe.MetaSudo] == "requiretty":
		n.Status = result.StatusSudoPasswordRequired
		n.Message = "become: sudo, but sudoers has Defaults requiretty and fleet-audit runs without a terminal; probes needing root ran unprivileged. Add Defaults:USER !requiretty for the audit user"
	case parsed.Meta[probe.MetaSudo] == "timeout":
		n.Status = result.StatusSudoTimeout
		n.Message = fmt.Sprintf("become: sudo, but sudo -n did not answer within %ds (PAM, sssd or LDAP down?); probes needing root ran unprivileged, the other probes' facts are kept. Check that sudo -n true answers on the node", probe.SudoCheckSeconds)
	case parsed.Meta[probe.MetaSudo] == "absent":
		n.Status = result.StatusSudoPasswordRequired
		n.Message = "become: sudo, but sudo is not installed; probes needing root ran unprivileged"
	default:
		n.Status = result.StatusOK
	}
	return n
}

// Text is the whole program, Head then Bundle, for a Session that wants it
// in one piece.
func (s Script) Text() []byte {
	return append(s.Head[:len(s.Head):len(s.Head)], s.Bundle...)
}

// bundle is probes and their bundle's body, built once for all the nodes
// that run them.
type bundle struct {
	probes []probe.Probe
	body   []byte
}

func newBundle(probes []probe.Probe) bundle {
	return bundle{probes: probes, body: probe.BundleBody(probes)}
}

// execBundle runs b in one session and parses what came back, also when
// the session failed part-way.
func execBundle(ctx context.Context, sess Session, b bundle, become probe.Become) (probe.Parsed, ExecResult, error) {
	probes := b.probes
	nonce := probe.NewNonce()
	head, err := probe.BundleHead(become, nonce)
	if err != nil {
		return probe.Parsed{}, ExecResult{}, &NodeError{Status: result.StatusError, Message: err.Error()}
	}
	var total time.Duration
	for _, p := range probes {
		total += p.Timeout + 3*time.Second // the watchdog's tick and the framing
	}
	res, err := sess.Exec(ctx, Script{Head: head, Bundle: b.body, Timeout: total, RunMarker: probe.RunMarker(nonce), MaxOutput: probe.OutputCap(probes)})
	return probe.ParseOutput(res.Stdout, nonce, probes), res, err
}

// setFailure maps a transport error to the node's status. A cancelled run
// is interrupted, whatever the error; errors that are not a *NodeError are
// classified by the context: a passed node deadline is a timeout.
func setFailure(n *result.Node, err error, ctx context.Context) {
	// A chain wrapped by several layers can say its root cause twice.
	n.Error = result.ErrorText(err.Error())
	var se *NodeError
	if errors.As(err, &se) && se.Err != nil {
		n.Error = result.ErrorText(se.Err.Error())
	}
	switch {
	case errors.Is(err, context.Canceled):
		n.Status, n.Message = result.StatusInterrupted, result.StatusInterrupted.Meaning()+" while this node was audited"
	case se != nil:
		n.Status, n.Message = se.Status, se.Message
	case ctx.Err() != nil:
		n.Status, n.Message = result.StatusTimeout, "the node did not finish within --node-timeout"
	default:
		n.Status, n.Message = result.StatusError, firstLine(err.Error())
	}
}

// redactNodeText runs every free-text string that may hold what a node
// printed (stderr, transport errors and the messages quoting them) through
// the redactor the facts go through, as the reports show them as they are.
func redactNodeText(nodes []result.Node, c *result.Cluster) {
	for i := range nodes {
		n := &nodes[i]
		n.Message, n.Error = probe.RedactText(n.Message), probe.RedactText(n.Error)
		for j := range n.Probes {
			n.Probes[j].Stderr = probe.RedactText(n.Probes[j].Stderr)
		}
	}
	if c == nil {
		return
	}
	c.Message = probe.RedactText(c.Message)
	for i := range c.Attempts {
		c.Attempts[i].Reason = probe.RedactText(c.Attempts[i].Reason)
	}
	for i := range c.Probes {
		c.Probes[i].Stderr = probe.RedactText(c.Probes[i].Stderr)
	}
}

// firstLine is the first line of a text that can quote a node, as valid
// UTF-8 (see validUTF8).
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return probe.ValidUTF8(s)
}

func (o RunOptions) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}
