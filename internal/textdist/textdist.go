// Package textdist measures how far apart two short words are, for the
// "did you mean" hints of inventory keys and explain's ids: one home for
// the distance, so both hints agree on what a typo is.
package textdist

import "slices"

// Distance is the optimal string alignment distance: Levenshtein plus
// transposition of neighbours, the commonest typo ("prot" for "port").
// Words longer than 64 bytes are never a typo of a short key: they get a
// huge distance, which also keeps this cheap on hostile input.
func Distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 30
	}
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// Closest returns up to n of words a typo of word most likely meant: those
// within max(2, len(word)/4) edits, nearest first, in the order given
// among equals; none when nothing is that near.
func Closest(word string, words []string, n int) []string {
	type scored struct {
		w string
		d int
	}
	var near []scored
	seen := map[string]bool{}
	for _, w := range words {
		if seen[w] || w == word {
			continue
		}
		seen[w] = true
		if d := Distance(word, w); d <= max(2, len(word)/4) {
			near = append(near, scored{w, d})
		}
	}
	slices.SortStableFunc(near, func(a, b scored) int { return a.d - b.d })
	var out []string
	for _, s := range near[:min(n, len(near))] {
		out = append(out, s.w)
	}
	return out
}
