package result

// Plan is the remediation runbook of a report (--plan, --plan-ansible):
// every fix that needs a change on nodes, grouped by fix, each with its
// rollout and, per node, the commands, the checks that show the node is
// well again and when to stop. Package audit builds it from the checks'
// plan: blocks and the findings' rollouts; package report writes it as
// Markdown or as an Ansible playbook. Like Explanation it is about the
// checks as much as about the run, so it is not in the JSON: `fleet-audit
// report` and `merge` build it again from the saved findings.
type Plan struct {
	Fixes []Fix
	// Waived are the ids of findings a waiver accepted that would otherwise
	// need a fix: the plan says they are left out, never drops them silently.
	Waived []string
}

// Fix is one fix across the nodes that need it.
type Fix struct {
	// Check is the check whose plan this is; for a finding no check's plan
	// covers (a finding built in Go, a --probes check), the finding's id.
	Check    string
	Title    string
	Severity Severity
	// Resolves are the findings this fix answers: the check's own and the
	// correlation findings whose probable cause it removes.
	Resolves []string
	// Rollout is the order to apply it in (RolloutOrder, failing nodes
	// first among the workers).
	Rollout []RolloutStep
	// Remediation is the finding's prose fix, for a fix whose steps hold
	// no commands of their own.
	Remediation string
	Steps       FixSteps
}

// FixSteps are what to do on one node and how to know it worked.
type FixSteps struct {
	// Manual are steps a person must take (a decision, a drain), before
	// the commands.
	Manual []string
	// Commands run as root on the node, in order, each a line of sh; none
	// names the node (the node's own name is never part of a command).
	Commands []string
	// After are steps for a person after the commands (a reboot), before
	// the checks.
	After []string
	// Verify are the checks to pass on the node after the commands, before
	// the next node.
	Verify []Verification
	// Stop says when to stop the rollout instead of going on to the next node.
	Stop string
}

// Verification is one check run on the node after a fix: exactly one of
// HTTP, Port and Command is set.
type Verification struct {
	// What says what it shows, e.g. "kube-proxy's /healthz answers 200".
	What string
	// HTTP is a URL on the node itself, answered with Status.
	HTTP   string
	Status int
	// Port is a TCP port that must accept a connection on 127.0.0.1.
	Port int
	// Command is a line of sh run as root; it passes when it prints Expect
	// (surrounding white space trimmed), or exits 0 when Expect is "".
	Command string
	Expect  string
	// Retries is how many times it is tried, Delay the seconds between
	// tries: Retries × Delay is how long the node gets to settle.
	Retries int
	Delay   int
}
