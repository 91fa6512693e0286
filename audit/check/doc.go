// Package check holds the checks as data (checks/*.yaml, embedded, and the
// same format for a user's own), the judgement of one node's facts against
// them, the median and uniform checks that compare a node with its peers,
// and the operator's --only/--skip selection. A check's plan: block (plan.go)
// is how to apply its fix on one node and know it worked, for the runbook;
// fleet-audit only writes it, never runs it.
//
// It reads facts by name and knows nothing of how they were collected
// (package probe) or of the run that collects them (package audit).
package check
