// Package audit owns what fleet-audit knows: the embedded probe scripts and
// their metadata, the parsing of probe output into facts, the checks that
// judge facts, the comparator that finds drift and correlates symptoms with
// causes, and the gate verdict. The model it fills in is package result's.
//
// It knows neither SSH nor the inventory: Run audits an audit.Fleet of
// Targets that the caller builds, reaching nodes through the Transport interface,
// which the caller wires to package remote. It never renders a report; that
// is package report's job.
package audit
