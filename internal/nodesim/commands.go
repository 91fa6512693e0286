package nodesim

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
)

// Command is the simulated answer of one command line. Every command name
// used gets the generic stub (stubs/fakecmd) in bin/, which prints Out and
// exits with RC for the first Command of that name whose Args glob (shell
// case pattern, matched against "$*") matches; no match exits 1 with a
// message on stderr. Hang makes it sleep instead, to test probe timeouts.
type Command struct {
	Name string
	// Path is where the stub is installed, relative to the node root, for
	// commands probes call by absolute path ("var/lib/rancher/rke2/bin/kubectl",
	// called as "$R/var/lib/rancher/rke2/bin/kubectl"); "" = bin/<Name>.
	Path string
	Args string
	Out  string
	RC   int
	Hang bool
}

// SetCommand replaces the answer for name+args, or adds it. It copies the
// slice, so a State derived from another never changes the original.
func (s *State) SetCommand(c Command) {
	out := make([]Command, 0, len(s.Commands)+1)
	replaced := false
	for _, old := range s.Commands {
		if old.Name == c.Name && old.Args == c.Args {
			out = append(out, c)
			replaced = true
			continue
		}
		out = append(out, old)
	}
	if !replaced {
		out = append(out, c)
	}
	s.Commands = out
}

// RemoveCommand uninstalls every answer of a command, so the node behaves
// as if it were not installed.
func (s *State) RemoveCommand(name string) {
	out := make([]Command, 0, len(s.Commands))
	for _, c := range s.Commands {
		if c.Name != name {
			out = append(out, c)
		}
	}
	s.Commands = out
}

// Command returns the first answer registered for name and args.
func (s State) Command(name, args string) (Command, bool) {
	for _, c := range s.Commands {
		if c.Name == name && c.Args == args {
			return c, true
		}
	}
	return Command{}, false
}

// stubPrelude names, per command, the side effect on the node its real
// counterpart has, simulated before fakecmd's answer (stubs/*.pre): a
// read-only test then sees a probe that triggers it as a change to the
// node root.
var stubPrelude = map[string]string{
	"kubectl":           "kubectl.pre",
	"nft":               "nfnetlink.pre",
	"iptables-nft-save": "nfnetlink.pre",
}

func (w *writer) commands(cmds []Command) {
	n := map[string]int{}
	installed := map[string]bool{}
	for _, c := range cmds {
		n[c.Name]++
		base := fmt.Sprintf("state/cmd/%s/%03d", c.Name, n[c.Name])
		w.file(base+".args", c.Args)
		w.file(base+".out", c.Out)
		w.file(base+".rc", fmt.Sprintf("%d\n", c.RC))
		if c.Hang {
			w.file(base+".hang", "")
		}
		dest := c.Path
		if dest == "" {
			dest = "bin/" + c.Name
		}
		if !installed[dest] {
			installed[dest] = true
			b, err := stubs.ReadFile("stubs/fakecmd")
			if err != nil {
				w.err = fmt.Errorf("embedded stub fakecmd: %w", err)
				return
			}
			if pre, ok := stubPrelude[c.Name]; ok {
				p, err := stubs.ReadFile("stubs/" + pre)
				if err != nil {
					w.err = fmt.Errorf("embedded stub %s: %w", pre, err)
					return
				}
				// The prelude runs after fakecmd's "#!/bin/sh" line and
				// before its lookup, in the same shell.
				shebang, body, _ := bytes.Cut(b, []byte("\n"))
				b = slices.Concat(shebang, []byte("\n"), p, body)
			}
			w.write(dest, b, 0o755)
		}
	}
}

// hostTools are the basic tools a simulated node borrows from the machine
// it runs on. Everything else a probe calls must be a stub, so that no
// test depends on what the test machine has installed.
var hostTools = []string{
	"sh", "cat", "head", "tail", "sed", "awk", "grep", "tr", "cut", "wc", "sort", "uniq",
	"dd", "id", "date", "sleep", "timeout", "env", "expr", "ls", "basename", "dirname",
	"readlink", "stat", "find", "xargs", "kill", "sudo", "printf", "test", "true", "false", "gzip",
}

// hostTools links the basic tools into bin/ and marks bin/ as the node's
// whole PATH (bin/.only, read by the probe bundle).
func (w *writer) hostTools() {
	if w.err != nil {
		return
	}
	bin := filepath.Join(w.root, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		w.err = fmt.Errorf("simulated node %s: %w", w.root, err)
		return
	}
	names := append([]string{}, hostTools...)
	sort.Strings(names)
	for _, t := range names {
		if _, err := os.Lstat(filepath.Join(bin, t)); err == nil {
			continue // a stub of that name wins
		}
		real, err := exec.LookPath(t)
		if err != nil {
			continue // e.g. no sudo on this machine: the node has none either
		}
		if err := os.Symlink(real, filepath.Join(bin, t)); err != nil {
			w.err = fmt.Errorf("simulated node %s: %w", w.root, err)
			return
		}
	}
	w.file("bin/.only", "")
}
