package remote_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/fleet-audit/fleet-audit/internal/sshdtest"
	"github.com/fleet-audit/fleet-audit/internal/sshfleet"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/remote"
)

// confRoot is FLEET_AUDIT_ROOT on every backend; the space checks quoting.
const confRoot = "/tmp/fleet audit root"

func TestConformanceLocal(t *testing.T) {
	t.Parallel()
	runConformance(t, func(t *testing.T) (remote.Dialer, remote.Target) {
		env := append(os.Environ(), "FLEET_AUDIT_ROOT="+confRoot)
		return remote.LocalDialer{Env: env}, remote.Target{Name: "local", Local: true}
	})
}

func TestConformanceSSHFleet(t *testing.T) {
	t.Parallel()
	runConformance(t, func(t *testing.T) (remote.Dialer, remote.Target) {
		f := startFleet(t, sshfleet.NodeConfig{Name: "fleet-1", User: "tester", Env: []string{"FLEET_AUDIT_ROOT=" + confRoot}})
		return testDialer(remote.SSHOptions{}), f.target(0)
	})
}

func TestConformanceSSHD(t *testing.T) {
	t.Parallel()
	runConformance(t, func(t *testing.T) (remote.Dialer, remote.Target) {
		key, pemBytes, err := sshfleet.NewClientKey()
		if err != nil {
			t.Fatal(err)
		}
		srv := sshdtest.Start(t, sshdtest.Options{
			Env:            map[string]string{"FLEET_AUDIT_ROOT": confRoot},
			AuthorizedKeys: []ssh.PublicKey{key.PublicKey()},
		})
		dir := t.TempDir()
		return testDialer(remote.SSHOptions{}), remote.Target{
			Name:            "sshd",
			Address:         srv.Host,
			Port:            srv.Port,
			User:            srv.User,
			IdentityFiles:   []string{writeFile(t, dir, "id_ed25519", pemBytes)},
			KnownHostsFiles: []string{writeFile(t, dir, "known_hosts", []byte(srv.KnownHostsLine()+"\n"))},
		}
	})
}

// runConformance is the one behaviour every Dialer must share, so the
// caller never needs to know which transport ran a probe.
func runConformance(t *testing.T, dial func(t *testing.T) (remote.Dialer, remote.Target)) {
	connect := func(t *testing.T) remote.Conn {
		t.Helper()
		d, tgt := dial(t)
		return dialOrFatal(t, d, tgt)
	}

	// The script is fed over stdin; one larger than an SSH channel window
	// (2 MiB in x/crypto) proves the feeding does not stall.
	var large bytes.Buffer
	for large.Len() < 3<<20 {
		large.WriteString("# padding so the script exceeds one SSH channel window of data\n")
	}
	large.WriteString("echo large done\n")

	tests := []struct {
		name   string
		prefix string
		script string
		stdout string
		// stderr must appear in the run's stderr; the shells word their
		// messages differently.
		stderr string
		exit   int
	}{
		{name: "stdout", script: "printf 'hello %s\\n' world\n", stdout: "hello world\n"},
		{name: "exit code is not an error", script: "echo before; exit 7\n", stdout: "before\n", exit: 7},
		{name: "stderr", script: "echo oops >&2\n", stderr: "oops\n"},
		{name: "env", script: `printf '%s' "$FLEET_AUDIT_ROOT"` + "\n", stdout: confRoot},
		{name: "script larger than a window", script: large.String(), stdout: "large done\n"},
		// The pid prelude shares the first line, so errors name the
		// script's own line numbers (dash says "2:", bash "line 2:").
		{name: "line numbers", script: "true\nno-such-command-fa\n", stderr: "2: no-such-command-fa", exit: 127},
		// A prefix and the script are one program, numbered as one.
		{name: "prefix then script", prefix: "fa_x=from-prefix\n", script: "echo \"$fa_x\"\nno-such-command-fa\n", stdout: "from-prefix\n", stderr: "3: no-such-command-fa", exit: 127},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, err := connect(t).Run(t.Context(), remote.Script{Prefix: []byte(tt.prefix), Stdin: []byte(tt.script), Timeout: 30 * time.Second})
			if err != nil {
				t.Fatalf("run: %v (stderr %q)", err, out.Stderr)
			}
			if string(out.Stdout) != tt.stdout || !strings.Contains(string(out.Stderr), tt.stderr) || (tt.stderr == "" && len(out.Stderr) > 0) || out.ExitCode != tt.exit {
				t.Errorf("got stdout %q stderr %q exit %d, want %q %q %d",
					out.Stdout, out.Stderr, out.ExitCode, tt.stdout, tt.stderr, tt.exit)
			}
			if out.Truncated || out.Duration <= 0 {
				t.Errorf("got truncated %v duration %v, want false and positive", out.Truncated, out.Duration)
			}
		})
	}

	t.Run("output cap", func(t *testing.T) {
		t.Parallel()
		const limit = 64 << 10
		out, err := connect(t).Run(t.Context(), remote.Script{
			Stdin:     []byte("yes fleet-audit-flood | head -c 20000000\n"),
			Timeout:   30 * time.Second,
			MaxOutput: limit,
		})
		if !errors.Is(err, remote.ErrOutputTruncated) {
			t.Fatalf("error %v, want ErrOutputTruncated", err)
		}
		if len(out.Stdout) != limit || !out.Truncated {
			t.Errorf("got %d bytes, truncated %v; want %d, true", len(out.Stdout), out.Truncated, limit)
		}
		if !bytes.HasPrefix(out.Stdout, []byte("fleet-audit-flood\n")) {
			t.Errorf("stdout starts %q, want the script's first lines", out.Stdout[:min(len(out.Stdout), 40)])
		}
	})

	t.Run("timeout kills the script", func(t *testing.T) {
		t.Parallel()
		testtools.SkipShort(t, "waits out a 10 s script timeout")
		c := connect(t)
		start := time.Now()
		// exec makes the printed pid the sleeping process itself.
		// The timeout leaves room for a loaded machine to start the
		// shell and print the pid before it passes.
		// 10s: the whole suite runs packages in parallel on two cores, and
		// sshd once took more than 3s to start the session under that load.
		out, err := c.Run(t.Context(), remote.Script{Stdin: []byte("echo $$\nexec sleep 60\n"), Timeout: 10 * time.Second})
		if !errors.Is(err, remote.ErrRunTimeout) {
			t.Fatalf("error %v, want ErrRunTimeout", err)
		}
		if elapsed := time.Since(start); elapsed > 40*time.Second {
			t.Errorf("Run returned after %s, want soon after the 10s timeout", elapsed)
		}
		pid, perr := strconv.Atoi(strings.TrimSpace(string(out.Stdout)))
		if perr != nil {
			t.Fatalf("partial output %q (stderr %q) is not the script's pid", out.Stdout, out.Stderr)
		}
		// The same connection must still run scripts after a timeout.
		waitGone(t, c, pid)
	})

	// What the script left outside its process tree goes with it: a
	// subshell's background subshell (an orphan of the script's session
	// that never exec'd, so nothing but its session says whose it is) and
	// a process that left the session (setsid) but carries the run's
	// marker. Before, the kill script killed the script's tree alone, and
	// only when the signal had not ended the session.
	t.Run("timeout kills what left the tree", func(t *testing.T) {
		t.Parallel()
		testtools.SkipShort(t, "waits out a 10 s script timeout")
		c := connect(t)
		marker := fmt.Sprintf("conf%d", time.Now().UnixNano())
		script := "( (while :; do sleep 1; done) >/dev/null 2>&1 & echo $! )\n" +
			"FLEET_AUDIT_RUN=" + marker + " setsid sh -c 'echo $$; exec sleep 300' &\n" +
			"sleep 1\nexec sleep 60\n"
		out, err := c.Run(t.Context(), remote.Script{Stdin: []byte(script), Timeout: 10 * time.Second, RunMarker: marker})
		if !errors.Is(err, remote.ErrRunTimeout) {
			t.Fatalf("error %v, want ErrRunTimeout (stdout %q, stderr %q)", err, out.Stdout, out.Stderr)
		}
		pids := strings.Fields(string(out.Stdout))
		if len(pids) != 2 {
			t.Fatalf("stdout %q (stderr %q), want the two pids", out.Stdout, out.Stderr)
		}
		for _, p := range pids {
			pid, perr := strconv.Atoi(p)
			if perr != nil {
				t.Fatalf("stdout %q: %v", out.Stdout, perr)
			}
			waitGone(t, c, pid)
		}
	})

	t.Run("context cancel", func(t *testing.T) {
		t.Parallel()
		c := connect(t)
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(300*time.Millisecond, cancel)
		_, err := c.Run(ctx, remote.Script{Stdin: []byte("exec sleep 30\n"), Timeout: 30 * time.Second})
		if !errors.Is(err, remote.ErrRunTimeout) || !errors.Is(err, context.Canceled) {
			t.Errorf("error %v, want ErrRunTimeout and context.Canceled", err)
		}
	})

	t.Run("two runs on one conn", func(t *testing.T) {
		t.Parallel()
		c := connect(t)
		for i := range 2 {
			out, err := c.Run(t.Context(), remote.Script{Stdin: []byte(fmt.Sprintf("echo run %d\n", i)), Timeout: 30 * time.Second})
			if err != nil || string(out.Stdout) != fmt.Sprintf("run %d\n", i) {
				t.Errorf("run %d: stdout %q err %v", i, out.Stdout, err)
			}
		}
	})

	t.Run("run after close", func(t *testing.T) {
		t.Parallel()
		c := connect(t)
		if err := c.Close(); err != nil {
			t.Fatalf("close: %v", err)
		}
		_, err := c.Run(t.Context(), remote.Script{Stdin: []byte("echo hi\n"), Timeout: 30 * time.Second})
		if !errors.Is(err, remote.ErrConnectionLost) {
			t.Errorf("error %v, want ErrConnectionLost", err)
		}
	})
}

// waitGone polls, through c, until pid no longer runs. A zombie counts as
// gone: it runs nothing, and on a node without a reaping init it may stay.
func waitGone(t *testing.T, c remote.Conn, pid int) {
	t.Helper()
	check := fmt.Sprintf(`pid=%d
if kill -0 "$pid" 2>/dev/null && [ "$(sed 's/.*) //' /proc/$pid/stat 2>/dev/null | cut -d' ' -f1)" != Z ]; then
	echo alive
else
	echo gone
fi
`, pid)
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, err := c.Run(t.Context(), remote.Script{Stdin: []byte(check), Timeout: 10 * time.Second})
		if err != nil {
			t.Fatalf("check pid %d: %v", pid, err)
		}
		if strings.TrimSpace(string(out.Stdout)) == "gone" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d still running 10s after the timeout", pid)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
