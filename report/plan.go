package report

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/fleet-audit/fleet-audit/result"
)

var _ Formatter = (*PlanMarkdown)(nil)

// PlanMarkdown is the remediation runbook (--plan): every fix that needs a
// change on nodes, grouped by fix, in rollout order, with each node's
// commands, the checks to pass before the next node and the condition to
// stop at. fleet-audit never runs it; it is for operators to review and
// execute. Nothing from a node is ever part of a command: a node's name is
// a comment above its commands, and every other text from the run is
// escaped as the Markdown report escapes it.
type PlanMarkdown struct {
	// Plan is built by the caller (audit.PlanFindings); a formatter
	// without one refuses to write rather than claim there is nothing to fix.
	Plan *result.Plan
}

// errNoPlan: the caller did not build the plan.
var errNoPlan = errors.New("no remediation plan was built for this report (audit.PlanFindings)")

// neverRuns is what every plan says first, in every format.
const neverRuns = "fleet-audit never runs this plan: it only audits. Review it, then apply it yourself, node by node in the order given, checking each node before the next."

func (m *PlanMarkdown) Format(w io.Writer, r *result.Report) error {
	if m.Plan == nil {
		return errNoPlan
	}
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	failing := failingNodes(r)
	p("# %s\n\n", mdText(planTitle(r)))
	p("%s\n\n", strings.Join(planAbout(r, mdText, func(s string) string { return mdCode(s, false) }), " · "))
	p("> **%s**\n", neverRuns)
	p("> Each block of commands runs as root on the node named in its first line (a comment): log in to that node, then `sudo -i`. No command names a node.\n\n")
	for _, w := range r.Warnings {
		p("**Warning about the run:** %s\n\n", mdText(w))
	}
	if len(m.Plan.Fixes) == 0 {
		p("**Nothing to fix:** %s\n\n", nothingToFix(r))
	}
	mdPlanWaived(p, m.Plan.Waived)
	if na := notAuditedNames(r); len(na) > 0 {
		for i, n := range na {
			na[i] = mdText(n)
		}
		p("**Not audited**, so what they need is unknown and they are in no step below: %s.\n\n", strings.Join(na, ", "))
	}
	if len(m.Plan.Fixes) > 0 {
		p("## Fixes, in the order to apply them\n\n")
		for i, fx := range m.Plan.Fixes {
			p("%d. %s (%s): %s\n", i+1, mdText(fx.Title), mdCode(fx.Check, false), mdText(rolloutLine(rolloutSteps(fx.Rollout, failing))))
		}
		p("\n")
	}
	for i, fx := range m.Plan.Fixes {
		mdPlanFix(p, i+1, fx, failing)
	}
	_, err := w.Write(bytes.TrimRight(b.Bytes(), "\n"))
	if err == nil {
		_, err = io.WriteString(w, "\n")
	}
	return err
}

// nothingToFix says there is nothing to fix, and only of the nodes that
// were audited when some were not.
func nothingToFix(r *result.Report) string {
	if len(notAuditedNames(r)) > 0 {
		return "no finding on the audited nodes asks for a change."
	}
	return "no finding of this run asks for a change on nodes."
}

// notAuditedNames are the nodes that gave no facts: a plan cannot say
// what they need, and must not read as if they needed nothing.
func notAuditedNames(r *result.Report) []string {
	var out []string
	for _, n := range r.Nodes {
		if !n.Status.HasFacts() {
			out = append(out, n.Name)
		}
	}
	return out
}

// planTitle is the plan's title: the change it is for, else the inventory.
func planTitle(r *result.Report) string {
	var of string
	if r.Change != nil {
		of = strings.TrimSpace(r.Change.ID + " " + r.Change.Title)
	}
	if of = cmp.Or(of, r.Inventory); of == "" {
		return "Remediation plan"
	}
	return "Remediation plan: " + of
}

// planAbout are the facts under the title: the change's fields, the target
// version, the run the plan comes from and its tool; text is escaped with
// esc, a version shown with code.
func planAbout(r *result.Report, esc, code func(string) string) []string {
	var out []string
	for _, part := range r.Change.Parts() {
		out = append(out, esc(part))
	}
	if r.TargetVersion != "" {
		out = append(out, "target version "+code(r.TargetVersion))
	} else {
		out = append(out, "no target version given")
	}
	from := "from the audit"
	if r.Inventory != "" {
		from += " of " + r.Inventory
	}
	if at := ranAt(r); at != "" {
		from += " at " + at
	}
	out = append(out, esc(from))
	for _, part := range r.Parts() {
		out = append(out, esc(part))
	}
	return append(out, esc(strings.TrimSpace(r.Tool.Name+" "+r.Tool.Version)))
}

func mdPlanWaived(p func(string, ...any), waived []string) {
	if len(waived) == 0 {
		return
	}
	ids := make([]string, len(waived))
	for i, id := range waived {
		ids[i] = mdCode(id, false)
	}
	p("Left out, because a waiver accepts them: %s.\n\n", strings.Join(ids, ", "))
}

// mdPlanFix is one fix: what it resolves, then each rollout step and, per
// node, the same steps with the node's name above them.
func mdPlanFix(p func(string, ...any), n int, fx result.Fix, failing map[string]bool) {
	p("## %d. %s\n\n", n, mdText(fx.Title))
	resolves := make([]string, len(fx.Resolves))
	for i, id := range fx.Resolves {
		resolves[i] = mdCode(id, false)
	}
	p("Check %s, severity %s; resolves %s.\n\n", mdCode(fx.Check, false), fx.Severity, strings.Join(resolves, ", "))
	if fx.Remediation != "" {
		p("%s\n\n", mdLine(fx.Remediation))
	}
	steps := rolloutSteps(fx.Rollout, failing)
	for _, s := range steps {
		p("### Step %d.%d: %s\n\n", n, s.N, mdText(s.label()))
		if s.OneAtATime {
			p("One node at a time: finish a node and pass its checks before you start the next.\n\n")
		} else {
			first := ""
			if s.FailingFirst {
				first = ", the nodes with the symptom first"
			}
			p("These nodes are done one at a time as well, in this order%s: a fix that fails on the first stops the rollout before it spreads.\n\n", first)
		}
		for i, node := range s.Nodes {
			mdPlanNode(p, fx.Steps, node, i+1, len(s.Nodes))
		}
	}
}

func mdPlanNode(p func(string, ...any), st result.FixSteps, node string, i, of int) {
	p("#### Node %s (%d of %d)\n\n", mdText(node), i, of)
	list := func(head string, items []string) {
		if len(items) == 0 {
			return
		}
		p("%s\n\n", head)
		for j, it := range items {
			p("%d. %s\n", j+1, mdText(it))
		}
		p("\n")
	}
	list("First, by hand:", st.Manual)
	if len(st.Commands) > 0 {
		p("Commands, as root on this node:\n\n")
		lines := append([]string{"# node: " + oneLine(node)}, st.Commands...)
		for j := range lines {
			lines[j] = visible(lines[j], "")
		}
		fence := codeFence(lines)
		p("%ssh\n%s\n%s\n\n", fence, strings.Join(lines, "\n"), fence)
	}
	list("Then, by hand:", st.After)
	if len(st.Verify) > 0 {
		p("Check on this node before the next one:\n\n")
		for _, v := range st.Verify {
			cmd, want := verifyShell(v)
			p("- [ ] %s: %s %s%s\n", mdText(v.What), mdCode(cmd, false), mdText(want), tries(v))
		}
		p("\n")
	} else {
		p("Check: run the audit again on this node; the finding must be gone.\n\n")
	}
	p("**Stop the rollout if** %s\n\n", mdText(st.Stop))
}

// tries says how long a verification is retried: the time the node gets
// to settle before the check counts as failed.
func tries(v result.Verification) string {
	if v.Retries <= 1 {
		return " (once)"
	}
	return fmt.Sprintf(" (retry up to %d times, %d s apart)", v.Retries, v.Delay)
}

// httpCheck is the shell line that prints the status a node's loopback URL
// (http://127.0.0.1:PORT/PATH, as check's plan.go accepts it) answers,
// asked where the node's own servers may listen: 127.0.0.1 first, then
// ::1, where RKE2 binds kube-proxy's and kubelet's health servers on a
// node whose first node-ip is IPv6 (k3s pkg/daemons/agent/agent_linux.go
// kubeProxyArgs and kubeletArgs). Never through a proxy: a login's
// http_proxy (/etc/environment) would take 127.0.0.1 to it (curl
// --noproxy).
func httpCheck(url string) string {
	rest := strings.TrimPrefix(url, "http://127.0.0.1")
	return "for h in 127.0.0.1 '[::1]'; do c=$(curl -s --noproxy '*' -m 5 -o /dev/null -w '%{http_code}' http://$h" + rest +
		"); [ \"$c\" != 000 ] && break; done; echo \"$c\""
}

// codeFence is a fence of backticks longer than any run of backticks at
// the start of a line of the block, so no line can close it.
func codeFence(lines []string) string {
	longest := 2
	for _, l := range lines {
		n := len(l) - len(strings.TrimLeft(l, "`"))
		longest = max(longest, n)
	}
	return strings.Repeat("`", longest+1)
}

// verifyShell is a verification as the command an operator types on the
// node, and what passing looks like. The HTTP check is the seed incident's
// own curl (httpCheck); the port check connects as Ansible's wait_for
// does, with bash's /dev/tcp (bash(1), REDIRECTION).
func verifyShell(v result.Verification) (cmd, want string) {
	switch {
	case v.HTTP != "":
		return httpCheck(v.HTTP), fmt.Sprintf("prints %d", v.Status)
	case v.Port != 0:
		return fmt.Sprintf("timeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/%d'", v.Port), "exits 0"
	case v.Expect != "":
		return v.Command, "prints " + v.Expect
	}
	return v.Command, "exits 0"
}
