package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fleet-audit/fleet-audit/cmd/fleet-audit/internal/demo"
	"github.com/fleet-audit/fleet-audit/internal/kubefake"
	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/inventory"
)

// scriptCmds are the testscript commands beyond testscript's own.
var scriptCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	"kubeapi":      kubeapiCmd,
	"junit-agrees": junitAgreesCmd,
	"schema-valid": schemaValidCmd,
}

// kubeapiCmd is "kubeapi NODES.json KUBECONFIG": serve the NodeList in
// NODES.json as a Kubernetes API server on 127.0.0.1 (internal/kubefake)
// until the script ends, and write a kubeconfig for it whose current
// context is kubefake. A script follows it with
// [!have:kubectl] skip, which fails instead under FLEET_AUDIT_REQUIRE_TOOLS=1
// (haveCondition), so CI cannot skip the real kubectl.
func kubeapiCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: kubeapi NODES.json KUBECONFIG")
	}
	srv := kubefake.Start([]byte(ts.ReadFile(args[0])))
	ts.Defer(srv.Close)
	ts.Check(srv.WriteKubeconfig(ts.MkAbs(args[1])))
}

// TestRunFromClusterWithoutKubectl: --from-cluster with no kubectl says
// so and exits 2 before anything is contacted.
func TestRunFromClusterWithoutKubectl(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for _, argv := range [][]string{{"run", "--from-cluster"}, {"discover", "-o", filepath.Join(t.TempDir(), "inv.yaml")}} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"fleet-audit"}, argv...), &stdout, &stderr)
		if code != int(exitUsage) || !strings.Contains(stderr.String(), "kubectl is not installed") || !strings.Contains(stderr.String(), "install kubectl") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and what to do about kubectl", argv, code, stderr.String())
		}
		if stdout.Len() > 0 {
			t.Errorf("%v printed %q", argv, stdout.String())
		}
	}
}

// TestRunFromCluster audits a simulated fleet whose nodes a real kubectl
// lists from a fake API server: the hosts are the cluster's, their ports,
// key and known_hosts come from the ssh_config given with -F, as a user's
// would, and every node is audited.
func TestRunFromCluster(t *testing.T) {
	testtools.SkipShort(t, "audits a simulated fleet end to end")
	testtools.Find(t, "kubectl")
	dir := t.TempDir()
	fl, err := demo.Start(context.Background(), dir, nodesim.Clean(3), demo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fl.Close() })
	sim, err := inventory.Load(fl.InventoryPath, inventory.LoadOptions{UserSSHConfig: "none"})
	if err != nil {
		t.Fatal(err)
	}
	// The cluster says where the nodes are (127.0.0.1) and what they are;
	// ssh_config says how to log in, as it would for a real fleet.
	var items []string
	var sshConfig strings.Builder
	for _, h := range sim.Hosts {
		labels := `{"kubernetes.io/os": "linux"}`
		if h.Name == "node-1" {
			labels = `{"node-role.kubernetes.io/control-plane": "true", "node-role.kubernetes.io/master": "true"}`
		}
		items = append(items, fmt.Sprintf(`{"metadata": {"name": %q, "labels": %s}, "status": {"addresses": [{"type": "InternalIP", "address": %q}, {"type": "Hostname", "address": %q}]}}`,
			h.Name, labels, h.Address, h.Name))
		fmt.Fprintf(&sshConfig, "Host %s\n  Port %d\n  IdentityFile %s\n  UserKnownHostsFile %s\n", h.Name, h.Port, h.IdentityFiles[0], h.KnownHostsFiles[0])
	}
	srv := kubefake.Start([]byte(`{"kind": "NodeList", "apiVersion": "v1", "items": [` + strings.Join(items, ",") + `]}`))
	t.Cleanup(srv.Close)
	kubeconfig, cfg := filepath.Join(dir, "kubeconfig"), filepath.Join(dir, "ssh_config.user")
	if err := srv.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(sshConfig.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", dir)
	t.Setenv("SSH_AUTH_SOCK", "")
	results := filepath.Join(dir, "results.json")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"fleet-audit", "run", "--from-cluster", "--kubeconfig", kubeconfig, "-F", cfg, "--json", results}, &stdout, &stderr)
	if code != int(exitOK) {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	data, err := os.ReadFile(results)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Inventory string
		Gate      struct{ Passed bool }
		Nodes     []struct {
			Name, Address, Status string
			Roles                 []string
		}
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	var nodes []string
	for _, n := range got.Nodes {
		nodes = append(nodes, fmt.Sprintf("%s %s %s %s", n.Name, n.Address, strings.Join(n.Roles, ","), n.Status))
	}
	want := []string{"node-1 127.0.0.1 control-plane ok", "node-2 127.0.0.1 worker ok", "node-3 127.0.0.1 worker ok"}
	if got.Inventory != kubefake.Context || !got.Gate.Passed || !reflect.DeepEqual(nodes, want) {
		t.Errorf("inventory %q, gate passed %v, nodes %q; want %q, true, %q", got.Inventory, got.Gate.Passed, nodes, kubefake.Context, want)
	}
}
