package result

import "fmt"

// Plural is word for one and word+"s" for any other count: every noun the
// reports count (node, finding, probe, waiver, fact change) is regular.
func Plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// Count is "1 node" or "3 nodes".
func Count(n int, word string) string {
	return fmt.Sprintf("%d %s", n, Plural(n, word))
}
