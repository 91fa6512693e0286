package probe

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzParseProbe feeds probe scripts (an --probes directory is untrusted
// text) to the header parser: it never panics, every error names the
// file, an accepted probe keeps its script byte for byte and has an id,
// and parsing is a function of the text alone.
func FuzzParseProbe(f *testing.F) {
	paths, err := filepath.Glob("probes/*.sh")
	if err != nil || len(paths) == 0 {
		f.Fatalf("no seed probes: %v", err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	f.Add("# id: x\n# facts: a, b\n")
	f.Add("#id:\n#\x00")
	const name = "fuzz.sh"
	f.Fuzz(func(t *testing.T, text string) {
		p, err := ParseProbe(name, text)
		if err != nil {
			if !strings.HasPrefix(err.Error(), name+":") && !strings.HasPrefix(err.Error(), name+" ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if p.ID == "" || p.Script != text || p.Source != name {
			t.Fatalf("accepted probe id %q, source %q, script kept %v", p.ID, p.Source, p.Script == text)
		}
		again, err := ParseProbe(name, text)
		if err != nil || !reflect.DeepEqual(p, again) {
			t.Fatalf("parsed twice: %+v then %+v, %v", p, again, err)
		}
	})
}
