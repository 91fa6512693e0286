// Package audit runs one audit and analyses the fleet as a whole: Run sends
// the probe bundle (package probe) to every Target of a Fleet in parallel,
// then Analyze judges the facts with the checks (package check) and does
// what no single node can: drift (drift.go, facts whose value splits the
// fleet), correlation (correlate.go, a symptom confined to the nodes such a
// split picks out), version skew and the upgrade path (skew.go), the
// cluster view through one server (cluster.go), rollout order (rollout.go),
// waivers and the gate. BuildPlan (plan.go) turns the findings that ask for a
// change on nodes into the runbook, from the checks' plan: blocks. Diff (diff.go) compares two saved runs. Sharding
// (shard.go) splits a Fleet into the shards of run --shard K/N, and Merge
// joins their reports into the report of one run, through the same
// Analyze.
//
// It knows neither SSH nor the inventory: the caller builds the Fleet and
// wires the Transport interface to package remote. It fills in the model of
// package result and never renders it; that is package report's job.
package audit
