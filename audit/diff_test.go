package audit

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/result"
)

func diffNode(name string, status result.NodeStatus, facts map[string]string, probes ...result.ProbeRun) result.Node {
	if probes == nil {
		probes = []result.ProbeRun{{ID: "os", Status: "ok"}, {ID: "host", Status: "ok"}}
	}
	return result.Node{Name: name, Status: status, Facts: facts, Probes: probes}
}

func diffFinding(check string, sev result.Severity, nodes ...string) result.Finding {
	return result.Finding{Check: check, Kind: result.KindCheck, Title: check + " title", Severity: sev, Nodes: nodes}
}

var diffOpts = DiffOptions{
	Volatile: map[string]bool{"host.load1": true},
	ProbeOf:  map[string]string{"os.kernel": "os", "rke2.version": "os", "host.load1": "host", "host.swap": "host"},
	FailOn:   result.SeverityCritical,
}

func baseRun() *result.Report {
	f := func(kernel string) map[string]string {
		return map[string]string{"os.kernel": kernel, "rke2.version": "v1.31.4+rke2r1", "host.load1": "0.5", "host.swap": "off"}
	}
	return &result.Report{
		Nodes: []result.Node{
			diffNode("a", result.StatusOK, f("6.8.0-49")),
			diffNode("b", result.StatusOK, f("6.8.0-49")),
			diffNode("c", result.StatusOK, f("6.8.0-51")),
		},
		Findings: []result.Finding{diffFinding("drift.os.kernel", result.SeverityWarning, "c")},
		Cluster:  &result.Cluster{Status: result.ClusterOK, Facts: map[string]string{"cluster.server_version": "v1.31.4+rke2r1"}, Probes: []result.ProbeRun{{ID: "cluster", Status: "ok"}}},
	}
}

// clone goes through JSON, the way saved runs reach Compare.
func clone(t *testing.T, r *result.Report) *result.Report {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var c result.Report
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

func TestCompare(t *testing.T) {
	type want struct {
		added, removed []string
		status         []string // "node before->after"
		facts          []string // "fact change before->after nodes"
		newF, resolved []string // "check sev[<was] nodes"
		exit           int
	}
	cases := []struct {
		name   string
		after  func(r *result.Report)
		opts   func(o *DiffOptions)
		expect want
	}{
		{"identical runs", func(*result.Report) {}, nil, want{}},
		{"upgrade moves one fact the same way everywhere", func(r *result.Report) {
			for i := range r.Nodes {
				r.Nodes[i].Facts["rke2.version"] = "v1.32.1+rke2r1"
			}
			r.Cluster.Facts["cluster.server_version"] = "v1.32.1+rke2r1"
		}, nil, want{facts: []string{
			"cluster.server_version changed v1.31.4+rke2r1->v1.32.1+rke2r1 (cluster)",
			"rke2.version changed v1.31.4+rke2r1->v1.32.1+rke2r1 a,b,c",
		}}},
		{"different old values stay separate groups", func(r *result.Report) {
			for i := range r.Nodes {
				r.Nodes[i].Facts["os.kernel"] = "6.8.0-60"
			}
			r.Findings = nil
		}, nil, want{
			facts:    []string{"os.kernel changed 6.8.0-49->6.8.0-60 a,b", "os.kernel changed 6.8.0-51->6.8.0-60 c"},
			resolved: []string{"drift.os.kernel warning c"},
		}},
		{"volatile facts are left out", func(r *result.Report) { r.Nodes[0].Facts["host.load1"] = "9.0" }, nil, want{}},
		{"volatile facts on request", func(r *result.Report) { r.Nodes[0].Facts["host.load1"] = "9.0" },
			func(o *DiffOptions) { o.IncludeVolatile = true },
			want{facts: []string{"host.load1 changed 0.5->9.0 a"}}},
		{"added and removed facts", func(r *result.Report) {
			delete(r.Nodes[1].Facts, "host.swap")
			r.Nodes[1].Facts["ufw.active"] = "active"
		}, nil, want{facts: []string{"host.swap removed off-> b", "ufw.active added ->active b"}}},
		{"a probe that timed out does not remove its facts", func(r *result.Report) {
			r.Nodes[1].Status = result.StatusProbeTimeout
			r.Nodes[1].Probes = []result.ProbeRun{{ID: "os", Status: "ok"}, {ID: "host", Status: "timeout"}}
			delete(r.Nodes[1].Facts, "host.swap")
			delete(r.Nodes[1].Facts, "os.kernel")
		}, nil, want{status: []string{"b ok->probe_timeout"}, facts: []string{"os.kernel removed 6.8.0-49-> b"}}},
		{"a new critical fails the diff", func(r *result.Report) {
			r.Findings = append(r.Findings, diffFinding("firewall.ufw-active", result.SeverityCritical, "a", "b"))
		}, nil, want{newF: []string{"firewall.ufw-active critical a,b"}, exit: result.ExitGateFailed}},
		{"a new warning passes at fail-on critical", func(r *result.Report) {
			r.Findings = append(r.Findings, diffFinding("host.swap-on", result.SeverityWarning, "a"))
		}, nil, want{newF: []string{"host.swap-on warning a"}}},
		{"a new warning fails at fail-on warning", func(r *result.Report) {
			r.Findings = append(r.Findings, diffFinding("host.swap-on", result.SeverityWarning, "a"))
		}, func(o *DiffOptions) { o.FailOn = result.SeverityWarning }, want{newF: []string{"host.swap-on warning a"}, exit: result.ExitGateFailed}},
		{"escalation to critical is new", func(r *result.Report) {
			r.Findings[0].Severity = result.SeverityCritical
		}, nil, want{newF: []string{"drift.os.kernel critical<warning c"}, exit: result.ExitGateFailed}},
		{"de-escalation is resolved, not new", func(r *result.Report) { r.Findings[0].Severity = result.SeverityInfo }, nil,
			want{resolved: []string{"drift.os.kernel warning>info c"}}},
		{"a finding spreading to one more node names only that node", func(r *result.Report) {
			r.Findings[0].Nodes = []string{"b", "c"}
		}, nil, want{newF: []string{"drift.os.kernel warning b"}}},
		{"a waiver resolves, an expired waiver brings it back", func(r *result.Report) {
			r.Findings[0].Waived = &result.Waiver{Check: "drift.os.kernel", Reason: "accepted"}
		}, nil, want{resolved: []string{"drift.os.kernel warning c"}}},
		{"new node brings its findings", func(r *result.Report) {
			r.Nodes = append(r.Nodes, diffNode("d", result.StatusOK, map[string]string{"os.kernel": "6.8.0-49"}))
			r.Findings = append(r.Findings, diffFinding("sysctl.ip-forward", result.SeverityCritical, "d"))
		}, nil, want{added: []string{"d"}, newF: []string{"sysctl.ip-forward critical d"}, exit: result.ExitGateFailed}},
		{"removed node resolves nothing", func(r *result.Report) {
			r.Nodes = r.Nodes[:2]
			r.Findings = nil
		}, nil, want{removed: []string{"c"}}},
		{"a node lost after is not resolved and gates 3", func(r *result.Report) {
			r.Nodes[2] = result.Node{Name: "c", Status: result.StatusUnreachable, Message: "connection refused"}
			r.Findings = nil
		}, nil, want{status: []string{"c ok->unreachable"}, exit: result.ExitUnaudited}},
		{"allow-unreachable", func(r *result.Report) {
			r.Nodes[2] = result.Node{Name: "c", Status: result.StatusUnreachable}
		}, func(o *DiffOptions) { o.AllowUnreachable = true }, want{status: []string{"c ok->unreachable"}}},
		{"a critical outranks the lost node in the exit code", func(r *result.Report) {
			r.Nodes[2] = result.Node{Name: "c", Status: result.StatusUnreachable}
			r.Findings = []result.Finding{diffFinding("firewall.ufw-active", result.SeverityCritical, "a")}
		}, nil, want{status: []string{"c ok->unreachable"}, newF: []string{"firewall.ufw-active critical a"}, exit: result.ExitGateFailed}},
		{"fleet-wide findings compare as the cluster", func(r *result.Report) {
			r.Findings = append(r.Findings, diffFinding("skew.servers", result.SeverityCritical))
		}, nil, want{newF: []string{"skew.servers critical (cluster)"}, exit: result.ExitGateFailed}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := baseRun()
			after := clone(t, before)
			tc.after(after)
			o := diffOpts
			if tc.opts != nil {
				tc.opts(&o)
			}
			d := Compare(clone(t, before), after, o)
			got := want{added: d.NodesAdded, removed: d.NodesRemoved, exit: d.Gate.ExitCode}
			for _, s := range d.StatusChanges {
				got.status = append(got.status, s.Node+" "+s.Before.String()+"->"+s.After.String())
			}
			for _, f := range d.FactChanges {
				got.facts = append(got.facts, f.Fact+" "+f.Change+" "+f.Before+"->"+f.After+" "+strings.Join(f.Nodes, ","))
			}
			show := func(fs []result.DiffFinding) (out []string) {
				for _, f := range fs {
					sev := f.Severity.String()
					if f.Was != result.SeverityUnknown {
						sev += "<" + f.Was.String()
					}
					if f.Now != result.SeverityUnknown {
						sev += ">" + f.Now.String()
					}
					out = append(out, f.Check+" "+sev+" "+strings.Join(f.Nodes, ","))
				}
				return out
			}
			got.newF, got.resolved = show(d.NewFindings), show(d.ResolvedFindings)
			norm := func(w *want) {
				for _, s := range []*[]string{&w.added, &w.removed, &w.status, &w.facts, &w.newF, &w.resolved} {
					if len(*s) == 0 {
						*s = nil
					}
				}
			}
			norm(&got)
			norm(&tc.expect)
			if !reflect.DeepEqual(got, tc.expect) {
				t.Errorf("got  %+v\nwant %+v", got, tc.expect)
			}
			if d.Gate.Passed != (d.Gate.ExitCode == 0) || (d.Gate.ExitCode != 0) != (len(d.Gate.Reasons) > 0) {
				t.Errorf("gate inconsistent: %+v", d.Gate)
			}
		})
	}
}

// The real probes' metadata marks counters volatile, so a diff of two
// healthy runs minutes apart is empty.
func TestDiffOptionsForBuiltinProbes(t *testing.T) {
	probes, err := probe.BuiltinProbes()
	if err != nil {
		t.Fatal(err)
	}
	o := DiffOptionsFor(probes)
	if !o.Volatile["conntrack.count"] || o.Volatile["ufw.active"] {
		t.Errorf("volatile set wrong: conntrack.count=%v ufw.active=%v", o.Volatile["conntrack.count"], o.Volatile["ufw.active"])
	}
	if o.ProbeOf["ufw.active"] != "firewall" || o.FailOn != result.SeverityCritical {
		t.Errorf("ProbeOf[ufw.active]=%q FailOn=%v", o.ProbeOf["ufw.active"], o.FailOn)
	}
}

// TestCompareWarnings: a diff says when its runs are of two inventories,
// and carries each run's own warnings, marked with the run.
func TestCompareWarnings(t *testing.T) {
	before := baseRun()
	before.Inventory = "prod"
	after := clone(t, before)
	if d := Compare(before, after, DiffOptions{}); len(d.Warnings) != 0 {
		t.Errorf("same inventory, no warnings: got %q", d.Warnings)
	}
	after.Inventory = "staging"
	after.Warnings = []string{"host keys were NOT verified for 1 node (a)"}
	d := Compare(before, after, DiffOptions{})
	if len(d.Warnings) != 2 || !strings.Contains(d.Warnings[0], `different inventories ("prod" before, "staging" after)`) ||
		d.Warnings[1] != "after: host keys were NOT verified for 1 node (a)" {
		t.Errorf("warnings %q", d.Warnings)
	}
}
