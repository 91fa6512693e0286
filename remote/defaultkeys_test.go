package remote_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/internal/sshfleet"
	"github.com/fleet-audit/fleet-audit/remote"
)

// TestDefaultIdentityFilesAreSSHs pins the list and order of the keys ssh
// tries when none is configured (OpenSSH readconf.c fill_default_options).
func TestDefaultIdentityFilesAreSSHs(t *testing.T) {
	want := []string{"~/.ssh/id_rsa", "~/.ssh/id_ecdsa", "~/.ssh/id_ecdsa_sk", "~/.ssh/id_ed25519", "~/.ssh/id_ed25519_sk"}
	if !slices.Equal(remote.DefaultIdentityFiles, want) {
		t.Errorf("DefaultIdentityFiles = %q; want %q", remote.DefaultIdentityFiles, want)
	}
}

// TestDefaultIdentityFiles: with no agent and no identity file configured,
// the default keys that exist are offered, as ssh does (a user with a key
// and no agent, typical in CI, used to get auth_failed everywhere); an
// unusable default key does not stop the next one; a configured identity
// file turns the defaults off.
func TestDefaultIdentityFiles(t *testing.T) {
	f := startFleet(t, sshfleet.NodeConfig{Name: "n1"})
	key, err := os.ReadFile(f.keyFile)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	garbage := writeFile(t, dir, "id_rsa", []byte("not a key\n"))
	good := writeFile(t, dir, "id_ed25519", key)
	missing := filepath.Join(dir, "id_ecdsa")
	stranger := writeFile(t, dir, "stranger", func() []byte {
		_, pemBytes, err := sshfleet.NewClientKey()
		if err != nil {
			t.Fatal(err)
		}
		return pemBytes
	}())

	for _, tc := range []struct {
		name     string
		defaults []string
		files    []string
		ok       bool
		why      string
	}{
		{name: "a default key that exists is offered", defaults: []string{garbage, missing, good}, ok: true},
		{name: "no default key", defaults: []string{missing}, why: "auth"},
		{name: "a configured file turns the defaults off", defaults: []string{good}, files: []string{stranger}, why: "auth"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := testDialer(remote.SSHOptions{DefaultIdentityFiles: tc.defaults})
			defer d.Close()
			tgt := f.target(0)
			tgt.IdentityFiles = tc.files
			c, err := d.Dial(t.Context(), tgt)
			if tc.ok {
				if err != nil {
					t.Fatalf("dial: %v", err)
				}
				c.Close()
				return
			}
			if err == nil {
				c.Close()
				t.Fatal("dialled; want an authentication failure")
			}
			if !strings.Contains(strings.ToLower(err.Error()), tc.why) {
				t.Errorf("error %v; want it to say %s", err, tc.why)
			}
		})
	}
}
