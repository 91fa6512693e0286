package result

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ReadJSON reads a document written by report.JSON (the saved run). It refuses a document whose
// schema_version is missing or not SchemaVersion before decoding the
// rest, so an old or future file fails with the version mismatch rather
// than with a confusing field error, or worse, decodes with fields that
// silently mean something else. Unknown fields are accepted: adding a field
// is not a breaking change and does not bump the version.
func ReadJSON(r io.Reader) (*Report, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read report: %w", err)
	}
	var head struct {
		SchemaVersion *int `json:"schema_version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("read report: not a fleet-audit JSON report: %w", err)
	}
	if head.SchemaVersion == nil {
		return nil, errors.New("read report: not a fleet-audit JSON report: no schema_version")
	}
	if v := *head.SchemaVersion; v != SchemaVersion {
		return nil, fmt.Errorf("read report: schema_version %d is not supported: this fleet-audit reads schema_version %d; use the fleet-audit release that wrote the file", v, SchemaVersion)
	}
	var rep Report
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, fmt.Errorf("read report: %w", err)
	}
	return &rep, nil
}
