package username

import (
	"strings"
	"testing"
)

// TestCheckBecome: the names sudo -u may be given inside the probes' shell
// text, and the ones that could mean something to a shell or are not
// portable.
func TestCheckBecome(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"auditor", true}, {"_svc", true}, {"svc-audit_2", true}, {"a" + strings.Repeat("b", 31), true},
		{"", false}, {"a" + strings.Repeat("b", 32), false}, {"Auditor", false}, {"svc.audit", false},
		{"audit@corp", false}, {"-u", false}, {"1st", false}, {"a b", false}, {"a;id", false}, {"$(id)", false},
	} {
		if err := CheckBecome(tc.name); (err == nil) != tc.ok {
			t.Errorf("CheckBecome(%q) = %v, want ok %t", tc.name, err, tc.ok)
		}
	}
}
