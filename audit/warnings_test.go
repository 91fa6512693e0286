package audit

import (
	"context"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/fleet-audit/fleet-audit/result"
)

// refusingTransport refuses every node and counts the attempts, so a run
// over it is done without a probe.
type refusingTransport struct{ opens atomic.Int32 }

func (t *refusingTransport) Open(context.Context, Target) (Session, error) {
	t.opens.Add(1)
	return nil, &NodeError{Status: result.StatusUnreachable, Message: "refused"}
}

// TestLateWarnings: the warnings only dialling can tell (the host keys the
// transport trusted) are asked for once every node is done, and enter the
// report after the run's own, so every format renders them from the report
// Run returns.
func TestLateWarnings(t *testing.T) {
	fleet := &Fleet{Name: "f", Targets: []Target{{Name: "a"}, {Name: "b"}, {Name: "c"}}}
	tests := []struct {
		name  string
		early []string
		late  []string
		want  []string
	}{
		{"none", nil, nil, nil},
		{"early only", []string{"early"}, nil, []string{"early"}},
		{"late only", nil, []string{"late"}, []string{"late"}},
		{"both, late last", []string{"early"}, []string{"late 1", "late 2"}, []string{"early", "late 1", "late 2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := &refusingTransport{}
			var opensAtLate int32 = -1
			o := RunOptions{Fleet: fleet, Transport: tr, Forks: 3, Warnings: tc.early}
			if tc.late != nil {
				o.LateWarnings = func() []string {
					opensAtLate = tr.opens.Load()
					return tc.late
				}
			}
			r, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(r.Warnings, tc.want) {
				t.Errorf("warnings %q, want %q", r.Warnings, tc.want)
			}
			if tc.late != nil && opensAtLate != int32(len(fleet.Targets)) {
				t.Errorf("LateWarnings called after %d of %d nodes were dialled", opensAtLate, len(fleet.Targets))
			}
		})
	}
	// The caller's slice is not written through.
	early := make([]string, 1, 4)
	early[0] = "early"
	r, err := Run(context.Background(), RunOptions{Fleet: fleet, Transport: &refusingTransport{}, Warnings: early,
		LateWarnings: func() []string { return []string{"late"} }})
	if err != nil {
		t.Fatal(err)
	}
	if r.Warnings[1] != "late" || early[:2][1] != "" {
		t.Errorf("the caller's Warnings were written through: %q", early[:2])
	}
}
