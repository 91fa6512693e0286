package textdist

import (
	"slices"
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

func TestClosest(t *testing.T) {
	words := []string{"json", "junit", "html", "markdown", "jsonl", "json"}
	for _, tc := range []struct {
		word string
		n    int
		want []string
	}{
		{"jsn", 3, []string{"json", "jsonl"}},
		{"jsn", 1, []string{"json"}},
		{"htlm", 3, []string{"html"}},
		{"prometheus", 3, nil},         // nothing near: no guess
		{"json", 3, []string{"jsonl"}}, // a word is no typo of itself
	} {
		if got := Closest(tc.word, words, tc.n); !slices.Equal(got, tc.want) {
			t.Errorf("Closest(%q, %d) = %q; want %q", tc.word, tc.n, got, tc.want)
		}
	}
}
