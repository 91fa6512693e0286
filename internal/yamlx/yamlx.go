package yamlx

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// maxExpandedNodes bounds the YAML nodes a checks or waivers file may
// become once its aliases are expanded: far above any real file, far below
// what a "billion laughs" file asks for.
const maxExpandedNodes = 100000

// ExpandAliases returns a copy of n with every alias replaced by a copy of
// the node it names and no anchors left. The checks and waivers loaders
// re-encode each entry alone, for KnownFields; an alias to an anchor of
// another entry would then be an "unknown anchor", so the whole document's
// aliases are resolved first, as the inventory loader follows them on the
// one tree (inventory/parse.go, deref).
func ExpandAliases(file string, n *yaml.Node) (*yaml.Node, error) {
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

// FieldLine is the line of a mapping's field, or of the mapping itself.
func FieldLine(item *yaml.Node, field string) int {
	for i := 0; i+1 < len(item.Content); i += 2 {
		if item.Content[i].Value == field {
			return item.Content[i].Line
		}
	}
	return item.Line
}

// ErrLine and ErrText pull the "line N:" out of a yaml.v3 error so
// the caller can report the line in the user's file, not in the re-encoded
// snippet.
func ErrLine(err error) int {
	var te *yaml.TypeError
	msg := err.Error()
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	if i := strings.Index(msg, "line "); i >= 0 {
		rest := msg[i+len("line "):]
		if j := strings.IndexByte(rest, ':'); j > 0 {
			if n, err := strconv.Atoi(rest[:j]); err == nil {
				return n
			}
		}
	}
	return 1
}

func ErrText(err error) string {
	var te *yaml.TypeError
	msg := err.Error()
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = strings.Join(te.Errors, "; ")
	}
	if i := strings.Index(msg, "line "); i >= 0 {
		if j := strings.IndexByte(msg[i:], ':'); j > 0 {
			return strings.TrimSpace(msg[i+j+1:])
		}
	}
	return strings.TrimPrefix(msg, "yaml: ")
}

// List decodes a file whose document is a list (checks, waivers): the
// list with its aliases expanded, or nil for an empty file. A syntax error
// names the file and line; what names the items for "want a list of …".
func List(name string, data []byte, what string) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s:%d: %s", name, ErrLine(err), ErrText(err))
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	list, err := ExpandAliases(name, doc.Content[0])
	if err != nil {
		return nil, err
	}
	if list.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s:%d: want a list of %s", name, list.Line, what)
	}
	return list, nil
}
