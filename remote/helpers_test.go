package remote_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/fleet-audit/fleet-audit/internal/sshfleet"
	"github.com/fleet-audit/fleet-audit/remote"
)

// testFleet is an in-process fleet with one client key authorized on every
// node and a known_hosts file listing every node.
type testFleet struct {
	*sshfleet.Fleet
	key        ssh.Signer
	keyFile    string
	knownHosts string
}

func startFleet(t *testing.T, cfgs ...sshfleet.NodeConfig) *testFleet {
	t.Helper()
	key, pemBytes, err := sshfleet.NewClientKey()
	if err != nil {
		t.Fatal(err)
	}
	for i := range cfgs {
		cfgs[i].AuthorizedKeys = append(cfgs[i].AuthorizedKeys, key.PublicKey())
	}
	f, err := sshfleet.Start(t.Context(), cfgs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	})
	dir := t.TempDir()
	tf := &testFleet{
		Fleet:      f,
		key:        key,
		keyFile:    writeFile(t, dir, "id_ed25519", pemBytes),
		knownHosts: writeFile(t, dir, "known_hosts", f.KnownHosts()),
	}
	return tf
}

// target is the Target for node i with the fleet's key and known_hosts.
func (f *testFleet) target(i int) remote.Target {
	n := f.Nodes()[i]
	return remote.Target{
		Name:            n.Config.Name,
		Address:         n.Host,
		Port:            n.Port,
		User:            "tester",
		IdentityFiles:   []string{f.keyFile},
		KnownHostsFiles: []string{f.knownHosts},
	}
}

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// testDialer never uses the developer's own agent, keys or known_hosts.
func testDialer(o remote.SSHOptions) *remote.SSHDialer {
	if o.ConnectTimeout == 0 {
		o.ConnectTimeout = 5 * time.Second
	}
	if o.DefaultIdentityFiles == nil {
		o.DefaultIdentityFiles = []string{}
	}
	if o.DefaultKnownHosts == nil {
		o.DefaultKnownHosts = []string{"/nonexistent/known_hosts"}
	}
	return remote.NewSSHDialer(o)
}

func dialOrFatal(t *testing.T, d remote.Dialer, tgt remote.Target) remote.Conn {
	t.Helper()
	c, err := d.Dial(t.Context(), tgt)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}
