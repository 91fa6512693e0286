package check

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/internal/yamlx"
	"github.com/fleet-audit/fleet-audit/result"
	"gopkg.in/yaml.v3"
)

// Plan is a check's plan: block, how to apply its fix on one node and know
// that it worked, for the runbook (--plan, --plan-ansible). fleet-audit
// never runs it; it writes it for operators.
type Plan struct {
	// Manual are steps that need a person (a decision, a drain through the
	// API), in order, before the commands. A fix that is a decision is all
	// manual steps: a plan says so rather than inventing a command.
	Manual []string `yaml:"manual"`
	// Commands run as root on the node, in order, one line of sh each, or
	// {use: NAME} for a command of plan_commands.yaml.
	// They must not need the node's name: the runbook never splices a
	// node name into a command.
	Commands []PlanCommand `yaml:"commands"`
	// After are steps for a person after the commands and before the
	// checks (a reboot, an uncordon through the API).
	After  []string     `yaml:"after"`
	Verify []VerifyItem `yaml:"verify"`
	// Stop is the condition to stop the rollout at: "stop the rollout if
	// …". A shared verification set carries its own (kube-proxy not
	// healthy again); a plan's Stop adds to those of the sets it uses, and
	// may be left out when they say it all.
	Stop string `yaml:"stop"`
}

// VerifyItem is one check after the fix on a node: exactly one of HTTP,
// Port, Command, or Use (a shared set from plan_verify.yaml).
type VerifyItem struct {
	Use     string `yaml:"use"`
	What    string `yaml:"what"`
	HTTP    string `yaml:"http"`
	Status  int    `yaml:"status"`
	Port    int    `yaml:"port"`
	Command string `yaml:"command"`
	Expect  string `yaml:"expect"`
	Retries int    `yaml:"retries"`
	Delay   int    `yaml:"delay"`
}

// By default a verification is tried 31 times 10 s apart: a kube-proxy
// that crash-looped before the fix waits out kubelet's restart back-off,
// which grows to 5 minutes (kubernetes/kubernetes pkg/kubelet/kubelet.go,
// MaxContainerBackOff = 300 s), before it starts again and can pass.
const (
	defaultRetries = 31
	defaultDelay   = 10
)

// planVerifyYAML are the verifications several checks' plans share, by
// name, so that "kube-proxy is healthy again" is written once.
//
//go:embed plan_verify.yaml
var planVerifyYAML []byte

// PlanCommand is one command of a plan: the line of sh itself (Run), or
// the name of a command several plans share (Use).
type PlanCommand struct {
	Run string
	Use string
}

// UnmarshalYAML reads a string as the command, or {use: NAME}.
func (c *PlanCommand) UnmarshalYAML(n *yaml.Node) error {
	switch {
	case n.Kind == yaml.ScalarNode:
		c.Run = n.Value
		return nil
	case n.Kind == yaml.MappingNode && len(n.Content) == 2 && n.Content[0].Value == "use" && n.Content[1].Kind == yaml.ScalarNode:
		c.Use = n.Content[1].Value
		return nil
	}
	return fmt.Errorf("line %d: a command is a line of sh or {use: NAME}", n.Line)
}

// MarshalJSON keeps the rules digest (audit.Rules.Digest) readable: a
// command as its text or its shared name.
func (c PlanCommand) MarshalJSON() ([]byte, error) {
	if c.Use != "" {
		return json.Marshal(map[string]string{"use": c.Use})
	}
	return json.Marshal(c.Run)
}

// planCommandsYAML are the commands several checks' plans share, by name.
//
//go:embed plan_commands.yaml
var planCommandsYAML []byte

// sharedCommands parses plan_commands.yaml once: name → command.
var sharedCommands = sync.OnceValues(func() (map[string]string, error) {
	const file = "plan_commands.yaml"
	list, err := yamlx.List(file, planCommandsYAML, "shared commands")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	var errs []error
	for _, item := range list.Content {
		var c struct {
			Name    string `yaml:"name"`
			Command string `yaml:"command"`
		}
		if err := strictDecode(item, &c); err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %s", file, item.Line+yamlx.ErrLine(err)-1, yamlx.ErrText(err)))
			continue
		}
		if _, dup := out[c.Name]; c.Name == "" || dup || strings.TrimSpace(c.Command) == "" || strings.ContainsAny(c.Command, "\n\r") {
			errs = append(errs, fmt.Errorf("%s:%d: want a unique name and a one-line command, got %q", file, item.Line, c.Name))
			continue
		}
		out[c.Name] = c.Command
	}
	return out, errors.Join(errs...)
})

// verifySets parses plan_verify.yaml once.
var verifySets = sync.OnceValues(func() (map[string]sharedSet, error) {
	return parseVerifySets("plan_verify.yaml", planVerifyYAML)
})

// verifySet is one entry of plan_verify.yaml.
type verifySet struct {
	Name   string       `yaml:"name"`
	Verify []VerifyItem `yaml:"verify"`
	// Stop is when to stop the rollout if these checks do not pass.
	Stop string `yaml:"stop"`
}

// sharedSet is a verifySet resolved.
type sharedSet struct {
	verify []result.Verification
	stop   string
}

func parseVerifySets(file string, data []byte) (map[string]sharedSet, error) {
	list, err := yamlx.List(file, data, "verification sets")
	if err != nil {
		return nil, err
	}
	out := map[string]sharedSet{}
	var errs []error
	for _, item := range list.Content {
		var s verifySet
		if err := strictDecode(item, &s); err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %s", file, item.Line+yamlx.ErrLine(err)-1, yamlx.ErrText(err)))
			continue
		}
		if _, dup := out[s.Name]; s.Name == "" || dup {
			errs = append(errs, fmt.Errorf("%s:%d: name: want a unique name, got %q", file, yamlx.FieldLine(item, "name"), s.Name))
			continue
		}
		vs, verrs := verifications(s.Verify, fieldNode(item, "verify"), nil, func(line int, msg string) error {
			return fmt.Errorf("%s:%d: set %q: verify: %s", file, line, s.Name, msg)
		})
		errs = append(errs, verrs...)
		if len(vs) == 0 && len(verrs) == 0 {
			errs = append(errs, fmt.Errorf("%s:%d: set %q: verify: needs at least one item", file, item.Line, s.Name))
		}
		if strings.TrimSpace(s.Stop) == "" {
			errs = append(errs, fmt.Errorf("%s:%d: set %q: stop: is required (when to stop if these checks fail)", file, item.Line, s.Name))
		}
		out[s.Name] = sharedSet{verify: vs, stop: s.Stop}
	}
	return out, errors.Join(errs...)
}

// validatePlan checks a check's plan: block; node is the block in the
// file, for the lines of its errors, and at the line of its plan: key.
// bad reports one error at a line.
func validatePlan(p *Plan, node *yaml.Node, at int, bad func(line int, format string, args ...any)) {
	if len(p.Manual) == 0 && len(p.Commands) == 0 {
		bad(at, "plan: needs commands or manual steps (a fix that needs a decision is a manual step)")
	}
	shared, err := sharedCommands()
	if err != nil {
		bad(at, "plan: commands: the embedded plan_commands.yaml: %v", err)
		return
	}
	for i, pc := range p.Commands {
		line := itemLine(fieldNode(node, "commands"), i, at)
		c := pc.Run
		if pc.Use != "" {
			if _, ok := shared[pc.Use]; !ok {
				bad(line, "plan: commands: command %d: use: no shared command %q in plan_commands.yaml", i+1, pc.Use)
			}
			continue
		}
		switch {
		case strings.TrimSpace(c) == "":
			bad(line, "plan: commands: command %d is empty", i+1)
		case strings.ContainsAny(c, "\n\r"):
			bad(line, "plan: commands: command %d spans lines; write one command a line", i+1)
		}
	}
	for _, field := range []struct {
		name  string
		steps []string
	}{{"manual", p.Manual}, {"after", p.After}} {
		for i, m := range field.steps {
			if strings.TrimSpace(m) == "" {
				bad(itemLine(fieldNode(node, field.name), i, at), "plan: %s: step %d is empty", field.name, i+1)
			}
		}
	}
	if strings.TrimSpace(p.Stop) == "" && len(usedSets(p.Verify)) == 0 {
		bad(yamlx.FieldLine(node, "stop"), "plan: stop: is required (when to stop the rollout), unless a shared verification it uses says it")
	}
	// A plan of manual steps alone may leave the judging to the next
	// audit; one that runs commands must say how to know they worked.
	if len(p.Verify) == 0 && len(p.Commands) > 0 {
		bad(at, "plan: verify: needs at least one check to run after each node's commands")
	}
	sets, err := verifySets()
	if err != nil {
		bad(at, "plan: verify: the embedded plan_verify.yaml: %v", err)
		return
	}
	verifications(p.Verify, fieldNode(node, "verify"), sets, func(line int, msg string) error {
		bad(line, "plan: verify: %s", msg)
		return nil
	})
}

// verifications resolves and validates verify items: a use: names a set
// (sets nil: no use: allowed, as in plan_verify.yaml itself).
func verifications(items []VerifyItem, node *yaml.Node, sets map[string]sharedSet, bad func(line int, msg string) error) ([]result.Verification, []error) {
	var out []result.Verification
	var errs []error
	fail := func(i int, format string, args ...any) {
		if err := bad(itemLine(node, i, 0), fmt.Sprintf("item %d: ", i+1)+fmt.Sprintf(format, args...)); err != nil {
			errs = append(errs, err)
		}
	}
	for i, v := range items {
		kinds := 0
		for _, set := range []bool{v.Use != "", v.HTTP != "", v.Port != 0, v.Command != ""} {
			if set {
				kinds++
			}
		}
		if kinds != 1 {
			fail(i, "give exactly one of use, http, port or command")
			continue
		}
		if v.Use != "" {
			set, ok := sets[v.Use]
			switch {
			case sets == nil:
				fail(i, "use: a shared set cannot use another")
			case !ok:
				fail(i, "use: no shared verification %q in plan_verify.yaml", v.Use)
			case v.What != "" || v.Retries != 0 || v.Delay != 0 || v.Expect != "" || v.Status != 0:
				fail(i, "use: takes no other field")
			default:
				out = append(out, set.verify...)
			}
			continue
		}
		if strings.TrimSpace(v.What) == "" {
			fail(i, "what: is required (what the check shows)")
			continue
		}
		r := result.Verification{What: v.What, Retries: v.Retries, Delay: v.Delay}
		if r.Retries == 0 {
			r.Retries = defaultRetries
		}
		if r.Delay == 0 {
			r.Delay = defaultDelay
		}
		if r.Retries < 1 || r.Delay < 1 {
			fail(i, "retries and delay must be positive")
			continue
		}
		switch {
		case v.HTTP != "":
			// The check runs on the node (curl there, Ansible's uri module
			// on the target), so the URL must be the node's own loopback;
			// quotes and spaces are refused so it is one sh word as written.
			u, err := url.Parse(v.HTTP)
			if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Hostname() != "127.0.0.1" || strings.ContainsAny(v.HTTP, "'\"` \\$") {
				fail(i, "http: want http(s)://127.0.0.1:PORT/PATH without quotes or spaces, got %q", v.HTTP)
				continue
			}
			if v.Status < 100 || v.Status > 599 || v.Expect != "" {
				fail(i, "http: needs status (an HTTP status code) and no expect")
				continue
			}
			r.HTTP, r.Status = v.HTTP, v.Status
		case v.Port != 0:
			if v.Port < 1 || v.Port > 65535 || v.Expect != "" || v.Status != 0 {
				fail(i, "port: want a TCP port 1-65535 and no expect or status")
				continue
			}
			r.Port = v.Port
		default:
			if strings.ContainsAny(v.Command, "\n\r") || v.Status != 0 {
				fail(i, "command: one line of sh, and no status (expect is what it prints)")
				continue
			}
			r.Command, r.Expect = v.Command, strings.TrimSpace(v.Expect)
		}
		out = append(out, r)
	}
	return out, errs
}

// Steps are the plan resolved for the runbook: shared verifications
// expanded, defaults filled. Only a plan ParseChecks accepted is given.
func (p *Plan) Steps() result.FixSteps {
	sets, _ := verifySets()
	vs, _ := verifications(p.Verify, nil, sets, func(int, string) error { return nil })
	shared, _ := sharedCommands()
	var commands []string
	for _, c := range p.Commands {
		if c.Use != "" {
			commands = append(commands, shared[c.Use])
		} else {
			commands = append(commands, c.Run)
		}
	}
	var stops []string
	for _, stop := range append(usedStops(p.Verify, sets), p.Stop) {
		if stop = strings.TrimRight(strings.TrimSpace(stop), "."); stop != "" {
			stops = append(stops, stop)
		}
	}
	return result.FixSteps{
		Manual:   append([]string(nil), p.Manual...),
		Commands: commands,
		After:    append([]string(nil), p.After...),
		Verify:   vs,
		Stop:     strings.Join(stops, "; or if ") + ".",
	}
}

func usedStops(items []VerifyItem, sets map[string]sharedSet) []string {
	var out []string
	for _, name := range usedSets(items) {
		out = append(out, sets[name].stop)
	}
	return out
}

// usedSets are the shared sets a plan's checks use, in order, each once.
func usedSets(items []VerifyItem) []string {
	var out []string
	for _, v := range items {
		if v.Use != "" && !slices.Contains(out, v.Use) {
			out = append(out, v.Use)
		}
	}
	return out
}

// fieldNode is the value of a mapping's field, or nil.
func fieldNode(n *yaml.Node, field string) *yaml.Node {
	if n == nil {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == field {
			return n.Content[i+1]
		}
	}
	return nil
}

// itemLine is the line of a sequence's i-th item, or def.
func itemLine(seq *yaml.Node, i, def int) int {
	if seq != nil && i < len(seq.Content) {
		return seq.Content[i].Line
	}
	return def
}

// strictDecode decodes one node rejecting unknown fields: yaml.Node.Decode
// has no strict mode, so the node is re-encoded first, as parseCheck does.
func strictDecode(n *yaml.Node, v any) error {
	b, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	return dec.Decode(v)
}

// NeedsPlan says whether the check's findings get a rollout, and so must
// have a plan: a node check, not a symptom (its cause is what gets fixed),
// warning or worse. audit's addRollouts attaches rollouts by the same rule.
func (c Check) NeedsPlan() bool {
	return c.Scope == probe.ScopeNode && !c.Symptom && c.Severity.AtLeast(result.SeverityWarning)
}
