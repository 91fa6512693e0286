package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// writeFileAtomic writes through a temporary file in the same directory and
// renames it into place, so a reader (a CI artifact upload, a browser) never
// sees half a report, and a failed render leaves the old file alone.
func writeFileAtomic(path string, render func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".fleet-audit-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := render(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// checkOutputDir refuses an output path whose directory does not exist
// before anything is read or contacted.
func checkOutputDir(flag, path string) error {
	if st, err := os.Stat(filepath.Dir(path)); err != nil || !st.IsDir() {
		return &usageError{fmt.Errorf("--%s %s: directory %s does not exist", flag, path, filepath.Dir(path))}
	}
	return nil
}
