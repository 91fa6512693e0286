package transport

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/audit"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/inventory"
	"github.com/fleet-audit/fleet-audit/remote"
	"github.com/fleet-audit/fleet-audit/result"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want result.NodeStatus
	}{
		{"refused", fmt.Errorf("ssh n1: %w: connection refused", remote.ErrUnreachable), result.StatusUnreachable},
		{"banner timeout", fmt.Errorf("ssh n1: %w", remote.ErrConnectTimeout), result.StatusTimeout},
		{"auth", fmt.Errorf("ssh n1: %w: no key accepted", remote.ErrAuthFailed), result.StatusAuthFailed},
		{"unknown key", fmt.Errorf("ssh n1: %w", remote.ErrHostKeyUnknown), result.StatusHostKeyUnknown},
		{"changed key", fmt.Errorf("ssh n1: %w", remote.ErrHostKeyMismatch), result.StatusHostKeyMismatch},
		// A hop's cause is wrapped beside ErrJumpFailed: the node is
		// jump_failed, not unreachable or host_key_mismatch itself.
		{"bastion down", fmt.Errorf("ssh n1: jump host bastion: %w: %w", remote.ErrJumpFailed, remote.ErrUnreachable), result.StatusJumpFailed},
		{"bastion key changed", fmt.Errorf("ssh n1: jump host bastion: %w: %w", remote.ErrJumpFailed, remote.ErrHostKeyMismatch), result.StatusJumpFailed},
		{"probe hang", fmt.Errorf("run: %w", remote.ErrRunTimeout), result.StatusProbeTimeout},
		{"flood", fmt.Errorf("run: %w", remote.ErrOutputTruncated), result.StatusOutputTruncated},
		{"drop", fmt.Errorf("run: %w", remote.ErrConnectionLost), result.StatusConnectionLost},
		{"interrupted", fmt.Errorf("dial: %w", context.Canceled), result.StatusInterrupted},
		{"other", errors.New("something else"), result.StatusError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ne *audit.NodeError
			if !errors.As(Classify(tc.err), &ne) {
				t.Fatalf("Classify(%v) is not a *audit.NodeError", tc.err)
			}
			if ne.Status != tc.want {
				t.Errorf("status %s, want %s", ne.Status, tc.want)
			}
			if !errors.Is(ne, tc.err) && ne.Err != tc.err {
				t.Errorf("the cause is not kept: %v", ne.Err)
			}
			// The message is the status's cause, the same on every node,
			// so that reports group by it; the node's own error follows
			// it once.
			if ne.Message != tc.want.Meaning() || ne.Message == "" {
				t.Errorf("message %q, want the status's meaning %q", ne.Message, tc.want.Meaning())
			}
			if got := ne.Error(); !strings.HasSuffix(got, tc.err.Error()) || strings.Count(got, tc.err.Error()) != 1 {
				t.Errorf("error %q: want the message, then the cause once", got)
			}
		})
	}
}

// TestFleetAndOpenByName: the audit targets carry what the report and the
// bundle need (name, address, roles, become) in inventory order, and Open
// finds each one's connection details by name; a name the inventory does not
// hold is that node's error, never a dial to somewhere else.
func TestFleetAndOpenByName(t *testing.T) {
	inv := &inventory.Inventory{Name: "prod", Hosts: []inventory.Host{
		{Name: "etcd-1", Address: "10.0.0.1", Roles: []string{"etcd"}, Become: "sudo", BecomeUser: "root"},
		{Name: "w-1", Address: "10.0.0.2", Roles: []string{"worker"}, Connection: "local"},
	}}
	f := Fleet(inv)
	want := []audit.Target{
		{Name: "etcd-1", Address: "10.0.0.1", Roles: []string{"etcd"}, Become: probe.Become{Method: "sudo", User: "root"}},
		{Name: "w-1", Address: "10.0.0.2", Roles: []string{"worker"}},
	}
	if f.Name != "prod" || !reflect.DeepEqual(f.Targets, want) {
		t.Fatalf("Fleet = %+v, want prod %+v", f, want)
	}
	var dialled []string
	tr := &Transport{Inventory: inv, Local: dialerFunc(func(_ context.Context, target remote.Target) (remote.Conn, error) {
		dialled = append(dialled, target.Name+"@"+target.Address)
		return nil, errors.New("refused")
	})}
	if _, err := tr.Open(context.Background(), f.Targets[1]); err == nil {
		t.Fatal("Open succeeded with a dialer that refuses")
	}
	if !reflect.DeepEqual(dialled, []string{"w-1@10.0.0.2"}) {
		t.Errorf("dialled %v, want w-1@10.0.0.2 through the local dialer", dialled)
	}
	_, err := tr.Open(context.Background(), audit.Target{Name: "stranger", Address: "10.9.9.9"})
	var ne *audit.NodeError
	if !errors.As(err, &ne) || ne.Status != result.StatusError || len(dialled) != 1 {
		t.Errorf("Open(unknown target) = %v after dialling %v; want a node error and no dial", err, dialled)
	}
}

type dialerFunc func(context.Context, remote.Target) (remote.Conn, error)

func (f dialerFunc) Dial(ctx context.Context, t remote.Target) (remote.Conn, error) { return f(ctx, t) }

// recordingConn remembers the scripts it was asked to run.
type recordingConn struct{ ran []remote.Script }

func (c *recordingConn) Run(_ context.Context, s remote.Script) (remote.Output, error) {
	c.ran = append(c.ran, s)
	return remote.Output{}, nil
}

func (c *recordingConn) Close() error { return nil }

// TestSessionKeepsWhatTheBundleNeeds: a bundle that needs more output than
// the cap (the cluster probes, whose output grows with the cluster) gets
// it; any other keeps the transport's cap, the remote default included.
func TestSessionKeepsWhatTheBundleNeeds(t *testing.T) {
	for _, tc := range []struct {
		transportCap, bundleNeeds, want int64
	}{
		{0, 0, 0},
		{0, 21 << 20, 21 << 20},
		{1 << 20, 0, 1 << 20},
		{1 << 20, 21 << 20, 21 << 20},
		{64 << 20, 21 << 20, 64 << 20},
	} {
		conn := &recordingConn{}
		s := &session{conn: conn, maxOutput: tc.transportCap}
		if _, err := s.Exec(context.Background(), audit.Script{Bundle: []byte(":\n"), MaxOutput: tc.bundleNeeds}); err != nil {
			t.Fatal(err)
		}
		if got := conn.ran[0].MaxOutput; got != tc.want {
			t.Errorf("cap %d, bundle needs %d: ran with MaxOutput %d, want %d", tc.transportCap, tc.bundleNeeds, got, tc.want)
		}
	}
}
