package check

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// userText is one piece of text a user reads or runs, and where it is.
type userText struct{ where, text string }

// builtinTexts returns every text of the built-in checks a user reads or
// runs: title, why, summary, remediation and each line of the plan, and the
// commands plans share (plan_commands.yaml).
func builtinTexts(t *testing.T) []userText {
	t.Helper()
	checks, err := BuiltinChecks()
	if err != nil {
		t.Fatal(err)
	}
	var out []userText
	add := func(c Check, field, text string) {
		if text != "" {
			out = append(out, userText{c.ID + " " + field, text})
		}
	}
	for _, c := range checks {
		add(c, "title", c.Title)
		add(c, "why", c.Why)
		add(c, "summary", c.Summary)
		add(c, "remediation", c.Remediation)
		if c.Plan == nil {
			continue
		}
		for _, m := range c.Plan.Manual {
			add(c, "plan manual", m)
		}
		for _, pc := range c.Plan.Commands {
			add(c, "plan command", pc.Run)
		}
		for _, a := range c.Plan.After {
			add(c, "plan after", a)
		}
		for _, v := range c.Plan.Verify {
			add(c, "plan verify", v.What)
			add(c, "plan verify command", v.Command)
		}
		add(c, "plan stop", c.Plan.Stop)
	}
	shared, err := sharedCommands()
	if err != nil {
		t.Fatal(err)
	}
	for name, cmd := range shared {
		out = append(out, userText{"plan_commands.yaml " + name, cmd})
	}
	return out
}

// docTexts returns the README's and docs/*.md's paragraphs.
func docTexts(t *testing.T) []userText {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join("..", "..", "README.md"))
	var out []userText
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range strings.Split(string(b), "\n\n") {
			out = append(out, userText{fmt.Sprintf("%s paragraph %d", filepath.Base(f), i+1), strings.ReplaceAll(p, "\n", " ")})
		}
	}
	return out
}

// probeComments are the probes' comments, a paragraph per run of comment
// lines: they explain to the next engineer what a fact means.
func probeComments(t *testing.T) []userText {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "probe", "probes", "*.sh"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no probe scripts under ../probe/probes: %v", err)
	}
	var out []userText
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var para []string
		flush := func(line int) {
			if len(para) > 0 {
				out = append(out, userText{fmt.Sprintf("%s comment before line %d", filepath.Base(f), line), strings.Join(para, " ")})
				para = nil
			}
		}
		for i, l := range strings.Split(string(b), "\n") {
			if c, ok := strings.CutPrefix(strings.TrimSpace(l), "#"); ok {
				para = append(para, strings.TrimSpace(c))
			} else {
				flush(i + 1)
			}
		}
		flush(0)
	}
	return out
}

// sentences splits a text at ". ", "; " and ": ", so that two claims of one
// paragraph are not read as one.
var sentenceEnd = regexp.MustCompile(`[.;:]\s`)

// codeSpan and factKey are the names TestNoTextSaysDrainTurnsHealthz
// leaves out of the prose it reads.
var (
	codeSpan = regexp.MustCompile("`[^`]*`")
	factKey  = regexp.MustCompile(`\b[a-z0-9_-]+(\.[a-z0-9_-]+)+\b`)
)

// TestNoTextSaysDrainTurnsHealthz: cordon and drain do not make kube-proxy's
// /healthz answer 503. Only a Node with a deletionTimestamp or the
// ToBeDeletedByClusterAutoscaler taint is ineligible (kubernetes
// pkg/proxy/healthcheck/proxy_health.go SyncNode); cordon sets
// spec.unschedulable, drain evicts pods, neither touches either.
func TestNoTextSaysDrainTurnsHealthz(t *testing.T) {
	drainNode := regexp.MustCompile(`(?i)\b(draining node|being drained|drained or deleted|node is drained|on a draining|cordoned node)\b`)
	drain := regexp.MustCompile(`(?i)\b(drain|cordon)`)
	healthz := regexp.MustCompile(`(?i)503|eligib`)
	denies := regexp.MustCompile(`(?i)\b(not|never|neither|nor)\b`)
	for _, u := range slices.Concat(builtinTexts(t), docTexts(t), probeComments(t)) {
		// Names are no claims: a code span (`kubectl drain`, a quoted
		// event) and a fact key (k8s.drain.pdb_blocked beside
		// k8s.kubeproxy.liveness_503 in a list) say nothing of the kind.
		text := factKey.ReplaceAllString(codeSpan.ReplaceAllString(u.text, " "), " ")
		for _, s := range sentenceEnd.Split(text, -1) {
			if denies.MatchString(s) {
				continue
			}
			if drainNode.MatchString(s) || drain.MatchString(s) && healthz.MatchString(s) {
				t.Errorf("%s ties drain or cordon to /healthz: %q", u.where, s)
			}
		}
	}
}

// TestLivenessOnHealthzSaysUpgradeRKE2: RKE2 itself moved kube-proxy's
// liveness probe to /livez in v1.31.12, v1.32.8, v1.33.4 and v1.34
// (rancher/rke2 pkg/podtemplate/podtemplate.go; pkg/staticpod/staticpod.go
// defaulted to /healthz before), so the fix for its static pod is an RKE2
// upgrade.
func TestLivenessOnHealthzSaysUpgradeRKE2(t *testing.T) {
	checks, err := BuiltinChecks()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"k8s.kubeproxy-liveness-healthz": false, "cluster.kubeproxy-ds-liveness-healthz": false}
	for _, c := range checks {
		if _, ok := want[c.ID]; !ok {
			continue
		}
		want[c.ID] = true
		for _, v := range []string{"upgrade RKE2", "v1.31.12", "v1.32.8", "v1.33.4", "v1.34"} {
			if !strings.Contains(strings.ToLower(c.Remediation), strings.ToLower(v)) {
				t.Errorf("%s: remediation does not say %q: %s", c.ID, v, c.Remediation)
			}
		}
	}
	for id, seen := range want {
		if !seen {
			t.Errorf("no check %s", id)
		}
	}
}

// TestFirewalldTextsNameItsHarm: firewalld on its nftables backend keeps to
// its own table inet firewalld and replaces only that table (firewalld
// src/firewall/core/nftables.py TABLE_NAME, build_flush_rules); it does not
// rewrite, reorder or flush kube-proxy's or the CNI's rules. Its harm is the
// reject that ends its INPUT and FORWARD chains.
func TestFirewalldTextsNameItsHarm(t *testing.T) {
	rewrites := regexp.MustCompile(`(?i)\b(rewrit\w*|reorder\w*|flush\w*|underneath|beneath)\b`)
	for _, u := range builtinTexts(t) {
		if !strings.Contains(u.where, "firewalld") && !strings.Contains(strings.ToLower(u.text), "firewalld") {
			continue
		}
		for _, s := range sentenceEnd.Split(u.text, -1) {
			// With FirewallBackend=iptables firewalld does write iptables'
			// tables, and a sentence may say what it does not do.
			if strings.Contains(strings.ToLower(s), "firewalld") && rewrites.MatchString(s) &&
				!strings.Contains(s, "does not") && !strings.Contains(s, "FirewallBackend=iptables") {
				t.Errorf("%s says firewalld rewrites others' rules: %q", u.where, s)
			}
		}
	}
	checks, err := BuiltinChecks()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		if c.ID != "firewall.firewalld-active" && c.ID != "network.firewalld-with-canal" {
			continue
		}
		for _, v := range []string{"table inet firewalld", "FORWARD", "reject"} {
			if !strings.Contains(c.Summary, v) {
				t.Errorf("%s: summary does not name %q: %s", c.ID, v, c.Summary)
			}
		}
	}
}

// TestPackageCommandsCoverSUSE: RKE2 runs on SLES and SLE Micro too, whose
// package manager is zypper, and SLE Micro's root is read-only: packages go
// through transactional-update and a reboot. Every text that installs or
// removes a package with apt or dnf also says how there.
func TestPackageCommandsCoverSUSE(t *testing.T) {
	debRHEL := regexp.MustCompile(`\b(apt|apt-get|dnf|yum)\b`)
	for _, u := range builtinTexts(t) {
		if !debRHEL.MatchString(u.text) {
			continue
		}
		for _, v := range []string{"zypper", "transactional-update"} {
			if !strings.Contains(u.text, v) {
				t.Errorf("%s calls %s but not %s: %s", u.where, debRHEL.FindString(u.text), v, u.text)
			}
		}
	}
}
