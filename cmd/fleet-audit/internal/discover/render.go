package discover

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/fleet-audit/fleet-audit/inventory"
)

// Source says where a node list came from, for the written file's header.
type Source struct {
	// Context is the kubeconfig context, "" when kubectl named none.
	Context string
	// Kubeconfig is --kubeconfig, "" for kubectl's own default.
	Kubeconfig string
	// Listed is when the nodes were listed.
	Listed time.Time
	// Nodes is how many nodes the cluster listed.
	Nodes int
}

// Render writes m as a native fleet-audit inventory: a header comment
// saying where it came from and what to review, then one group per set of
// roles. A group per role set rather than the etcd/control-plane/worker
// groups of examples/inventory.yaml: a native inventory lists a host in
// one group only, and an RKE2 server is both etcd and control-plane; with
// its roles set on the group, the reviewer also edits one place for all
// the servers (their user, their become) and one for the agents.
func Render(src Source, m Mapping) ([]byte, error) {
	var b bytes.Buffer
	for _, line := range header(src, m) {
		b.WriteString(strings.TrimRight("# "+safeComment(line), " ") + "\n")
	}
	doc := mapping(0)
	if name := inventoryName(src.Context); name != "" {
		doc.Content = append(doc.Content, str("name"), str(name))
	}
	groups := mapping(0)
	for _, g := range groupByRoles(m.Hosts) {
		roles := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, r := range g.roles {
			roles.Content = append(roles.Content, str(r))
		}
		hosts := mapping(0)
		for _, h := range g.hosts {
			v := mapping(yaml.FlowStyle)
			v.Content = append(v.Content, str("address"), str(h.Address))
			if h.AddressType != addressPreference[0] {
				// Fixed text only: a comment never carries a cluster's value.
				v.LineComment = "the node's " + h.AddressType + ": it has no usable InternalIP"
			}
			hosts.Content = append(hosts.Content, str(h.Name), v)
		}
		group := mapping(0)
		group.Content = append(group.Content, str("roles"), roles, str("hosts"), hosts)
		groups.Content = append(groups.Content, str(g.name), group)
	}
	doc.Content = append(doc.Content, str("groups"), groups)
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("writing the inventory: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("writing the inventory: %w", err)
	}
	return b.Bytes(), nil
}

func header(src Source, m Mapping) []string {
	context, kubeconfig := "kubectl's current context", "kubectl's default (KUBECONFIG, else ~/.kube/config)"
	if src.Context != "" {
		context = fmt.Sprintf("%q", src.Context)
	}
	if src.Kubeconfig != "" {
		kubeconfig = fmt.Sprintf("%q", src.Kubeconfig)
	}
	lines := []string{
		"fleet-audit inventory written by fleet-audit discover from a Kubernetes cluster's nodes.",
		"  context:    " + context,
		"  kubeconfig: " + kubeconfig,
		"  listed at:  " + src.Listed.UTC().Format(time.RFC3339),
		fmt.Sprintf("  nodes:      %d listed, %d written, %d skipped", src.Nodes, len(m.Hosts), len(m.Skipped)),
		"",
		"REVIEW BEFORE RUNNING. The cluster does not say how to log in to its nodes. Until",
		"you set user, identity_files and become, every host is reached as the user running",
		"fleet-audit, with the ssh-agent's keys and ~/.ssh/config, and without sudo, so the",
		"probes that need root read nothing. For example (docs/inventory.md has every key):",
		"",
		"defaults:",
		"  user: rancher",
		"  identity_files: [~/.ssh/id_ed25519]",
		"  become: sudo",
		"",
		"Each address is the node's InternalIP, else its ExternalIP, else its Hostname address.",
		"Roles come from the node-role.kubernetes.io/ labels (master is control-plane); a node",
		"that is neither control-plane nor etcd is a worker (an RKE2 agent carries no role",
		"label). There is one group per set of roles.",
	}
	if len(m.Skipped) > 0 {
		lines = append(lines, "", "Not written, so not audited:")
		for _, s := range m.Skipped {
			lines = append(lines, fmt.Sprintf("  node %q: %s", s.Name, s.Reason))
		}
	}
	if len(m.Notes) > 0 {
		lines = append(lines, "", "Notes:")
		for _, n := range m.Notes {
			lines = append(lines, "  "+n)
		}
	}
	return append(lines, "")
}

// safeComment keeps a comment on its line: every untrusted value in one is
// Go-quoted already, and this catches anything that is not, including the
// line breaks YAML parsers also honour (NEL, U+2028, U+2029).
func safeComment(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || unicode.IsPrint(r) {
			return r
		}
		return '?'
	}, s)
}

// inventoryName is the context as the inventory's name when the inventory
// accepts it, else the last part of a path-like one (an EKS context is the
// cluster's ARN, arn:aws:eks:REGION:ACCOUNT:cluster/NAME), else none (the
// file's name then).
func inventoryName(context string) string {
	for _, n := range []string{context, context[strings.LastIndex(context, "/")+1:]} {
		if n != "" && inventory.CheckName("inventory name", n) == nil {
			return n
		}
	}
	return ""
}

type group struct {
	name  string
	roles []string
	hosts []Host
}

// groupByRoles makes one group per role set, named by its roles: servers
// (etcd, then control-plane) first, then the rest by name.
func groupByRoles(hosts []Host) []group {
	byKey := map[string]*group{}
	var groups []*group
	for _, h := range hosts {
		key := strings.Join(h.Roles, "\x00")
		g := byKey[key]
		if g == nil {
			g = &group{name: strings.Join(h.Roles, "_"), roles: h.Roles}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.hosts = append(g.hosts, h)
	}
	rank := func(g *group) int {
		switch {
		case slices.Contains(g.roles, roleEtcd):
			return 0
		case slices.Contains(g.roles, roleControlPlane):
			return 1
		}
		return 2
	}
	slices.SortFunc(groups, func(a, b *group) int {
		if d := rank(a) - rank(b); d != 0 {
			return d
		}
		return strings.Compare(a.name, b.name)
	})
	out := make([]group, len(groups))
	used := map[string]bool{}
	for i, g := range groups {
		// Roles joined with '_' can collide ([a_b] and [a, b]) or grow
		// past a name's length; such a group gets a plain number.
		if used[g.name] || inventory.CheckName("group name", g.name) != nil {
			for n := i + 1; ; n++ {
				if g.name = fmt.Sprintf("group-%d", n); !used[g.name] {
					break
				}
			}
		}
		used[g.name] = true
		out[i] = *g
	}
	return out
}

func mapping(style yaml.Style) *yaml.Node {
	return &yaml.Node{Kind: yaml.MappingNode, Style: style}
}

// str is a string scalar: tagged !!str, yaml.v3 quotes any value that
// would otherwise read back as something else (true, 1e3, null, 0x10).
func str(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}
