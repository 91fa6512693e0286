package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/cmd/fleet-audit/internal/demo"
	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/sshfleet"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/report"
	"github.com/fleet-audit/fleet-audit/result"
)

// TestHostKeyPolicies runs the CLI under each --host-key-policy on a
// 3-node fleet and checks statuses, the report's warnings and what
// accept-new wrote to known_hosts.
func TestHostKeyPolicies(t *testing.T) {
	testtools.SkipShort(t, "audits a fleet once per host key policy")
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// Each policy audits the same untouched nodes: later runs replay.
	fl, err := demo.Start(ctx, dir, nodesim.Clean(3), demo.Options{WrongHostKey: map[string]bool{"node-3": true}, Replay: &sshfleet.Replay{}})
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Close()
	known := filepath.Join(dir, "known_hosts")

	// audit1 writes every file format of the registry; out maps each, and
	// "terminal", to what it holds.
	audit1 := func(policy string) (int, map[string]string, *result.Report) {
		t.Helper()
		dir := t.TempDir()
		args := []string{"run", "-i", fl.InventoryPath}
		for _, f := range report.FileFormats() {
			args = append(args, "--"+f.Name, filepath.Join(dir, f.DemoFile))
		}
		if policy != "" {
			args = append(args, "--host-key-policy", policy)
		}
		// Wide enough that no warning wraps: the words are tested here.
		code, stdout, stderr := runProcess(ctx, t, dir, []string{"COLUMNS=1000"}, args...)
		out := map[string]string{"terminal": stdout}
		for _, f := range report.FileFormats() {
			data, err := os.ReadFile(filepath.Join(dir, f.DemoFile))
			if err != nil {
				t.Fatalf("%s: no %s report (exit %d): %v\n%s", policy, f.Name, code, err, stderr)
			}
			out[f.Name] = string(data)
		}
		var r result.Report
		if err := json.Unmarshal([]byte(out["json"]), &r); err != nil {
			t.Fatal(err)
		}
		return code, out, &r
	}
	// inEvery: the host-key warnings enter the report Run returns, so no
	// format may lack one.
	inEvery := func(policy string, out map[string]string, want string) {
		t.Helper()
		for format, text := range out {
			// The Prometheus file says how many warnings, not their
			// words (fleet_audit_run_warnings, checked below).
			if format == "prom" {
				continue
			}
			if !strings.Contains(text, want) {
				t.Errorf("%s: the %s report does not say %q:\n%s", policy, format, want, text)
			}
		}
	}
	status := func(r *result.Report) string {
		var s []string
		for _, n := range r.Nodes {
			s = append(s, n.Name+"="+n.Status.String())
		}
		return strings.Join(s, " ")
	}

	// strict (the default): the changed key fails its node.
	code, _, r := audit1("")
	if code != 3 || status(r) != "node-1=ok node-2=ok node-3=host_key_mismatch" || len(r.Warnings) != 0 {
		t.Errorf("strict: exit %d, %s, warnings %q", code, status(r), r.Warnings)
	}
	// insecure-ignore: audited, and every report says node-3 was not verified.
	code, out, r := audit1("insecure-ignore")
	if code != 0 || status(r) != "node-1=ok node-2=ok node-3=ok" {
		t.Errorf("insecure-ignore: exit %d, %s", code, status(r))
	}
	joined := strings.Join(r.Warnings, "\n")
	if !strings.Contains(joined, "NOT verified for 3 nodes") || !strings.Contains(joined, "node-3: host key NOT verified") {
		t.Errorf("insecure-ignore: warnings %q", r.Warnings)
	}
	if strings.Count(out["terminal"], "WARNING: node-3: host key NOT verified") != 1 || !strings.Contains(out["markdown"], "**Warning:** node-3: host key NOT verified") {
		t.Errorf("insecure-ignore: the terminal and Markdown reports do not warn about node-3:\n%s\n%s", out["terminal"], out["markdown"])
	}
	inEvery("insecure-ignore", out, "node-3: host key NOT verified")
	if want := fmt.Sprintf("\nfleet_audit_run_warnings{inventory=%q} %d\n", r.Inventory, len(r.Warnings)); !strings.Contains(out["prom"], want) {
		t.Errorf("insecure-ignore: the Prometheus file does not count the %d warnings:\n%s", len(r.Warnings), out["prom"])
	}
	inEvery("insecure-ignore", out, "NOT verified for 3 nodes")
	// accept-new: a changed key is still refused and never replaced.
	before, err := os.ReadFile(known)
	if err != nil {
		t.Fatal(err)
	}
	code, _, r = audit1("accept-new")
	if after, _ := os.ReadFile(known); code != 3 || status(r) != "node-1=ok node-2=ok node-3=host_key_mismatch" || !bytes.Equal(before, after) {
		t.Errorf("accept-new with a changed key: exit %d, %s, known_hosts changed: %v", code, status(r), !bytes.Equal(before, after))
	}
	// accept-new on an empty known_hosts records all three, and says so once.
	if err := os.WriteFile(known, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, r = audit1("accept-new")
	inEvery("accept-new", out, "3 nodes (node-1, node-2, node-3) were seen for the first time")
	recorded, _ := os.ReadFile(known)
	if code != 0 || status(r) != "node-1=ok node-2=ok node-3=ok" || len(r.Warnings) != 1 ||
		!strings.Contains(r.Warnings[0], "3 nodes (node-1, node-2, node-3) were seen for the first time") {
		t.Errorf("accept-new on an empty known_hosts: exit %d, %s, warnings %q", code, status(r), r.Warnings)
	}
	if n := len(strings.Split(strings.TrimSpace(string(recorded)), "\n")); n != 3 {
		t.Errorf("accept-new recorded %d lines, want 3:\n%s", n, recorded)
	}
	// And strict now trusts what was recorded.
	code, _, r = audit1("strict")
	if code != 0 || status(r) != "node-1=ok node-2=ok node-3=ok" || len(r.Warnings) != 0 {
		t.Errorf("strict after accept-new: exit %d, %s, warnings %q", code, status(r), r.Warnings)
	}
	// A bad policy is a usage error.
	if code, _, stderr := runProcess(ctx, t, dir, nil, "run", "-i", fl.InventoryPath, "--host-key-policy", "yes"); code != 2 || !strings.Contains(stderr, "--host-key-policy") {
		t.Errorf("--host-key-policy yes: exit %d, stderr %q", code, stderr)
	}
}

// TestUnknownHostKeysGrouped: forty nodes whose keys known_hosts lacks are
// one cause, so the terminal says the instruction once over the folded
// node set (it printed 497 lines, a fingerprint and an ssh-keyscan line per
// node, twice), and fits 80 columns; the JSON keeps each node's own error
// in full.
func TestUnknownHostKeysGrouped(t *testing.T) {
	testtools.SkipShort(t, "dials a simulated fleet of 40 nodes")
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	fl, err := demo.Start(ctx, dir, nodesim.Clean(40), demo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Close()
	if err := os.WriteFile(filepath.Join(dir, "known_hosts"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	saved := filepath.Join(dir, "results.json")
	code, stdout, stderr := runProcess(ctx, t, dir, []string{"COLUMNS=80"}, "run", "-i", fl.InventoryPath, "--json", saved)
	if code != int(exitUnaudited) {
		t.Fatalf("exit %d, want %d; stderr %q\n%s", code, exitUnaudited, stderr, stdout)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) > 30 {
		t.Errorf("%d lines for one cause on 40 nodes, want at most 30:\n%s", len(lines), stdout)
	}
	for _, l := range lines {
		if w := report.DisplayWidth(l); w > 80 {
			t.Errorf("line is %d columns wide: %q", w, l)
		}
	}
	flat := strings.Join(strings.Fields(stdout), " ")
	for what, n := range map[string]int{
		"--host-key-policy accept-new": 1, // the instruction, once
		"node-[1-40] (40)":             2, // under nodes not ok and in the decision
		"SHA256:":                      0, // each node's fingerprint is in the JSON
		"node-17":                      0, // no node named alone
	} {
		if got := strings.Count(flat, what); got != n {
			t.Errorf("the terminal says %q %d times, want %d:\n%s", what, got, n, stdout)
		}
	}
	data, err := os.ReadFile(saved)
	if err != nil {
		t.Fatal(err)
	}
	var r result.Report
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	for _, n := range r.Nodes {
		if n.Status != result.StatusHostKeyUnknown || !strings.Contains(n.Error, "SHA256:") || !strings.Contains(n.Error, "ssh-keyscan -p ") || strings.Count(n.Error, "is not in known_hosts") != 1 {
			t.Errorf("%s: status %s, error %q: want its own fingerprint and ssh-keyscan line, once", n.Name, n.Status, n.Error)
		}
	}
}
