package result

// DiffSchemaVersion is the version of the JSON document `fleet-audit diff
// --json` writes; bumped on every breaking change, like SchemaVersion.
const DiffSchemaVersion = 1

// Fact change kinds.
const (
	FactChanged = "changed"
	FactAdded   = "added"
	FactRemoved = "removed"
)

// Diff is what changed between two saved runs of the same fleet: "audit
// before, audit after the upgrade", or the drift that crept in since the
// last audit. It compares the judgements the runs made on their day; it
// never re-judges either run.
type Diff struct {
	SchemaVersion int            `json:"schema_version"`
	Before        DiffRun        `json:"before"`
	After         DiffRun        `json:"after"`
	NodesAdded    []string       `json:"nodes_added"`
	NodesRemoved  []string       `json:"nodes_removed"`
	StatusChanges []StatusChange `json:"status_changes"`
	// FactChanges group identical changes across nodes, like clush -b: an
	// upgrade that moved rke2.version on every node is one entry.
	FactChanges []FactChange `json:"fact_changes"`
	// NewFindings are (check, node) pairs active in after that were not
	// active in before, or active at a lower severity; ResolvedFindings the
	// reverse. A waived finding is not active. Nodes not audited in a run
	// contribute nothing to either list: what was not looked at neither
	// appeared nor went away.
	NewFindings      []DiffFinding `json:"new_findings"`
	ResolvedFindings []DiffFinding `json:"resolved_findings"`
	// VolatileIncluded is set when volatile facts (counters, load) were
	// compared too.
	VolatileIncluded bool `json:"volatile_included"`
	Gate             Gate `json:"gate"`
	// Warnings say what makes the comparison less telling: runs of two
	// different inventories, and each run's own warnings (host keys not
	// verified...), prefixed "before: " or "after: ".
	Warnings []string `json:"warnings,omitempty"`
}

// DiffRun identifies one of the two runs.
type DiffRun struct {
	Source      string `json:"source"`
	Inventory   string `json:"inventory"`
	StartedAt   string `json:"started_at"`
	ToolVersion string `json:"tool_version"`
	Gate        Gate   `json:"gate"`
}

// StatusChange is a node audited in both runs whose status differs.
type StatusChange struct {
	Node    string     `json:"node"`
	Before  NodeStatus `json:"before"`
	After   NodeStatus `json:"after"`
	Message string     `json:"message,omitempty"`
}

// FactChange is one fact that moved from Before to After on Nodes.
type FactChange struct {
	Fact   string   `json:"fact"`
	Change string   `json:"change"`
	Before string   `json:"before"`
	After  string   `json:"after"`
	Nodes  []string `json:"nodes"`
}

// DiffFinding is a finding that appeared or went away on Nodes.
type DiffFinding struct {
	Check    string   `json:"check"`
	Title    string   `json:"title"`
	Severity Severity `json:"severity"`
	// Was is, for a new finding that escalated, its severity before; Now
	// is, for a resolved finding that only de-escalated, its severity
	// after. Both are unknown (omitted) when the finding was or is absent.
	Was     Severity `json:"was,omitempty"`
	Now     Severity `json:"now,omitempty"`
	Nodes   []string `json:"nodes"`
	Summary string   `json:"summary"`
}
