package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fleet-audit/fleet-audit/internal/demo"
	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/sshfleet"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
)

func TestMain(m *testing.M) {
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
	})
}

// TestScripts runs cmd/fleet-audit/testdata/script/*.txtar against the real
// main. Setup starts in-process SSH fleets and leaves their inventories in
// $WORK/fleets/<name>/inventory.yaml:
//
//	incident    the seed incident (9 nodes, UFW on 4)
//	clean       3 healthy nodes
//	down        3 healthy nodes, one of which refuses connections
//	hostkey     3 healthy nodes, one whose known_hosts entry is of another key
//
// $EXAMPLES is the repository's examples/ directory.
func TestScripts(t *testing.T) {
	examples, err := filepath.Abs(filepath.Join("..", "..", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			fleets := []struct {
				name    string
				members []nodesim.Member
				o       demo.Options
			}{
				{"incident", nodesim.Incident(), demo.Options{}},
				{"clean", nodesim.Clean(3), demo.Options{}},
				{"down", nodesim.Clean(3), demo.Options{Faults: map[string]sshfleet.Fault{"node-2": sshfleet.FaultRefuse}}},
				{"hostkey", nodesim.Clean(3), demo.Options{WrongHostKey: map[string]bool{"node-3": true}}},
			}
			for _, f := range fleets {
				dir := filepath.Join(env.WorkDir, "fleets", f.name)
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return err
				}
				fl, err := demo.Start(context.Background(), dir, f.members, f.o)
				if err != nil {
					return err
				}
				env.Defer(func() { fl.Close() })
			}
			// Keep the user's agent and config out of the tests.
			env.Setenv("SSH_AUTH_SOCK", "")
			env.Setenv("HOME", env.WorkDir)
			env.Setenv("NO_COLOR", "1")
			env.Setenv("EXAMPLES", examples)
			return nil
		},
	})
}
