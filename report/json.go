package report

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/fleet-audit/fleet-audit/result"
)

var _ Formatter = (*JSON)(nil)

// JSON writes the report as the saved-run document. Its schema is the
// model's json tags and result.SchemaVersion, nothing added here, so that
// result.ReadJSON can give `fleet-audit report` back exactly what Run built.
type JSON struct{}

func (j *JSON) Format(w io.Writer, r *result.Report) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
