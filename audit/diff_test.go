package audit

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func diffNode(name string, status NodeStatus, facts map[string]string, probes ...ProbeRun) Node {
	if probes == nil {
		probes = []ProbeRun{{ID: "os", Status: "ok"}, {ID: "host", Status: "ok"}}
	}
	return Node{Name: name, Status: status, Facts: facts, Probes: probes}
}

func diffFinding(check string, sev Severity, nodes ...string) Finding {
	return Finding{Check: check, Kind: KindCheck, Title: check + " title", Severity: sev, Nodes: nodes}
}

var diffOpts = DiffOptions{
	Volatile: map[string]bool{"host.load1": true},
	ProbeOf:  map[string]string{"os.kernel": "os", "rke2.version": "os", "host.load1": "host", "host.swap": "host"},
	FailOn:   SeverityCritical,
}

func baseRun() *Report {
	f := func(kernel string) map[string]string {
		return map[string]string{"os.kernel": kernel, "rke2.version": "v1.31.4+rke2r1", "host.load1": "0.5", "host.swap": "off"}
	}
	return &Report{
		Nodes: []Node{
			diffNode("a", StatusOK, f("6.8.0-49")),
			diffNode("b", StatusOK, f("6.8.0-49")),
			diffNode("c", StatusOK, f("6.8.0-51")),
		},
		Findings: []Finding{diffFinding("drift.os.kernel", SeverityWarning, "c")},
		Cluster:  &Cluster{Status: ClusterOK, Facts: map[string]string{"cluster.server_version": "v1.31.4+rke2r1"}, Probes: []ProbeRun{{ID: "cluster", Status: "ok"}}},
	}
}

// clone goes through JSON, the way saved runs reach Compare.
func clone(t *testing.T, r *Report) *Report {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var c Report
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
		after  func(r *Report)
		opts   func(o *DiffOptions)
		expect want
	}{
		{"identical runs", func(*Report) {}, nil, want{}},
		{"upgrade moves one fact the same way everywhere", func(r *Report) {
			for i := range r.Nodes {
				r.Nodes[i].Facts["rke2.version"] = "v1.32.1+rke2r1"
			}
			r.Cluster.Facts["cluster.server_version"] = "v1.32.1+rke2r1"
		}, nil, want{facts: []string{
			"cluster.server_version changed v1.31.4+rke2r1->v1.32.1+rke2r1 (cluster)",
			"rke2.version changed v1.31.4+rke2r1->v1.32.1+rke2r1 a,b,c",
		}}},
		{"different old values stay separate groups", func(r *Report) {
			for i := range r.Nodes {
				r.Nodes[i].Facts["os.kernel"] = "6.8.0-60"
			}
			r.Findings = nil
		}, nil, want{
			facts:    []string{"os.kernel changed 6.8.0-49->6.8.0-60 a,b", "os.kernel changed 6.8.0-51->6.8.0-60 c"},
			resolved: []string{"drift.os.kernel warning c"},
		}},
		{"volatile facts are left out", func(r *Report) { r.Nodes[0].Facts["host.load1"] = "9.0" }, nil, want{}},
		{"volatile facts on request", func(r *Report) { r.Nodes[0].Facts["host.load1"] = "9.0" },
			func(o *DiffOptions) { o.IncludeVolatile = true },
			want{facts: []string{"host.load1 changed 0.5->9.0 a"}}},
		{"added and removed facts", func(r *Report) {
			delete(r.Nodes[1].Facts, "host.swap")
			r.Nodes[1].Facts["ufw.active"] = "active"
		}, nil, want{facts: []string{"host.swap removed off-> b", "ufw.active added ->active b"}}},
		{"a probe that timed out does not remove its facts", func(r *Report) {
			r.Nodes[1].Status = StatusProbeTimeout
			r.Nodes[1].Probes = []ProbeRun{{ID: "os", Status: "ok"}, {ID: "host", Status: "timeout"}}
			delete(r.Nodes[1].Facts, "host.swap")
			delete(r.Nodes[1].Facts, "os.kernel")
		}, nil, want{status: []string{"b ok->probe_timeout"}, facts: []string{"os.kernel removed 6.8.0-49-> b"}}},
		{"a new critical fails the diff", func(r *Report) {
			r.Findings = append(r.Findings, diffFinding("firewall.ufw-active", SeverityCritical, "a", "b"))
		}, nil, want{newF: []string{"firewall.ufw-active critical a,b"}, exit: ExitGateFailed}},
		{"a new warning passes at fail-on critical", func(r *Report) {
			r.Findings = append(r.Findings, diffFinding("host.swap-on", SeverityWarning, "a"))
		}, nil, want{newF: []string{"host.swap-on warning a"}}},
		{"a new warning fails at fail-on warning", func(r *Report) {
			r.Findings = append(r.Findings, diffFinding("host.swap-on", SeverityWarning, "a"))
		}, func(o *DiffOptions) { o.FailOn = SeverityWarning }, want{newF: []string{"host.swap-on warning a"}, exit: ExitGateFailed}},
		{"escalation to critical is new", func(r *Report) {
			r.Findings[0].Severity = SeverityCritical
		}, nil, want{newF: []string{"drift.os.kernel critical<warning c"}, exit: ExitGateFailed}},
		{"de-escalation is resolved, not new", func(r *Report) { r.Findings[0].Severity = SeverityInfo }, nil,
			want{resolved: []string{"drift.os.kernel warning>info c"}}},
		{"a finding spreading to one more node names only that node", func(r *Report) {
			r.Findings[0].Nodes = []string{"b", "c"}
		}, nil, want{newF: []string{"drift.os.kernel warning b"}}},
		{"a waiver resolves, an expired waiver brings it back", func(r *Report) {
			r.Findings[0].Waived = &Waiver{Check: "drift.os.kernel", Reason: "accepted"}
		}, nil, want{resolved: []string{"drift.os.kernel warning c"}}},
		{"new node brings its findings", func(r *Report) {
			r.Nodes = append(r.Nodes, diffNode("d", StatusOK, map[string]string{"os.kernel": "6.8.0-49"}))
			r.Findings = append(r.Findings, diffFinding("sysctl.ip-forward", SeverityCritical, "d"))
		}, nil, want{added: []string{"d"}, newF: []string{"sysctl.ip-forward critical d"}, exit: ExitGateFailed}},
		{"removed node resolves nothing", func(r *Report) {
			r.Nodes = r.Nodes[:2]
			r.Findings = nil
		}, nil, want{removed: []string{"c"}}},
		{"a node lost after is not resolved and gates 3", func(r *Report) {
			r.Nodes[2] = Node{Name: "c", Status: StatusUnreachable, Message: "connection refused"}
			r.Findings = nil
		}, nil, want{status: []string{"c ok->unreachable"}, exit: ExitUnaudited}},
		{"allow-unreachable", func(r *Report) {
			r.Nodes[2] = Node{Name: "c", Status: StatusUnreachable}
		}, func(o *DiffOptions) { o.AllowUnreachable = true }, want{status: []string{"c ok->unreachable"}}},
		{"a critical outranks the lost node in the exit code", func(r *Report) {
			r.Nodes[2] = Node{Name: "c", Status: StatusUnreachable}
			r.Findings = []Finding{diffFinding("firewall.ufw-active", SeverityCritical, "a")}
		}, nil, want{status: []string{"c ok->unreachable"}, newF: []string{"firewall.ufw-active critical a"}, exit: ExitGateFailed}},
		{"fleet-wide findings compare as the cluster", func(r *Report) {
			r.Findings = append(r.Findings, diffFinding("skew.servers", SeverityCritical))
		}, nil, want{newF: []string{"skew.servers critical (cluster)"}, exit: ExitGateFailed}},
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
			show := func(fs []DiffFinding) (out []string) {
				for _, f := range fs {
					sev := f.Severity.String()
					if f.Was != SeverityUnknown {
						sev += "<" + f.Was.String()
					}
					if f.Now != SeverityUnknown {
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
	probes, err := BuiltinProbes()
	if err != nil {
		t.Fatal(err)
	}
	o := DiffOptionsFor(probes)
	if !o.Volatile["conntrack.count"] || o.Volatile["ufw.active"] {
		t.Errorf("volatile set wrong: conntrack.count=%v ufw.active=%v", o.Volatile["conntrack.count"], o.Volatile["ufw.active"])
	}
	if o.ProbeOf["ufw.active"] != "firewall" || o.FailOn != SeverityCritical {
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
