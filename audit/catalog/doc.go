// Package catalog is the catalogue of what fleet-audit can probe and judge,
// known before any node is contacted: the probes and checks embedded in the
// binary and a --probes directory's (Load), the findings and facts built in
// Go (builtin.go), and the questions asked of their ids: what an id means
// (Explain), which ids --only/--skip and a waiver may name, and a waivers
// file read against them (ParseWaivers).
//
// It reads the probes (package probe) and checks (package check) and never
// the run that uses them: package audit judges with a Catalog's rules, and
// a command loads one Catalog and hands its parts on.
package catalog
