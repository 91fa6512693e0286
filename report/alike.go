package report

import (
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
	var order []string
	byRole := map[string][]int{}
	facts := map[string]bool{}
	for i, n := range r.Nodes {
		role := strings.Join(n.Roles, "+")
		if role == "" {
			role = "no role"
		}
		if _, ok := byRole[role]; !ok {
			order = append(order, role)
		}
		byRole[role] = append(byRole[role], i)
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
	for _, role := range order {
		first := len(g.Groups)
		at := map[string]int{}
		for _, i := range byRole[role] {
			key := strconv.Itoa(i)
			if g.Folded {
				key = alikeKey(r.Nodes[i], drifted)
			}
			j, ok := at[key]
			if !ok {
				j = len(g.Groups)
				at[key] = j
				g.Groups = append(g.Groups, nil)
			}
			g.Groups[j] = append(g.Groups[j], i)
			g.GroupOf[i] = j
		}
		g.Roles = append(g.Roles, roleSpan{Name: role, Groups: len(g.Groups) - first})
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

// notOKGroup is nodes that are not ok for the same reason.
type notOKGroup struct {
	Status  result.NodeStatus
	Message string
	Nodes   []string
}

// notOKGroups groups the nodes whose status is not ok by status and
// message (the error where there is none), in the order they first
// appear: a thousand unreachable nodes are one row, not a thousand.
func notOKGroups(nodes []result.Node) []notOKGroup {
	var out []notOKGroup
	at := map[[2]string]int{}
	for _, n := range nodes {
		if n.Status == result.StatusOK {
			continue
		}
		msg := n.Message
		if msg == "" {
			msg = n.Error
		}
		k := [2]string{n.Status.String(), msg}
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, notOKGroup{Status: n.Status, Message: msg})
		}
		out[i].Nodes = append(out[i].Nodes, n.Name)
	}
	return out
}
