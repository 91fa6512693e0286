package browser

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleet-audit/fleet-audit/internal/testtools"
)

// DefaultTimeout bounds a run whose context has no deadline: a browser that
// hangs must fail the test, not stall the suite.
const DefaultTimeout = 60 * time.Second

// waitDelay bounds how long Wait may wait for helper processes that hold
// Chromium's output files open after it was killed.
const waitDelay = 5 * time.Second

// virtualTimeBudget is how much virtual time (ms) Chromium lets the page
// have before it dumps, screenshots or prints: enough for load handlers,
// timers and failed image loads (onerror) to have run, so a payload that
// would execute has executed by the time the DOM is read.
const virtualTimeBudget = "5000"

// Browser is one Chromium binary, run once per call.
type Browser struct {
	// Path is the Chromium (or Chrome) executable.
	Path string
	// TempDir returns a new empty directory for each run's profile and
	// output files; Find sets it to t.TempDir.
	TempDir func() string
}

// Find returns the installed Chromium. Without one it skips t, or fails it
// when testtools.RequireEnv is set (CI). Under -short it skips: a real
// browser start is the full suite's (make test), not the edit loop's.
func Find(t testing.TB) *Browser {
	t.Helper()
	testtools.SkipShort(t, "no real browser in the fast tier")
	return &Browser{Path: testtools.Find(t, "chromium", "chromium-browser", "google-chrome"), TempDir: t.TempDir}
}

// baseFlags are the flags of every run: no sandbox (containers and CI run
// as root), no GPU, and nothing that reaches the network on its own.
var baseFlags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
	"--disable-background-networking", "--disable-sync", "--disable-component-update",
}

// DumpDOM loads page (a local file) and returns the serialized DOM after
// the page's scripts, if any, have run.
func (b *Browser) DumpDOM(ctx context.Context, page string) (string, error) {
	out, err := b.run(ctx, page, "", "--dump-dom")
	return string(out), err
}

// LoadDOM loads page and returns the DOM the browser built, parsed.
func (b *Browser) LoadDOM(ctx context.Context, page string) (*DOM, error) {
	out, err := b.run(ctx, page, "", "--dump-dom")
	if err != nil {
		return nil, err
	}
	d, err := ParseDOM(string(out))
	if err != nil {
		return nil, fmt.Errorf("read the DOM chromium dumped for %s: %w", page, err)
	}
	return d, nil
}

// Screenshot loads page in a width×height window and writes a PNG of the
// window to png. The page is not scrolled: height decides how much of it is
// in the picture.
func (b *Browser) Screenshot(ctx context.Context, page, png string, width, height int) error {
	abs, err := filepath.Abs(png)
	if err != nil {
		return fmt.Errorf("screenshot: %w", err)
	}
	_, err = b.run(ctx, page, abs, "--screenshot="+abs, "--window-size="+strconv.Itoa(width)+","+strconv.Itoa(height), "--hide-scrollbars")
	return err
}

// run starts Chromium on page with mode flags. With output set, that file
// is the result, else stdout is. A non-zero exit, a timeout and an empty
// result are errors; stderr is only shown with them, since Chromium always
// complains there (D-Bus, GPU, crash reporter) without anything being wrong.
func (b *Browser) run(ctx context.Context, page, output string, mode ...string) ([]byte, error) {
	pageURL, err := fileURL(page)
	if err != nil {
		return nil, err
	}

	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()

	dir := b.TempDir()
	if output != "" {
		// A file left from an earlier run must not pass for this run's.
		if err := os.Remove(output); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("chromium: %w", err)
		}
	}
	// Files, not pipes: a helper process that outlives Chromium keeps a
	// pipe open, a file it cannot.
	stdout, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		return nil, fmt.Errorf("chromium: %w", err)
	}
	defer stdout.Close()
	var stderr bytes.Buffer

	args := append([]string{"--virtual-time-budget=" + virtualTimeBudget}, mode...)
	cmd, err := b.start(ctx, dir, append(args, pageURL), stdout, &stderr)
	if err != nil {
		return nil, err
	}
	waitErr := cmd.Wait()
	// Helpers that outlived the browser belong to this run; none may stay.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)

	fail := func(format string, a ...any) error {
		return fmt.Errorf("chromium %s %s: %s\nstderr (last lines):\n%s", strings.Join(mode, " "), pageURL, fmt.Sprintf(format, a...), tail(stderr.String(), 15))
	}
	if ctx.Err() != nil {
		return nil, fail("no result before the deadline: %v", ctx.Err())
	}
	if waitErr != nil {
		return nil, fail("%v", waitErr)
	}
	result := output
	if result == "" {
		result = stdout.Name()
	}
	data, err := os.ReadFile(result)
	if err != nil {
		return nil, fail("no output: %v", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fail("empty output in %s", result)
	}
	return data, nil
}

// fileURL is the file: URL of page, a regular file.
func fileURL(page string) (string, error) {
	abs, err := filepath.Abs(page)
	if err != nil {
		return "", fmt.Errorf("chromium: %w", err)
	}
	if st, err := os.Stat(abs); err != nil {
		return "", fmt.Errorf("chromium: %w", err)
	} else if !st.Mode().IsRegular() {
		return "", fmt.Errorf("chromium: %s is not a regular file", abs)
	}
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String(), nil
}

// start starts the browser in dir (a new empty directory) with the base
// flags, a fresh profile and args, in its own process group that a
// cancelled ctx kills; extra become its fds 3, 4 and on.
func (b *Browser) start(ctx context.Context, dir string, args []string, stdout io.Writer, stderr *bytes.Buffer, extra ...*os.File) (*exec.Cmd, error) {
	profile := filepath.Join(dir, "profile")
	if err := os.Mkdir(profile, 0o700); err != nil {
		return nil, fmt.Errorf("chromium profile: %w", err)
	}
	all := append(append(append([]string{}, baseFlags...), "--user-data-dir="+profile), args...)
	cmd := exec.CommandContext(ctx, b.Path, all...)
	cmd.Dir = dir
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	cmd.ExtraFiles = extra
	// Its own group, so that a timeout kills the renderer, GPU and
	// zygote processes too, and never signals the test binary.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = waitDelay
	// The launcher script of some distributions reads HOME; keep the
	// user's real one, and the user's display, out of the test.
	cmd.Env = append(os.Environ(), "HOME="+dir, "DISPLAY=", "WAYLAND_DISPLAY=")
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", b.Path, err)
	}
	return cmd, nil
}

// withDefaultTimeout gives ctx DefaultTimeout when it has no deadline.
func withDefaultTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, DefaultTimeout)
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
