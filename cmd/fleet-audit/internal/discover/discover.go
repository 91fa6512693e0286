package discover

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/fleet-audit/fleet-audit/inventory"
	"github.com/fleet-audit/fleet-audit/report"
)

// DefaultTimeout bounds everything kubectl does for one discovery. It is
// generous because a credential plugin (aws eks get-token, an OIDC login)
// may take its time before the one request is sent.
const DefaultTimeout = 2 * time.Minute

// ErrNoKubectl is returned when there is no kubectl to run.
var ErrNoKubectl = errors.New("kubectl is not installed (not found in PATH)")

// Bounds on what kubectl's output is read: a NodeList of Kubernetes'
// largest supported cluster (5,000 nodes) is up to a few hundred MiB,
// streamed (decodeNodeList); a kubectl's error is a few lines, kept.
var maxNodeList int64 = 256 << 20

const maxStderr = 16 << 10

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
		var name []byte
		if err := kubectl(ctx, path, o, "", func(r io.Reader) (err error) {
			name, err = io.ReadAll(io.LimitReader(r, 4<<10))
			return err
		}, "config", "current-context"); err == nil {
			src.Context = strings.TrimSpace(string(name))
		}
	}
	src.Listed = now()
	// The list is decoded as it streams: a NodeList of thousands of
	// nodes is tens to hundreds of MiB, of which a few fields are kept.
	var nodes []Node
	var parseErr error
	if err := kubectl(ctx, path, o, src.Context, func(r io.Reader) error {
		nodes, parseErr = decodeNodeList(r)
		if errors.Is(parseErr, errTooLong) {
			return parseErr
		}
		return nil
	}, "get", "--raw", "/api/v1/nodes"); err != nil {
		return nil, err
	}
	if parseErr != nil {
		return nil, fmt.Errorf("kubectl get --raw /api/v1/nodes: %w", parseErr)
	}
	src.Nodes = len(nodes)
	d := &Discovery{Source: src, Mapping: MapNodes(nodes)}
	if len(d.Hosts) == 0 {
		if len(nodes) == 0 {
			return nil, fmt.Errorf("the cluster (context %q) lists no nodes", src.Context)
		}
		return nil, fmt.Errorf("none of the cluster's %d nodes can be written to an inventory:\n%s", len(nodes), strings.Join(d.Warnings(), "\n"))
	}
	text, err := Render(src, d.Mapping)
	if err != nil {
		return nil, err
	}
	d.Text = text
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

// kubectl runs path with the kubeconfig and context flags, then args, and
// hands its standard output to read as it streams (bounded by
// maxNodeList). The flags are written --flag=value so that no value,
// whatever it starts with, can be read as another flag. Its errors hold
// kubectl's argv and stderr made visible as the reports show node text
// (report.OneLine, line by line): both come from the user's kubeconfig or
// the cluster and reach a terminal.
func kubectl(ctx context.Context, path string, o Options, contextName string, read func(io.Reader) error, args ...string) error {
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
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// stop ends kubectl early when its output is not wanted (too long,
	// not JSON), through the same Cancel as the deadline.
	kctx, stop := context.WithCancel(tctx)
	defer stop()
	cmd := exec.CommandContext(kctx, path, argv...)
	cmd.Stdin = o.Stdin
	if !isTerminal(o.Stdin) {
		// kubectl and what it starts (a credential plugin, its helpers)
		// get a process group of their own, killed whole on Ctrl-C or
		// the deadline: killing kubectl alone left them running. With a
		// terminal on stdin they stay in ours, since a background group
		// that reads the terminal is stopped (SIGTTIN, termios(3)) and
		// a plugin's prompt would hang; Ctrl-C at that terminal reaches
		// the whole foreground group anyway.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	}
	stderr := &capped{max: maxStderr}
	cmd.Stderr = stderr
	// A credential plugin kubectl started may hold the pipes after
	// kubectl is killed; the deadline must still hold.
	cmd.WaitDelay = 2 * time.Second
	what := report.OneLine("kubectl " + strings.Join(argv, " "))
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	out := &bounded{r: pipe, left: maxNodeList}
	readErr := read(out)
	if readErr == nil {
		// What follows the answer is read and dropped, so that kubectl
		// is never blocked on a pipe nobody reads.
		_, readErr = io.Copy(io.Discard, out)
	}
	if readErr != nil {
		stop()
	}
	err = cmd.Wait()
	switch {
	case errors.Is(tctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%s: no answer within %s: %w", what, timeout, tctx.Err())
	case ctx.Err() != nil:
		return fmt.Errorf("%s: %w", what, ctx.Err())
	case out.over:
		return fmt.Errorf("%s: printed more than %d MiB: fleet-audit reads at most that much of a node list", what, maxNodeList>>20)
	case err != nil:
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			lines := strings.Split(msg, "\n")
			for i, l := range lines {
				lines[i] = report.OneLine(l)
			}
			return fmt.Errorf("%s: %w: %s", what, err, strings.Join(lines, "\n"))
		}
		return fmt.Errorf("%s: %w", what, err)
	case readErr != nil:
		return fmt.Errorf("%s: %w", what, readErr)
	}
	return nil
}

func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// errTooLong is what bounded returns past its bound.
var errTooLong = errors.New("output over the bound")

// bounded reads r up to left bytes; a byte more is errTooLong, and over
// says so.
type bounded struct {
	r    io.Reader
	left int64
	over bool
}

func (b *bounded) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if b.left <= 0 {
		// At the bound: only the end of the output is within it.
		n, err := b.r.Read(p[:1])
		if n > 0 {
			b.over = true
			return 0, errTooLong
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

// capped keeps the first max bytes written to it and swallows the rest,
// so that kubectl is never blocked on a pipe nobody reads.
type capped struct {
	strings.Builder
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); len(p) > room {
		c.Builder.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return c.Builder.Write(p)
}
