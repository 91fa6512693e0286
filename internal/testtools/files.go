package testtools

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteDir is a new directory holding files (name → content), such as a
// --probes directory; the test removes it.
func WriteDir(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
