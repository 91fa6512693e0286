package inventory_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/inventory"
)

// limitCases are --limit patterns over testdata/ansible/lablabs (masters
// master-01..03, workers worker-01..03, both under k8s_cluster) and what
// they select; nil means the pattern selects nothing, which is an error.
var limitCases = []struct {
	pattern string
	want    []string
}{
	{"master-01", []string{"master-01"}},
	{"masters", []string{"master-01", "master-02", "master-03"}},
	{"masters,worker-02", []string{"master-01", "master-02", "master-03", "worker-02"}},
	{"masters:worker-02", []string{"master-01", "master-02", "master-03", "worker-02"}},
	{"k8s_cluster:&workers", []string{"worker-01", "worker-02", "worker-03"}},
	{"k8s_cluster:!masters", []string{"worker-01", "worker-02", "worker-03"}},
	{"masters:&k8s_cluster:!master-02", []string{"master-01", "master-03"}},
	{"!workers", []string{"master-01", "master-02", "master-03"}},
	{"worker-*", []string{"worker-01", "worker-02", "worker-03"}},
	// A trailing [digits] is a subscript, never a glob class, in Ansible.
	{"*-0[13]", nil},
	{"*-0[1-3]", nil}, // the old [x-y] subscript form
	{"*-0[!13]", []string{"master-02", "worker-02"}},
	{"~w.*-0[23]", []string{"worker-02", "worker-03"}},
	{"masters[0]", []string{"master-01"}},
	{"workers[1:2]", []string{"worker-02", "worker-03"}},
	{"workers[-1]", []string{"worker-03"}},
	{"all:!worker-0*", []string{"master-01", "master-02", "master-03"}},
	{"nomatch", nil},
	{"masters:&workers", nil},
	// Roles are names to select by too (fleet-audit's own inventories
	// have them without groups of the same name).
	{"server:!master-01", []string{"master-02", "master-03"}},
}

func TestLimit(t *testing.T) {
	inv, err := inventory.Load(filepath.Join("testdata", "ansible", "lablabs", "hosts.ini"), layoutOpts(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range limitCases {
		t.Run(tc.pattern, func(t *testing.T) {
			got, err := inv.Limit(tc.pattern, nil)
			if tc.want == nil {
				if err == nil {
					t.Fatalf("selected %v; want an error", names(got))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(names(got), tc.want) {
				t.Errorf("selected %v; want %v", names(got), tc.want)
			}
			if len(inv.Hosts) != 6 {
				t.Errorf("Limit changed the inventory it was called on")
			}
		})
	}
}

// TestLimitAgreesWithAnsible runs the same patterns through ansible
// --list-hosts, so the pattern language is Ansible's, not a guess at it.
// The role-only case is fleet-audit's own and has no Ansible twin.
func TestLimitAgreesWithAnsible(t *testing.T) {
	testtools.SkipShort(t, "runs ansible once per pattern")
	ansible := testtools.Find(t, "ansible")
	file := filepath.Join("testdata", "ansible", "lablabs", "hosts.ini")
	for _, tc := range limitCases {
		if strings.HasPrefix(tc.pattern, "server") {
			continue
		}
		t.Run(tc.pattern, func(t *testing.T) {
			cmd := exec.Command(ansible, "all", "-i", file, "--list-hosts", "--limit", tc.pattern)
			cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "ANSIBLE_LOCAL_TEMP="+t.TempDir(), "ANSIBLE_NOCOLOR=1")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, _ := cmd.Output()
			var got []string
			for _, line := range strings.Split(string(out), "\n")[1:] {
				if line = strings.TrimSpace(line); line != "" {
					got = append(got, line)
				}
			}
			slices.Sort(got)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("ansible --list-hosts --limit %q gives %v (stderr %q); this table says %v", tc.pattern, got, stderr.String(), want)
			}
		})
	}
}

// TestLimitSuggests: a pattern that selects nothing names the hosts or
// groups its mistyped terms most likely meant, and guesses nothing for a
// glob or a name nothing is near.
func TestLimitSuggests(t *testing.T) {
	inv, err := inventory.Load(filepath.Join("testdata", "ansible", "lablabs", "hosts.ini"), layoutOpts(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ pattern, want string }{
		{"wroker-01", `--limit "wroker-01" selects none of the 6 inventory hosts; "wroker-01" matches no host or group (did you mean worker-01, worker-02, worker-03?)`},
		{"master:!master-01", `"master" matches no host or group (did you mean masters?)`},
		{"masters:&wokers", `"wokers" matches no host or group (did you mean workers, worker?)`},
		{"zzz", `--limit "zzz" selects none of the 6 inventory hosts`},
		{"wroker-*", `--limit "wroker-*" selects none of the 6 inventory hosts`},
	} {
		_, err := inv.Limit(tc.pattern, nil)
		if err == nil || !strings.HasSuffix(err.Error(), tc.want) {
			t.Errorf("Limit(%q) = %v; want an error ending %q", tc.pattern, err, tc.want)
		}
	}
}

// TestLimitFromFile: @FILE reads one term per line, as a --retry-file
// writes them.
func TestLimitFromFile(t *testing.T) {
	inv, err := inventory.Load(filepath.Join("testdata", "ansible", "lablabs", "hosts.ini"), layoutOpts(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	read := func(name string) ([]byte, error) {
		if name != "retry.txt" {
			return nil, os.ErrNotExist
		}
		return []byte("worker-03\n\n# a comment\nmaster-02\n"), nil
	}
	got, err := inv.Limit("@retry.txt", read)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"master-02", "worker-03"}; !slices.Equal(names(got), want) {
		t.Errorf("selected %v; want %v", names(got), want)
	}
	if _, err := inv.Limit("@missing.txt", read); err == nil || !strings.Contains(err.Error(), "@missing.txt") {
		t.Errorf("a missing @file: %v", err)
	}
}

func names(inv *inventory.Inventory) []string {
	if inv == nil {
		return nil
	}
	var out []string
	for _, h := range inv.Hosts {
		out = append(out, h.Name)
	}
	return out
}
