package result

// Explanation is what `fleet-audit explain ID` says about a check or a
// finding built in Go: what it means, why it matters for an upgrade, the
// facts it reads with the commands that show each by hand, the remediation
// and the upstream references. Package audit builds it from
// the checks files, its GoFindings table and the probes' collect table;
// package report lays it out for the terminal (and every format that
// explains a finding), so the text is written once.
type Explanation struct {
	ID string `json:"id"`
	// Kind is "check" or "finding" (built in Go).
	Kind string `json:"kind"`
	// Title is a check's title; a finding built in Go has none (each one
	// it builds is titled for its nodes) and says what it is in Summary.
	Title string `json:"title,omitempty"`
	// Severity is empty for a correlation, which takes its symptom
	// check's when a fact explains it and is info otherwise.
	Severity string `json:"severity,omitempty"`
	// Area is the readiness area its findings count in (Areas): a
	// correlation's is its symptom check's; empty for the waivers' own.
	Area        Area      `json:"area,omitempty"`
	Scope       string    `json:"scope"`
	Symptom     bool      `json:"symptom,omitempty"`
	Summary     string    `json:"summary"`
	Why         string    `json:"why"`
	Facts       []FactHow `json:"facts"`
	Remediation string    `json:"remediation"`
	References  []string  `json:"references"`
	// Source is where a check is defined (file:line, "builtin" for the
	// embedded ones) or "builtin (Go)".
	Source string `json:"source"`
}

// Where the commands of a FactHow run.
const (
	// CollectOnNode: on the node the fact is about.
	CollectOnNode = "node"
	// CollectOnServer: on any RKE2 server node, through its node-local API.
	CollectOnServer = "server"
	// CollectOnWorkstation: nowhere; fleet-audit is given the value.
	CollectOnWorkstation = "workstation"
)

// FactHow is facts an explained id reads that one collect.yaml entry
// covers, and how to read them by hand.
type FactHow struct {
	Facts []string `json:"facts"`
	// Probe is the id of the probe that emits the facts; empty for a fact
	// computed in Go or given to fleet-audit.
	Probe string `json:"probe,omitempty"`
	// On is where the commands run (a CollectOn* word); empty, with no
	// commands, for a fact no entry covers (a user's own).
	On       string   `json:"on,omitempty"`
	Commands []string `json:"commands"`
}
