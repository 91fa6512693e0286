package audit

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// maxExpandedNodes bounds the YAML nodes a checks or waivers file may
// become once its aliases are expanded: far above any real file, far below
// what a "billion laughs" file asks for.
const maxExpandedNodes = 100000

// expandAliases returns a copy of n with every alias replaced by a copy of
// the node it names and no anchors left. The checks and waivers loaders
// re-encode each entry alone, for KnownFields; an alias to an anchor of
// another entry would then be an "unknown anchor", so the whole document's
// aliases are resolved first, as the inventory loader follows them on the
// one tree (inventory/parse.go, deref).
func expandAliases(file string, n *yaml.Node) (*yaml.Node, error) {
	budget := maxExpandedNodes
	return expand(file, n, &budget, 0)
}

func expand(file string, n *yaml.Node, budget *int, depth int) (*yaml.Node, error) {
	// yaml.v3 rejects an anchor that contains itself; the depth bound only
	// guards against a malformed tree.
	if depth > 1000 {
		return nil, fmt.Errorf("%s:%d: YAML nested too deep", file, n.Line)
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return nil, fmt.Errorf("%s:%d: unknown anchor '%s' referenced", file, n.Line, n.Value)
		}
		return expand(file, n.Alias, budget, depth+1)
	}
	*budget--
	if *budget < 0 {
		return nil, fmt.Errorf("%s:%d: YAML aliases expand to more than %d nodes; write the entries out", file, n.Line, maxExpandedNodes)
	}
	c := *n
	c.Anchor = ""
	c.Content = nil
	for _, child := range n.Content {
		e, err := expand(file, child, budget, depth+1)
		if err != nil {
			return nil, err
		}
		c.Content = append(c.Content, e)
	}
	return &c, nil
}
