package result

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// SchemaVersion is the version of the JSON document written by --json. It is
// bumped on every breaking change to the field names or their meaning.
const SchemaVersion = 1

// Exit codes of `fleet-audit run`, shared by the gate and the CLI.
// ExitInternal is the CLI's alone: no gate has it.
const (
	ExitOK         = 0
	ExitGateFailed = 1
	ExitUsage      = 2
	ExitUnaudited  = 3
	// ExitInternal is a failure that is not the user's input: a report
	// that cannot be written or rendered, an audit that cannot start.
	ExitInternal    = 4
	ExitInterrupted = 130
)

// Severity orders findings. The zero value is SeverityUnknown so that a
// finding that forgot to set one never passes as harmless.
//
// Unknown is decided here, once, for every format and the gate. A live run
// never makes one on purpose: check.ParseChecks refuses a check without a
// severity, every Go finding names its own and a correlation takes its
// symptom's. It arrives from a Go finding that forgot to set one (goFinding's
// zero row) or from a saved report written so by hand or by another tool
// (UnmarshalText reads "unknown" back). Either way nobody can say it is
// harmless, so:
//   - it sorts right after critical and before warning (SeverityOrder): the
//     known blockers stay the headline, and it is never buried under the
//     info findings;
//   - it fails the gate at every --fail-on (AtLeast): a pass must never rest
//     on a finding nobody graded, and a severity read as "below the
//     threshold" would be exactly the harmless reading the zero value is
//     there to prevent. The terminal and Markdown already draw it as
//     critical for the same reason.
//
// A value with no name (severity(7)) is treated as unknown.
type Severity int

const (
	SeverityUnknown Severity = iota
	SeverityInfo
	SeverityWarning
	SeverityCritical
)

var severityNames = map[Severity]string{
	SeverityUnknown:  "unknown",
	SeverityInfo:     "info",
	SeverityWarning:  "warning",
	SeverityCritical: "critical",
}

// SeverityOrder is the one order of the severities, most severe first:
// findings are sorted, grouped and counted in it by every format.
var SeverityOrder = []Severity{SeverityCritical, SeverityUnknown, SeverityWarning, SeverityInfo}

// known is s, or SeverityUnknown for a value with no name.
func (s Severity) known() Severity {
	if _, ok := severityNames[s]; ok {
		return s
	}
	return SeverityUnknown
}

// Rank is s's place in SeverityOrder counted from the least severe: a
// higher rank is more severe.
func (s Severity) Rank() int {
	return len(SeverityOrder) - slices.Index(SeverityOrder, s.known())
}

// Compare orders severities by Rank, for slices.SortFunc and cmp-style
// comparisons: negative when s is less severe than t.
func (s Severity) Compare(t Severity) int { return cmp.Compare(s.Rank(), t.Rank()) }

// AtLeast reports whether s meets the threshold min, as --fail-on does. An
// unknown severity meets every threshold, and every severity meets an
// unknown threshold: neither a finding nor a gate without a severity passes
// as harmless (see Severity).
func (s Severity) AtLeast(min Severity) bool {
	if s.known() == SeverityUnknown || min.known() == SeverityUnknown {
		return true
	}
	return s.Rank() >= min.Rank()
}

func (s Severity) String() string {
	if n, ok := severityNames[s]; ok {
		return n
	}
	return fmt.Sprintf("severity(%d)", int(s))
}

// SeverityNames are the severities a check or --fail-on may name, most
// severe first: the words usage lines and messages list.
func SeverityNames() []string {
	var names []string
	for _, s := range SeverityOrder {
		if s != SeverityUnknown {
			names = append(names, s.String())
		}
	}
	return names
}

// ParseSeverity accepts the lowercase names used in checks.yaml, JSON and --fail-on.
func ParseSeverity(s string) (Severity, error) {
	for sev, name := range severityNames {
		if sev != SeverityUnknown && name == strings.ToLower(strings.TrimSpace(s)) {
			return sev, nil
		}
	}
	return SeverityUnknown, fmt.Errorf("unknown severity %q (want one of %s)", s, strings.Join(SeverityNames(), ", "))
}

func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText accepts what MarshalText writes, "unknown" included, so any
// saved report can be read back.
func (s *Severity) UnmarshalText(b []byte) error {
	if string(b) == severityNames[SeverityUnknown] {
		*s = SeverityUnknown
		return nil
	}
	v, err := ParseSeverity(string(b))
	if err != nil {
		return &SeverityError{err}
	}
	*s = v
	return nil
}

// SeverityError marks a bad severity word, so a decoder can point at the field.
type SeverityError struct{ err error }

func (e *SeverityError) Error() string { return e.err.Error() }
func (e *SeverityError) Unwrap() error { return e.err }

// NodeStatus says how far the audit of one node got. Only StatusOK means every
// probe ran to completion and every check could be judged; the statuses
// that keep the facts that did arrive (probe_timeout, probe_failed,
// output_truncated, connection_lost, sudo_password_required, partial) are
// judged on them. The zero value is StatusUnknown: a node nobody judged.
type NodeStatus int

const (
	StatusUnknown NodeStatus = iota
	StatusOK
	StatusUnreachable
	StatusTimeout
	StatusAuthFailed
	StatusHostKeyUnknown
	StatusHostKeyMismatch
	StatusJumpFailed
	StatusProbeTimeout
	StatusOutputTruncated
	StatusConnectionLost
	StatusSudoPasswordRequired
	StatusInterrupted
	StatusError
	// StatusProbeFailed: a probe exited non-zero (126/127: the node could
	// not run it); the facts of the other probes are kept and judged.
	StatusProbeFailed
	// StatusShardMissing: the node belongs to a shard whose results were
	// not given to fleet-audit merge, so nothing is known of it.
	StatusShardMissing
	// StatusNotApplicable: the audit does not apply to the node (the
	// cluster view says it is a Windows node, and the probes are POSIX
	// sh); not a failure, and not "could not judge": the gate does not
	// count it as unaudited, and every report lists it apart.
	StatusNotApplicable
	// StatusPartial: every probe ran, but some checks could not be judged
	// on the node because a fact they read could not be read (not-root:
	// a root probe ran as the login user without become; unreadable).
	// Judge sets it from the checks (OutcomeUnjudged), never a transport;
	// the node's Message lists the checks and the fix. The gate exits 3
	// for it unless --allow-partial.
	StatusPartial
	// StatusSudoTimeout: become: sudo, but sudo -n gave no answer within
	// its own deadline (PAM, sssd or LDAP down); the probes needing no
	// root ran and their facts are kept, the root probes ran unprivileged.
	StatusSudoTimeout
)

var statusNames = map[NodeStatus]string{
	StatusUnknown:              "unknown",
	StatusOK:                   "ok",
	StatusUnreachable:          "unreachable",
	StatusTimeout:              "timeout",
	StatusAuthFailed:           "auth_failed",
	StatusHostKeyUnknown:       "host_key_unknown",
	StatusHostKeyMismatch:      "host_key_mismatch",
	StatusJumpFailed:           "jump_failed",
	StatusProbeTimeout:         "probe_timeout",
	StatusOutputTruncated:      "output_truncated",
	StatusConnectionLost:       "connection_lost",
	StatusSudoPasswordRequired: "sudo_password_required",
	StatusInterrupted:          "interrupted",
	StatusError:                "error",
	StatusProbeFailed:          "probe_failed",
	StatusShardMissing:         "shard_missing",
	StatusNotApplicable:        "not_applicable",
	StatusPartial:              "partial",
	StatusSudoTimeout:          "sudo_timeout",
}

// hostKeyUnknownMeaning is one instruction for every node whose key is
// unknown: the reports group the nodes under it, and each node's address,
// fingerprint and known_hosts file are in its error. ssh-keyscan -f reads
// the hosts one a line, and -p gives the port for all of them (OpenBSD
// ssh-keyscan(1)).
const hostKeyUnknownMeaning = "host key not in known_hosts: check the fingerprints " +
	"(ssh-keyscan -f HOSTS | ssh-keygen -lf -, HOSTS one address a line) against the nodes', " +
	"then add them with ssh-keyscan -f HOSTS >> known_hosts, or run once with --host-key-policy accept-new"

// statusMeanings are the human lines a report shows for a status whose
// cause is the connection, before the underlying error; statuses judged
// from the probes' own output get a message naming the probes instead.
var statusMeanings = map[NodeStatus]string{
	StatusError:           "unexpected error",
	StatusInterrupted:     "the run was interrupted",
	StatusJumpFailed:      "a ProxyJump host on the way failed, so the node was not reached",
	StatusUnreachable:     "cannot connect (refused, no route or unknown name)",
	StatusTimeout:         "no SSH answer within --connect-timeout",
	StatusAuthFailed:      "SSH authentication failed",
	StatusHostKeyUnknown:  hostKeyUnknownMeaning,
	StatusHostKeyMismatch: "HOST KEY CHANGED: possible man-in-the-middle or a reinstalled node; check before trusting",
	StatusProbeTimeout:    "probes did not finish within their timeout; partial facts kept",
	StatusOutputTruncated: "the node printed more than the output cap; the session was closed and partial facts kept",
	StatusConnectionLost:  "the connection dropped during the probes; partial facts kept",
	StatusShardMissing:    "the results of this node's shard were not given to fleet-audit merge",
	StatusNotApplicable:   "the cluster view says the node is not Linux (a Windows agent): the probes are POSIX sh, so it is not audited, on purpose",
	StatusPartial:         "every probe ran, but some checks could not be judged (see the checks marked unjudged)",
}

// Unaudited says whether a node in this status is one the audit could not
// fully judge: what the gate exits 3 for (unless allowed) and the reports
// list as not audited. A not-applicable node is not one of them. A partial
// node is: it is allowed by its own flag (--allow-partial), not by
// --allow-unreachable.
func (s NodeStatus) Unaudited() bool { return s != StatusOK && s != StatusNotApplicable }

// Meaning is the one-line explanation of a status for an operator, with
// the fix where there is one; "" for the statuses explained per node.
func (s NodeStatus) Meaning() string { return statusMeanings[s] }

func (s NodeStatus) String() string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	return fmt.Sprintf("status(%d)", int(s))
}

// ParseNodeStatus is the inverse of String, used when a saved run is read back.
func ParseNodeStatus(s string) (NodeStatus, error) {
	for st, name := range statusNames {
		if name == s {
			return st, nil
		}
	}
	return StatusUnknown, fmt.Errorf("unknown node status %q", s)
}

func (s NodeStatus) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

func (s *NodeStatus) UnmarshalText(b []byte) error {
	v, err := ParseNodeStatus(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// HasFacts reports whether a node in this status delivered facts worth
// judging (possibly only some of them).
func (s NodeStatus) HasFacts() bool {
	switch s {
	case StatusOK, StatusProbeTimeout, StatusProbeFailed, StatusOutputTruncated, StatusConnectionLost, StatusSudoPasswordRequired, StatusPartial, StatusSudoTimeout:
		return true
	}
	return false
}

// Report is the whole result of one audit: the model every formatter renders
// and the JSON document (--json) that `fleet-audit report` reads back. It is
// built once by Run and never mutated by a formatter.
type Report struct {
	SchemaVersion int       `json:"schema_version"`
	Tool          Tool      `json:"tool"`
	Inventory     string    `json:"inventory"`
	StartedAt     time.Time `json:"started_at"`
	FinishedAt    time.Time `json:"finished_at"`
	Interrupted   bool      `json:"interrupted"`
	Gate          Gate      `json:"gate"`
	// Readiness is the gate's verdict broken down by Area, in Areas
	// order: which parts of the upgrade are blocked, which are ready and
	// which the run could not judge.
	Readiness []AreaReadiness `json:"readiness,omitempty"`
	Nodes     []Node          `json:"nodes"`
	// Findings are sorted by severity (critical first), then correlation
	// findings before the checks they explain, then check id.
	Findings []Finding `json:"findings"`
	// Drift lists every fact whose value is not the same on all audited
	// nodes of a scope, fleet scope first.
	Drift []Drift `json:"drift"`
	// Checks is one result per node × check, the raw material of JUnit.
	// Cluster checks have Node "(cluster)".
	Checks []CheckResult `json:"checks"`
	// Cluster is what the cluster-scoped probes saw through the node-local
	// control plane of one server node; nil when the run had none.
	Cluster *Cluster `json:"cluster,omitempty"`
	// TargetVersion is --target-version, when given.
	TargetVersion string `json:"target_version,omitempty"`
	// Thresholds are the limits the run was judged with
	// (--etcd-snapshot-max-age, --ca-horizon); nil in a report written
	// before they were flags, which was judged with their defaults.
	Thresholds *Thresholds `json:"thresholds,omitempty"`
	// Change is the change ticket the run was made for (--change-id,
	// --title, --requested-by), so that every report can be filed with it;
	// nil when none was given.
	Change *Change `json:"change,omitempty"`
	// Limit is set when --limit chose a subset of the inventory: the
	// hosts left out are not nodes of this report, neither audited nor
	// unreachable.
	Limit *Limit `json:"limit,omitempty"`
	// Shard is set on the report of a run --shard K/N, which audited only
	// its share of the hosts; fleet-audit merge joins the N shard reports
	// into the report of one run, which has no Shard.
	Shard *Shard `json:"shard,omitempty"`
	// Warnings are about the run itself, not the fleet: what makes its
	// results less trustworthy, e.g. host keys that were not verified.
	// Every report shows them above the findings.
	Warnings []string `json:"warnings,omitempty"`
}

// Thresholds are the limits of judgement a run was given as flags; checks
// read them as run facts (audit.GoFacts), so that a re-rendered or merged
// report is judged with the ones its run had.
type Thresholds struct {
	// EtcdSnapshotMaxAgeSeconds is --etcd-snapshot-max-age: the newest
	// etcd snapshot may be this old.
	EtcdSnapshotMaxAgeSeconds int64 `json:"etcd_snapshot_max_age_seconds"`
	// CAHorizonDays is --ca-horizon: a CA that ends within it ends before
	// the next planned upgrade.
	CAHorizonDays int64 `json:"ca_horizon_days"`
}

// Change names the change a run was made for, as a change board files it.
type Change struct {
	ID          string `json:"id,omitempty"`
	Title       string `json:"title,omitempty"`
	RequestedBy string `json:"requested_by,omitempty"`
}

// Parts are how every report's head shows the change, one part a field
// given: "change CHG-4711", "title …", "requested by …".
func (c *Change) Parts() []string {
	if c == nil {
		return nil
	}
	var out []string
	for _, p := range []struct{ label, value string }{{"change", c.ID}, {"title", c.Title}, {"requested by", c.RequestedBy}} {
		if p.value != "" {
			out = append(out, p.label+" "+p.value)
		}
	}
	return out
}

// ClusterStatus says whether the cluster view was had: ClusterOK, ClusterNoServer
// (no server to ask) or ClusterFailed (no server answered). An attempt's
// Outcome is ClusterOK or ClusterFailed.
type ClusterStatus string

const (
	ClusterOK       ClusterStatus = "ok"
	ClusterNoServer ClusterStatus = "no_server"
	ClusterFailed   ClusterStatus = "failed"
)

// Cluster is the result of the cluster-scoped probes, run with RKE2's own
// kubectl and kubeconfig on the first server node whose node-local API
// server answers; servers are asked in turn, at most maxClusterAttempts.
type Cluster struct {
	// Node is the inventory name of the server the facts come from: the one
	// that answered, or, when none did, the first that gave any facts.
	Node   string        `json:"node,omitempty"`
	Status ClusterStatus `json:"status"`
	// Message says why the cluster facts are missing or partial, and which
	// servers did not answer and why.
	Message string `json:"message,omitempty"`
	// Attempts are the servers asked, in order: every one that failed and
	// the one that answered, if any. Empty when no server could be asked.
	Attempts []ClusterAttempt `json:"attempts,omitempty"`
	// Facts are the cluster-level facts, all named "cluster.*".
	Facts  map[string]string `json:"facts"`
	Probes []ProbeRun        `json:"probes"`
	// Joined maps each Kubernetes node name the probes reported to the
	// inventory node its per-node facts were joined to ("" = no match).
	Joined map[string]string `json:"joined"`
	// Ambiguous maps a Kubernetes node name to the inventory nodes that
	// matched it at the same priority; its facts were joined to none.
	Ambiguous map[string][]string `json:"ambiguous,omitempty"`
	// NotApplicable maps each Kubernetes node the audit does not apply to
	// (a Windows node) to why. An inventory host joined to one is
	// StatusNotApplicable; one the inventory does not list (discover
	// leaves them out) is not counted among UnjoinedK8sNodes.
	NotApplicable map[string]string `json:"not_applicable,omitempty"`
	// NodeFacts are the per-node facts the cluster probes reported, by
	// Kubernetes node name, as they were before the join. Only a shard
	// keeps them: its join saw its own nodes alone, and merge joins them
	// again to the nodes of every shard.
	NodeFacts map[string]map[string]string `json:"node_facts,omitempty"`
}

// ClusterAttempt is one server asked for the cluster view.
type ClusterAttempt struct {
	Node string `json:"node"`
	// Outcome is ClusterOK for the server that answered, ClusterFailed for
	// one that did not.
	Outcome ClusterStatus `json:"outcome"`
	// Reason says why a server did not answer, e.g. "API unreachable
	// (connection refused)".
	Reason string `json:"reason,omitempty"`
}

// Tool names the program that wrote the report.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Gate is the verdict, computed once by EvaluateGate from the findings and
// node statuses. Formatters print it; they never recompute it.
type Gate struct {
	FailOn           Severity `json:"fail_on"`
	AllowUnreachable bool     `json:"allow_unreachable"`
	// AllowPartial is --allow-partial: nodes in StatusPartial do not fail
	// the gate (they are still counted in Reasons).
	AllowPartial bool `json:"allow_partial"`
	Passed       bool `json:"passed"`
	// ExitCode is what `fleet-audit run` exits with: 0 passed, 1 a finding at
	// or above FailOn, 3 some node not audited, 130 interrupted.
	ExitCode int `json:"exit_code"`
	// Reasons are one-line explanations, empty when the gate passed.
	Reasons []string `json:"reasons"`
}

// Fails says whether f is one of the findings that fail this gate: not
// waived, and at or above FailOn. The gate and every report that counts
// failures (JUnit) ask this one question, so they cannot disagree.
func (g Gate) Fails(f Finding) bool {
	return f.Waived == nil && f.Severity.AtLeast(g.FailOn)
}

// Node is one inventory host and what was learned from it.
type Node struct {
	Name    string     `json:"name"`
	Address string     `json:"address"`
	Roles   []string   `json:"roles"`
	Status  NodeStatus `json:"status"`
	// Message is a one-line, human explanation of a status other than ok,
	// with the fix where there is one.
	Message string `json:"message,omitempty"`
	// Error is the underlying error text, kept for machines and bug reports.
	Error           string            `json:"error,omitempty"`
	DurationSeconds float64           `json:"duration_seconds"`
	Facts           map[string]string `json:"facts"`
	Probes          []ProbeRun        `json:"probes"`
}

// ProbeStatus is how one probe's run ended (ProbeRun.Status).
type ProbeStatus string

const (
	ProbeOK        ProbeStatus = "ok"
	ProbeFailed    ProbeStatus = "failed"
	ProbeTimeout   ProbeStatus = "timeout"
	ProbeTruncated ProbeStatus = "truncated"
	ProbeMissing   ProbeStatus = "missing"
)

// Redacted replaces a value that looks like a secret.
const Redacted = "<redacted>"

// ProbeRun is how one probe went on one node.
type ProbeRun struct {
	ID string `json:"id"`
	// Status is one of ok, failed (non-zero exit), timeout, truncated,
	// missing (never started or its output never arrived).
	Status   ProbeStatus `json:"status"`
	ExitCode int         `json:"exit_code"`
	// Stderr is the probe's standard error, capped and with secrets redacted.
	Stderr string `json:"stderr,omitempty"`
}

// Kind says what produced a finding: a check failing on nodes, a
// correlation of a symptom with a fact that splits the fleet the same way,
// or drift.
type Kind string

const (
	KindCheck       Kind = "check"
	KindCorrelation Kind = "correlation"
	KindDrift       Kind = "drift"
)

// Finding is one thing an operator must look at, with the nodes it concerns.
type Finding struct {
	Check    string   `json:"check"`
	Kind     Kind     `json:"kind"`
	Title    string   `json:"title"`
	Severity Severity `json:"severity"`
	Nodes    []string `json:"nodes"`
	Summary  string   `json:"summary"`
	// Evidence lines, e.g. "etcd-1: ufw.active=active" or
	// "healthz 503 on 4 nodes; ufw.active=active on the same 4 and on none of the 5 healthy ones".
	Evidence    []string `json:"evidence"`
	Remediation string   `json:"remediation"`
	// Cause is set on correlation findings: the fact whose split of the fleet
	// matches the symptom's.
	Cause *Cause `json:"cause,omitempty"`
	// Rollout is the order in which to apply the fix across the finding's
	// nodes: etcd one at a time, then control-plane, infra, workers with
	// the failing ones first.
	Rollout []RolloutStep `json:"rollout,omitempty"`
	// Waived is set when a waiver covers this finding: it is shown but does
	// not fail the gate.
	Waived *Waiver `json:"waived,omitempty"`
}

// RolloutClass is a class of nodes a change is rolled out to together: a
// fix in the order of RolloutOrder, an RKE2 upgrade servers then agents.
type RolloutClass string

const (
	ClassEtcd         RolloutClass = "etcd"
	ClassControlPlane RolloutClass = "control-plane"
	ClassInfra        RolloutClass = "infra"
	ClassWorker       RolloutClass = "worker"
	// An RKE2 upgrade goes by service, not role: every server first, one
	// at a time, then the agents (skew.upgrade-order).
	ClassServer RolloutClass = "server"
	ClassAgent  RolloutClass = "agent"
)

// RolloutOrder is the order a fix is rolled out across an HA RKE2 cluster
// (the seed incident's recovery): etcd quorum members first and one at a
// time so quorum is never lost, then the other servers one at a time, then
// infra nodes, then workers with the failing ones first.
var RolloutOrder = []RolloutClass{ClassEtcd, ClassControlPlane, ClassInfra, ClassWorker}

// RolloutStep is one class of nodes in a rollout.
type RolloutStep struct {
	Class      RolloutClass `json:"class"`
	Nodes      []string     `json:"nodes"`
	OneAtATime bool         `json:"one_at_a_time"`
}

// WaiverDate is the layout of Waiver.Expires.
const WaiverDate = "2006-01-02"

// Waiver is one accepted exception from a --waivers file.
type Waiver struct {
	Check string   `json:"check"`
	Nodes []string `json:"nodes,omitempty"`
	Roles []string `json:"roles,omitempty"`
	// Reason says why it is accepted and who accepted it.
	Reason string `json:"reason"`
	// Expires is a date (YYYY-MM-DD); the waiver stops applying after it.
	Expires string `json:"expires"`
	// Source is "file:line" of its definition.
	Source string `json:"source"`
}

// Cause is a fact value that splits the fleet along the same line as a symptom.
type Cause struct {
	Fact  string `json:"fact"`
	Value string `json:"value"`
	// Symptom is the check whose failing nodes this fact explains;
	// Symptoms lists it and any other symptom check failing on exactly the
	// same nodes with the same best cause.
	Symptom  string   `json:"symptom"`
	Symptoms []string `json:"symptoms"`
	// Matched: symptomatic nodes with this value; Extra: healthy nodes with
	// it; Missed: symptomatic nodes without it.
	Matched int `json:"matched"`
	Extra   int `json:"extra"`
	Missed  int `json:"missed"`
	// Healthy is the number of audited nodes without the symptom.
	Healthy int     `json:"healthy"`
	Score   float64 `json:"score"`
	Exact   bool    `json:"exact"`
	// Also lists other facts with an equally good split, e.g. ufw.enabled
	// beside ufw.active.
	Also []string `json:"also,omitempty"`
	// Ranked are the best candidates, this one first, with their counts.
	Ranked []Candidate `json:"ranked,omitempty"`
}

// Verdict is what the comparator calls this cause: a "probable cause" when
// the fact splits the fleet exactly as the symptom does, else a "likely
// cause (near match)". Every report says it in these words.
func (c *Cause) Verdict() string {
	if c.Exact {
		return "probable cause"
	}
	return "likely cause (near match)"
}

// Headline is "probable cause of <symptoms>: <fact>=<value>", or for a
// split that is not exact "likely cause of …: … (near match)": the title of
// the correlation finding and every report's cause line.
func (c *Cause) Headline() string {
	of := strings.Join(c.SymptomChecks(), " and ")
	if c.Exact {
		return fmt.Sprintf("probable cause of %s: %s=%s", of, c.Fact, c.Value)
	}
	return fmt.Sprintf("likely cause of %s: %s=%s (near match)", of, c.Fact, c.Value)
}

// SymptomChecks are the symptom checks the cause explains. Symptoms lists
// them all when audit merged several (healthz 503 and CrashLoopBackOff on
// the same nodes); a report written before it existed has only Symptom.
func (c *Cause) SymptomChecks() []string {
	if len(c.Symptoms) > 0 {
		return c.Symptoms
	}
	return []string{c.Symptom}
}

// Candidate is one fact value scored against a symptom's split.
type Candidate struct {
	Fact    string  `json:"fact"`
	Value   string  `json:"value"`
	Matched int     `json:"matched"`
	Extra   int     `json:"extra"`
	Missed  int     `json:"missed"`
	Score   float64 `json:"score"`
}

// Drift is one fact whose value is not uniform within a scope.
type Drift struct {
	Fact     string       `json:"fact"`
	Scope    DriftScope   `json:"scope"`
	Majority string       `json:"majority"`
	Groups   []DriftGroup `json:"groups"`
}

// DriftScope is where a fact was compared: ScopeFleet, or the nodes of one
// role (RoleScope).
type DriftScope string

// ScopeFleet compares a fact across every audited node.
const ScopeFleet DriftScope = "fleet"

// RoleScope compares a fact across the nodes of one role: "role:<name>".
func RoleScope(role string) DriftScope { return DriftScope("role:" + role) }

// DriftGroup is the set of nodes sharing one value, like `clush -b` groups
// identical output. Groups are ordered largest first, then by value.
type DriftGroup struct {
	Value string   `json:"value"`
	Nodes []string `json:"nodes"`
}

// Outcome is how a check went on one node.
type Outcome string

const (
	OutcomePass Outcome = "pass"
	OutcomeFail Outcome = "fail"
	// OutcomeSkip: a fact the check needs was not reported on the node
	// (the thing it reads is not there), or the node could not be audited.
	OutcomeSkip Outcome = "skip"
	// OutcomeNotApplicable: the check does not apply to the node by
	// design: a fact it reads is a server_only setting (probe header) and
	// the node does not run RKE2 as a server. Not a gap in the audit: it
	// is counted apart from OutcomeUnjudged and never makes a node partial.
	OutcomeNotApplicable Outcome = "not_applicable"
	// OutcomeUnjudged: the check applies but could not be judged on the
	// node: a fact it reads holds a value that says it could not be read
	// (probe.Unjudgeable: not-root, unreadable) and no other condition
	// clears the node. Detail says which fact and why. It makes an
	// otherwise ok node StatusPartial.
	OutcomeUnjudged Outcome = "unjudged"
	// OutcomeWaived: the check fails but a waiver accepts it.
	OutcomeWaived Outcome = "waived"
)

// ClusterNode is the CheckResult.Node of a cluster-scoped check.
const ClusterNode = "(cluster)"

// CheckResult is one check judged on one node.
type CheckResult struct {
	Check    string   `json:"check"`
	Node     string   `json:"node"`
	Severity Severity `json:"severity"`
	Outcome  Outcome  `json:"outcome"`
	// Detail says what was seen, e.g. "ufw.active=active (want not active)".
	Detail string `json:"detail"`
}

// UnjoinedLabel says what the Kubernetes nodes UnjoinedK8sNodes lists are:
// in a run of part of the inventory (Partial) they may be inventory hosts
// left out of it.
func UnjoinedLabel(partial bool) string {
	if partial {
		return "not audited (outside the --limit or --shard, or not in the inventory)"
	}
	return "not in the inventory"
}

// Partial says the report audited part of the inventory on purpose
// (--limit, --shard): the hosts left out are not nodes of it, and a
// Kubernetes node no node matches may be one of them.
func (r *Report) Partial() bool { return r.Limit != nil || r.Shard != nil }

// Parts are the lines every report shows about which part of the
// inventory it audited: the --limit, then the shard; none for all of it.
func (r *Report) Parts() []string {
	var out []string
	if r.Limit != nil {
		out = append(out, r.Limit.Describe())
	}
	if r.Shard != nil {
		out = append(out, r.Shard.Describe(len(r.Nodes)))
	}
	return out
}

// UnjoinedK8sNodes lists the Kubernetes nodes the inventory does not name
// and the audit applies to.
func (c *Cluster) UnjoinedK8sNodes() []string {
	var out []string
	for k, inv := range c.Joined {
		_, ambiguous := c.Ambiguous[k]
		if _, na := c.NotApplicable[k]; inv == "" && !ambiguous && !na {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// NotApplicableK8sNodes lists the Kubernetes nodes the audit does not apply
// to that no inventory host names, each with its reason ("name: reason").
func (c *Cluster) NotApplicableK8sNodes() []string {
	var out []string
	for k, why := range c.NotApplicable {
		if c.Joined[k] == "" {
			out = append(out, k+": "+why)
		}
	}
	sort.Strings(out)
	return out
}

// Expired reports whether now is past the waiver's last day (UTC). A date
// that does not parse counts as expired, so a hand-built waiver with a bad
// date never waives anything silently.
func (w Waiver) Expired(now time.Time) bool {
	d, err := time.Parse(WaiverDate, w.Expires)
	if err != nil {
		return true
	}
	return !now.UTC().Before(d.AddDate(0, 0, 1))
}

// Covers reports whether the waiver applies to a node: a waiver naming no
// nodes and no roles covers every node.
func (w Waiver) Covers(n Node) bool {
	if len(w.Nodes) == 0 && len(w.Roles) == 0 {
		return true
	}
	if slices.Contains(w.Nodes, n.Name) {
		return true
	}
	for _, r := range n.Roles {
		if slices.Contains(w.Roles, r) {
			return true
		}
	}
	return false
}

// Scope says what the waiver covers, in every report and in its own
// evidence: "nodes a, b and roles etcd", or "all nodes".
func (w Waiver) Scope() string {
	var parts []string
	if len(w.Nodes) > 0 {
		parts = append(parts, "nodes "+strings.Join(w.Nodes, ", "))
	}
	if len(w.Roles) > 0 {
		parts = append(parts, "roles "+strings.Join(w.Roles, ", "))
	}
	if len(parts) == 0 {
		return "all nodes"
	}
	return strings.Join(parts, " and ")
}

// Describe is the waiver in one line: where it is defined, what it
// accepts on which nodes, until when and why.
func (w Waiver) Describe() string {
	return fmt.Sprintf("%s: %s on %s, expires %s: %s", w.Source, w.Check, w.Scope(), w.Expires, w.Reason)
}

// SortFindings orders findings by severity, waived ones last, correlation
// findings before the checks they explain, then by check id.
func SortFindings(fs []Finding) {
	rank := map[Kind]int{KindCorrelation: 0, KindCheck: 1, KindDrift: 2}
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if (a.Waived == nil) != (b.Waived == nil) {
			return a.Waived == nil
		}
		if c := a.Severity.Compare(b.Severity); c != 0 {
			return c > 0
		}
		if rank[a.Kind] != rank[b.Kind] {
			return rank[a.Kind] < rank[b.Kind]
		}
		return a.Check < b.Check
	})
}

// Limit is the --limit a run was given and what it selected.
type Limit struct {
	Pattern string `json:"pattern"`
	// Selected of the Inventory's hosts were audited.
	Selected  int `json:"selected"`
	Inventory int `json:"inventory"`
}

// Describe is how every report says the run was limited.
func (l *Limit) Describe() string {
	return fmt.Sprintf("limited to %s: %d of %d inventory hosts", l.Pattern, l.Selected, l.Inventory)
}

// Shard is a run --shard K/N: which share of the hosts it audited and what
// fleet-audit merge needs to tell its shards apart from another run's.
type Shard struct {
	// Index is K, from 1; Count is N.
	Index int `json:"index"`
	Count int `json:"count"`
	// RunID names the run the shard is part of (--run-id, or
	// FLEET_AUDIT_RUN_ID, such as the CI pipeline's id): every shard of
	// one run carries the same, and merge refuses shards of different
	// runs, since yesterday's clean shard says nothing about today's
	// hosts. With the digests below, the tool's version and the report's
	// start time it is the run's identity that merge's refusals name.
	RunID string `json:"run_id"`
	// Hosts are every host the N shards share out (the inventory after
	// --limit), in inventory order: merge orders the merged nodes as one
	// run would, and names the hosts of a shard it was not given.
	Hosts []string `json:"hosts"`
	// InventoryDigest is a digest of how each of those hosts resolved
	// (name, address, roles, become), so that shards of two inventories
	// whose host names agree are still never merged.
	InventoryDigest string `json:"inventory_digest"`
	// RulesDigest is a digest of the probes, checks, --only/--skip and
	// waivers that judged the shard: merge judges the union again and
	// must do so by the same rules.
	RulesDigest string `json:"rules_digest"`
}

// Describe is how every report says it is a shard.
func (s *Shard) Describe(audited int) string {
	return fmt.Sprintf("shard %d of %d: %d of %d hosts (fleet-audit merge joins the shards)", s.Index, s.Count, audited, len(s.Hosts))
}
