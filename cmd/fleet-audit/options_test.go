package main

import (
	"context"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/audit"
	"github.com/fleet-audit/fleet-audit/inventory"
	"github.com/fleet-audit/fleet-audit/remote"
	"github.com/fleet-audit/fleet-audit/report"
	"github.com/fleet-audit/fleet-audit/result"
)

// parseArgs runs the CLI on argv with every command's action replaced by
// one that keeps the options it is given: the flags are parsed, nothing is
// read, dialled or written. It returns those options (nil when no action
// ran), the exit code and stderr.
func parseArgs(argv ...string) (any, int, string) {
	var got any
	a := actions{
		run:       keep[runOptions](&got),
		demo:      keep[demoOptions](&got),
		report:    keep[reportOptions](&got),
		diff:      keep[diffOptions](&got),
		probes:    keep[probesOptions](&got),
		explain:   keep[explainOptions](&got),
		inventory: keep[inventoryOptions](&got),
		discover:  keep[discoverOptions](&got),
		merge:     keep[mergeOptions](&got),
	}
	var stderr strings.Builder
	app := newApp(io.Discard, io.Discard, a)
	code := exitFor(runApp(context.Background(), app, append([]string{"fleet-audit"}, argv...)), &stderr)
	return got, code, stderr.String()
}

func keep[O any](got *any) func(context.Context, O, streams) error {
	return func(_ context.Context, o O, _ streams) error {
		*got = o
		return nil
	}
}

// runDefaults is what run's options are with only -i given.
func runDefaults(inv string) runOptions {
	return runOptions{
		Inventory: inventorySource{Path: inv}, Forks: 10, ConnectTimeout: 10 * time.Second, NodeTimeout: 2 * time.Minute,
		FailOn: result.SeverityCritical, Outputs: map[string]string{}, Thresholds: audit.DefaultThresholds(),
	}
}

// fromCluster is what run's options are with only --from-cluster and the
// cluster's flags given.
func fromCluster(cs clusterSource) runOptions {
	o := runDefaults("")
	o.FromCluster, o.Cluster = true, cs
	return o
}

// TestFlags parses each command's argv into its options struct, apart
// from what the command then does: defaults, every flag, and the bad
// values that must exit 2 before anything is read.
func TestFlags(t *testing.T) {
	full := runDefaults("inv.yaml")
	full.Inventory.SSHConfig, full.NoAgent, full.Forks, full.ConnectTimeout, full.NodeTimeout = "cfg", true, 3, time.Second, time.Minute
	full.FailOn, full.AllowUnreachable, full.HostKeyPolicy, full.Quiet, full.Verbose = result.SeverityWarning, true, remote.HostKeyAcceptNew, true, true
	full.Outputs = map[string]string{"json": "r.json", "markdown": "r.md", "html": "-", "junit": "j.xml"}
	full.WaiversPath, full.ProbesDir, full.Only, full.Skip = "w.yaml", "site", []string{"a", "b"}, []string{"c"}
	full.TargetVersion = "v1.31.4+rke2r1"
	full.Inventory.RoleMap = map[string]string{"k8s_masters": "server", "infra": "infra"}
	full.Inventory.Limit, full.RetryFile = "etcd:!etcd-2", "retry.txt"

	// A shard's run id may come from the variable; this test gives flags.
	t.Setenv(runIDEnv, "")
	demoDefaults := runDefaults("")
	demoDefaults.Inventory = inventorySource{}
	demoFull := demoDefaults
	demoFull.FailOn, demoFull.Forks, demoFull.Quiet, demoFull.Skip, demoFull.ProbesDir = result.SeverityInfo, 2, true, []string{"conntrack.*"}, "p"

	tests := []struct {
		name    string
		argv    []string
		want    any
		wantErr string // stderr holds it, and the exit is 2
	}{
		{"run defaults", []string{"run", "-i", "inv.yaml"}, runDefaults("inv.yaml"), ""},
		{"run every flag", []string{"run", "-i", "inv.yaml", "-F", "cfg", "--no-agent", "--forks", "3", "--connect-timeout", "1s",
			"--node-timeout", "1m", "--fail-on", "warning", "--allow-unreachable", "--host-key-policy", "accept-new", "-q", "-v",
			"--json", "r.json", "--markdown", "r.md", "--html", "-", "--junit", "j.xml", "--waivers", "w.yaml", "--probes", "site",
			"--only", "a, b,", "--skip", "c", "--target-version", " v1.31.4+rke2r1 ", "--role-map", "k8s_masters=server, infra=infra", "-l", "etcd:!etcd-2", "--retry-file", "retry.txt"}, full, ""},
		{"run empty limit", []string{"run", "-i", "i", "--limit", " "}, nil, "--limit"},
		{"run ssh habits", []string{"run", "-i", "i", "-f", "3", "-T", "5", "--node-timeout", "90", "-u", "ops", "-J", "ops@bastion:2222", "-o", "Port=2200", "-o", "IdentitiesOnly yes"},
			func() runOptions {
				o := runDefaults("i")
				o.Forks, o.ConnectTimeout, o.NodeTimeout = 3, 5*time.Second, 90*time.Second
				o.Inventory.SSH = inventory.CommandLine{User: "ops", Jump: "ops@bastion:2222", Options: []string{"Port=2200", "IdentitiesOnly yes"}}
				return o
			}(), ""},
		{"run bad timeout", []string{"run", "-i", "i", "--connect-timeout", "5x"}, nil, "number of seconds"},
		{"run bad role-map", []string{"run", "-i", "i", "--role-map", "masters"}, nil, "--role-map"},
		{"run host-key-policy strict given", []string{"run", "-i", "i", "--host-key-policy", "strict"},
			func() runOptions { o := runDefaults("i"); o.HostKeyPolicy = remote.HostKeyStrict; return o }(), ""},
		{"run without inventory", []string{"run"}, nil, "inventory"},
		{"run bad fail-on", []string{"run", "-i", "i", "--fail-on", "fatal"}, nil, "--fail-on"},
		{"run no forks", []string{"run", "-i", "i", "--forks", "0"}, nil, "--forks"},
		{"run zero timeout", []string{"run", "-i", "i", "--connect-timeout", "0s"}, nil, "must be positive"},
		{"run bad host-key-policy", []string{"run", "-i", "i", "--host-key-policy", "yes"}, nil, "--host-key-policy"},
		{"run target-version without v", []string{"run", "-i", "i", "--target-version", "1.32"}, nil, "--target-version"},
		{"run target-version without rke2r", []string{"run", "-i", "i", "--target-version", "v1.32.5"}, nil, "--target-version"},
		{"run thresholds", []string{"run", "-i", "i", "--etcd-snapshot-max-age", " 36h ", "--ca-horizon", "720h"},
			func() runOptions {
				o := runDefaults("i")
				o.Thresholds = result.Thresholds{EtcdSnapshotMaxAgeSeconds: 36 * 3600, CAHorizonDays: 30}
				return o
			}(), ""},
		{"run thresholds in days", []string{"run", "-i", "i", "--etcd-snapshot-max-age", "2d", "--ca-horizon", "90d"},
			func() runOptions {
				o := runDefaults("i")
				o.Thresholds = result.Thresholds{EtcdSnapshotMaxAgeSeconds: 2 * 86400, CAHorizonDays: 90}
				return o
			}(), ""},
		{"run bad snapshot age", []string{"run", "-i", "i", "--etcd-snapshot-max-age", "a day"}, nil, `--etcd-snapshot-max-age: want a positive duration such as 36h or 2d, got "a day"`},
		{"run negative snapshot age", []string{"run", "-i", "i", "--etcd-snapshot-max-age", "-1h"}, nil, "--etcd-snapshot-max-age: want a positive duration"},
		{"run snapshot age under a second", []string{"run", "-i", "i", "--etcd-snapshot-max-age", "10ms"}, nil, "--etcd-snapshot-max-age: want at least 1s"},
		{"run zero days", []string{"run", "-i", "i", "--ca-horizon", "0d"}, nil, "--ca-horizon: want a positive duration"},
		{"run horizon in part days", []string{"run", "-i", "i", "--ca-horizon", "36h"}, nil, `--ca-horizon: want whole days such as 365d or 720h, got "36h"`},
		{"run fractional days", []string{"run", "-i", "i", "--ca-horizon", "1.5d"}, nil, "--ca-horizon: want a positive duration"},
		{"run target-version with a tail", []string{"run", "-i", "i", "--target-version", "v1.31.4+rke2r1;id"}, nil, "--target-version"},
		{"run change", []string{"run", "-i", "i", "--change-id", " CHG-4711 ", "--title", "upgrade prod to v1.32", "--requested-by", "j.doe"},
			func() runOptions {
				o := runDefaults("i")
				o.Change = &result.Change{ID: "CHG-4711", Title: "upgrade prod to v1.32", RequestedBy: "j.doe"}
				return o
			}(), ""},
		{"run change title only", []string{"run", "-i", "i", "--title", "t"},
			func() runOptions { o := runDefaults("i"); o.Change = &result.Change{Title: "t"}; return o }(), ""},
		{"run blank change-id", []string{"run", "-i", "i", "--change-id", " "}, runDefaults("i"), ""},
		{"run title with a line break", []string{"run", "-i", "i", "--title", "a\nb"}, nil, "--title"},
		{"run change-id with an escape", []string{"run", "-i", "i", "--change-id", "CHG\x1b[2J"}, nil, "--change-id"},
		{"run unknown flag", []string{"run", "-i", "i", "--yaml", "f"}, nil, "yaml"},
		{"run unknown flag after a positional", []string{"run", "node-1", "-i", "i", "--yaml"}, nil, "yaml"},
		{"run stray positional", []string{"run", "-i", "inv.yaml", "node-1", "--json", "out.json"}, nil, `run: unexpected argument "node-1"`},
		{"run flags after a stray positional", []string{"run", "node-1", "-i", "inv.yaml"}, nil, `unexpected argument "node-1"`},
		{"run a bool flag takes no value", []string{"run", "-i", "inv.yaml", "--allow-unreachable", "true"}, nil, `unexpected argument "true"`},
		{"run after --", []string{"run", "-i", "inv.yaml", "--", "--json", "out.json"}, nil, `unexpected argument "--json"`},
		{"run a value flag at the end", []string{"run", "node-1", "-i"}, nil, "flag needs an argument: -i"},

		{"demo defaults", []string{"demo"}, demoOptions{Out: "demo-out", runOptions: demoDefaults}, ""},
		{"demo flags", []string{"demo", "--out", "d", "--fail-on", "info", "--forks", "2", "-q", "--skip", "conntrack.*", "--probes", "p"},
			demoOptions{Out: "d", runOptions: demoFull}, ""},
		{"demo change", []string{"demo", "--change-id", "CHG-1"},
			func() demoOptions {
				o := demoDefaults
				o.Change = &result.Change{ID: "CHG-1"}
				return demoOptions{Out: "demo-out", runOptions: o}
			}(), ""},
		{"demo has no report flags", []string{"demo", "--json", "f"}, nil, "json"},
		{"demo stray positional", []string{"demo", "demo-out", "--fail-on", "info"}, nil, `demo: unexpected argument "demo-out"`},
		{"demo bad fail-on", []string{"demo", "--fail-on", "fatal"}, nil, "--fail-on"},

		{"report", []string{"report", "r.json"}, reportOptions{Path: "r.json", Outputs: map[string]string{}}, ""},
		{"report flags after the file", []string{"report", "r.json", "--html", "h.html", "-q", "--json", "-"},
			reportOptions{Path: "r.json", Outputs: map[string]string{"html": "h.html", "json": "-"}, Output: outputOptions{Quiet: true}}, ""},
		{"report flags first", []string{"report", "-v", "--junit", "j.xml", "r.json"},
			reportOptions{Path: "r.json", Outputs: map[string]string{"junit": "j.xml"}, Output: outputOptions{Verbose: true}}, ""},
		{"report a file named like a flag", []string{"report", "--", "-r.json"}, reportOptions{Path: "-r.json", Outputs: map[string]string{}}, ""},
		{"report without a file", []string{"report"}, nil, "want one saved results file"},
		{"report two files", []string{"report", "a.json", "b.json"}, nil, `report: unexpected argument "b.json"`},
		{"report flags around the file", []string{"report", "--html", "h.html", "r.json", "--json=-"},
			reportOptions{Path: "r.json", Outputs: map[string]string{"html": "h.html", "json": "-"}}, ""},
		{"report a flag's value named like a flag", []string{"report", "r.json", "--markdown", "-h"},
			reportOptions{Path: "r.json", Outputs: map[string]string{"markdown": "-h"}}, ""},
		{"report stdin", []string{"report", "-", "-q"}, reportOptions{Path: "-", Outputs: map[string]string{}, Output: outputOptions{Quiet: true}}, ""},
		{"report help after the file", []string{"report", "r.json", "--help"}, nil, ""},
		{"report a value flag at the end", []string{"report", "r.json", "--json"}, nil, "flag needs an argument: -json"},

		{"diff", []string{"diff", "a.json", "b.json"}, diffOptions{Before: "a.json", After: "b.json", Outputs: map[string]string{}, FailOn: result.SeverityCritical}, ""},
		{"diff flags after the files", []string{"diff", "a.json", "b.json", "--markdown", "d.md", "--json", "d.json", "--fail-on", "warning",
			"--allow-unreachable", "--include-volatile", "-q"},
			diffOptions{Before: "a.json", After: "b.json", Outputs: map[string]string{"markdown": "d.md", "json": "d.json"},
				FailOn: result.SeverityWarning, AllowUnreachable: true, IncludeVolatile: true, Quiet: true}, ""},
		{"diff flags between the files", []string{"diff", "a.json", "--json", "d.json", "b.json", "-q"},
			diffOptions{Before: "a.json", After: "b.json", Outputs: map[string]string{"json": "d.json"}, FailOn: result.SeverityCritical, Quiet: true}, ""},
		{"diff one file", []string{"diff", "a.json"}, nil, "want two saved results files"},
		{"diff one file and a flag", []string{"diff", "a.json", "--json", "d.json"}, nil, "want two saved results files"},
		{"diff three files", []string{"diff", "a.json", "b.json", "c.json", "--json", "d.json"}, nil, `diff: unexpected argument "c.json"`},
		{"diff bad fail-on", []string{"diff", "a.json", "b.json", "--fail-on", "sometimes"}, nil, "--fail-on"},
		{"diff has no html", []string{"diff", "--html", "d.html", "a.json", "b.json"}, nil, "html"},

		{"probes", []string{"probes"}, probesOptions{}, ""},
		{"probes flags", []string{"probes", "--probes", "d", "--json"}, probesOptions{ProbesDir: "d", JSON: true}, ""},
		{"probes stray positional", []string{"probes", "list", "--json"}, nil, `probes: unexpected argument "list"`},

		{"inventory", []string{"inventory", "-i", "inv.yaml", "-F", "cfg"}, inventoryOptions{inventorySource: inventorySource{Path: "inv.yaml", SSHConfig: "cfg"}}, ""},
		{"inventory without inventory", []string{"inventory"}, nil, "inventory"},
		// Ansible merges two -i; keeping the last would audit part of the
		// fleet named.
		{"inventory twice", []string{"inventory", "-i", "a.ini", "-i", "b.ini"}, nil,
			"-i/--inventory given twice (a.ini, then b.ini): fleet-audit reads one inventory and drops none; merge them as Ansible does with ansible-inventory -i a.ini -i b.ini --list > all.json"},
		{"run inventory twice", []string{"run", "--inventory", "a.ini", "-i=b.ini"}, nil, "-i/--inventory given twice (a.ini, then b.ini)"},
		{"run inventory twice after a positional", []string{"run", "-i", "a.ini", "--json", "r.json", "-i", "a.ini"}, nil, "-i/--inventory given twice"},
		{"inventory json", []string{"inventory", "-i", "inv.yaml", "--json"}, inventoryOptions{inventorySource: inventorySource{Path: "inv.yaml"}, JSON: true}, ""},
		{"inventory role-map", []string{"inventory", "-i", "-", "--role-map", "g=etcd"}, inventoryOptions{inventorySource: inventorySource{Path: "-", RoleMap: map[string]string{"g": "etcd"}}}, ""},
		{"inventory bad role-map", []string{"inventory", "-i", "x", "--role-map", "g=no role"}, nil, "--role-map"},
		{"inventory stray positional", []string{"inventory", "-i", "inv.yaml", "node-1", "-F", "cfg"}, nil, `inventory: unexpected argument "node-1"`},

		{"discover defaults", []string{"discover"}, discoverOptions{Output: "-"}, ""},
		{"discover flags", []string{"discover", "--kubeconfig", "k", "--context", "prod", "-o", "inv.yaml"},
			discoverOptions{Cluster: clusterSource{Kubeconfig: "k", Context: "prod"}, Output: "inv.yaml"}, ""},
		{"discover stray argument", []string{"discover", "prod"}, nil, "no arguments"},
		{"discover has no -i", []string{"discover", "-i", "inv.yaml"}, nil, "-i"},

		{"run shard", []string{"run", "-i", "i", "--shard", " 2/3 ", "--run-id", " 4711 "}, func() runOptions { o := runDefaults("i"); o.ShardK, o.ShardN, o.RunID = 2, 3, "4711"; return o }(), ""},
		{"run shard 1/1", []string{"run", "-i", "i", "--shard", "1/1", "--run-id", "x"}, func() runOptions { o := runDefaults("i"); o.ShardK, o.ShardN, o.RunID = 1, 1, "x"; return o }(), ""},
		{"run shard without a run", []string{"run", "-i", "i", "--shard", "1/2"}, nil, "--shard: give --run-id ID (or set FLEET_AUDIT_RUN_ID)"},
		{"run shard with a blank run", []string{"run", "-i", "i", "--shard", "1/2", "--run-id", " "}, nil, "--shard: give --run-id ID"},
		{"run id with a line break", []string{"run", "-i", "i", "--shard", "1/2", "--run-id", "a\nb"}, nil, `--run-id "a\nb": want an id without spaces or control characters`},
		{"run shard past N", []string{"run", "-i", "i", "--shard", "4/3"}, nil, `--shard: "4/3": the shard K must be from 1 to 3`},
		{"run shard 0", []string{"run", "-i", "i", "--shard", "0/3"}, nil, "the shard K must be from 1 to 3"},
		{"run shard of 0", []string{"run", "-i", "i", "--shard", "1/0"}, nil, "N must be at least 1"},
		{"run shard not K/N", []string{"run", "-i", "i", "--shard", "2"}, nil, `want K/N, such as 2/5 (shard 2 of 5), got "2"`},
		{"run shard negative", []string{"run", "-i", "i", "--shard", "-1/3"}, nil, "the shard K must be from 1 to 3"},
		{"demo has no shard", []string{"demo", "--shard", "1/2"}, nil, "shard"},

		{"merge", []string{"merge", "a.json", "b.json"},
			mergeOptions{Paths: []string{"a.json", "b.json"}, Judge: runOptions{FailOn: result.SeverityCritical, Thresholds: audit.DefaultThresholds()}, Outputs: map[string]string{}}, ""},
		{"merge every flag", []string{"merge", "a.json", "--fail-on", "warning", "--allow-unreachable", "--waivers", "w.yaml", "--only", "a,b",
			"--skip", "c", "--probes", "site", "--target-version", "v1.31.4+rke2r1", "--json", "all.json", "--html", "r.html", "b.json", "-q",
			"--etcd-snapshot-max-age", "12h", "--ca-horizon", "2d"},
			mergeOptions{Paths: []string{"a.json", "b.json"}, Judge: runOptions{FailOn: result.SeverityWarning, AllowUnreachable: true, WaiversPath: "w.yaml",
				Only: []string{"a", "b"}, Skip: []string{"c"}, ProbesDir: "site", TargetVersion: "v1.31.4+rke2r1",
				Thresholds: result.Thresholds{EtcdSnapshotMaxAgeSeconds: 12 * 3600, CAHorizonDays: 2}},
				Outputs: map[string]string{"json": "all.json", "html": "r.html"}, Output: outputOptions{Quiet: true}}, ""},
		{"merge change", []string{"merge", "a.json", "--change-id", "CHG-1", "--requested-by", "j.doe"},
			mergeOptions{Paths: []string{"a.json"}, Judge: runOptions{FailOn: result.SeverityCritical, Thresholds: audit.DefaultThresholds(), Change: &result.Change{ID: "CHG-1", RequestedBy: "j.doe"}}, Outputs: map[string]string{}}, ""},
		{"merge of a run", []string{"merge", "a.json", "--run-id", "4711"},
			mergeOptions{Paths: []string{"a.json"}, RunID: "4711", Judge: runOptions{FailOn: result.SeverityCritical, Thresholds: audit.DefaultThresholds()}, Outputs: map[string]string{}}, ""},
		{"merge without files", []string{"merge", "--json", "all.json"}, nil, "merge: want the shard reports"},
		{"merge bad fail-on", []string{"merge", "a.json", "--fail-on", "fatal"}, nil, "--fail-on"},
		{"merge bad target-version", []string{"merge", "a.json", "--target-version", "1.32"}, nil, "--target-version"},
		{"merge bad ca-horizon", []string{"merge", "a.json", "--ca-horizon", "soon"}, nil, "--ca-horizon"},
		{"merge has no inventory", []string{"merge", "-i", "inv.yaml", "a.json"}, nil, "-i"},

		{"run from the cluster", []string{"run", "--from-cluster"}, fromCluster(clusterSource{}), ""},
		{"run from a context", []string{"run", "--from-cluster", "--kubeconfig", "k", "--context", "prod"},
			fromCluster(clusterSource{Kubeconfig: "k", Context: "prod"}), ""},
		{"run from the cluster with ssh_config", []string{"run", "--from-cluster", "-F", "cfg"},
			func() runOptions { o := fromCluster(clusterSource{}); o.Inventory.SSHConfig = "cfg"; return o }(), ""},
		{"run with -i and --from-cluster", []string{"run", "-i", "inv.yaml", "--from-cluster"}, nil, "give one"},
		{"run --context without --from-cluster", []string{"run", "-i", "inv.yaml", "--context", "prod"}, nil, "--from-cluster"},
		{"run --kubeconfig alone", []string{"run", "--kubeconfig", "k"}, nil, "no hosts"},
		{"run --from-cluster with --role-map", []string{"run", "--from-cluster", "--role-map", "g=etcd"}, nil, "--role-map"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, code, stderr := parseArgs(tc.argv...)
			if tc.wantErr != "" {
				if code != int(exitUsage) || got != nil || !strings.Contains(stderr, tc.wantErr) {
					t.Errorf("exit %d, options %+v, stderr %q; want exit 2 naming %q and no action", code, got, stderr, tc.wantErr)
				}
				return
			}
			if code != 0 || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("exit %d (stderr %q)\ngot  %+v\nwant %+v", code, stderr, got, tc.want)
			}
		})
	}
}

// TestFormatFlagsFromRegistry: every file format of report's registry is a
// flag of run and report, and a file of the demo; every diff format but
// the terminal one is a flag of diff. A format added to the registry thus
// reaches every command without an edit here or in the commands.
func TestFormatFlagsFromRegistry(t *testing.T) {
	for _, f := range report.FileFormats() {
		got, _, stderr := parseArgs("run", "-i", "i", "--"+f.Name, "out")
		if o, ok := got.(runOptions); !ok || o.Outputs[f.Name] != "out" {
			t.Errorf("run --%s: %+v %s", f.Name, got, stderr)
		}
		got, _, stderr = parseArgs("report", "r.json", "--"+f.Name, "out")
		if o, ok := got.(reportOptions); !ok || o.Outputs[f.Name] != "out" {
			t.Errorf("report --%s: %+v %s", f.Name, got, stderr)
		}
		got, _, stderr = parseArgs("merge", "a.json", "--"+f.Name, "out")
		if o, ok := got.(mergeOptions); !ok || o.Outputs[f.Name] != "out" {
			t.Errorf("merge --%s: %+v %s", f.Name, got, stderr)
		}
		if f.DemoFile == "" {
			t.Errorf("format %s has no demo file name", f.Name)
		}
	}
	for _, f := range report.DiffFormats() {
		if f == "terminal" {
			continue
		}
		got, _, stderr := parseArgs("diff", "a", "b", "--"+f, "out")
		if o, ok := got.(diffOptions); !ok || o.Outputs[f] != "out" {
			t.Errorf("diff --%s: %+v %s", f, got, stderr)
		}
	}
}
