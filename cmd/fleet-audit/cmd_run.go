package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/urfave/cli/v2"

	"github.com/fleet-audit/fleet-audit/audit"
	"github.com/fleet-audit/fleet-audit/inventory"
	"github.com/fleet-audit/fleet-audit/remote"
	"github.com/fleet-audit/fleet-audit/result"
)

// runOptions is what the run and demo commands' flags fill in.
type runOptions struct {
	Inventory inventorySource
	// FromCluster takes the hosts from Cluster's nodes (--from-cluster)
	// instead of the file Inventory names; Inventory's ssh_config still
	// applies to them.
	FromCluster      bool
	Cluster          clusterSource
	Forks            int
	ConnectTimeout   time.Duration
	NodeTimeout      time.Duration
	FailOn           result.Severity
	AllowUnreachable bool
	// AllowPartial is --allow-partial (audit.GatePolicy.AllowPartial).
	AllowPartial bool
	NoAgent      bool
	// HostKeyPolicy is --host-key-policy; HostKeyDefault when not given,
	// so each host's own (inventory, ssh_config) applies.
	HostKeyPolicy remote.HostKeyPolicy
	// Debug traces connections and probes on stderr.
	Debug bool
	// Quiet and Verbose choose how much of the terminal report is printed.
	Quiet, Verbose bool
	// Outputs maps a report format to the file it is written to.
	Outputs map[string]string
	// RetryFile is --retry-file: where the names of the nodes not fully
	// audited are written.
	RetryFile string
	// WaiversPath, ProbesDir, Only, Skip and TargetVersion choose what the
	// run judges; see loadRules.
	WaiversPath   string
	ProbesDir     string
	Only, Skip    []string
	TargetVersion string
	// Thresholds are --etcd-snapshot-max-age and --ca-horizon.
	Thresholds result.Thresholds
	// Change is --change-id, --title and --requested-by; nil when none
	// was given.
	Change *result.Change
	// ShardK and ShardN are --shard K/N; ShardN is 0 for every host.
	ShardK, ShardN int
	// RunID is --run-id, which a sharded run must have.
	RunID string
}

func runCommand(act func(context.Context, runOptions, streams) error) *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "audit every node of an inventory and gate on the findings",
		UsageText: "fleet-audit run -i FILE [options]\nfleet-audit run --from-cluster [--kubeconfig FILE] [--context NAME] [options]",
		Description: `Connects to every inventory host over SSH (or locally for connection: local),
runs the embedded read-only probes in one session per node, compares the nodes
and prints findings first, then drift. Host keys are checked against known_hosts;
an unknown or changed key fails that node, never silently trusted.

EXAMPLES:
   fleet-audit run -i inventory.yaml
   fleet-audit run -i inventory.yaml --forks 20 --html report.html --junit junit.xml
   fleet-audit run -i inventory.yaml --fail-on warning --allow-unreachable
   fleet-audit run -i inventory.yaml --waivers waivers.yaml --skip 'conntrack.*'
   fleet-audit run -i inventory.yaml --probes ./site-probes --target-version v1.32.5+rke2r1
   fleet-audit run --from-cluster --context prod   # the nodes kubectl lists, as discover writes them
   fleet-audit run -i inventory.yaml --shard 2/3 --run-id "$CI_PIPELINE_ID" --json shard-2.json   # then fleet-audit merge shard-*.json

Report formats: ` + formatNames() + `

` + exitStatusHelp,
		Flags: flags(runInventoryFlags(), []cli.Flag{
			&cli.BoolFlag{Name: "from-cluster", Usage: "audit the nodes of the cluster kubectl reaches (see fleet-audit discover) instead of an inventory file"},
		}, clusterFlags(), []cli.Flag{
			&cli.BoolFlag{Name: "no-agent", Usage: "do not use the ssh-agent at SSH_AUTH_SOCK"},
			&cli.StringFlag{Name: "host-key-policy", Value: "strict", Usage: "what to do with a host key known_hosts does not vouch for: `POLICY` strict (refuse), accept-new (record unknown keys, refuse changed ones) or insecure-ignore (accept anything; the report says so). Given, it beats the inventory's host_key_policy and ssh_config's StrictHostKeyChecking"},
		}, auditFlags(), []cli.Flag{
			allowUnreachableFlag(),
			allowPartialFlag(),
			&cli.StringFlag{Name: "retry-file", Usage: "write the nodes that could not be fully audited to `FILE`, one per line (empty when all were), for a later --limit @FILE"},
			&cli.StringFlag{Name: "shard", Usage: "audit only shard `K/N` of the hosts (after --limit): those whose name's FNV-1a hash modulo N is K-1; fleet-audit merge joins the N --json reports into the report of one run (give --run-id)"},
			runIDFlag(),
		}, formatFlags(), outputFlags(), ruleFlags(), changeFlags()),
		Action: func(c *cli.Context) error {
			o, err := runOptionsFrom(c)
			if err != nil {
				return err
			}
			if err := runSourceFrom(c, &o); err != nil {
				return err
			}
			return internal(act(c.Context, o, streamsOf(c)))
		},
	}
}

// runInventoryFlags are inventoryFlags with -i optional, since run takes
// --from-cluster instead; runSourceFrom asks for exactly one of them.
func runInventoryFlags() []cli.Flag {
	fs := inventoryFlags()
	for _, f := range fs {
		if sf, ok := f.(*cli.GenericFlag); ok && sf.Name == "inventory" {
			sf.Required = false
		}
	}
	return fs
}

// runSourceFrom reads where run's hosts come from: an inventory file or
// the cluster, exactly one, and the cluster's flags only with the cluster.
func runSourceFrom(c *cli.Context, o *runOptions) error {
	o.FromCluster = c.Bool("from-cluster")
	if o.FromCluster {
		o.Cluster = clusterSourceFrom(c)
	}
	switch {
	case o.FromCluster && c.IsSet("inventory"):
		return &usageError{errors.New("-i/--inventory and --from-cluster both say where the hosts come from; give one")}
	case !o.FromCluster && !c.IsSet("inventory"):
		return &usageError{errors.New("no hosts: give -i/--inventory FILE, or --from-cluster to audit the nodes kubectl lists")}
	case !o.FromCluster && (c.IsSet("kubeconfig") || c.IsSet("context")):
		return &usageError{errors.New("--kubeconfig and --context choose the cluster of --from-cluster, which is not given")}
	case o.FromCluster && c.IsSet("role-map"):
		return &usageError{errors.New("--role-map maps Ansible group names; with --from-cluster the roles come from the nodes' labels")}
	}
	return nil
}

// runOptionsFrom reads run's flags; demo reads the ones it shares with
// run through it too (a flag demo does not have reads as its zero value).
func runOptionsFrom(c *cli.Context) (runOptions, error) {
	src, err := inventorySourceFrom(c)
	if err != nil {
		return runOptions{}, err
	}
	o := runOptions{
		Inventory: src, NoAgent: c.Bool("no-agent"),
		Forks: c.Int("forks"), ConnectTimeout: durationOf(c, "connect-timeout"), NodeTimeout: durationOf(c, "node-timeout"),
		RetryFile: c.String("retry-file"), Debug: c.Bool("debug"), Quiet: c.Bool("quiet"), Verbose: c.Bool("verbose"), Outputs: outputsFrom(c),
	}
	if o.Forks < 1 {
		return o, &usageError{fmt.Errorf("--forks: want at least 1, got %d", o.Forks)}
	}
	if o.ConnectTimeout <= 0 || o.NodeTimeout <= 0 {
		return o, &usageError{fmt.Errorf("--connect-timeout and --node-timeout must be positive")}
	}
	if err := judgeOptionsFrom(c, &o); err != nil {
		return o, err
	}
	if c.IsSet("shard") {
		if o.ShardK, o.ShardN, err = audit.ParseShard(c.String("shard")); err != nil {
			return o, &usageError{fmt.Errorf("--shard: %w", err)}
		}
		if o.RunID, err = runIDFrom(c); err != nil {
			return o, err
		}
		// Without it merge could not tell this run's shards from another
		// run's, and would judge today's shard with last night's.
		if o.RunID == "" {
			return o, &usageError{fmt.Errorf("--shard: give --run-id ID (or set %s), the same for every shard of the run, such as the CI pipeline's id: merge refuses shards of different runs", runIDEnv)}
		}
	}
	// Only given: the default leaves each host's own policy in force.
	if c.IsSet("host-key-policy") {
		if o.HostKeyPolicy, err = remote.ParseHostKeyPolicy(c.String("host-key-policy")); err != nil {
			return o, &usageError{fmt.Errorf("--host-key-policy: %w", err)}
		}
	}
	return o, nil
}

// judgeOptionsFrom reads the flags that say how a run is judged, which
// run, demo and merge share: the gate policy and the rules (ruleFlags).
func judgeOptionsFrom(c *cli.Context, o *runOptions) error {
	sev, err := result.ParseSeverity(c.String("fail-on"))
	if err != nil {
		return &usageError{fmt.Errorf("--fail-on: %w", err)}
	}
	o.FailOn, o.AllowUnreachable, o.AllowPartial = sev, c.Bool("allow-unreachable"), c.Bool("allow-partial")
	o.WaiversPath, o.ProbesDir = c.String("waivers"), c.String("probes")
	o.Only, o.Skip = patterns(c.StringSlice("only")), patterns(c.StringSlice("skip"))
	o.TargetVersion = strings.TrimSpace(c.String("target-version"))
	if o.TargetVersion != "" && !audit.TargetVersionRe.MatchString(o.TargetVersion) {
		return &usageError{fmt.Errorf("--target-version %q: want an RKE2 release such as v1.31.4+rke2r1 (v1.MINOR.PATCH+rke2rN)", o.TargetVersion)}
	}
	age, err := parseSpan(c.String("etcd-snapshot-max-age"))
	if err == nil && age < time.Second {
		err = fmt.Errorf("want at least 1s, got %q", c.String("etcd-snapshot-max-age"))
	}
	if err != nil {
		return &usageError{fmt.Errorf("--etcd-snapshot-max-age: %w", err)}
	}
	horizon, err := parseSpan(c.String("ca-horizon"))
	if err == nil && horizon%(24*time.Hour) != 0 {
		err = fmt.Errorf("want whole days such as 365d or 720h, got %q", c.String("ca-horizon"))
	}
	if err != nil {
		return &usageError{fmt.Errorf("--ca-horizon: %w", err)}
	}
	o.Thresholds = result.Thresholds{EtcdSnapshotMaxAgeSeconds: int64(age / time.Second), CAHorizonDays: int64(horizon / (24 * time.Hour))}
	var ch result.Change
	for _, f := range []struct {
		name string
		to   *string
	}{{"change-id", &ch.ID}, {"title", &ch.Title}, {"requested-by", &ch.RequestedBy}} {
		v := strings.TrimSpace(c.String(f.name))
		// A line break or an escape would split or hide the report's
		// head line the field is printed in.
		if strings.ContainsFunc(v, unicode.IsControl) {
			return &usageError{fmt.Errorf("--%s %q: control characters (line breaks, escapes) are not allowed", f.name, v)}
		}
		*f.to = v
	}
	if ch != (result.Change{}) {
		o.Change = &ch
	}
	return nil
}

// runAudit is the run command: load the inventory, then the shared
// pipeline.
func runAudit(ctx context.Context, o runOptions, s streams) error {
	// Before kubectl or the inventory is read: a report aimed at the
	// inventory must be refused before anything can go wrong with it.
	if err := checkRunOutputs(o); err != nil {
		return err
	}
	var inv *inventory.Inventory
	var err error
	if o.FromCluster {
		inv, err = o.Cluster.inventory(ctx, o.Inventory.SSHConfig, s)
	} else {
		// -i /dev/stdin or a FIFO can block for ever.
		inv, err = untilDone(ctx, o.Inventory.load)
	}
	if err != nil {
		return err
	}
	return auditAndReport(ctx, inv, o, s.out, s.err)
}

// inventory is the cluster's nodes as run audits them: the very inventory
// text discover writes, read with the user's ssh_config, so that a run
// from the cluster and a run of discover's file contact the same hosts.
func (cs clusterSource) inventory(ctx context.Context, sshConfig string, s streams) (*inventory.Inventory, error) {
	d, err := cs.discover(ctx, s)
	if err != nil {
		return nil, err
	}
	inv, err := d.Inventory(clusterFile, inventory.LoadOptions{UserSSHConfig: sshConfig})
	if err != nil {
		return nil, &usageError{err}
	}
	return inv, nil
}
