package main

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/urfave/cli/v2"

	"github.com/fleet-audit/fleet-audit/audit"
	"github.com/fleet-audit/fleet-audit/inventory"
	"github.com/fleet-audit/fleet-audit/report"
	"github.com/fleet-audit/fleet-audit/result"
)

// The flags several commands share, and what reads them back. A command's
// own flags are beside it in cmd_NAME.go.

// inventoryFlags say where the hosts come from; run and inventory take them.
func inventoryFlags() []cli.Flag {
	return []cli.Flag{
		&cli.GenericFlag{Name: "inventory", Aliases: []string{"i"}, Required: true, Value: &onceString{flag: "-i/--inventory"}, Usage: "inventory `FILE`: fleet-audit YAML, an Ansible inventory (INI or YAML, with its group_vars/ and host_vars/, or a directory of them), ansible-inventory --list JSON, a file of one host per line, - for standard input, or host1,host2, (one; ansible-inventory -i a -i b --list merges several into one)"},
		&cli.StringFlag{Name: "ssh-config", Aliases: []string{"F"}, Usage: "resolve bare host names through this ssh_config `FILE` (default ~/.ssh/config)"},
		&cli.StringFlag{Name: "limit", Aliases: []string{"l"}, Usage: "only the hosts `PATTERN` selects, in Ansible's pattern language: names, groups, roles, globs, ~regex, a:b (or), a:&b (and), a:!b (not), @FILE (one per line, as --retry-file writes)"},
		&cli.StringFlag{Name: "user", Aliases: []string{"u"}, Usage: "log in as `USER` on hosts whose inventory and ssh_config name no user (as ssh -l, ansible -u)"},
		&cli.StringFlag{Name: "jump", Aliases: []string{"J"}, Usage: "reach hosts whose inventory names no proxy_jump through these ProxyJump `HOSTS` ([user@]host[:port],...), as ssh -J"},
		&cli.BoolFlag{Name: "become", Aliases: []string{"b"}, Usage: "run the probes that need root through sudo -n on hosts whose inventory sets no become (as ansible -b); without root they cannot judge some checks and the node is partial"},
		&cli.StringFlag{Name: "become-user", Usage: "sudo -u `USER` for the root probes, on hosts whose inventory sets no become_user (as ansible --become-user); needs become"},
		&cli.StringSliceFlag{Name: "ssh-option", Aliases: []string{"o"}, Usage: "an ssh_config `KEY=VALUE` for hosts whose inventory does not set it, as ssh -o (User, Port, IdentityFile, IdentitiesOnly, UserKnownHostsFile, StrictHostKeyChecking, ProxyJump, ConnectTimeout, ServerAliveInterval, ServerAliveCountMax); repeatable"},
		&cli.StringFlag{Name: "role-map", Usage: "roles of Ansible groups, `GROUP=ROLE,...`, on top of the built-in ones (" + defaultRoleMapText() + ")"},
	}
}

// onceString is a flag that may be given once. Ansible merges every -i it
// is given (ansible-inventory -i a -i b --list lists the hosts of both),
// so a second -i that silently replaced the first would audit a part of
// the fleet the user named and pass the gate on it; fleet-audit reads one
// inventory and refuses the second rather than guess at Ansible's merge of
// groups and variables.
type onceString struct {
	flag string
	v    string
	set  bool
}

func (o *onceString) Set(v string) error {
	if o.set {
		return fmt.Errorf("%s given twice (%s, then %s): fleet-audit reads one inventory and drops none; merge them as Ansible does with ansible-inventory -i %s -i %s --list > all.json, then give -i all.json",
			o.flag, o.v, v, o.v, v)
	}
	o.v, o.set = v, true
	return nil
}

func (o *onceString) String() string {
	if o == nil {
		return ""
	}
	return o.v
}

// inventorySource is what inventoryFlags fill in.
type inventorySource struct {
	Path, SSHConfig string
	// SSH are -u, -J, -o, -b and --become-user, applied where the
	// inventory is silent.
	SSH     inventory.CommandLine
	RoleMap map[string]string
	// Limit is --limit, "" for every host.
	Limit string
}

func inventorySourceFrom(c *cli.Context) (inventorySource, error) {
	src := inventorySource{Path: c.String("inventory"), SSHConfig: c.String("ssh-config"), Limit: c.String("limit"),
		SSH: inventory.CommandLine{User: c.String("user"), Jump: c.String("jump"), Options: c.StringSlice("ssh-option"),
			Become: c.Bool("become"), BecomeUser: c.String("become-user")}}
	if c.IsSet("limit") && strings.TrimSpace(src.Limit) == "" {
		return src, &usageError{fmt.Errorf("--limit: empty pattern")}
	}
	if c.IsSet("role-map") {
		m, err := inventory.ParseRoleMap(c.String("role-map"))
		if err != nil {
			return src, &usageError{fmt.Errorf("--role-map: %w", err)}
		}
		src.RoleMap = m
	}
	return src, nil
}

// load reads the inventory as run and inventory both do.
func (src inventorySource) load() (*inventory.Inventory, error) {
	inv, err := inventory.Load(src.Path, inventory.LoadOptions{UserSSHConfig: src.SSHConfig, RoleMap: src.RoleMap, CommandLine: src.SSH})
	if err != nil {
		return nil, &usageError{err}
	}
	if src.Limit != "" {
		if inv, err = inv.Limit(src.Limit, os.ReadFile); err != nil {
			return nil, &usageError{err}
		}
	}
	return inv, nil
}

func defaultRoleMapText() string {
	var out []string
	for _, g := range slices.Sorted(maps.Keys(inventory.DefaultRoleMap)) {
		out = append(out, g+"="+inventory.DefaultRoleMap[g])
	}
	return strings.Join(out, ",")
}

// ruleFlags choose what a run judges; run and demo both take them.
func ruleFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "waivers", Usage: "accept the findings listed in this YAML `FILE` (check, nodes/roles, reason, expires): shown as waived, not failing the gate"},
		&cli.StringSliceFlag{Name: "only", Usage: "judge only the checks whose id matches `PATTERN` (a glob such as 'sysctl.*'; repeatable or comma-separated)"},
		&cli.StringSliceFlag{Name: "skip", Usage: "do not judge the checks whose id matches `PATTERN` (applied after --only; repeatable or comma-separated)"},
		&cli.StringFlag{Name: "probes", Usage: "also run the probes (*.sh) and checks (*.yaml) in `DIR`"},
		&cli.StringFlag{Name: "target-version", Usage: "the RKE2 `VERSION` the fleet is about to be upgraded to (v1.xx.y+rke2rN), for the version-skew checks"},
		&cli.StringFlag{Name: "etcd-snapshot-max-age", Value: spanText(time.Duration(audit.DefaultThresholds().EtcdSnapshotMaxAgeSeconds) * time.Second), Usage: "the newest etcd snapshot, local or in S3, may be this old: a `DURATION` (36h, 2d)"},
		&cli.StringFlag{Name: "ca-horizon", Value: spanText(time.Duration(audit.DefaultThresholds().CAHorizonDays) * 24 * time.Hour), Usage: "warn of an RKE2 CA that expires within this `DURATION` in whole days (365d, 8760h): the time to the next planned upgrade"},
	}
}

// parseSpan reads a threshold flag: a Go duration (36h, 90m) or a whole
// number of days (2d), which Go's durations lack; it must be positive.
func parseSpan(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if n, ok := strings.CutSuffix(v, "d"); ok {
		days, err := strconv.ParseUint(n, 10, 16)
		if err != nil || days == 0 {
			return 0, fmt.Errorf("want a positive duration such as 36h or 2d, got %q", v)
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("want a positive duration such as 36h or 2d, got %q", v)
	}
	return d, nil
}

// spanText says a threshold as parseSpan reads it back: whole days as
// 365d, anything else as Go prints it.
func spanText(d time.Duration) string {
	if d > 0 && d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	return d.String()
}

// changeFlags name the change ticket a run is for; every report prints
// them in its head. run, demo and merge take them.
func changeFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "change-id", Usage: "the change ticket `ID` this run is for (CHG-4711), printed in every report's head"},
		&cli.StringFlag{Name: "title", Usage: "the change's `TITLE`, printed in every report's head"},
		&cli.StringFlag{Name: "requested-by", Usage: "`WHO` asked for the change, printed in every report's head"},
	}
}

// auditFlags tune how an audit runs; run and demo both take them.
func auditFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "debug", Aliases: []string{"vvv"}, Usage: "trace on stderr, as ssh -vvv does: per node, every step of the SSH connection (dial, handshake, host key, keys offered) and every probe (status, exit, bytes), as log/slog text lines"},
		&cli.IntFlag{Name: "forks", Aliases: []string{"f"}, Value: 10, Usage: "audit at most `N` nodes at once"},
		&cli.GenericFlag{Name: "connect-timeout", Aliases: []string{"T"}, Value: &seconds{10 * time.Second}, Usage: "bound on TCP connect, SSH handshake and authentication per node: a `DURATION` (10s, 1m30s) or seconds (10)"},
		&cli.GenericFlag{Name: "node-timeout", Value: &seconds{2 * time.Minute}, Usage: "bound on everything done for one node: a `DURATION` (2m) or seconds (120)"},
		failOnFlag(),
	}
}

// runIDFlag names a sharded run, so that merge joins the shards of one run
// only; run --shard needs it, merge checks it when given. The variable lets
// a CI file set it once for every job (the pipeline's id).
func runIDFlag() cli.Flag {
	return &cli.StringFlag{Name: "run-id", EnvVars: []string{runIDEnv}, Usage: "the `ID` of a sharded run, the same for every shard and its merge, such as the CI pipeline's (GitLab $CI_PIPELINE_ID, GitHub $GITHUB_RUN_ID); merge refuses shards of different runs"}
}

// runIDEnv is the variable runIDFlag defaults from.
const runIDEnv = "FLEET_AUDIT_RUN_ID"

// runIDFrom reads --run-id: printable, since every refusal of merge
// prints it.
func runIDFrom(c *cli.Context) (string, error) {
	id := strings.TrimSpace(c.String("run-id"))
	if !strings.ContainsFunc(id, func(r rune) bool { return !unicode.IsGraphic(r) || unicode.IsSpace(r) }) {
		return id, nil
	}
	return "", &usageError{fmt.Errorf("--run-id %q: want an id without spaces or control characters, such as the CI pipeline's", id)}
}

// severityWords are the severities --fail-on takes, as result names them.
var severityWords = strings.Join(result.SeverityNames(), ", ")

// failOnFlag and allowUnreachableFlag are the gate's policy; run and merge
// take both, demo --fail-on.
func failOnFlag() cli.Flag {
	return &cli.StringFlag{Name: "fail-on", Value: "critical", Usage: "fail the gate on findings at or above `SEVERITY` (" + severityWords + ")"}
}

func allowUnreachableFlag() cli.Flag {
	return &cli.BoolFlag{Name: "allow-unreachable", Usage: "do not fail the gate (exit 3) because some node could not be audited"}
}

// allowPartialFlag is its own flag, not part of --allow-unreachable: a CI
// that tolerates a node down for maintenance must not, by the same flag,
// pass a fleet whose root probes never ran (audit.GatePolicy.AllowPartial).
func allowPartialFlag() cli.Flag {
	return &cli.BoolFlag{Name: "allow-partial", Usage: "do not fail the gate (exit 3) because some checks could not be judged on a node (status partial, e.g. root probes run without become); they are still listed"}
}

// formatFlags are one --NAME FILE flag per format of report's registry, so
// a format added there is offered by run and report alike.
func formatFlags() []cli.Flag {
	var out []cli.Flag
	for _, f := range report.FileFormats() {
		out = append(out, &cli.StringFlag{Name: f.Name, Usage: "write " + f.Holds + " to `FILE`"})
	}
	return out
}

// formatUsage is "[--json FILE] [--markdown FILE] ...", for a UsageText.
func formatUsage() string {
	var out []string
	for _, f := range report.FileFormats() {
		out = append(out, "[--"+f.Name+" FILE]")
	}
	return strings.Join(out, " ")
}

// outputsFrom maps each format flag given to its path.
func outputsFrom(c *cli.Context) map[string]string {
	out := map[string]string{}
	for _, f := range report.FileFormats() {
		if p := c.String(f.Name); p != "" {
			out[f.Name] = p
		}
	}
	return out
}

// diffFormats are the formats a diff can be written to a file in (every
// diff format but the terminal one, which is printed).
func diffFormats() []string {
	var out []string
	for _, f := range report.DiffFormats() {
		if f != "terminal" {
			out = append(out, f)
		}
	}
	return out
}

// outputFlags choose how much of the terminal report run, demo and report
// print.
func outputFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only the verdict line, and no progress line"},
		&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "print each finding's summary, evidence and fix, and every drift scope as its own row"},
	}
}

// formatNames is shown in --help so users see every report format.
func formatNames() string { return strings.Join(report.Names(), ", ") }

// patterns trims what urfave already split at commas and drops empty
// entries, so "--skip 'a, b'" and a trailing comma do what they look like.
func patterns(in []string) []string {
	var out []string
	for _, p := range in {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// flags concatenates flag lists.
func flags(lists ...[]cli.Flag) []cli.Flag {
	var out []cli.Flag
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// seconds is a duration flag that also takes a bare number of seconds, as
// the inventory's timeouts, ssh's ConnectTimeout and ansible -T do.
type seconds struct{ d time.Duration }

func (s *seconds) Set(v string) error {
	v = strings.TrimSpace(v)
	if n, err := strconv.ParseUint(v, 10, 32); err == nil {
		s.d = time.Duration(n) * time.Second
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("want a duration such as 10s or 1m30s, or a number of seconds, got %q", v)
	}
	s.d = d
	return nil
}

func (s *seconds) String() string {
	if s == nil {
		return ""
	}
	return s.d.String()
}

// durationOf reads a seconds flag.
func durationOf(c *cli.Context, name string) time.Duration {
	if s, ok := c.Generic(name).(*seconds); ok {
		return s.d
	}
	return 0
}
