package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/cmd/fleet-audit/internal/demo"
	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/sshfleet"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
)

func TestMain(m *testing.M) {
	// Every bundle this process builds is for a simulated node, and the
	// children this binary starts as fleet-audit (testscript, runProcess,
	// the signal tests) audit the nodes this process serves: they share its
	// simulated-node key through the environment they inherit.
	key := os.Getenv(testSimKeyEnv)
	if key == "" {
		key = probe.NewNonce()
		if err := os.Setenv(testSimKeyEnv, key); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	probe.UseSimulatedNodeKey(key)
	if os.Getenv(asMainEnv) == "1" {
		// Re-executed by a signal test: be the real command, with main's
		// signal handling.
		main()
	}
	// Simulated nodes read proc/sys as the kernel serves it (nodesim's
	// procfs shim), here as in the audit package's tests.
	if err := testtools.WithCompiler(nodesim.EnableProcfsShim); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testscript.Main(m, map[string]func(){
		"fleet-audit": func() { os.Exit(run(context.Background(), os.Args, os.Stdout, os.Stderr)) },
		"tcp-relay":   func() { os.Exit(tcpRelay(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// tcpRelay is "tcp-relay HOST PORT", the scripts' ProxyCommand: it carries
// stdin to a TCP connection and the connection to stdout, as nc HOST PORT
// does, and exits when the far end closes. Part of this binary, so that
// the ProxyCommand script needs no netcat on the machine.
func tcpRelay(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) != 2 {
		fmt.Fprintln(stderr, "usage: tcp-relay HOST PORT")
		return 2
	}
	conn, err := net.Dial("tcp", net.JoinHostPort(args[0], args[1]))
	if err != nil {
		fmt.Fprintln(stderr, "tcp-relay:", err)
		return 1
	}
	defer conn.Close()
	go func() {
		io.Copy(conn, stdin)
		conn.(*net.TCPConn).CloseWrite()
	}()
	if _, err := io.Copy(stdout, conn); err != nil {
		fmt.Fprintln(stderr, "tcp-relay:", err)
		return 1
	}
	return 0
}

// testSimKeyEnv carries the simulated-node key from this test process to
// the copies of it that run as fleet-audit.
const testSimKeyEnv = "FLEET_AUDIT_TEST_SIM_KEY"

// isolateClient keeps the user's agent, ssh_config, known_hosts and
// terminal colours out of an in-process CLI run: no agent, home as HOME
// (where a test puts the known_hosts and keys it means), plain output.
func isolateClient(t *testing.T, home string) {
	t.Helper()
	t.Setenv("SSH_AUTH_SOCK", "")
	t.Setenv("HOME", home)
	t.Setenv("NO_COLOR", "1")
}

// runProcess runs fleet-audit as a process of its own (this test binary as
// main, see TestMain), isolated as isolateClient isolates an in-process run:
// no agent, home as HOME, plain output; extra are more NAME=value settings.
// Unlike run() in this process it can run beside other tests (t.Parallel):
// urfave/cli's help and version flags are package variables that every
// app's parse writes, and the environment is the process's. A race the
// child's detector finds makes it exit 66 (GORACE exitcode), which no test
// expects.
func runProcess(ctx context.Context, t *testing.T, home string, extra []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Args[0] = "fleet-audit"
	cmd.Env = mainEnv(home, extra...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && exit.ExitCode() >= 0:
	default:
		t.Fatalf("fleet-audit %s: %v\nstderr:\n%s", strings.Join(args, " "), err, errb.String())
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// mainEnv is the environment of this test binary run as fleet-audit (see
// TestMain): this process's, with the client isolated as isolateClient
// does, then extra NAME=value settings.
func mainEnv(home string, extra ...string) []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return name == "SSH_AUTH_SOCK" || name == "HOME" || name == "NO_COLOR" || name == asMainEnv
	})
	return append(append(env, asMainEnv+"=1", "SSH_AUTH_SOCK=", "HOME="+home, "NO_COLOR=1"), extra...)
}

// scriptFleets are the simulated fleets a script may name as
// $WORK/fleets/<name>/inventory.yaml:
//
//	incident    the seed incident (9 nodes, UFW on 4)
//	clean       3 healthy nodes
//	down        3 healthy nodes, one of which refuses connections
//	hostkey     3 healthy nodes, one whose known_hosts entry is of another key
var scriptFleets = map[string]func() ([]nodesim.Member, demo.Options){
	"incident": func() ([]nodesim.Member, demo.Options) { return nodesim.Incident(), demo.Options{} },
	"clean":    func() ([]nodesim.Member, demo.Options) { return nodesim.Clean(3), demo.Options{} },
	"down": func() ([]nodesim.Member, demo.Options) {
		return nodesim.Clean(3), demo.Options{Faults: map[string]sshfleet.Fault{"node-2": sshfleet.FaultRefuse}}
	},
	"hostkey": func() ([]nodesim.Member, demo.Options) {
		return nodesim.Clean(3), demo.Options{WrongHostKey: map[string]bool{"node-3": true}}
	},
}

var fleetRef = regexp.MustCompile(`\$\{?WORK\}?/fleets/([A-Za-z0-9_-]+)(/[^\s'"]*)?`)

// clientFiles are the files demo.Start writes for the client beside a
// fleet: its inventories and the Ansible group_vars holding the key. A
// script reads them (audits through them, copies them to edit a copy) and
// never writes them.
var clientFiles = map[string]bool{"/inventory.yaml": true, "/inventory.ini": true, "/group_vars/all.yml": true}

// fleetsUsed reads a script for the fleets it names. A fleet the script
// reaches only through its client files is read-only to it (the audit
// never writes to a node) and can be shared with other scripts; any other
// path into the fleet (a node's files, the directory itself) may change
// it, so that script gets a fleet of its own (true).
func fleetsUsed(script []byte) (map[string]bool, error) {
	used := map[string]bool{}
	for _, m := range fleetRef.FindAllSubmatch(script, -1) {
		name := string(m[1])
		if _, ok := scriptFleets[name]; !ok {
			return nil, fmt.Errorf("no simulated fleet %q (have incident, clean, down, hostkey)", name)
		}
		used[name] = used[name] || !clientFiles[string(m[2])]
	}
	return used, nil
}

// sharedFleets starts each read-only fleet once per test binary, the first
// time a script asks for it, so a script pays only for the fleets it uses.
type sharedFleets struct {
	dir string
	// replay memoises the bundles the shared fleets' nodes run: scripts
	// that share a fleet only read it, and most audit it the same way.
	replay sshfleet.Replay
	mu     sync.Mutex
	once   map[string]*sync.Once
	fleet  map[string]*demo.Fleet
	err    map[string]error
}

func (s *sharedFleets) get(name string) (string, error) {
	s.mu.Lock()
	once, ok := s.once[name]
	if !ok {
		once = new(sync.Once)
		s.once[name] = once
	}
	s.mu.Unlock()
	dir := filepath.Join(s.dir, name)
	once.Do(func() {
		fl, err := startScriptFleet(dir, name, &s.replay)
		s.mu.Lock()
		s.fleet[name], s.err[name] = fl, err
		s.mu.Unlock()
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	return dir, s.err[name]
}

func (s *sharedFleets) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, fl := range s.fleet {
		if fl != nil {
			fl.Close()
		}
	}
}

func startScriptFleet(dir, name string, replay *sshfleet.Replay) (*demo.Fleet, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	members, o := scriptFleets[name]()
	o.Replay = replay
	fl, err := demo.Start(context.Background(), dir, members, o)
	if err != nil {
		return nil, fmt.Errorf("fleet %s: %w", name, err)
	}
	return fl, nil
}

// TestScripts runs cmd/fleet-audit/testdata/script/*.txtar against the real
// main. Setup leaves each fleet the script names (scriptFleets) at
// $WORK/fleets/<name>: shared across scripts when the script only audits
// it, its own when the script touches the fleet's files (fleetsUsed).
//
// $EXAMPLES is the repository's examples/ directory, $ANSIBLE the Ansible
// layouts under inventory/testdata/ansible. A fleet's inventory.ini is the
// same fleet as an Ansible INI inventory.
func TestScripts(t *testing.T) {
	examples, err := filepath.Abs(filepath.Join("..", "..", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	ansibleLayouts, err := filepath.Abs(filepath.Join("..", "..", "inventory", "testdata", "ansible"))
	if err != nil {
		t.Fatal(err)
	}
	shared := &sharedFleets{dir: t.TempDir(), once: map[string]*sync.Once{}, fleet: map[string]*demo.Fleet{}, err: map[string]error{}}
	// Registered after TempDir, so the servers stop before their roots go.
	t.Cleanup(shared.close)
	t.Cleanup(func() {
		t.Logf("shared fleets: %d bundles replayed, %d run", shared.replay.Hits.Load(), shared.replay.Misses.Load())
	})
	testscript.Run(t, testscript.Params{
		Dir:       "testdata/script",
		Cmds:      scriptCmds,
		Condition: haveCondition,
		Setup: func(env *testscript.Env) error {
			named, ok := env.T().(interface{ Name() string })
			if !ok {
				return fmt.Errorf("testscript no longer tells the script's name")
			}
			script := strings.TrimPrefix(named.Name(), t.Name()+"/")
			text, err := os.ReadFile(filepath.Join("testdata", "script", script+".txtar"))
			if err != nil {
				return err
			}
			used, err := fleetsUsed(text)
			if err != nil {
				return fmt.Errorf("%s: %w", script, err)
			}
			if testing.Short() && (len(used) > 0 || bytes.Contains(text, []byte("exec fleet-audit demo"))) {
				env.T().Skip("-short: audits a simulated fleet end to end")
			}
			for name, own := range used {
				dir := filepath.Join(env.WorkDir, "fleets", name)
				if own {
					fl, err := startScriptFleet(dir, name, nil)
					if err != nil {
						return err
					}
					env.Defer(func() { fl.Close() })
					continue
				}
				sharedDir, err := shared.get(name)
				if err != nil {
					return err
				}
				if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
					return err
				}
				if err := os.Symlink(sharedDir, dir); err != nil {
					return err
				}
			}
			// Wide enough that no listing wraps: the scripts grep the words,
			// TestOutputFitsColumns holds the fitting to a terminal.
			env.Setenv("COLUMNS", "1000")
			// Keep the user's agent and config out of the tests.
			env.Setenv("SSH_AUTH_SOCK", "")
			// The scripts' fleet-audit audits the nodes this process serves.
			env.Setenv(testSimKeyEnv, os.Getenv(testSimKeyEnv))
			env.Setenv("HOME", env.WorkDir)
			env.Setenv("NO_COLOR", "1")
			env.Setenv("EXAMPLES", examples)
			env.Setenv("ANSIBLE", ansibleLayouts)
			return nil
		},
	})
}

// haveCondition is a script's [have:TOOL]: TOOL (a need of
// testtools.Tiers) is in PATH. Where [exec:TOOL] would skip a part of a
// script without a word, a missing TOOL is recorded for make test's list of
// skipped tiers, and fails the script under the tier's require variable.
func haveCondition(cond string) (bool, error) {
	tool, ok := strings.CutPrefix(cond, "have:")
	if !ok {
		return false, fmt.Errorf("unknown condition %q", cond)
	}
	if _, err := exec.LookPath(tool); err == nil {
		return true, nil
	}
	return false, testtools.Absent(tool)
}

func TestFleetsUsed(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		want         map[string]bool
		wantErr      bool
	}{
		{"none", "exec fleet-audit probes list\n", map[string]bool{}, false},
		{"inventory only is shared", "exec fleet-audit run -i $WORK/fleets/clean/inventory.yaml\n", map[string]bool{"clean": false}, false},
		{"group_vars read to copy the key is shared", "cp $WORK/fleets/clean/group_vars/all.yml px/group_vars/all.yml\n", map[string]bool{"clean": false}, false},
		{"another group_vars file gets its own", "cp x $WORK/fleets/clean/group_vars/workers.yml\n", map[string]bool{"clean": true}, false},
		{"braced WORK", "exec fleet-audit run -i ${WORK}/fleets/incident/inventory.yaml\n", map[string]bool{"incident": false}, false},
		{"node file written gets its own", "exec fleet-audit run -i $WORK/fleets/clean/inventory.yaml\ncp zero $WORK/fleets/clean/nodes/node-2/proc/x\n", map[string]bool{"clean": true}, false},
		{"cd into the fleet gets its own", "cd $WORK/fleets/down\n", map[string]bool{"down": true}, false},
		{"quoted inventory", "exec fleet-audit run -i '$WORK/fleets/hostkey/inventory.yaml'\n", map[string]bool{"hostkey": false}, false},
		{"unknown fleet", "exec fleet-audit run -i $WORK/fleets/nosuch/inventory.yaml\n", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := fleetsUsed([]byte(tc.script))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if !tc.wantErr && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
