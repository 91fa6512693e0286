// Package textdist measures how far apart two short words are, for the
// "did you mean" hints of inventory keys and explain's ids: one home for
// the distance, so both hints agree on what a typo is.
package textdist

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
