package shquote

import (
	"os/exec"
	"testing"
)

// Each word goes through the real /bin/sh and must come back byte for byte.
func TestQuoteRoundTripsThroughSh(t *testing.T) {
	for _, s := range []string{"", "plain", "it's", "'", "''", "a b", "$HOME `id` $(id) \\ \" ; | & * ?", "line\nbreak", "\r\t\x01"} {
		for name, quote := range map[string]func(string) string{"Quote": Quote, "Readable": Readable} {
			out, err := exec.Command("/bin/sh", "-c", "printf %s "+quote(s)).Output()
			if err != nil {
				t.Fatalf("%s(%q): %v", name, s, err)
			}
			if string(out) != s {
				t.Errorf("%s(%q) came back from sh as %q", name, s, out)
			}
		}
	}
}

func TestReadableLeavesPlainWords(t *testing.T) {
	for in, want := range map[string]string{
		"node-1.example.com":     "node-1.example.com",
		"/root/.ssh/known_hosts": "/root/.ssh/known_hosts",
		"a b":                    "'a b'",
		"":                       "''",
	} {
		if got := Readable(in); got != want {
			t.Errorf("Readable(%q) = %q, want %q", in, got, want)
		}
	}
}
