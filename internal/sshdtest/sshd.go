package sshdtest

import (
	"bufio"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/fleet-audit/fleet-audit/internal/testtools"
)

// RequireEnv names the variable that turns a missing sshd from a skip into
// a failure, so CI cannot pass by silently skipping the end-to-end tests.
const RequireEnv = testtools.RequireSSHDEnv

const (
	// readyTimeout bounds the wait for sshd to accept and send its banner.
	readyTimeout = 10 * time.Second
	// stopTimeout bounds each of the two waits for sshd to exit, after
	// SIGTERM and then after SIGKILL.
	stopTimeout = 5 * time.Second
	// bindAttempts is how often a port is tried: the free port is found by
	// listening and closing, so another process can take it in between.
	bindAttempts = 5
)

// Options configures one sshd.
type Options struct {
	// Env is set in every session's environment through sshd_config
	// SetEnv. Values must not contain a double quote, a backslash or a newline.
	Env map[string]string
	// AuthorizedKeys may log in as the current user.
	AuthorizedKeys []ssh.PublicKey
	// HostKey is the host key; nil generates an ed25519 key. A given key
	// never touches the disk: sshd reaches it through an in-process
	// ssh-agent (HostKeyAgent), since a Signer cannot be written out.
	HostKey ssh.Signer
	// Config holds further sshd_config lines, e.g. "MaxAuthTries 3" or
	// "LogLevel VERBOSE". They come first, and sshd keeps the first value
	// it reads for a keyword (sshd_config(5)), so they override the
	// defaults set here.
	Config []string
	// KeysDir is where authorized_keys is written instead of the test's
	// temporary directory, which only the test's user can enter. sshd reads
	// the file as the user logging in, so a login as another user (a
	// non-root login under a root test) needs a directory that user can read.
	KeysDir string
}

// Server is a running sshd.
type Server struct {
	// Addr is "127.0.0.1:port".
	Addr    string
	Host    string
	Port    int
	HostKey ssh.PublicKey
	PID     int
	// User is the user to log in as: the one running the test, since an
	// unprivileged sshd can only log in its own user (CI runs as root).
	User string
	// LogFile holds sshd's log, printed when the test fails.
	LogFile string
}

// Available returns the sshd binary, preferring /usr/sbin/sshd. The path is
// absolute because sshd refuses to start otherwise (it re-executes itself).
func Available() (path string, ok bool) {
	if fi, err := os.Stat("/usr/sbin/sshd"); err == nil && fi.Mode().IsRegular() {
		return "/usr/sbin/sshd", true
	}
	p, err := exec.LookPath("sshd")
	if err != nil {
		return "", false
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", false
	}
	return abs, true
}

// Start starts sshd for the test and stops it when the test ends. It skips
// the test under -short, and when sshd is not installed unless
// FLEET_AUDIT_REQUIRE_SSHD=1.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	// The edit loop (make test-short) leaves real sshd to make test.
	testtools.SkipShort(t, "starts a real sshd")
	path, ok := Available()
	if !ok {
		testtools.Require(t, "sshd")
	}
	u, err := user.Current()
	if err != nil {
		t.Fatalf("sshdtest: current user: %v", err)
	}
	if os.Geteuid() == 0 {
		// sshd running as root insists on its privilege separation
		// directory, which only the openssh-server service creates.
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			t.Fatalf("sshdtest: create privilege separation dir: %v", err)
		}
	}

	dir := t.TempDir()
	hostKeyConfig, hostPub := setUpHostKey(t, dir, o.HostKey)
	keysDir := dir
	if o.KeysDir != "" {
		keysDir = o.KeysDir
	}
	authorized := filepath.Join(keysDir, "authorized_keys")
	var keys []byte
	for _, k := range o.AuthorizedKeys {
		keys = append(keys, ssh.MarshalAuthorizedKey(k)...)
	}
	mode := os.FileMode(0o600)
	if o.KeysDir != "" {
		mode = 0o644 // public keys; the login user must read them
	}
	if err := os.WriteFile(authorized, keys, mode); err != nil {
		t.Fatalf("sshdtest: write authorized_keys: %v", err)
	}
	if err := os.Chmod(authorized, mode); err != nil {
		t.Fatalf("sshdtest: chmod authorized_keys: %v", err)
	}
	setEnv, err := setEnvLine(o.Env)
	if err != nil {
		t.Fatalf("sshdtest: %v", err)
	}

	logFile := filepath.Join(dir, "sshd.log")
	cfgFile := filepath.Join(dir, "sshd_config")
	var lastErr error
	for range bindAttempts {
		port, err := freePort()
		if err != nil {
			t.Fatalf("sshdtest: %v", err)
		}
		defaults := []string{
			"ListenAddress 127.0.0.1:" + strconv.Itoa(port),
			hostKeyConfig,
			"AuthorizedKeysFile " + authorized,
			"StrictModes no",
			"UsePAM no",
			"PidFile none",
			"PubkeyAuthentication yes",
			"PasswordAuthentication no",
			"KbdInteractiveAuthentication no",
			"PermitRootLogin prohibit-password",
			"UseDNS no",
			"PrintMotd no",
			"LogLevel ERROR",
			setEnv,
		}
		cfg := strings.Join(append(slices.Clone(o.Config), defaults...), "\n") + "\n"
		if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
			t.Fatalf("sshdtest: write sshd_config: %v", err)
		}
		srv, err := launch(t, path, cfgFile, logFile, port)
		if err == nil {
			srv.HostKey = hostPub
			srv.User = u.Username
			return srv
		}
		lastErr = err
		if !errors.Is(err, errBind) {
			break
		}
	}
	t.Fatalf("sshdtest: %v", lastErr)
	return nil
}

// KnownHostsLine is the known_hosts line for the server's host key.
func (s *Server) KnownHostsLine() string {
	return knownhosts.Line([]string{s.Addr}, s.HostKey)
}

var errBind = errors.New("sshd could not bind its port")

func launch(t testing.TB, path, cfgFile, logFile string, port int) (*Server, error) {
	log, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	defer log.Close() // the child has its own descriptor

	// -D keeps sshd in the foreground so it is our child; -e sends its log
	// to stderr, which is the log file.
	cmd := exec.Command(path, "-D", "-e", "-f", cfgFile)
	cmd.Stdout = log
	cmd.Stderr = log
	// Its own group, so stopping it cannot signal the test binary.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", path, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if err := waitReady(addr, exited); err != nil {
		stop(cmd, exited)
		logText, _ := os.ReadFile(logFile)
		if strings.Contains(string(logText), "Bind to port") || strings.Contains(string(logText), "Cannot bind any address") {
			return nil, fmt.Errorf("%w %d: %w\nsshd log:\n%s", errBind, port, err, logText)
		}
		return nil, fmt.Errorf("sshd on %s: %w\nsshd log (%s):\n%s", addr, err, logFile, logText)
	}
	t.Cleanup(func() {
		stop(cmd, exited)
		if t.Failed() {
			if logText, err := os.ReadFile(logFile); err == nil && len(logText) > 0 {
				t.Logf("sshd log (%s):\n%s", logFile, logText)
			}
		}
	})
	return &Server{Addr: addr, Host: "127.0.0.1", Port: port, PID: cmd.Process.Pid, LogFile: logFile}, nil
}

// waitReady waits until addr sends an SSH banner, which proves sshd has
// bound the port and can fork sessions, not merely that it started.
func waitReady(addr string, exited <-chan struct{}) error {
	deadline := time.Now().Add(readyTimeout)
	var lastErr error
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return errors.New("sshd exited during startup")
		default:
		}
		if lastErr = readBanner(addr); lastErr == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("no SSH banner within %s: %w", readyTimeout, lastErr)
}

func readBanner(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return fmt.Errorf("read banner: %w", err)
	}
	if !strings.HasPrefix(line, "SSH-") {
		return fmt.Errorf("not an SSH banner: %q", line)
	}
	// Answering with a banner of our own keeps sshd from logging the
	// probe as an error ("kex_exchange_identification") in the test log.
	_, _ = io.WriteString(c, "SSH-2.0-sshdtest-probe\r\n")
	return nil
}

// stop ends sshd: SIGTERM first so it cleans up, SIGKILL if it lingers.
func stop(cmd *exec.Cmd, exited <-chan struct{}) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		_ = syscall.Kill(-cmd.Process.Pid, sig)
		t := time.NewTimer(stopTimeout)
		select {
		case <-exited:
			t.Stop()
			return
		case <-t.C:
		}
	}
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if err := ln.Close(); err != nil {
		return 0, fmt.Errorf("release port %d: %w", port, err)
	}
	return port, nil
}

// setUpHostKey writes the host key configuration and returns its
// sshd_config lines and the public key.
func setUpHostKey(t testing.TB, dir string, signer ssh.Signer) (string, ssh.PublicKey) {
	t.Helper()
	if signer != nil {
		pubFile := filepath.Join(dir, "ssh_host_key.pub")
		if err := os.WriteFile(pubFile, ssh.MarshalAuthorizedKey(signer.PublicKey()), 0o600); err != nil {
			t.Fatalf("sshdtest: write host public key: %v", err)
		}
		sock := serveHostKeyAgent(t, signer)
		return "HostKey " + pubFile + "\nHostKeyAgent " + sock, signer.PublicKey()
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatalf("sshdtest: generate host key: %v", err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "sshdtest host key")
	if err != nil {
		t.Fatalf("sshdtest: marshal host key: %v", err)
	}
	keyFile := filepath.Join(dir, "ssh_host_ed25519_key")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatalf("sshdtest: write host key: %v", err)
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatalf("sshdtest: host public key: %v", err)
	}
	return "HostKey " + keyFile, sshPub
}

// setEnvLine renders Env as one SetEnv directive, sorted so the config is
// reproducible.
func setEnvLine(env map[string]string) (string, error) {
	if len(env) == 0 {
		return "", nil
	}
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	slices.Sort(names)
	parts := []string{"SetEnv"}
	for _, k := range names {
		v := env[k]
		if k == "" || strings.ContainsAny(k, "= \t\n\"") {
			return "", fmt.Errorf("environment variable name %q cannot be set through sshd_config", k)
		}
		if strings.ContainsAny(v, "\"\\\n") {
			return "", fmt.Errorf("value of %s contains a quote, backslash or newline, which sshd_config would reinterpret", k)
		}
		// The whole word is quoted so values may hold spaces.
		parts = append(parts, fmt.Sprintf("\"%s=%s\"", k, v))
	}
	return strings.Join(parts, " "), nil
}
