package discover

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/fleet-audit/fleet-audit/inventory"
)

// DefaultTimeout bounds everything kubectl does for one discovery. It is
// generous because a credential plugin (aws eks get-token, an OIDC login)
// may take its time before the one request is sent.
const DefaultTimeout = 2 * time.Minute

// ErrNoKubectl is returned when there is no kubectl to run.
var ErrNoKubectl = errors.New("kubectl is not installed (not found in PATH)")

// Bounds on what kubectl's output is kept: a NodeList of thousands of
// nodes is tens of MiB; a kubectl's error is a few lines.
const (
	maxNodeList = 256 << 20
	maxStderr   = 16 << 10
)

// Options say which cluster to list and how.
type Options struct {
	// Kubeconfig and Context are passed to kubectl when set; else kubectl
	// uses its own defaults (KUBECONFIG, ~/.kube/config, current-context).
	Kubeconfig, Context string
	// Kubectl is the program to run; "" looks kubectl up in PATH.
	Kubectl string
	// Timeout bounds each kubectl; 0 means DefaultTimeout.
	Timeout time.Duration
	// Stdin is kubectl's standard input, for a credential plugin that
	// asks; nil gives it none.
	Stdin io.Reader
	// Now is the clock of the header; nil means time.Now.
	Now func() time.Time
}

// Discovery is a cluster's node list as an inventory.
type Discovery struct {
	Source Source
	Mapping
	// Text is the inventory file, header included.
	Text []byte
}

// Discover lists the cluster's nodes through kubectl and renders them as
// an inventory. A cluster that lists no node it could write is an error.
func Discover(ctx context.Context, o Options) (*Discovery, error) {
	path := o.Kubectl
	if path == "" {
		p, err := exec.LookPath("kubectl")
		if err != nil {
			return nil, fmt.Errorf("%w: fleet-audit lists the cluster's nodes through your own kubectl, so that your kubeconfig's contexts and credential plugins work; install kubectl, or write the inventory yourself (docs/inventory.md): %w", ErrNoKubectl, err)
		}
		path = p
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	src := Source{Kubeconfig: o.Kubeconfig, Context: o.Context}
	if src.Context == "" {
		// Named in the header, and passed to the listing so that the
		// header names the context that was listed. Without a current
		// context the listing says why it fails.
		if out, err := kubectl(ctx, path, o, "", "config", "current-context"); err == nil {
			src.Context = strings.TrimSpace(string(out))
		}
	}
	src.Listed = now()
	out, err := kubectl(ctx, path, o, src.Context, "get", "--raw", "/api/v1/nodes")
	if err != nil {
		return nil, err
	}
	nodes, err := ParseNodeList(out)
	if err != nil {
		return nil, fmt.Errorf("kubectl get --raw /api/v1/nodes: %w", err)
	}
	src.Nodes = len(nodes)
	d := &Discovery{Source: src, Mapping: MapNodes(nodes)}
	if len(d.Hosts) == 0 {
		if len(nodes) == 0 {
			return nil, fmt.Errorf("the cluster (context %q) lists no nodes", src.Context)
		}
		return nil, fmt.Errorf("none of the cluster's %d nodes can be written to an inventory:\n%s", len(nodes), strings.Join(d.Warnings(), "\n"))
	}
	if d.Text, err = Render(src, d.Mapping); err != nil {
		return nil, err
	}
	return d, nil
}

// Warnings are the skipped nodes and the notes, one line each, for stderr
// and the report.
func (d *Discovery) Warnings() []string {
	var out []string
	for _, s := range d.Skipped {
		out = append(out, fmt.Sprintf("discover: node %q not audited: %s", s.Name, s.Reason))
	}
	for _, n := range d.Notes {
		out = append(out, "discover: "+n)
	}
	return out
}

// Inventory parses Text, the one way from a discovery to the hosts an
// audit contacts, with d's warnings added to the inventory's. file names
// the inventory in errors and, when the text sets no name, gives it.
func (d *Discovery) Inventory(file string, opts inventory.LoadOptions) (*inventory.Inventory, error) {
	inv, err := inventory.Parse(file, d.Text, opts)
	if err != nil {
		return nil, fmt.Errorf("the inventory made from the cluster's nodes: %w", err)
	}
	inv.Warnings = append(inv.Warnings, d.Warnings()...)
	return inv, nil
}

// kubectl runs path with the kubeconfig and context flags, then args. The
// flags are written --flag=value so that no value, whatever it starts
// with, can be read as another flag.
func kubectl(ctx context.Context, path string, o Options, contextName string, args ...string) ([]byte, error) {
	var argv []string
	if o.Kubeconfig != "" {
		argv = append(argv, "--kubeconfig="+o.Kubeconfig)
	}
	if contextName != "" {
		argv = append(argv, "--context="+contextName)
	}
	argv = append(argv, args...)
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, argv...)
	cmd.Stdin = o.Stdin
	stdout, stderr := &capped{max: maxNodeList}, &capped{max: maxStderr}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// A credential plugin kubectl started may hold the pipes after
	// kubectl is killed; the deadline must still hold.
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	what := "kubectl " + strings.Join(argv, " ")
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, fmt.Errorf("%s: no answer within %s: %w", what, timeout, ctx.Err())
	case ctx.Err() != nil:
		return nil, fmt.Errorf("%s: %w", what, ctx.Err())
	case err != nil:
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return nil, fmt.Errorf("%s: %w: %s", what, err, msg)
		}
		return nil, fmt.Errorf("%s: %w", what, err)
	case stdout.over:
		return nil, fmt.Errorf("%s: printed more than %d MiB", what, maxNodeList>>20)
	}
	return stdout.Bytes(), nil
}

// capped keeps the first max bytes written to it and swallows the rest,
// so that kubectl is never blocked on a pipe nobody reads.
type capped struct {
	strings.Builder
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); len(p) > room {
		c.over = true
		c.Builder.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return c.Builder.Write(p)
}

// Bytes is what was kept.
func (c *capped) Bytes() []byte { return []byte(c.String()) }
