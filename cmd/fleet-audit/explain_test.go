package main

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var updateExplain = flag.Bool("update", false, "rewrite the explain goldens (testdata/explain)")

// TestExplainGolden holds `fleet-audit explain ID` for a check, a finding
// built in Go and a correlation to testdata/explain/ID.txt and .json;
// regenerate with go test ./cmd/fleet-audit -run ExplainGolden -update.
func TestExplainGolden(t *testing.T) {
	for _, id := range []string{"firewall.ufw-active", "skew.kubelet-newer", "correlation.k8s.kubeproxy-crashloop", "waiver.unused"} {
		for _, format := range []string{"txt", "json"} {
			t.Run(id+"."+format, func(t *testing.T) {
				args := []string{"explain", id}
				if format == "json" {
					args = append(args, "--json")
				}
				code, stdout, stderr := runCLI(t, args...)
				if code != 0 || stderr != "" {
					t.Fatalf("exit %d, stderr %q; want 0 and nothing", code, stderr)
				}
				path := filepath.Join("testdata", "explain", id+"."+format)
				if *updateExplain {
					if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, []byte(stdout), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test ./cmd/fleet-audit -run ExplainGolden -update)", err)
				}
				if stdout != string(want) {
					t.Errorf("explain %s differs from %s (run with -update and review the diff):\n%s", id, path, stdout)
				}
			})
		}
	}
}

// TestExplainRefuses: an id that names nothing, or a second id, is a usage
// error (exit 2) that names the closest ids, with nothing on stdout.
func TestExplainRefuses(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"explain", "skew.servrs"}, []string{`no check or finding "skew.servrs"`, "did you mean skew.servers"}},
		{[]string{"explain", "firewall.ufw-actve"}, []string{"did you mean firewall.ufw-active"}},
		{[]string{"explain", "kubeproxy.nope"}, []string{"did you mean kubeproxy."}},
		{[]string{"explain", "zzzzzzzzzzzzzz"}, []string{`no check or finding "zzzzzzzzzzzzzz"; fleet-audit explain with no id lists them all`}},
		// A correlation exists only for a symptom check.
		{[]string{"explain", "correlation.firewall.ufw-active"}, []string{`no check or finding "correlation.firewall.ufw-active"`}},
		{[]string{"explain", "a", "b"}, []string{`unexpected argument "b"`}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			if code != 2 || stdout != "" {
				t.Fatalf("exit %d, stdout %q; want 2 and nothing", code, stdout)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not say %q", stderr, w)
				}
			}
		})
	}
}

// TestExplainLists: without an id, explain lists every check and finding
// it explains, the correlations of symptom checks among them.
func TestExplainLists(t *testing.T) {
	code, stdout, stderr := runCLI(t, "explain")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, id := range []string{"firewall.ufw-active", "skew.servers", "waiver.expired", "correlation.kubeproxy.healthz-failing"} {
		if !strings.Contains(stdout, "\n"+id+" ") && !strings.HasPrefix(stdout, id+" ") {
			t.Errorf("the listing lacks %s:\n%s", id, stdout)
		}
	}
	if strings.Contains(stdout, "<symptom>") {
		t.Errorf("the listing shows the correlation row's placeholder id:\n%s", stdout)
	}
}

// TestExplainFlags: explain's argument and flags reach its options.
func TestExplainFlags(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want explainOptions
	}{
		{[]string{"explain"}, explainOptions{}},
		{[]string{"explain", "skew.servers", "--json", "--probes", "d"}, explainOptions{ID: "skew.servers", JSON: true, ProbesDir: "d"}},
		{[]string{"explain", "--json", "firewall.ufw-active"}, explainOptions{ID: "firewall.ufw-active", JSON: true}},
	} {
		got, code, stderr := parseArgs(tc.argv...)
		if code != 0 || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: got %+v, exit %d (%s); want %+v", tc.argv, got, code, stderr, tc.want)
		}
	}
}
