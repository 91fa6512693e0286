package transport

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/audit"
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
			if strings.Contains(ne.Message, "\n") || !strings.Contains(ne.Message, tc.err.Error()) {
				t.Errorf("message %q: want one line ending in the cause", ne.Message)
			}
		})
	}
}
