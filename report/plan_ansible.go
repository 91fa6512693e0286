package report

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/fleet-audit/fleet-audit/result"
)

var _ Formatter = (*PlanAnsible)(nil)

// PlanAnsible writes the runbook as an Ansible playbook (--plan-ansible),
// for teams that execute changes through Ansible: one play per rollout
// step of each fix, in the runbook's order, one node at a time, stopping
// the whole playbook at the first node that fails. fleet-audit never runs
// it.
//
// The playbook is encoded from structs by yaml.v3, every string
// double-quoted (quoted), never concatenated, so no value can change its
// structure. Ansible templates (Jinja2) the
// strings of a playbook, so every text that comes from a check or the run
// is tagged !unsafe, which Ansible never templates
// (https://docs.ansible.com/ansible/latest/playbook_guide/playbooks_advanced_syntax.html,
// "Unsafe or raw strings"; ansible/ansible
// lib/ansible/parsing/yaml/constructor.py registers the tag). A node's name goes into a play's hosts list only when it is a
// plain host name an Ansible host pattern matches exactly and that cannot
// name the control machine (ansibleHost); otherwise the playbook refuses
// to run and says so in its first play.
type PlanAnsible struct {
	Plan *result.Plan
}

// Every keyword below is from the Ansible docs (under
// https://docs.ansible.com/ansible/latest/): the play and task keywords
// (name, hosts, serial, any_errors_fatal, max_fail_percentage, become,
// gather_facts, tasks, vars, register, until, retries, delay,
// changed_when) from reference_appendices/playbooks_keywords.html; serial
// and max_fail_percentage from playbook_guide/playbooks_strategies.html
// ("Setting a batch size with serial", "Setting a maximum failure
// percentage"); until, retries and delay from
// playbook_guide/playbooks_loops.html ("Retrying a task until a condition
// is met"); the modules from collections/ansible/builtin/NAME_module.html
// (shell with cmd; uri with url and status_code, returning status;
// wait_for with host, port, state and timeout; pause with prompt,
// returning user_input; fail and debug with msg; assert with that and
// fail_msg). The installed ansible-core 2.14 runs them in
// TestPlanAnsibleRunsLocally.
type ansiblePlay struct {
	Name unsafeText `yaml:"name"`
	// Hosts is a list of host names (play.py: hosts is a list of
	// strings; inventory/manager.py split_host_pattern reads each item as
	// a pattern, and _evaluate_patterns resolves a plain name that is a
	// host of the inventory to that host before any group and keeps the
	// list's order, which get_hosts keeps for the default order:
	// inventory, so serial batches follow the rollout's order).
	Hosts []quotedText `yaml:"hosts"`
	// Serial 1: one node at a time in every class. Workers too: the
	// runbook's point is that a fix failing on the first node stops
	// before it reaches the others, and a worker fix that breaks
	// kube-proxy breaks every pod on the node.
	Serial int `yaml:"serial"`
	// With serial 1 a batch is one host, and playbook_executor.py ends the
	// whole playbook when every host of a batch failed or was unreachable;
	// any_errors_fatal and max_fail_percentage 0 say the same in the
	// play's own words, for a reader and for a later edit of serial.
	AnyErrorsFatal    bool          `yaml:"any_errors_fatal"`
	MaxFailPercentage int           `yaml:"max_fail_percentage"`
	Become            bool          `yaml:"become"`
	GatherFacts       bool          `yaml:"gather_facts"`
	Tasks             []ansibleTask `yaml:"tasks"`
}

type ansibleTask struct {
	Name    unsafeText     `yaml:"name"`
	Shell   *ansibleShell  `yaml:"ansible.builtin.shell,omitempty"`
	WaitFor *ansibleWait   `yaml:"ansible.builtin.wait_for,omitempty"`
	Pause   *ansiblePause  `yaml:"ansible.builtin.pause,omitempty"`
	Fail    *ansibleFail   `yaml:"ansible.builtin.fail,omitempty"`
	Debug   *ansibleFail   `yaml:"ansible.builtin.debug,omitempty"`
	Assert  *ansibleAssert `yaml:"ansible.builtin.assert,omitempty"`
	// Vars carry a verification's expected output into until as data, so
	// the expression itself is fixed text.
	Vars     map[string]unsafeText `yaml:"vars,omitempty"`
	Register quotedText            `yaml:"register,omitempty"`
	Until    quotedText            `yaml:"until,omitempty"`
	Retries  int                   `yaml:"retries,omitempty"`
	Delay    int                   `yaml:"delay,omitempty"`
	// ChangedWhen false on the checks: they change nothing.
	ChangedWhen *bool `yaml:"changed_when,omitempty"`
}

type ansibleShell struct {
	Cmd unsafeText `yaml:"cmd"`
}

type ansibleWait struct {
	Host    quotedText `yaml:"host"`
	Port    int        `yaml:"port"`
	State   quotedText `yaml:"state"`
	Timeout int        `yaml:"timeout"`
}

type ansiblePause struct {
	Prompt unsafeText `yaml:"prompt"`
}

type ansibleFail struct {
	Msg unsafeText `yaml:"msg"`
}

type ansibleAssert struct {
	That    []quotedText `yaml:"that"`
	FailMsg unsafeText   `yaml:"fail_msg"`
}

// unsafeText is a string Ansible must take as it is: tagged !unsafe.
type unsafeText string

func (s unsafeText) MarshalYAML() (any, error) { return quoted("!unsafe", string(s)), nil }

// quotedText is a string of the playbook's own, or a host name: a plain
// string to Ansible, double-quoted all the same.
type quotedText string

func (s quotedText) MarshalYAML() (any, error) { return quoted("!!str", string(s)), nil }

// quoted is s as a double-quoted scalar, the one style that escapes
// everything (yaml.v3 emitterc.go, yaml_emitter_write_double_quoted_scalar:
// quotes, backslashes, line breaks including NEL, LS and PS, and every
// character YAML may not carry raw), so no text can end a scalar, start a
// comment or a mapping, or make PyYAML, which Ansible reads playbooks
// with, refuse the file (reader.py, check_printable). Left to choose,
// yaml.v3 v3.0.1 writes a text with a line break in literal style and
// one that starts with a line break loses it on the way back ("\n\nx"
// reads back as "\nx"); and it would leave a text plain by YAML 1.2's
// resolver, where PyYAML resolves by 1.1's (resolver.py), which takes more
// words for booleans and numbers. yaml.v3 refuses a tagged string that is
// not UTF-8 (encode.go, node), so a byte that is not becomes U+FFFD.
func quoted(tag, s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Style: yaml.DoubleQuotedStyle, Value: strings.ToValidUTF8(s, "\uFFFD")}
}

// ansibleHostName is a name an Ansible host pattern matches exactly and
// only itself: no separators (, :), no glob (* ? [ ]), no regex, exclusion
// or intersection prefix (~ ! &), no Jinja2 ({ }), no white space
// (ansible/ansible lib/ansible/inventory/manager.py, split_host_pattern
// and _match_one_pattern). A name such as "all" or one equal to a group
// of the user's inventory would still match a group: the playbook's head
// comment says the names must be the inventory's host names.
var ansibleHostName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

// ansibleHost says whether a node's name can go into a play's hosts. Not
// the names of Ansible's own groups (all, ungrouped), nor a name that may
// be the control machine, where the fix would run with become: when the
// inventory has no such host, Ansible makes a pattern in C.LOCALHOST
// ('127.0.0.1', 'localhost', '::1') the implicit localhost, connection
// local (ansible/ansible lib/ansible/inventory/manager.py,
// _match_one_pattern and get_hosts; lib/ansible/constants.py), and a
// host without ansible_host is dialled by its name, which the resolver
// takes to loopback for localhost in any case and for any 127.0.0.0/8
// address.
func ansibleHost(name string) bool {
	if !ansibleHostName.MatchString(name) {
		return false
	}
	switch strings.ToLower(name) {
	case "all", "ungrouped", "localhost":
		return false
	}
	if ip := net.ParseIP(name); ip != nil && ip.IsLoopback() {
		return false
	}
	return true
}

func (a *PlanAnsible) Format(w io.Writer, r *result.Report) error {
	if a.Plan == nil {
		return errNoPlan
	}
	plays := []ansiblePlay{}
	var unaddressable []string
	for _, fx := range a.Plan.Fixes {
		for _, s := range rolloutSteps(fx.Rollout, nil) {
			var hosts []quotedText
			for _, n := range s.Nodes {
				if ansibleHost(n) {
					hosts = append(hosts, quotedText(n))
				} else {
					unaddressable = append(unaddressable, n)
				}
			}
			if len(hosts) == 0 {
				continue
			}
			plays = append(plays, ansiblePlay{
				Name:  unsafeText(fmt.Sprintf("%s: %s (step %d: %s)", fx.Check, fx.Title, s.N, s.label())),
				Hosts: hosts, Serial: 1, AnyErrorsFatal: true, MaxFailPercentage: 0, Become: true, GatherFacts: false,
				Tasks: ansibleTasks(fx.Steps),
			})
		}
	}
	if len(unaddressable) > 0 {
		// Running the rest would skip these nodes silently: the playbook
		// stops before any change instead.
		refuse := ansiblePlay{
			Name:  "refuse: some nodes of this plan cannot be named unambiguously in an Ansible host pattern",
			Hosts: []quotedText{"localhost"}, Serial: 1, AnyErrorsFatal: true, Become: false, GatherFacts: false,
			Tasks: []ansibleTask{{Name: "stop before any change", Fail: &ansibleFail{Msg: unsafeText(fmt.Sprintf(
				"%d node(s) of this plan have names that are not plain host names, or that Ansible or the resolver takes for this control machine (listed at the top of this file); apply the plan to them by hand, or rename them in the inventory, and write the plan again", len(unaddressable)))}}},
		}
		plays = append([]ansiblePlay{refuse}, plays...)
	}
	if len(plays) == 0 {
		// A playbook must hold a play (ansible-playbook refuses an empty
		// one): this one says there is nothing to do and changes nothing.
		plays = append(plays, ansiblePlay{
			Name: "nothing to fix", Hosts: []quotedText{"localhost"}, Serial: 1, AnyErrorsFatal: true, GatherFacts: false,
			Tasks: []ansibleTask{{Name: "nothing to fix", Debug: &ansibleFail{Msg: "No finding of this run asks for a change on nodes."}}},
		})
	}
	var b bytes.Buffer
	b.WriteString("---\n")
	for _, line := range strings.Split(ansibleHead(r, a.Plan, unaddressable), "\n") {
		b.WriteString(strings.TrimRight("# "+line, " ") + "\n")
	}
	b.WriteString("\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(plays); err != nil {
		return fmt.Errorf("plan-ansible: %w", err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("plan-ansible: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// ansibleHead is the comment at the top of the playbook. Format writes
// each line as a comment; control characters are made visible first, so
// a \r in a node's name cannot end a comment line (YAML reads \r as a
// line break).
func ansibleHead(r *result.Report, plan *result.Plan, unaddressable []string) string {
	lines := []string{
		planTitle(r),
		strings.Join(planAbout(r, func(s string) string { return s }, func(s string) string { return s }), " · "),
		"",
		neverRuns,
		"The hosts below are fleet-audit's inventory names: run this playbook with an Ansible",
		"inventory whose host names are exactly these (ansible-playbook -i INVENTORY THIS_FILE),",
		"and check with --list-hosts first: a name that is not a host there but names a group targets the group.",
		"Within a play the hosts run in the order listed (order: inventory keeps the pattern's order).",
		"Every play runs one node at a time (serial: 1) and the first failing node stops the playbook.",
	}
	for _, w := range r.Warnings {
		lines = append(lines, "", "Warning about the run: "+w)
	}
	if len(plan.Fixes) == 0 {
		lines = append(lines, "", "Nothing to fix: "+nothingToFix(r))
	}
	if len(plan.Waived) > 0 {
		lines = append(lines, "", "Left out, because a waiver accepts them: "+strings.Join(plan.Waived, ", "))
	}
	if na := notAuditedNames(r); len(na) > 0 {
		lines = append(lines, "", "Not audited, so what they need is unknown and they are in no play: "+strings.Join(na, ", "))
	}
	if len(unaddressable) > 0 {
		lines = append(lines, "", "Not plain host names, or names of the control machine (localhost, a loopback address), so not in any play (the first play refuses to run):")
		for _, n := range unaddressable {
			lines = append(lines, "  "+fmt.Sprintf("%q", n))
		}
	}
	for i, l := range lines {
		lines[i] = visible(l, "")
	}
	return strings.Join(lines, "\n")
}

// ansibleTasks are one node's steps: the manual steps as pauses the
// operator confirms, the commands, the steps after them, then the checks.
//
// A pause whose stdin is not a terminal (AWX, a CI job) does not wait: it
// warns and goes on (ansible/ansible lib/ansible/plugins/action/pause.py,
// "Not waiting for response to prompt as stdin is not interactive"), which
// would run the commands without the decision they need. So each manual
// step must be answered with "done", and an assert stops the node
// otherwise: unattended, the playbook stops at the first manual step.
func ansibleTasks(st result.FixSteps) []ansibleTask {
	var out []ansibleTask
	pause := func(head string, steps []string) {
		for _, m := range steps {
			out = append(out,
				ansibleTask{Name: unsafeText(head), Register: "manual", Pause: &ansiblePause{Prompt: unsafeText(m + "\n\nType done and press Enter once it is done (anything else stops the playbook)")}},
				ansibleTask{Name: "the step above was confirmed", Assert: &ansibleAssert{
					That:    []quotedText{"manual.user_input | default('') | trim == 'done'"},
					FailMsg: "the manual step was not confirmed with done (stdin may not be a terminal): stopping before the commands",
				}})
		}
	}
	pause("by hand, before the commands", st.Manual)
	for _, c := range st.Commands {
		out = append(out, ansibleTask{Name: unsafeText(c), Shell: &ansibleShell{Cmd: unsafeText(c)}})
	}
	pause("by hand, after the commands", st.After)
	no := false
	for _, v := range st.Verify {
		t := ansibleTask{Name: unsafeText("check: " + v.What), Register: "check", Retries: v.Retries, Delay: v.Delay, ChangedWhen: &no}
		switch {
		case v.HTTP != "":
			// The uri module asks one address; the node's server may
			// listen on ::1 instead (httpCheck).
			t.Shell = &ansibleShell{Cmd: unsafeText(httpCheck(v.HTTP))}
			t.Vars = map[string]unsafeText{"want_output": unsafeText(fmt.Sprint(v.Status))}
			t.Until = "check.stdout | trim == want_output"
		case v.Port != 0:
			// wait_for polls by itself until its timeout: no until.
			t = ansibleTask{Name: t.Name, ChangedWhen: &no, WaitFor: &ansibleWait{Host: "127.0.0.1", Port: v.Port, State: "started", Timeout: v.Retries * v.Delay}}
		case v.Expect != "":
			t.Shell = &ansibleShell{Cmd: unsafeText(v.Command)}
			t.Vars = map[string]unsafeText{"want_output": unsafeText(v.Expect)}
			t.Until = "check.stdout | trim == want_output"
		default:
			t.Shell = &ansibleShell{Cmd: unsafeText(v.Command)}
			t.Until = "check.rc == 0"
		}
		out = append(out, t)
	}
	return out
}
