package archtest

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestREADMELayoutNamesEveryPackage holds the README's "Layout" paragraph
// to the module: every package is named in it (by its path, or by its last
// element in the list of its internal/ directory), and every path it names
// exists. A package added, moved or removed without the paragraph fails
// here, so the map a new engineer reads first is never stale.
func TestREADMELayoutNamesEveryPackage(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	start := strings.Index(text, "\n- Layout:")
	if start < 0 {
		t.Fatal("README.md has no \"- Layout:\" bullet")
	}
	para := text[start+1:]
	if end := strings.Index(para, "\n- "); end >= 0 {
		para = para[:end]
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(para, -1) {
		named[strings.TrimSuffix(m[1], "/")] = true
	}
	for pkg := range moduleImports(t) {
		dir, base := path.Split(pkg)
		inInternal := strings.HasSuffix(dir, "internal/")
		if !named[pkg] && !(inInternal && named[base]) {
			t.Errorf("README.md's Layout paragraph does not name the package %s", pkg)
		}
	}
	for p := range named {
		if !strings.Contains(p, "/") || strings.ContainsAny(p, " *") {
			continue // a word (a package of an internal/ list), not a path
		}
		if _, err := os.Stat(filepath.Join("..", "..", filepath.FromSlash(p))); err != nil {
			t.Errorf("README.md's Layout paragraph names %s, which does not exist", p)
		}
	}
}
