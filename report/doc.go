// Package report renders a finished result.Report for people and machines:
// a terminal summary, Markdown for merge requests and change tickets, one
// self-contained HTML file, JSON (the saved run), JUnit XML for CI, and the
// remediation runbook as Markdown and as an Ansible playbook (plan.go,
// plan_ansible.go), which fleet-audit never runs.
//
// It owns the presentation only. Every formatter gets the whole, finished
// Report (drift needs the whole fleet, so nothing is streamed) and:
//
//   - must not mutate it: the same Report is written to several formats in
//     one run, so a formatter that sorted a slice in place would change the
//     next one's output. Formatters copy before they reorder;
//   - must not decide the exit code or re-judge anything: the gate, the
//     findings and the drift were computed once by package audit, and a
//     formatter only prints them;
//   - must not import package remote or package inventory: a report can be
//     rendered from a saved results.json long after the fleet is gone
//     (ReadJSON), so nothing here may need a node or an inventory file.
//
// Everything a node sent (names, fact values, messages, errors, evidence,
// probe stderr) is hostile text. Each format escapes it for its own medium:
// control characters become visible escapes in the terminal, Markdown
// escapes table and inline syntax, HTML relies on html/template's contextual
// escaping and never marks node data as safe, and JUnit drops characters
// XML 1.0 cannot carry. The plans never put a node's name into a command:
// it is a comment above the commands, and in the playbook a hosts entry only
// when an Ansible host pattern matches it exactly; every other text there
// is tagged !unsafe so Ansible never templates it.
package report
