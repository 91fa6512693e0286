package catalog

import (
	"testing"
)

// builtin is the embedded catalogue, which every test here may read but
// none may change.
func builtin(t *testing.T) *Catalog {
	t.Helper()
	c, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	return c
}
