// Package result is the model of one audit and of the difference between
// two: the Report every formatter renders and `fleet-audit report` reads
// back (ReadJSON), with the words it is written in (severities, node and
// probe statuses, kinds, outcomes, exit codes) and their one spelling.
//
// It is a leaf: it knows no node, no inventory, no YAML and no check. Package
// audit builds a Report; package report renders one; both meet here.
package result
