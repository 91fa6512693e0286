package audit

import "time"

// ApplyWaivers marks the findings that waivers accept and returns the new
// finding list. (Being built: see issue 3.)
func ApplyWaivers(r *Report, waivers []Waiver, now time.Time) []Finding {
	return r.Findings
}
