package remote_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/fleet-audit/fleet-audit/internal/sshfleet"
	"github.com/fleet-audit/fleet-audit/remote"
)

// BenchmarkRunFlood is one Run against a node that prints far more than the
// cap. B/op is what the client allocated to survive the flood, and kept-bytes
// is what it held on to; both staying put as the flood grows tenfold is the
// evidence that memory is bounded by DefaultMaxOutput, not by the node.
func BenchmarkRunFlood(b *testing.B) {
	for _, tt := range []struct {
		name  string
		flood int64
	}{
		{"flood=50MiB", 50 << 20},
		{"flood=500MiB", 500 << 20},
	} {
		b.Run(tt.name, func(b *testing.B) {
			tgt := startFloodNode(b, tt.flood)
			c, err := testDialer(remote.SSHOptions{}).Dial(b.Context(), tgt)
			if err != nil {
				b.Fatalf("dial: %v", err)
			}
			b.Cleanup(func() { _ = c.Close() })

			b.ReportAllocs()
			var kept int
			for b.Loop() {
				// The timeout only keeps a broken cap from hanging the
				// benchmark; a flood that is cut reaches it never.
				out, err := c.Run(b.Context(), remote.Script{Stdin: []byte("exit 0\n"), Timeout: time.Minute})
				if !errors.Is(err, remote.ErrOutputTruncated) {
					b.Fatalf("run error %v, want %v", err, remote.ErrOutputTruncated)
				}
				if !out.Truncated || len(out.Stdout) != remote.DefaultMaxOutput {
					b.Fatalf("kept %d bytes (truncated %v), want exactly the cap of %d", len(out.Stdout), out.Truncated, remote.DefaultMaxOutput)
				}
				kept = len(out.Stdout)
			}
			b.ReportMetric(float64(kept), "kept-bytes")
		})
	}
}

// startFloodNode is startFleet for benchmarks: one FaultFlood node, its
// known_hosts and a client key, all released when b ends.
func startFloodNode(b *testing.B, flood int64) remote.Target {
	b.Helper()
	key, pemBytes, err := sshfleet.NewClientKey()
	if err != nil {
		b.Fatal(err)
	}
	f, err := sshfleet.Start(b.Context(), []sshfleet.NodeConfig{{
		Name:           "flood",
		Fault:          sshfleet.FaultFlood,
		FloodBytes:     flood,
		AuthorizedKeys: []ssh.PublicKey{key.PublicKey()},
	}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := f.Close(); err != nil {
			b.Error(err)
		}
	})
	dir := b.TempDir()
	keyFile := filepath.Join(dir, "id_ed25519")
	knownHosts := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(keyFile, pemBytes, 0o600); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(knownHosts, f.KnownHosts(), 0o600); err != nil {
		b.Fatal(err)
	}
	n := f.Nodes()[0]
	return remote.Target{
		Name:            n.Config.Name,
		Address:         n.Host,
		Port:            n.Port,
		User:            "tester",
		IdentityFiles:   []string{keyFile},
		KnownHostsFiles: []string{knownHosts},
	}
}
