package testtools

import (
	"strings"
	"testing"
)

// YAMLBomb is a one-entry YAML list whose first key is key and whose
// aliases expand ten-fold over eight levels: 10^9 nodes from under a
// kilobyte, what internal/yamlx's alias budget must refuse.
func YAMLBomb(key string) string {
	bomb := "- " + key + ": &a0 [x, x, x, x, x, x, x, x, x, x]\n"
	for i := 1; i <= 8; i++ {
		bomb += "  k" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [" + strings.Repeat("*a"+string(rune('0'+i-1))+", ", 9) + "*a" + string(rune('0'+i-1)) + "]\n"
	}
	return bomb
}

// ErrorsNameFile fails the test unless every error joined in err (errors.Join
// trees are walked to their leaves) begins with the file name, as "name:"
// or "name ": a parser of a user's file must say which file is wrong.
func ErrorsNameFile(t testing.TB, err error, name string) {
	t.Helper()
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			ErrorsNameFile(t, e, name)
		}
		return
	}
	if !strings.HasPrefix(err.Error(), name+":") && !strings.HasPrefix(err.Error(), name+" ") {
		t.Fatalf("error does not name the file: %v", err)
	}
}
