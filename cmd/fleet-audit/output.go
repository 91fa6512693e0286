package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// stdoutPath is the report path that means the command's own standard
// output. /dev/stdout and its aliases mean the same: written through the
// command's stdout, they keep its offset (`{ echo; fleet-audit ...; } > f`)
// and tell emitReport to keep the terminal summary off that stream.
const stdoutPath = "-"

func isStdoutPath(path string) bool {
	switch path {
	case stdoutPath, "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1":
		return true
	}
	return false
}

// outputMode is how a report reaches its path.
type outputMode int

const (
	// outputReplace writes a temporary file next to the path and renames
	// it into place: regular files and paths that do not exist yet.
	outputReplace outputMode = iota
	// outputThrough opens what is there and writes into it: a character
	// device, a FIFO, or a descriptor (/dev/fd/N, /proc/self/fd/N, a
	// shell's >(...)). Renaming onto those would replace the device node
	// or fail, and the reader on the other end would get nothing.
	outputThrough
	// outputStdout writes to the command's stdout.
	outputStdout
)

// outputModeOf decides how path is written. It follows symlinks, as a
// shell's redirection would: a link to /dev/null is written through, so the
// device stays a device. A link planted in a sticky world-writable
// directory (/tmp) is not followed by root or anyone but its owner when
// fs.protected_symlinks is on (the default of every mainstream
// distribution; Documentation/admin-guide/sysctl/fs.rst), so following
// does not hand a local attacker a way to aim a root run at a device.
// Block devices and sockets are refused: nothing a report is for reads
// one.
func outputModeOf(path string) (outputMode, error) {
	if isStdoutPath(path) {
		return outputStdout, nil
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// A new file, or a dangling symlink, which the rename replaces.
		return outputReplace, nil
	case err != nil:
		return 0, err
	}
	m := st.Mode()
	switch {
	case m.IsDir():
		return 0, errors.New("is a directory")
	case m&fs.ModeCharDevice != 0, m&fs.ModeNamedPipe != 0:
		return outputThrough, nil
	case m&fs.ModeDevice != 0, m&fs.ModeSocket != 0:
		return 0, fmt.Errorf("is a %s, not a file, a FIFO or a character device", map[bool]string{true: "block device", false: "socket"}[m&fs.ModeDevice != 0])
	case m.IsRegular() && viaDescriptor(path):
		return outputThrough, nil
	}
	return outputReplace, nil
}

// viaDescriptor reports whether path names an open file through /dev or
// /proc (/dev/fd/3 after `3>out.json`, /dev/stderr redirected to a file):
// the rename would land in /dev or fail in /proc, and the file the caller
// opened would not get the report.
func viaDescriptor(path string) bool {
	for range 40 { // the kernel's own bound on symlink hops (MAXSYMLINKS)
		abs, err := filepath.Abs(path)
		if err != nil {
			return false
		}
		if strings.HasPrefix(abs, "/dev/") || strings.HasPrefix(abs, "/proc/") {
			return true
		}
		target, err := os.Readlink(abs)
		if err != nil {
			return false
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(abs), target)
		}
		path = target
	}
	return false
}

// writeOutput renders a report to path as outputModeOf says. The report is
// rendered in full before anything is opened, so a render error never
// leaves half a report in a pipe either.
func writeOutput(path string, stdout io.Writer, render func(io.Writer) error) error {
	mode, err := outputModeOf(path)
	if err != nil {
		return err
	}
	if mode == outputReplace {
		return writeFileAtomic(path, render)
	}
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		return err
	}
	if mode == outputStdout {
		_, err := stdout.Write(buf.Bytes())
		return err
	}
	// No O_CREATE (the thing is there, or the report must not make a
	// regular file in /dev) and no O_TRUNC: a regular file behind a
	// descriptor is appended to, as the caller's own descriptor would.
	flags := os.O_WRONLY
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		flags |= os.O_APPEND
	}
	f, err := os.OpenFile(path, flags, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeFileAtomic writes through a temporary file in the same directory and
// renames it into place, so a reader (a CI artifact upload, a browser) never
// sees half a report, and a failed render leaves the old file alone. The
// temporary name starts with a dot and has no extension, so that
// node_exporter's textfile collector, which reads only *.prom files of its
// directory (node_exporter README, "Textfile Collector"), never reads a
// --prom file half written.
//
// A report holds node facts, so its mode is what the user's umask makes of
// 0666, as a shell's redirection or any other tool would create it (umask
// 077 gives 0600), and a file that is already there keeps its mode, as it
// would under `>`: a report the user made private stays private.
func writeFileAtomic(path string, render func(io.Writer) error) error {
	tmp, err := createTemp(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		if err := tmp.Chmod(st.Mode().Perm()); err != nil {
			tmp.Close()
			return err
		}
	}
	if err := render(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// createTemp is os.CreateTemp(dir, ".fleet-audit-*") with mode 0666 left to
// the umask; os.CreateTemp always makes 0600.
func createTemp(dir string) (*os.File, error) {
	for range 100 {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(filepath.Join(dir, ".fleet-audit-"+hex.EncodeToString(b[:])), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("create a temporary file in %s: too many names taken", dir)
}

// checkOutputs refuses, before anything is read or contacted, report paths
// that could not be written: more than one on stdout, a directory, a path
// whose directory is missing or not writable, a device or FIFO we may not
// write, two reports to one file, a report onto one of inputs (the files
// the command reads). Nothing is created: the final file appears only after
// the run.
func checkOutputs(outputs map[string]string, inputs ...pathArg) error {
	if err := checkClashes(outputArgs(outputs), inputs); err != nil {
		return err
	}
	var onStdout []string
	for _, format := range slices.Sorted(maps.Keys(outputs)) {
		p := outputs[format]
		if err := checkOutput(p); err != nil {
			return &usageError{fmt.Errorf("--%s %s: %w", format, p, err)}
		}
		if isStdoutPath(p) {
			onStdout = append(onStdout, "--"+format+" "+p)
		}
	}
	if len(onStdout) > 1 {
		return &usageError{fmt.Errorf("%s: only one report can go to stdout", strings.Join(onStdout, " and "))}
	}
	return nil
}

// pathArg is a path a command line names, with the flag that names it.
type pathArg struct{ flag, path string }

// outputArgs are the report paths of outputs as pathArgs, in flag order.
func outputArgs(outputs map[string]string) []pathArg {
	var out []pathArg
	for _, format := range slices.Sorted(maps.Keys(outputs)) {
		out = append(out, pathArg{"--" + format, outputs[format]})
	}
	return out
}

// checkClashes refuses two outputs that are one file (one report would
// silently replace the other) and an output that is one of the inputs (the
// report would overwrite the inventory, waivers or saved run it was made
// from). Paths are compared cleaned and absolute, and, where both exist,
// as files (os.SameFile: a hard link, a symlink, ./x and x). Stdout and
// character devices (/dev/null) are no file a report could lose, and an
// input of "-" is standard input.
func checkClashes(outputs, inputs []pathArg) error {
	type file struct {
		pathArg
		abs string
		st  os.FileInfo
	}
	resolve := func(a pathArg) (file, bool) {
		if a.path == "" || a.path == stdoutPath || isStdoutPath(a.path) {
			return file{}, false
		}
		f := file{pathArg: a}
		if abs, err := filepath.Abs(a.path); err == nil {
			f.abs = filepath.Clean(abs)
		}
		if st, err := os.Stat(a.path); err == nil {
			if st.Mode()&fs.ModeCharDevice != 0 {
				return file{}, false
			}
			f.st = st
		}
		return f, true
	}
	same := func(a, b file) bool {
		return (a.abs != "" && a.abs == b.abs) || (a.st != nil && b.st != nil && os.SameFile(a.st, b.st))
	}
	var outs []file
	for _, o := range outputs {
		f, ok := resolve(o)
		if !ok {
			continue
		}
		for _, prev := range outs {
			if same(prev, f) {
				return &usageError{fmt.Errorf("%s %s and %s %s are one file: one would replace the other; give each its own path", prev.flag, prev.path, f.flag, f.path)}
			}
		}
		outs = append(outs, f)
	}
	for _, in := range inputs {
		f, ok := resolve(in)
		if !ok {
			continue
		}
		for _, o := range outs {
			if same(o, f) {
				return &usageError{fmt.Errorf("%s %s is the file %s %s reads: the report would overwrite it; write it elsewhere", o.flag, o.path, f.flag, f.path)}
			}
		}
	}
	return nil
}

func checkOutput(path string) error {
	mode, err := outputModeOf(path)
	switch {
	case err != nil:
		return err
	case mode == outputStdout:
		return nil
	case mode == outputThrough:
		if err := syscall.Access(path, accessW); err != nil {
			return fmt.Errorf("not writable: %w", err)
		}
		return nil
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return fmt.Errorf("directory %s does not exist", dir)
	}
	// access(2) answers as the write will be judged: root passes the mode
	// bits, and a read-only mount is EROFS for everyone. The temporary
	// file and the rename need write and search on the directory.
	if err := syscall.Access(dir, accessW|accessX); err != nil {
		return fmt.Errorf("directory %s is not writable: %w", dir, err)
	}
	return nil
}

// access(2) modes (unistd.h), which package syscall does not name.
const (
	accessX = 0x1
	accessW = 0x2
)

// errWriter keeps the first error of the writes through it, for a writer
// handed to code that drops them: a listing lost to a closed stdout must
// not exit 0.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// document is one kind of thing a command writes: a run's report or a diff.
// emit is the one path from it to the files, stdout and exit status.
type document struct {
	// noun names it in messages: "report", "diff".
	noun string
	// formats are the file formats it can be written in, in write order.
	formats []string
	// render writes it in one of formats.
	render func(w io.Writer, format string) error
	// summary prints the terminal summary.
	summary func(w io.Writer) error
	// exit is the gate's exit code.
	exit int
}

// emit writes the requested files, then the terminal summary, then turns
// the gate into the exit status. A file that cannot be written is reported
// and the rest are still written, and the summary still printed, so a CI log
// shows the verdict; the exit status is then exitInternal, since a missing
// artifact must not pass as a clean gate.
//
// A document written to stdout (-) is all stdout carries, so that
// `--json - | jq` parses: the terminal summary then goes to stderr, where a
// CI log still shows it.
func emit(doc document, outputs map[string]string, stdout, stderr io.Writer) error {
	var writeErr error
	var written []string
	summaryTo := stdout
	for _, format := range doc.formats {
		p, ok := outputs[format]
		if !ok {
			continue
		}
		if err := writeOutput(p, stdout, func(w io.Writer) error { return doc.render(w, format) }); err != nil {
			writeErr = fmt.Errorf("write %s %s %s: %w", format, doc.noun, p, err)
			fmt.Fprintf(stderr, "fleet-audit: error: %v\n", writeErr)
			continue
		}
		if isStdoutPath(p) {
			summaryTo = stderr
			written = append(written, fmt.Sprintf("fleet-audit: wrote %s %s to stdout", format, doc.noun))
			continue
		}
		written = append(written, fmt.Sprintf("fleet-audit: wrote %s %s to %s", format, doc.noun, p))
	}
	if err := doc.summary(summaryTo); err != nil {
		return fmt.Errorf("terminal %s: %w", doc.noun, err)
	}
	for _, line := range written {
		fmt.Fprintln(stderr, line)
	}
	if writeErr != nil {
		return &gateError{code: exitInternal}
	}
	if doc.exit != 0 {
		return &gateError{code: exitCode(doc.exit)}
	}
	return nil
}
