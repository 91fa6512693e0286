package remote_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/fleet-audit/fleet-audit/internal/sshfleet"
	"github.com/fleet-audit/fleet-audit/remote"
)

// TestDialRetries counts, on the server side, how often each failure is
// tried: only a connection dropped before the host key was shown is
// transient.
func TestDialRetries(t *testing.T) {
	t.Parallel()
	dropTwo := sshfleet.NodeConfig{Name: "node", Fault: sshfleet.FaultDropHandshake, DropFirst: 2}
	bastion := sshfleet.NodeConfig{Name: "bastion", Bastion: true}

	tests := []struct {
		name    string
		nodes   []sshfleet.NodeConfig
		retries int
		timeout time.Duration
		// jump dials the last node through the first.
		jump       bool
		wrongKey   bool
		wantErr    []error
		notErr     []error
		wantInMsg  string
		counted    int // the node whose count is checked
		count      func(*sshfleet.Node) int
		want       int
		atMost     bool // want is an upper bound
		wantFaster time.Duration
	}{
		{
			name: "dropped twice, succeeds on the third try", nodes: []sshfleet.NodeConfig{dropTwo},
			count: (*sshfleet.Node).Accepted, want: 3,
		},
		{
			name: "dropped twice, retries off", nodes: []sshfleet.NodeConfig{dropTwo}, retries: -1,
			wantErr: []error{remote.ErrUnreachable}, count: (*sshfleet.Node).Accepted, want: 1,
		},
		{
			name: "dropped twice, one retry", nodes: []sshfleet.NodeConfig{dropTwo}, retries: 1,
			wantErr: []error{remote.ErrUnreachable}, wantInMsg: "tried 2 times",
			count: (*sshfleet.Node).Accepted, want: 2,
		},
		{
			// 200ms, 400ms, 800ms... with jitter: a 1s budget has room
			// for three or four tries, not eleven.
			name:    "never past the deadline",
			nodes:   []sshfleet.NodeConfig{{Name: "node", Fault: sshfleet.FaultDropHandshake, DropFirst: 1000}},
			retries: 10, timeout: time.Second,
			wantErr: []error{remote.ErrUnreachable}, notErr: []error{remote.ErrConnectTimeout}, wantInMsg: "no time left",
			count: (*sshfleet.Node).Accepted, want: 4, atMost: true, wantFaster: 3 * time.Second,
		},
		{
			name: "auth failure is not retried", nodes: []sshfleet.NodeConfig{{Name: "node", Fault: sshfleet.FaultRejectKey}}, retries: 5,
			wantErr: []error{remote.ErrAuthFailed}, count: (*sshfleet.Node).Accepted, want: 1,
		},
		{
			name: "host key mismatch is not retried", nodes: []sshfleet.NodeConfig{{Name: "node"}}, retries: 5, wrongKey: true,
			wantErr: []error{remote.ErrHostKeyMismatch}, count: (*sshfleet.Node).Accepted, want: 1,
		},
		{
			name: "timeout is not retried", nodes: []sshfleet.NodeConfig{{Name: "node", Fault: sshfleet.FaultSilent}}, retries: 5,
			timeout: 300 * time.Millisecond,
			wantErr: []error{remote.ErrConnectTimeout}, count: (*sshfleet.Node).Accepted, want: 1,
		},
		{
			name: "node dropped behind a bastion", nodes: []sshfleet.NodeConfig{bastion, dropTwo}, jump: true,
			counted: 0, count: (*sshfleet.Node).Forwards, want: 3,
		},
		{
			// A refused port cannot count connections; the bastion
			// counts the forwards it was asked for.
			name:  "refused node behind a bastion is not retried",
			nodes: []sshfleet.NodeConfig{bastion, {Name: "node", Fault: sshfleet.FaultRefuse}}, jump: true, retries: 5,
			wantErr: []error{remote.ErrUnreachable}, notErr: []error{remote.ErrJumpFailed},
			counted: 0, count: (*sshfleet.Node).Forwards, want: 1,
		},
		{
			name: "bastion dropped twice",
			nodes: []sshfleet.NodeConfig{
				{Name: "bastion", Bastion: true, Fault: sshfleet.FaultDropHandshake, DropFirst: 2},
				{Name: "node"},
			},
			jump:    true,
			counted: 0, count: (*sshfleet.Node).Accepted, want: 3,
		},
		{
			name: "bastion dropped twice, retries off",
			nodes: []sshfleet.NodeConfig{
				{Name: "bastion", Bastion: true, Fault: sshfleet.FaultDropHandshake, DropFirst: 2},
				{Name: "node"},
			},
			jump: true, retries: -1,
			wantErr: []error{remote.ErrJumpFailed, remote.ErrUnreachable}, wantInMsg: "jump host bastion",
			counted: 0, count: (*sshfleet.Node).Accepted, want: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := startFleet(t, tt.nodes...)
			last := len(tt.nodes) - 1
			tgt := f.target(last)
			if tt.jump {
				tgt = f.behind(last, 0)
			}
			if tt.wrongKey {
				tgt.KnownHostsFiles = []string{writeFile(t, t.TempDir(), "known_hosts",
					[]byte(knownhosts.Line([]string{f.Nodes()[last].Addr}, newSigner(t).PublicKey())+"\n"))}
			}
			timeout := tt.timeout
			if timeout == 0 {
				timeout = 10 * time.Second
			}
			d := testDialer(remote.SSHOptions{Retries: tt.retries, ConnectTimeout: timeout})
			closeDialer(t, d)
			start := time.Now()
			c, err := d.Dial(t.Context(), tgt)
			elapsed := time.Since(start)
			switch {
			case len(tt.wantErr) == 0 && err != nil:
				t.Fatalf("dial: %v", err)
			case len(tt.wantErr) == 0:
				runEcho(t, c, "retried")
				_ = c.Close()
			case err == nil:
				_ = c.Close()
				t.Fatal("dial succeeded, want an error")
			default:
				t.Logf("dial error: %v", err)
			}
			for _, w := range tt.wantErr {
				if !errors.Is(err, w) {
					t.Errorf("error does not wrap %v", w)
				}
			}
			for _, w := range tt.notErr {
				if errors.Is(err, w) {
					t.Errorf("error wraps %v, want not", w)
				}
			}
			if tt.wantInMsg != "" && !strings.Contains(err.Error(), tt.wantInMsg) {
				t.Errorf("error does not mention %q", tt.wantInMsg)
			}
			got := tt.count(f.Nodes()[tt.counted])
			if tt.atMost && (got > tt.want || got < 2) {
				t.Errorf("node %s counted %d tries, want 2 to %d", f.Nodes()[tt.counted].Config.Name, got, tt.want)
			}
			if !tt.atMost && got != tt.want {
				t.Errorf("node %s counted %d tries, want %d", f.Nodes()[tt.counted].Config.Name, got, tt.want)
			}
			if tt.wantFaster > 0 && elapsed > tt.wantFaster {
				t.Errorf("dial took %s with a %s connect timeout", elapsed, timeout)
			}
		})
	}
}
