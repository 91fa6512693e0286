package textdist

import (
	"strings"
	"testing"
)

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"port", "port", 0},
		{"prot", "port", 1}, // a transposition is one edit
		{"skew.servrs", "skew.servers", 1},
		{"", "abc", 3},
		{"kitten", "sitting", 3},
		{strings.Repeat("a", 65), "a", 1 << 30}, // not a typo of a short key
	} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d; want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
