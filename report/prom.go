package report

import (
	"bytes"
	"io"
	"strconv"
	"strings"

	"github.com/fleet-audit/fleet-audit/result"
)

var _ Formatter = (*Prom)(nil)

// Prom writes the report as a Prometheus text exposition (format 0.0.4,
// prometheus.io/docs/instrumenting/exposition_formats), for node_exporter's
// textfile collector: a nightly `fleet-audit run --prom DIR/fleet-audit.prom`
// turns each audit into series an alert rule can watch. Like JSON and JUnit
// it depends on the report alone, so `fleet-audit report` re-renders a saved
// run into the same file.
//
// No sample carries a timestamp: the textfile collector refuses files with
// client-side timestamps (node_exporter README, "Textfile Collector"). When
// the audit ran is fleet_audit_run_timestamp_seconds instead.
type Prom struct{}

func (p *Prom) Format(w io.Writer, r *result.Report) error {
	var out bytes.Buffer
	for _, f := range promFamilies(r) {
		// A family without samples is left out whole: the series is
		// absent, as "absent when the report does not say" promises.
		if len(f.samples) > 0 {
			f.write(&out)
		}
	}
	_, err := w.Write(out.Bytes())
	return err
}

// promFamilies are the metrics of a report, in the order they are written.
//
// Every series carries the inventory's name, so that the files of several
// fleets audited from one host (a timer per cluster) can lie
// in the same textfile directory: node_exporter refuses a series that two
// files both write.
//
// Waived findings are kept, with waived="true", rather than left out: every
// report of this tool shows an accepted risk as accepted, never as fixed,
// and a dashboard should too. The gate's own verdict is
// fleet_audit_gate_passed; an alert on single findings selects
// waived="false".
func promFamilies(r *result.Report) []*promFamily {
	newFamily := func(name, help string) *promFamily {
		return &promFamily{name: name, help: help, inventory: r.Inventory, seen: map[string]bool{}}
	}
	info := newFamily("fleet_audit_info", "The fleet-audit version that wrote this file, the RKE2 version the fleet is checked against (--target-version) and the change ticket the run is for (--change-id). Every series has the inventory's name as its inventory label.")
	changeID := ""
	if r.Change != nil {
		changeID = r.Change.ID
	}
	info.add(1, "version", r.Tool.Version, "target_version", r.TargetVersion, "change_id", changeID)

	finished := newFamily("fleet_audit_run_timestamp_seconds", "When the audit finished, in seconds since the Unix epoch; absent when the saved report does not say.")
	duration := newFamily("fleet_audit_run_duration_seconds", "How long the audit took, in seconds; absent when the saved report does not say.")
	if !r.FinishedAt.IsZero() {
		finished.add(float64(r.FinishedAt.UnixMilli()) / 1e3)
		if !r.StartedAt.IsZero() && !r.FinishedAt.Before(r.StartedAt) {
			duration.add(r.FinishedAt.Sub(r.StartedAt).Seconds())
		}
	}

	passed := newFamily("fleet_audit_gate_passed", "1 if the upgrade gate passed, 0 if it failed; fail_on is the severity at which findings fail it (--fail-on).")
	passed.add(bool01(r.Gate.Passed), "fail_on", r.Gate.FailOn.String())
	exit := newFamily("fleet_audit_gate_exit_code", "The exit status of fleet-audit run: 0 passed, 1 findings at or above --fail-on, 3 nodes not audited, 130 interrupted.")
	exit.add(float64(r.Gate.ExitCode))
	warnings := newFamily("fleet_audit_run_warnings", "Warnings about the run itself that make its results less trustworthy (e.g. host keys not verified); the reports say which.")
	warnings.add(float64(len(r.Warnings)))

	up := newFamily("fleet_audit_node_up", "1 if the node was audited (its facts were judged, perhaps only some of them), 0 if it was not; roles are its inventory roles, comma-separated.")
	status := newFamily("fleet_audit_node_status", "1 for the node's audit status (ok, unreachable, auth_failed, probe_timeout, ...).")
	for _, n := range r.Nodes {
		up.add(bool01(n.Status.HasFacts()), "node", n.Name, "roles", strings.Join(n.Roles, ","))
		status.add(1, "node", n.Name, "status", n.Status.String())
	}

	counts := newFamily("fleet_audit_findings", "Findings by severity; waived=\"true\" counts those a waiver accepts, which do not fail the gate.")
	finding := newFamily("fleet_audit_finding", "1 for each node a finding concerns; node=\"(cluster)\" for a finding about the cluster as a whole. Waived findings have waived=\"true\".")
	perSeverity := map[result.Severity][2]int{}
	for _, f := range orderFindings(r.Findings) {
		waived := f.Waived != nil
		c := perSeverity[f.Severity]
		c[btoi(waived)]++
		perSeverity[f.Severity] = c
		nodes := f.Nodes
		if len(nodes) == 0 {
			nodes = []string{result.ClusterNode}
		}
		for _, n := range nodes {
			finding.add(1, "check", f.Check, "severity", f.Severity.String(), "node", n, "waived", strconv.FormatBool(waived))
		}
	}
	// Every severity is written, zeros included, so that an alert on
	// fleet_audit_findings{severity="critical"} > 0 resolves when the
	// last one is fixed rather than finding the series gone.
	for _, sev := range result.SeverityOrder {
		c := perSeverity[sev]
		if sev == result.SeverityUnknown && c == [2]int{} {
			continue
		}
		counts.add(float64(c[0]), "severity", sev.String(), "waived", "false")
		counts.add(float64(c[1]), "severity", sev.String(), "waived", "true")
	}

	drifting := newFamily("fleet_audit_drift_facts", "Facts whose value differs between audited nodes in at least one scope (the fleet, or the nodes of one role).")
	byScope := newFamily("fleet_audit_drift_facts_by_scope", "Facts whose value differs between the audited nodes of a scope: fleet, or role:NAME.")
	facts := map[string]bool{}
	var scopes []string
	perScope := map[string]int{}
	for _, d := range r.Drift {
		facts[d.Fact] = true
		if _, ok := perScope[string(d.Scope)]; !ok {
			scopes = append(scopes, string(d.Scope))
		}
		perScope[string(d.Scope)]++
	}
	drifting.add(float64(len(facts)))
	// The fleet scope is always written, so a clean fleet reads 0.
	if _, ok := perScope[string(result.ScopeFleet)]; !ok {
		byScope.add(0, "scope", string(result.ScopeFleet))
	}
	for _, s := range scopes {
		byScope.add(float64(perScope[s]), "scope", s)
	}

	// A state set (one series per verdict, 1 for the area's), as
	// kube-state-metrics writes a pod's phase: an alert on
	// verdict="blocked" resolves when the area's series turns 0, instead
	// of finding it gone.
	readiness := newFamily("fleet_audit_readiness", "1 for each area's verdict (blocked, warnings, not_judged, not_checked, ready), 0 for the others: the decision broken down into network, control plane, etcd, certificates, removed APIs, drain, node health and versions.")
	for _, a := range r.Readiness {
		for _, v := range result.Verdicts {
			readiness.add(bool01(a.Verdict == v), "area", string(a.Area), "verdict", string(v))
		}
	}

	return []*promFamily{info, finished, duration, passed, exit, warnings, up, status, counts, finding, readiness, drifting, byScope}
}

// promFamily is one metric: its HELP and TYPE lines and its samples. All
// are gauges: every file describes one audit, and nothing in it counts up
// across audits.
type promFamily struct {
	name, help string
	// inventory is the first label of every sample.
	inventory string
	samples   []string
	// seen holds the label sets written, so that two samples cannot have
	// the same series (a saved report edited by hand may repeat a node):
	// node_exporter refuses a metric collected twice.
	seen map[string]bool
}

// add appends a sample with the label names and values given in pairs.
// The first sample of a series wins.
func (f *promFamily) add(value float64, labelPairs ...string) {
	var b strings.Builder
	b.WriteString(`{inventory="` + promLabelValue(f.inventory) + `"`)
	for i := 0; i+1 < len(labelPairs); i += 2 {
		b.WriteString("," + labelPairs[i] + `="` + promLabelValue(labelPairs[i+1]) + `"`)
	}
	b.WriteByte('}')
	labels := b.String()
	if f.seen[labels] {
		return
	}
	f.seen[labels] = true
	f.samples = append(f.samples, f.name+labels+" "+strconv.FormatFloat(value, 'f', -1, 64))
}

func (f *promFamily) write(w *bytes.Buffer) {
	w.WriteString("# HELP " + f.name + " " + promHelp(f.help) + "\n")
	w.WriteString("# TYPE " + f.name + " gauge\n")
	for _, s := range f.samples {
		w.WriteString(s + "\n")
	}
}

// promLabelValue escapes a label value as the text format requires:
// backslash, double quote and line feed as \\, \" and \n. Node names and
// check ids come from inventories and probe directories the tool does not
// control, so a raw quote or newline would end the value early and let the
// rest of a name write series of its own. The format reads label values as
// UTF-8 and promtool refuses one that is not, so invalid bytes become U+FFFD.
var promLabelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

func promLabelValue(s string) string {
	return promLabelEscaper.Replace(strings.ToValidUTF8(s, "\uFFFD"))
}

// promHelp escapes a HELP text: there only backslash and line feed are
// special (exposition format, "Comments, help text, and type information").
var promHelpEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`)

func promHelp(s string) string { return promHelpEscaper.Replace(strings.ToValidUTF8(s, "\uFFFD")) }

func bool01(b bool) float64 { return float64(btoi(b)) }

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
