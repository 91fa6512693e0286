package check

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// Every built-in check whose finding gets a rollout has a plan, and every
// plan has something for a person to do and nothing empty to run.
func TestBuiltinChecksHavePlans(t *testing.T) {
	checks, err := BuiltinChecks()
	if err != nil {
		t.Fatal(err)
	}
	planned := 0
	for _, c := range checks {
		if !c.NeedsPlan() {
			continue
		}
		planned++
		if c.Plan == nil {
			t.Errorf("%s (%s): gets a rollout but has no plan: block", c.ID, c.Source)
			continue
		}
		s := c.Plan.Steps()
		if len(s.Commands)+len(s.Manual) == 0 {
			t.Errorf("%s: plan has neither commands nor manual steps", c.ID)
		}
		for i, cmd := range s.Commands {
			if strings.TrimSpace(cmd) == "" {
				t.Errorf("%s: command %d is empty", c.ID, i+1)
			}
		}
		if len(s.Commands) > 0 && len(s.Verify) == 0 {
			t.Errorf("%s: runs commands and verifies nothing", c.ID)
		}
		for _, v := range s.Verify {
			if v.What == "" || v.Retries < 1 || v.Delay < 1 {
				t.Errorf("%s: verification %+v: want what, retries and delay", c.ID, v)
			}
		}
	}
	if planned < 40 {
		t.Errorf("only %d checks need a plan; NeedsPlan lost its meaning?", planned)
	}
}

// A plan's mistakes are input errors naming the file, the line and the field.
func TestParsePlanRejectsBadInput(t *testing.T) {
	head := "- id: a\n  title: t\n  severity: warning\n  summary: s\n  remediation: r\n  when: [{fact: f, op: eq, value: x}]\n  plan:\n"
	tests := []struct {
		name, plan, want string
	}{
		{"empty command", "    commands: [\"  \"]\n    verify: [{use: kube-proxy-healthy}]\n    stop: s\n", "t.yaml:8: check \"a\": plan: commands: command 1 is empty"},
		{"no steps", "    verify: [{use: kube-proxy-healthy}]\n    stop: s\n", "t.yaml:7: check \"a\": plan: needs commands or manual steps"},
		{"no stop", "    commands: [x]\n    verify: [{what: w, port: 1}]\n", "plan: stop: is required"},
		{"commands without verify", "    commands: [x]\n    stop: s\n", "plan: verify: needs at least one check"},
		{"unknown field", "    commands: [x]\n    verfy: []\n    stop: s\n", "field verfy not found"},
		{"two kinds", "    commands: [x]\n    verify:\n      - {what: w, port: 1, command: c}\n    stop: s\n", "t.yaml:10: check \"a\": plan: verify: item 1: give exactly one of use, http, port or command"},
		{"unknown set", "    commands: [x]\n    verify: [{use: nope}]\n    stop: s\n", "use: no shared verification \"nope\""},
		{"remote url", "    commands: [x]\n    verify: [{what: w, http: 'http://10.0.0.1/healthz', status: 200}]\n    stop: s\n", "http: want http(s)://127.0.0.1"},
		{"quote in url", "    commands: [x]\n    verify: [{what: w, http: \"http://127.0.0.1:1/'x\", status: 200}]\n    stop: s\n", "http: want"},
		{"http without status", "    commands: [x]\n    verify: [{what: w, http: 'http://127.0.0.1:1/'}]\n    stop: s\n", "http: needs status"},
		{"no what", "    commands: [x]\n    verify: [{command: c}]\n    stop: s\n", "what: is required"},
		{"multi-line command", "    commands: [\"a\\nb\"]\n    verify: [{use: rke2-running}]\n    stop: s\n", "command 1 spans lines"},
		{"unknown shared command", "    commands: [{use: nope}]\n    verify: [{use: rke2-running}]\n", "t.yaml:8: check \"a\": plan: commands: command 1: use: no shared command \"nope\""},
		{"command mapping", "    commands: [{run: x}]\n    verify: [{use: rke2-running}]\n", "a command is a line of sh or {use: NAME}"},
		{"bad port", "    commands: [x]\n    verify: [{what: w, port: 70000}]\n    stop: s\n", "port: want a TCP port"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseChecks("t.yaml", []byte(head+tt.plan))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// A plan of manual steps alone (a decision) needs no verification, and a
// shared set expands to its items with the defaults filled in.
func TestParsePlanSteps(t *testing.T) {
	text := "- id: a\n  title: t\n  severity: warning\n  summary: s\n  remediation: r\n  when: [{fact: f, op: eq, value: x}]\n  plan:\n" +
		"    manual: [decide]\n    commands: [\"systemctl disable --now ufw\", {use: restart-rke2}]\n    after: [reboot]\n" +
		"    verify:\n      - use: rke2-running\n      - {what: one, command: \"sysctl -n x\", expect: \" 1 \", retries: 2, delay: 3}\n    stop: s\n"
	cs, err := ParseChecks("t.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	s := cs[0].Plan.Steps()
	if len(s.Verify) != 4 || s.Verify[3].Expect != "1" || s.Verify[3].Retries != 2 || s.Verify[0].Retries != defaultRetries {
		t.Errorf("verify = %+v", s.Verify)
	}
	if s.Manual[0] != "decide" || s.After[0] != "reboot" || s.Commands[0] != "systemctl disable --now ufw" || !strings.Contains(s.Commands[1], "systemctl restart rke2-agent") {
		t.Errorf("steps = %+v", s)
	}
	// The stop is the shared set's, then the plan's own.
	if want := "RKE2 is not active again, or its kubelet does not answer, within 5 minutes: do not start the next node; or if s."; s.Stop != want {
		t.Errorf("stop = %q, want %q", s.Stop, want)
	}
	manual := "- id: a\n  title: t\n  severity: warning\n  summary: s\n  remediation: r\n  when: [{fact: f, op: eq, value: x}]\n  plan:\n    manual: [decide]\n    stop: s\n"
	if _, err := ParseChecks("t.yaml", []byte(manual)); err != nil {
		t.Errorf("manual-only plan: %v", err)
	}
}

// Every command of a built-in plan, and every verification command, is
// valid sh: sh -n parses it without running it.
func TestBuiltinPlanCommandsParse(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	checks, err := BuiltinChecks()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		if c.Plan == nil {
			continue
		}
		s := c.Plan.Steps()
		cmds := slices.Clone(s.Commands)
		for _, v := range s.Verify {
			if v.Command != "" {
				cmds = append(cmds, v.Command)
			}
		}
		for _, cmd := range cmds {
			if out, err := exec.Command(sh, "-n", "-c", cmd).CombinedOutput(); err != nil {
				t.Errorf("%s: sh -n rejects %q: %v\n%s", c.ID, cmd, err, out)
			}
			// The runbook's commands are pasted into a root shell: an exit
			// there would end the operator's session, so one is only ever
			// inside a subshell.
			if strings.Contains(cmd, "exit") && !(strings.HasPrefix(cmd, "(") && strings.HasSuffix(cmd, ")")) {
				t.Errorf("%s: %q exits the operator's shell; wrap it in ( )", c.ID, cmd)
			}
		}
	}
}
