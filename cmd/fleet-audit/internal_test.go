package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/audit"
	"github.com/fleet-audit/fleet-audit/inventory"
	"github.com/fleet-audit/fleet-audit/result"
)

// brokenWriter fails every write, as a stdout whose reader went away does.
type brokenWriter struct{}

func (brokenWriter) Write([]byte) (int, error) { return 0, errors.New("stdout is broken") }

// TestInternalFailuresExit4: a failure that is not the user's input exits
// 4, not 2, which says "you typed something wrong": a report or diff that
// cannot be written after its path was checked (/dev/full), a terminal
// report, table or JSON that cannot be printed, a demo whose fleet cannot
// start. Each names what failed on stderr.
func TestInternalFailuresExit4(t *testing.T) {
	dir := t.TempDir()
	saved := writeSavedRun(t, dir, audit.GatePolicy{FailOn: result.SeverityCritical}, noFindings)
	inv := filepath.Join("..", "..", "examples", "inventory.yaml")
	t.Setenv("HOME", dir)
	tests := []struct {
		name    string
		args    []string
		stdout  io.Writer
		tmpdir  string
		wantErr string
	}{
		{"report file cannot be written", []string{"report", saved, "--json", "/dev/full"}, nil, "", "write json report /dev/full"},
		{"report to a broken stdout", []string{"report", saved, "--markdown", "-"}, brokenWriter{}, "", "write markdown report -: stdout is broken"},
		{"terminal report cannot be printed", []string{"report", saved}, brokenWriter{}, "", "terminal report: stdout is broken"},
		{"diff file cannot be written", []string{"diff", saved, saved, "--markdown", "/dev/full"}, nil, "", "write markdown diff /dev/full"},
		{"terminal diff cannot be printed", []string{"diff", saved, saved}, brokenWriter{}, "", "terminal diff: stdout is broken"},
		{"probes table cannot be printed", []string{"probes"}, brokenWriter{}, "", "stdout is broken"},
		{"probes JSON cannot be printed", []string{"probes", "--json"}, brokenWriter{}, "", "stdout is broken"},
		{"inventory table cannot be printed", []string{"inventory", "-i", inv}, brokenWriter{}, "", "stdout is broken"},
		{"demo fleet cannot start", []string{"demo", "--out", filepath.Join(dir, "demo-out")}, nil, filepath.Join(dir, "missing"), "demo: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.tmpdir != "" {
				t.Setenv("TMPDIR", tc.tmpdir)
			}
			stdout := tc.stdout
			if stdout == nil {
				stdout = &bytes.Buffer{}
			}
			var stderr bytes.Buffer
			code := run(context.Background(), append([]string{"fleet-audit"}, tc.args...), stdout, &stderr)
			if code != int(exitInternal) || !strings.Contains(stderr.String(), tc.wantErr) {
				t.Errorf("exit %d, stderr %q; want exit %d naming %q", code, stderr.String(), exitInternal, tc.wantErr)
			}
		})
	}
}

func TestChangeOf(t *testing.T) {
	for _, tt := range []struct {
		name  string
		inv   inventory.Change
		flags *result.Change
		want  *result.Change
	}{
		{"none", inventory.Change{}, nil, nil},
		{"inventory", inventory.Change{ID: "CHG-1", Title: "t"}, nil, &result.Change{ID: "CHG-1", Title: "t"}},
		{"flags", inventory.Change{}, &result.Change{RequestedBy: "j"}, &result.Change{RequestedBy: "j"}},
		{"flags override by field", inventory.Change{ID: "CHG-1", Title: "t", RequestedBy: "a"}, &result.Change{ID: "CHG-2"},
			&result.Change{ID: "CHG-2", Title: "t", RequestedBy: "a"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := changeOf(tt.inv, tt.flags); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("changeOf = %+v, want %+v", got, tt.want)
			}
		})
	}
}
