package check

import (
	"regexp"
	"testing"
)

// projectJargon are words from fleet-audit's own history that mean
// nothing to a user: "the seed incident" is the incident in this
// project's founding document, which no reader of a report has seen.
var projectJargon = regexp.MustCompile(`(?i)\bseed`)

// TestBuiltinChecksSpeakPlainly: no built-in check's text a user reads
// (in the terminal, every report, the catalogue and `fleet-audit probes`)
// uses project jargon; say what is meant instead ("for example UFW left
// active on some nodes").
func TestBuiltinChecksSpeakPlainly(t *testing.T) {
	checks, err := BuiltinChecks()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		for _, field := range []struct{ name, text string }{
			{"id", c.ID},
			{"title", c.Title},
			{"why", c.Why},
			{"summary", c.Summary},
			{"remediation", c.Remediation},
		} {
			if m := projectJargon.FindStringIndex(field.text); m != nil {
				from, to := max(0, m[0]-40), min(len(field.text), m[1]+40)
				t.Errorf("%s (%s): %s says %q: …%s…", c.ID, c.Source, field.name, field.text[m[0]:m[1]], field.text[from:to])
			}
		}
	}
}
