// Package discover turns a Kubernetes cluster's node list into a
// fleet-audit inventory, for fleet-audit discover and run --from-cluster.
//
// The nodes are listed through the user's own kubectl, never an API client
// of ours, so every context, kubeconfig and credential plugin the user
// already has works unchanged. kubectl is run with an argv (never a shell
// string) as
//
//	kubectl [--kubeconfig=F] [--context=C] get --raw /api/v1/nodes
//
// under a deadline. --raw needs no API discovery: the one request is the
// NodeList, which this package maps to hosts (the node name, its address,
// its roles from the node-role labels) and writes as the text of a native
// inventory. Callers obtain the in-memory inventory by parsing that very
// text (Discovery.Inventory), so a file written for review and an audit
// run straight from the cluster can never differ.
//
// Everything read from the cluster is untrusted: names, addresses and roles
// are held to the inventory's own rules (a node that fails them is reported
// and left out, never written), values are written through yaml.v3, and
// comments carry them only Go-quoted, so no value can end a comment line or
// add a key.
package discover
