package result

import (
	"strings"
	"testing"
)

// TestEveryStatusIsExplained: a node's status reaches the operator with a
// line saying what it means, kept beside the status itself. Only ok and
// the statuses judged from the probes' output (explained per node, naming
// the probes or the sudo problem) have none here.
func TestEveryStatusIsExplained(t *testing.T) {
	perNode := map[NodeStatus]bool{StatusOK: true, StatusUnknown: true, StatusProbeFailed: true, StatusSudoPasswordRequired: true, StatusSudoTimeout: true}
	for s := range statusNames {
		if got := s.Meaning(); (got == "") != perNode[s] {
			t.Errorf("%s.Meaning() = %q", s, got)
		}
		back, err := ParseNodeStatus(s.String())
		if err != nil || back != s {
			t.Errorf("ParseNodeStatus(%q) = %v, %v", s, back, err)
		}
	}
}

// TestWaiverScope pins the one spelling of what a waiver covers, which the
// waiver's own evidence line and every report print.
func TestWaiverScope(t *testing.T) {
	for _, tc := range []struct {
		w    Waiver
		want string
	}{
		{Waiver{}, "all nodes"},
		{Waiver{Nodes: []string{"a", "b"}}, "nodes a, b"},
		{Waiver{Roles: []string{"etcd"}}, "roles etcd"},
		{Waiver{Nodes: []string{"a"}, Roles: []string{"etcd", "worker"}}, "nodes a and roles etcd, worker"},
	} {
		if got := tc.w.Scope(); got != tc.want {
			t.Errorf("Scope(%+v) = %q, want %q", tc.w, got, tc.want)
		}
	}
}

func TestSeverityRankAndThreshold(t *testing.T) {
	// SeverityOrder is the one order; a value with no name ranks as unknown.
	for i, s := range SeverityOrder {
		if s.Rank() != len(SeverityOrder)-i {
			t.Errorf("%s rank %d, want %d", s, s.Rank(), len(SeverityOrder)-i)
		}
	}
	if Severity(7).Rank() != SeverityUnknown.Rank() {
		t.Errorf("severity(7) ranks %d, want unknown's %d", Severity(7).Rank(), SeverityUnknown.Rank())
	}
	for _, tc := range []struct {
		sev, min Severity
		want     bool
	}{
		{SeverityCritical, SeverityCritical, true},
		{SeverityWarning, SeverityCritical, false},
		{SeverityInfo, SeverityWarning, false},
		{SeverityWarning, SeverityInfo, true},
		{SeverityUnknown, SeverityCritical, true},
		{Severity(7), SeverityCritical, true},
		{SeverityInfo, SeverityUnknown, true},
	} {
		if got := tc.sev.AtLeast(tc.min); got != tc.want {
			t.Errorf("%s.AtLeast(%s) = %v, want %v", tc.sev, tc.min, got, tc.want)
		}
	}
}

// TestSeverityNames: the names usage lines list are every severity a
// check or --fail-on may give, most severe first, each parsing back.
func TestSeverityNames(t *testing.T) {
	names := SeverityNames()
	if len(names) != len(severityNames)-1 {
		t.Errorf("SeverityNames() = %q: want every severity but unknown", names)
	}
	prev := SeverityUnknown
	for i, n := range names {
		s, err := ParseSeverity(n)
		if err != nil || i > 0 && s >= prev {
			t.Errorf("SeverityNames()[%d] = %q parses to %v, %v: want a severity below %v", i, n, s, err, prev)
		}
		prev = s
	}
	if _, err := ParseSeverity("fatal"); err == nil || !strings.Contains(err.Error(), strings.Join(names, ", ")) {
		t.Errorf("ParseSeverity(fatal) = %v: want the names listed", err)
	}
}
