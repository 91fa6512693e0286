package report

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/fleet-audit/fleet-audit/result"
)

// foldNodesAbove is the largest fleet shown node by node: as many columns
// as fit a wide screen or a landscape sheet. A larger fleet would be
// thousands of columns and sections of the same values, so its HTML
// matrix and Markdown node list fold alike nodes (alikeNodes).
const foldNodesAbove = 30

// nodeSetMax bounds a folded group's node set where it heads a column or
// a row; the whole set is given beside it (a title, a details block).
const nodeSetMax = 48

// alikeGroups are the report's nodes in groups, grouped by role set first
// (in the order the roles first appear) so that a worker that differs from
// the other workers stands next to them.
type alikeGroups struct {
	// Folded: a group can hold more than one node; else each node is
	// a group of its own.
	Folded bool
	// Roles are the role sets with how many groups each has, in order.
	Roles []roleSpan
	// Groups are the groups' nodes (indexes into Report.Nodes), each in
	// the report's order.
	Groups [][]int
	// GroupOf is each node's group.
	GroupOf []int
	// Keys are every fact any node reported, sorted.
	Keys []string
}

type roleSpan struct {
	Name   string
	Groups int
}

// alikeNodes groups the nodes of a fleet of more than foldNodesAbove nodes
// by role set, status and the value (or absence) of every fact that drifts
// (odd: the outliers, by fact and node): nodes that differ in nothing the
// fleet compares are one group, named by its node set (worker-[001-950]),
// and a report about 10,000 nodes shows the differences and not 10,000
// columns. A fact that is never compared (a volatile one, like the load)
// can still differ inside a group: groupValue tells.
func alikeNodes(r *result.Report, odd map[string]map[string][]string) alikeGroups {
	g := alikeGroups{Folded: len(r.Nodes) > foldNodesAbove, GroupOf: make([]int, len(r.Nodes))}
	role := func(i int) string { return cmp.Or(strings.Join(r.Nodes[i].Roles, "+"), "no role") }
	all := make([]int, len(r.Nodes))
	facts := map[string]bool{}
	for i, n := range r.Nodes {
		all[i] = i
		for k := range n.Facts {
			facts[k] = true
		}
	}
	g.Keys = slices.Sorted(maps.Keys(facts))
	var drifted []string
	for _, k := range g.Keys {
		if len(odd[k]) > 0 {
			drifted = append(drifted, k)
		}
	}
	key := func(i int) string {
		if g.Folded {
			return alikeKey(r.Nodes[i], drifted)
		}
		return strconv.Itoa(i)
	}
	for _, members := range inFirstSeenGroups(all, role) {
		first := len(g.Groups)
		for _, alike := range inFirstSeenGroups(members, key) {
			for _, i := range alike {
				g.GroupOf[i] = len(g.Groups)
			}
			g.Groups = append(g.Groups, alike)
		}
		g.Roles = append(g.Roles, roleSpan{Name: role(members[0]), Groups: len(g.Groups) - first})
	}
	return g
}

// alikeKey is what nodes must share to be one group: status and, when they
// have facts, the value (or its absence) of every fact that drifts.
func alikeKey(n result.Node, drifted []string) string {
	var b strings.Builder
	b.WriteString(n.Status.String())
	if len(n.Facts) == 0 {
		return b.String()
	}
	for _, k := range drifted {
		b.WriteByte(0)
		if v, ok := n.Facts[k]; ok {
			b.WriteString("=" + v)
		}
	}
	return b.String()
}

// nodeSet is group j's node set in nodeset notation (compressNodes).
func (g alikeGroups) nodeSet(nodes []result.Node, j int) string {
	names := make([]string, len(g.Groups[j]))
	for x, i := range g.Groups[j] {
		names[x] = nodes[i].Name
	}
	return compressNodes(names)
}

// groupValue is fact k on the nodes of group j: the value they share (ok
// false: none of them reported it), or values > 1, how many different
// values (absence counted as one) they have.
func (g alikeGroups) groupValue(nodes []result.Node, j int, k string) (val string, ok bool, values int) {
	members := g.Groups[j]
	val, ok = nodes[members[0]].Facts[k]
	for _, i := range members[1:] {
		if v, o := nodes[i].Facts[k]; v != val || o != ok {
			seen := map[string]bool{}
			for _, i := range members {
				v, o := nodes[i].Facts[k]
				seen[strconv.FormatBool(o)+v] = true
			}
			return "", false, len(seen)
		}
	}
	return val, ok, 1
}

// notOKGroup is nodes that are not ok for the same reason: one status and
// one message, the cause with its fix.
type notOKGroup struct {
	Status  result.NodeStatus
	Message string
	Nodes   []string
	// Errors are each node's own error text, in the order of Nodes.
	Errors []string
	// Text is the message and the error the nodes share, said once
	// (result.ErrorText): the whole explanation of a group of one, the
	// message alone when the nodes' errors differ (Same is then false).
	Text string
	Same bool
}

// notOKGroups groups the nodes whose status is not ok by cause, status and
// message (the error where there is none), in the order they first
// appear: a thousand unreachable nodes are one row, not a thousand, and
// forty unknown host keys one instruction.
func notOKGroups(nodes []result.Node) []notOKGroup {
	var notOK []*result.Node
	for i := range nodes {
		if nodes[i].Status != result.StatusOK {
			notOK = append(notOK, &nodes[i])
		}
	}
	reason := func(n *result.Node) string { return cmp.Or(n.Message, n.Error) }
	var out []notOKGroup
	for _, g := range inFirstSeenGroups(notOK, func(n *result.Node) [2]string { return [2]string{n.Status.String(), reason(n)} }) {
		ng := notOKGroup{Status: g[0].Status, Message: reason(g[0]), Same: true}
		shared := ownError(g[0])
		for _, n := range g {
			ng.Nodes = append(ng.Nodes, n.Name)
			ng.Errors = append(ng.Errors, n.Error)
			ng.Same = ng.Same && ownError(n) == shared
		}
		switch {
		case len(g) == 1:
			ng.Text = result.ErrorText(g[0].Message, g[0].Error)
		case ng.Same:
			ng.Text = result.ErrorText(g[0].Message, shared)
		default:
			ng.Text = ng.Message
		}
		out = append(out, ng)
	}
	return out
}

// ownError is a node's error without the link that names the node's own
// endpoint ("ssh NAME (user@address:port)", as the SSH dialer begins its
// errors), so that nodes failing alike (one broken ProxyCommand) share
// one text.
func ownError(n *result.Node) string {
	head, rest, ok := strings.Cut(n.Error, ": ")
	if ok && strings.HasPrefix(head, "ssh "+n.Name+" ") {
		return rest
	}
	return n.Error
}

// inFirstSeenGroups splits items into the groups of items with an equal
// key, each group and its items in the order they first appear: the one
// grouping behind the report's folded lists of nodes.
func inFirstSeenGroups[T any, K comparable](items []T, key func(T) K) [][]T {
	var groups [][]T
	at := map[K]int{}
	for _, it := range items {
		k := key(it)
		i, ok := at[k]
		if !ok {
			i = len(groups)
			at[k] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], it)
	}
	return groups
}
