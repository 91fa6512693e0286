package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/fleet-audit/fleet-audit/cmd/fleet-audit/internal/discover"
	"github.com/fleet-audit/fleet-audit/inventory"
	"github.com/fleet-audit/fleet-audit/result"
)

// clusterSource is the cluster whose nodes discover and run --from-cluster
// list, as kubectl is told it; empty fields leave kubectl's own defaults.
type clusterSource struct {
	Kubeconfig, Context string
}

// clusterFlags choose the cluster; discover and run take them.
func clusterFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "kubeconfig", Usage: "the kubeconfig `FILE` kubectl reads (default: kubectl's own, KUBECONFIG or ~/.kube/config)"},
		&cli.StringFlag{Name: "context", Usage: "the kubeconfig context `NAME` to list the nodes of (default: its current context)"},
	}
}

func clusterSourceFrom(c *cli.Context) clusterSource {
	return clusterSource{Kubeconfig: c.String("kubeconfig"), Context: c.String("context")}
}

// clusterFile names an inventory made from the cluster in memory, in
// errors, as <stdin> names one read from standard input.
const clusterFile = "<cluster>"

// discover lists the cluster's nodes through the user's kubectl. Its
// errors are the user's setup (no kubectl, a context or credentials that
// do not work): exit 2.
func (cs clusterSource) discover(ctx context.Context, s streams) (*discover.Discovery, error) {
	d, err := discover.Discover(ctx, discover.Options{Kubeconfig: cs.Kubeconfig, Context: cs.Context, Stdin: os.Stdin})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil, err
		}
		return nil, &usageError{err}
	}
	for _, w := range d.Warnings() {
		fmt.Fprintf(s.err, "fleet-audit: warning: %s\n", w)
	}
	return d, nil
}

// discoverOptions is what the discover command's flags fill in.
type discoverOptions struct {
	Cluster clusterSource
	// Output is -o: a file, or "-" for standard output.
	Output string
}

func discoverCommand(act func(context.Context, discoverOptions, streams) error) *cli.Command {
	return &cli.Command{
		Name:      "discover",
		Usage:     "write an inventory of a Kubernetes cluster's nodes, listed through your kubectl, for review",
		UsageText: "fleet-audit discover [--kubeconfig FILE] [--context NAME] [-o FILE]",
		Description: `Lists the cluster's nodes with your own kubectl (kubectl get --raw
/api/v1/nodes), so your kubeconfig's contexts and credential plugins work, and
writes a fleet-audit inventory of them: each node under its name, at its
InternalIP (else ExternalIP, else Hostname address), with its roles from its
node-role.kubernetes.io/ labels (control-plane, etcd, master as control-plane,
worker; a node that is neither control-plane nor etcd, such as an RKE2 agent,
is a worker), one group per set of roles. A node without a usable name or
address is left out, with a warning here and a comment in the file.

The cluster does not know how to log in to its nodes: review user,
identity_files and become in the file before running it, as its header says.
run --from-cluster audits the same inventory without writing it.

EXAMPLES:
   fleet-audit discover -o inventory.yaml
   fleet-audit discover --context prod --kubeconfig ~/.kube/rke2.yaml -o prod.yaml
   fleet-audit inventory -i inventory.yaml

EXIT STATUS:
   0    the inventory was written
   2    no kubectl, kubectl failed, or no node could be written
   4    the inventory could not be written`,
		Flags: flags(clusterFlags(), []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: stdoutPath, Usage: "write the inventory to `FILE` (- for standard output)"},
		}),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return &usageError{fmt.Errorf("discover takes no arguments, got %q", c.Args().Slice())}
			}
			return internal(act(c.Context, discoverOptions{Cluster: clusterSourceFrom(c), Output: c.String("output")}, streamsOf(c)))
		},
	}
}

// runDiscover writes the inventory of the cluster's nodes, once it has
// read back as run --from-cluster reads it.
func runDiscover(ctx context.Context, o discoverOptions, s streams) error {
	if err := checkOutput(o.Output); err != nil {
		return &usageError{fmt.Errorf("-o %s: %w", o.Output, err)}
	}
	d, err := o.Cluster.discover(ctx, s)
	if err != nil {
		return err
	}
	// Read back with no ssh_config: what is checked is the text, which
	// only a bug of ours could make unreadable; the user's ssh_config
	// applies when the file is used.
	file := clusterFile
	if !isStdoutPath(o.Output) {
		file = o.Output
	}
	inv, err := d.Inventory(file, inventory.LoadOptions{UserSSHConfig: "none"})
	if err != nil {
		return &internalError{err}
	}
	if err := writeOutput(o.Output, s.out, func(w io.Writer) error { _, err := w.Write(d.Text); return err }); err != nil {
		return fmt.Errorf("-o %s: %w", o.Output, err)
	}
	where := "standard output"
	if !isStdoutPath(o.Output) {
		where = o.Output
	}
	fmt.Fprintf(s.err, "fleet-audit: %s of context %q written to %s (roles: %s); review user, identity_files and become in it before running it\n",
		result.Count(len(inv.Hosts), "host"), d.Source.Context, where, strings.Join(inv.Roles(), ", "))
	return nil
}
