package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/fleet-audit/fleet-audit/audit"
	"github.com/fleet-audit/fleet-audit/audit/catalog"
	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/cmd/fleet-audit/internal/transport"
	"github.com/fleet-audit/fleet-audit/inventory"
	"github.com/fleet-audit/fleet-audit/remote"
	"github.com/fleet-audit/fleet-audit/report"
	"github.com/fleet-audit/fleet-audit/result"
)

// The pipeline run and demo share, whatever their flags: load the rules,
// audit, emit the reports. report re-renders through its last step.

// loadCatalog loads the embedded probes and checks and those of --probes
// DIR before anything is contacted: a problem with DIR is input, exit 2; one
// with the embedded files is the binary's.
func loadCatalog(dir string) (*catalog.Catalog, error) {
	c, err := catalog.Load(dir)
	if err != nil && !errors.Is(err, catalog.ErrEmbedded) {
		return nil, &usageError{err}
	}
	return c, err
}

// loadRules is what run, demo and merge probe and judge with: the catalogue
// of o.ProbesDir, its checks selected by --only/--skip, the waivers read
// against it, and the gate of o, all resolved before anything is contacted
// (any problem with them is input, exit 2). Waivers are validated against
// every known check, not only the selected ones, so one waivers file can
// serve runs with different --skip lists.
func loadRules(o runOptions) (audit.Rules, error) {
	cat, err := loadCatalog(o.ProbesDir)
	if err != nil {
		return audit.Rules{}, err
	}
	r := audit.Rules{Probes: cat.Probes, Selection: check.Selection{Only: o.Only, Skip: o.Skip},
		Gate: audit.GatePolicy{FailOn: o.FailOn, AllowUnreachable: o.AllowUnreachable, AllowPartial: o.AllowPartial}}
	if o.WaiversPath != "" {
		if r.Waivers, err = cat.LoadWaivers(o.WaiversPath); err != nil {
			return audit.Rules{}, &usageError{err}
		}
	}
	if r.Checks, err = cat.Select(r.Selection); err != nil {
		return audit.Rules{}, &usageError{err}
	}
	return r, nil
}

// checkRunOutputs checks the report and retry-file paths of run and demo
// before anything is contacted: each writable, none on another or on a
// file the run reads.
func checkRunOutputs(o runOptions) error {
	for format := range o.Outputs {
		if _, err := report.New(format, report.Options{}); err != nil {
			return &usageError{err}
		}
	}
	if err := checkOutputs(o.Outputs, append(o.inputs(), o.limitFiles()...)...); err != nil {
		return err
	}
	if o.RetryFile == "" {
		return nil
	}
	if isStdoutPath(o.RetryFile) {
		return &usageError{fmt.Errorf("--retry-file: write it to a file; stdout carries the report")}
	}
	if err := checkOutput(o.RetryFile); err != nil {
		return &usageError{fmt.Errorf("--retry-file %s: %w", o.RetryFile, err)}
	}
	return checkClashes(append(outputArgs(o.Outputs), pathArg{"--retry-file", o.RetryFile}), o.inputs())
}

// inputs are the files a run reads that its flags name.
func (o runOptions) inputs() []pathArg {
	in := []pathArg{{"--ssh-config", o.Inventory.SSHConfig}, {"--waivers", o.WaiversPath}}
	if o.FromCluster {
		in = append(in, pathArg{"--kubeconfig", o.Cluster.Kubeconfig})
	} else {
		in = append(in, pathArg{"-i/--inventory", o.Inventory.Path})
	}
	return in
}

// limitFiles are the files --limit @FILE terms read. The same file as
// --retry-file is Ansible's retry loop (read before the run, written
// after it), so only the reports are held against them.
func (o runOptions) limitFiles() []pathArg {
	var in []pathArg
	for _, t := range strings.FieldsFunc(o.Inventory.Limit, func(r rune) bool { return r == ',' || r == ':' }) {
		if f, ok := strings.CutPrefix(strings.TrimSpace(t), "@"); ok {
			in = append(in, pathArg{"--limit @FILE", f})
		}
	}
	return in
}

// auditAndReport is the one path from a loaded inventory to written reports
// and an exit code, shared by run and demo.
func auditAndReport(ctx context.Context, inv *inventory.Inventory, o runOptions, stdout, stderr io.Writer) error {
	// A FIFO in --probes blocks in open(2) until someone writes it.
	rl, err := untilDone(ctx, func() (audit.Rules, error) { return loadRules(o) })
	if err != nil {
		return err
	}
	if err := checkRunOutputs(o); err != nil {
		return err
	}
	agent := os.Getenv("SSH_AUTH_SOCK")
	if o.NoAgent {
		agent = ""
	}
	var logger *slog.Logger
	if o.Debug {
		logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	fleet := transport.Fleet(inv)
	var shard *result.Shard
	if o.ShardN > 0 {
		fleet, shard = audit.SelectShard(fleet, o.ShardK, o.ShardN, o.RunID, rl.Digest())
	}
	ask := ttyPassphrase(ctx, nil)
	unlockKeys(ctx, inv, fleet, ask)
	dialer := remote.NewSSHDialer(remote.SSHOptions{
		ConnectTimeout: o.ConnectTimeout, AgentSocket: agent, Passphrase: ask,
		// Jump hosts, shared by many nodes, follow the command line only.
		HostKeyPolicy: o.HostKeyPolicy,
		Logger:        logger,
	})
	defer dialer.Close()
	tr := &transport.Transport{Inventory: inv, SSH: dialer, Local: remote.LocalDialer{}, HostKeyPolicy: o.HostKeyPolicy}
	var progress *progressLine
	// The trace and a redrawn progress line would garble each other.
	if !o.Quiet && !o.Debug && isTerminal(stderr) {
		progress = &progressLine{w: stderr}
		progress.update(0, len(fleet.Targets), 0)
	}
	r, err := audit.Run(ctx, audit.RunOptions{
		Fleet: fleet, Transport: tr, Forks: o.Forks, NodeTimeout: o.NodeTimeout,
		Rules: rl, TargetVersion: o.TargetVersion, Thresholds: &o.Thresholds, Change: changeOf(inv.Change, o.Change),
		ToolVersion: buildVersion, Progress: progress.callback(), Warnings: runWarnings(inv, o), Limit: limitOf(inv), Shard: shard, Logger: logger,
		LateWarnings: func() []string {
			return append(hostKeyWarnings(tr.HostKeyNotes()), hopKeyWarnings(dialer.HopHostKeyNotes())...)
		},
	})
	progress.finish()
	if err != nil {
		return err
	}
	var retryErr error
	if o.RetryFile != "" {
		if retryErr = writeRetryFile(o.RetryFile, r); retryErr != nil {
			fmt.Fprintf(stderr, "fleet-audit: error: --retry-file %s: %v\n", o.RetryFile, retryErr)
		}
	}
	err = emitReport(r, o.Outputs, outputOptions{Quiet: o.Quiet, Verbose: o.Verbose}, stdout, stderr)
	// A retry file that was asked for and not written fails the run as a
	// report file would: a pipeline that retries from it must not go on
	// with an old one.
	var ge *gateError
	if retryErr != nil && (err == nil || errors.As(err, &ge)) {
		return &gateError{code: exitInternal}
	}
	return err
}

// unlockKeys asks for the passphrases of encrypted identity files before
// any node is dialled, one key at a time, so that typing one is bounded by
// a generous deadline rather than by every node's connect timeout. What it
// cannot unlock is left to the dials, which say why in the node's status.
// Only the keys of the fleet's hosts are asked for: a shard's.
func unlockKeys(ctx context.Context, inv *inventory.Inventory, fleet *audit.Fleet, ask remote.PassphraseFunc) {
	ctx, cancel := context.WithTimeout(ctx, unlockTimeout)
	defer cancel()
	type key struct{ path, env string }
	seen := map[key]bool{}
	audited := map[string]bool{}
	for _, t := range fleet.Targets {
		audited[t.Name] = true
	}
	for _, h := range inv.Hosts {
		if h.Connection != "ssh" || !audited[h.Name] {
			continue
		}
		files := append([]string{}, h.IdentityFiles...)
		for _, j := range h.Jumps {
			files = append(files, j.IdentityFiles...)
		}
		for _, f := range files {
			k := key{f, h.PassphraseEnv}
			if !seen[k] && ctx.Err() == nil {
				seen[k] = true
				_ = remote.Unlock(ctx, f, h.PassphraseEnv, ask)
			}
		}
	}
}

// unlockTimeout bounds the passphrase prompts of one run.
const unlockTimeout = 5 * time.Minute

// runWarnings are what the report must say about how far its results can
// be trusted before anyone reads them. They are of the whole inventory,
// also in a shard: they say how it is configured, so every shard of it
// says the same, and merge keeps them once, as one run would have them.
func runWarnings(inv *inventory.Inventory, o runOptions) []string {
	var ignored []string
	for _, h := range inv.Hosts {
		if h.Connection == "ssh" && transport.PolicyFor(h, o.HostKeyPolicy) == remote.HostKeyInsecureIgnore {
			ignored = append(ignored, h.Name)
		}
	}
	// What the inventory loader left unused (Ansible variables it does
	// not honour) belongs in the report a reviewer reads.
	warnings := slices.Clone(inv.Warnings)
	if len(ignored) == 0 {
		return warnings
	}
	return append(warnings, fmt.Sprintf("host keys were NOT verified for %s (host-key policy insecure-ignore): a man-in-the-middle would have gone unnoticed, and these results could come from any machine",
		pluralNodes(ignored)))
}

// hostKeyWarnings turn the transport's host-key notes into report
// warnings: each key accepted without verification by name, since any of
// them could be a man-in-the-middle, and the keys recorded on first use as
// one line.
func hostKeyWarnings(notes map[string]string) []string {
	var out, learned []string
	for _, n := range slices.Sorted(maps.Keys(notes)) {
		if strings.Contains(notes[n], "accept-new") {
			learned = append(learned, n)
		} else {
			out = append(out, n+": "+notes[n])
		}
	}
	if len(learned) > 0 {
		out = append(out, fmt.Sprintf("host keys of %s were seen for the first time and trusted (host-key policy accept-new); compare their fingerprints with the nodes' own before the next run", pluralNodes(learned)))
	}
	return out
}

// hopKeyWarnings: one line per jump host whose key was not simply found in
// known_hosts; every node behind it was reached through that trust.
func hopKeyWarnings(notes map[string]string) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(notes)) {
		out = append(out, "jump host "+name+": "+notes[name])
	}
	return out
}

// pluralNodes is "1 node (a)" or "3 nodes (a, b, c)", the list cut after 10.
func pluralNodes(names []string) string {
	shown := names
	if len(shown) > 10 {
		shown = shown[:10]
	}
	list := strings.Join(shown, ", ")
	if len(names) > len(shown) {
		list += fmt.Sprintf(", and %d more", len(names)-len(shown))
	}
	return result.Count(len(names), "node") + " (" + list + ")"
}

// progressLine is the line a person at a terminal sees on stderr while the
// nodes are audited: done/total and the failures so far, rewritten in place
// with \r. It is only ever made for a terminal, so logs and CI output never
// carry it; a nil *progressLine does nothing.
type progressLine struct {
	w     io.Writer
	shown bool
	ended bool
}

func (p *progressLine) update(done, total, failed int) {
	// The counts only grow, so each line covers the one before it.
	fmt.Fprintf(p.w, "\rfleet-audit: %d/%d nodes audited, %d failed", done, total, failed)
	p.shown = true
}

// callback is what audit.Run calls after each node; nil when p is nil, so
// Run does no work for a pipe.
func (p *progressLine) callback() func(done, total, failed int) {
	if p == nil {
		return nil
	}
	return p.update
}

// finish ends the line so that what follows starts on a line of its own,
// also when the run was interrupted before every node was done.
func (p *progressLine) finish() {
	if p == nil || !p.shown || p.ended {
		return
	}
	fmt.Fprintln(p.w)
	p.ended = true
}

// outputOptions say how much of the terminal report emit prints.
type outputOptions struct {
	// Quiet prints the verdict line alone.
	Quiet bool
	// Verbose adds each finding's summary, evidence and fix.
	Verbose bool
}

// emitReport writes a run's report (emit), with the terminal report or,
// with -q, the verdict alone as its summary. It is shared by run, demo and
// report, so a re-rendered run reads as the original.
func emitReport(r *result.Report, outputs map[string]string, oo outputOptions, stdout, stderr io.Writer) error {
	explain, err := catalog.ExplainFindings(r)
	if err != nil {
		return err
	}
	plan, err := audit.PlanFindings(r)
	if err != nil {
		return err
	}
	return emit(document{
		noun:    "report",
		formats: report.Names(),
		render: func(w io.Writer, format string) error {
			f, err := report.New(format, report.Options{FullReport: fullReport(outputs), Explain: explain, Plan: plan})
			if err != nil {
				return err
			}
			return f.Format(w, r)
		},
		summary: func(w io.Writer) error {
			if oo.Quiet {
				_, err := fmt.Fprintln(w, "gate: "+report.Verdict(r.Gate))
				return err
			}
			f, _ := report.New("terminal", report.Options{
				Color: useColor(w, os.Getenv), Width: terminalWidth(w, os.Getenv), Verbose: oo.Verbose,
			})
			return f.Format(w, r)
		},
		exit: r.Gate.ExitCode,
	}, outputs, stdout, stderr)
}

// fullReport is the HTML report written beside the others, which the
// Markdown summary points to; "" when there is none or it went to stdout.
func fullReport(outputs map[string]string) string {
	if p, ok := outputs["html"]; ok && !isStdoutPath(p) {
		return p
	}
	return ""
}

// useColor decides colour for the terminal report: only on a terminal,
// never when NO_COLOR is set to anything but the empty string
// (https://no-color.org), and never for TERM=dumb, which cannot show it.
func useColor(w io.Writer, env func(string) string) bool {
	return isTerminal(w) && env("NO_COLOR") == "" && env("TERM") != "dumb"
}

// terminalWidth is the width everything printed to w for a person is
// fitted to: COLUMNS when it holds a positive number (the user's word, as
// for ls and git), else the width of the terminal w is, else
// report.DefaultWidth for a pipe, a file or a terminal that does not say.
func terminalWidth(w io.Writer, env func(string) string) int {
	if n, err := strconv.Atoi(strings.TrimSpace(env("COLUMNS"))); err == nil && n > 0 {
		return n
	}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if width, _, err := term.GetSize(int(f.Fd())); err == nil && width > 0 {
			return width
		}
	}
	return report.DefaultWidth
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// limitOf is the report's account of a --limit, nil for the whole
// inventory.
func limitOf(inv *inventory.Inventory) *result.Limit {
	if inv.Subset == nil {
		return nil
	}
	return &result.Limit{Pattern: inv.Subset.Pattern, Selected: len(inv.Hosts), Inventory: inv.Subset.Of}
}

// writeRetryFile writes the nodes that were not fully audited, one per
// line, for --limit @FILE (Ansible's retry files); a node the audit does
// not apply to is not retried. Every audited node
// means an empty file: a stale list from an earlier run must not survive.
func writeRetryFile(path string, r *result.Report) error {
	return writeFileAtomic(path, func(w io.Writer) error {
		for _, n := range r.Nodes {
			if n.Status.Unaudited() {
				if _, err := fmt.Fprintln(w, n.Name); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// changeOf is the change ticket of a run: the inventory's change key, each
// field the command line gives overriding it; nil when neither gives any.
func changeOf(inv inventory.Change, flags *result.Change) *result.Change {
	c := result.Change{ID: inv.ID, Title: inv.Title, RequestedBy: inv.RequestedBy}
	if flags != nil {
		for _, f := range []struct {
			to *string
			v  string
		}{{&c.ID, flags.ID}, {&c.Title, flags.Title}, {&c.RequestedBy, flags.RequestedBy}} {
			if f.v != "" {
				*f.to = f.v
			}
		}
	}
	if c == (result.Change{}) {
		return nil
	}
	return &c
}
