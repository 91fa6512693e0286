package testtools

import (
	"fmt"
	"strings"
)

// FirstDiff shows the first line where want and got part, enough for a
// golden or fixture test's failure to say what moved.
func FirstDiff(want, got []byte) string {
	wl, gl := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\nwant: %q\ngot:  %q", i+1, w, g)
		}
	}
	return "(only trailing bytes differ)"
}
