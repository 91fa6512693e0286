package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/fleet-audit/fleet-audit/result"
)

var _ Formatter = (*JSON)(nil)

// JSON writes the report as the saved-run document. Its schema is the
// model's json tags and result.SchemaVersion, nothing added here, so that
// result.ReadJSON can give `fleet-audit report` back exactly what Run built.
//
// The nodes and the check results, which grow with the fleet, are encoded
// one at a time into the document json.MarshalIndent makes of the rest, so
// the bytes are MarshalIndent's: encoding a 10,000-node report in one piece
// held a 200 MB document, its compact form and their copies at once, and
// was most of the run's peak memory.
type JSON struct{}

func (j *JSON) Format(w io.Writer, r *result.Report) error {
	rest := *r
	type array struct {
		key  string
		n    int
		elem func(i int) any
	}
	// In the document's order.
	var arrays []array
	if len(r.Nodes) > 0 {
		rest.Nodes = []result.Node{}
		arrays = append(arrays, array{"nodes", len(r.Nodes), func(i int) any { return &r.Nodes[i] }})
	}
	if len(r.Checks) > 0 {
		rest.Checks = []result.CheckResult{}
		arrays = append(arrays, array{"checks", len(r.Checks), func(i int) any { return &r.Checks[i] }})
	}
	doc, err := json.MarshalIndent(&rest, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	for _, a := range arrays {
		// A top-level key is the only text at the start of a line after
		// two spaces: a newline inside a string is written as \n.
		head := "\n  \"" + a.key + "\": ["
		before, after, ok := bytes.Cut(doc, []byte(head+"]"))
		if !ok {
			return fmt.Errorf("encode report: no empty %s in the document", a.key) // a bug here, not input
		}
		bw.Write(before)
		bw.WriteString(head)
		for i := 0; i < a.n; i++ {
			e, err := json.MarshalIndent(a.elem(i), "    ", "  ")
			if err != nil {
				return fmt.Errorf("encode report: %s[%d]: %w", a.key, i, err)
			}
			if i > 0 {
				bw.WriteByte(',')
			}
			bw.WriteString("\n    ")
			bw.Write(e)
		}
		bw.WriteString("\n  ]")
		doc = after
	}
	bw.Write(doc)
	bw.WriteByte('\n')
	return bw.Flush()
}
