package discover

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/fleet-audit/fleet-audit/inventory"
)

// nodeList is the part of a NodeList that is read: the types NodeList,
// Node, NodeStatus and NodeAddress of k8s.io/api core/v1 (types.go), as
// served by GET /api/v1/nodes. Every other field is ignored.
type nodeList struct {
	Kind  string `json:"kind"`
	Items []Node `json:"items"`
}

// Node is one item of the NodeList.
type Node struct {
	Metadata struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Status struct {
		Addresses []Address `json:"addresses"`
		// NodeInfo.OperatingSystem is the kubelet's runtime.GOOS (core/v1
		// NodeSystemInfo).
		NodeInfo struct {
			OperatingSystem string `json:"operatingSystem"`
		} `json:"nodeInfo"`
	} `json:"status"`
}

// osLabel is the well-known label the kubelet sets to its runtime.GOOS
// (k8s.io/api core/v1 well_known_labels.go LabelOSStable).
const osLabel = "kubernetes.io/os"

// os is the node's operating system: nodeInfo.operatingSystem, else its
// kubernetes.io/os label, else "" (unknown).
func (n Node) os() string {
	if n.Status.NodeInfo.OperatingSystem != "" {
		return n.Status.NodeInfo.OperatingSystem
	}
	return n.Metadata.Labels[osLabel]
}

// Address is core/v1 NodeAddress: Type is one of NodeHostName
// ("Hostname"), NodeInternalIP, NodeExternalIP, NodeInternalDNS,
// NodeExternalDNS.
type Address struct {
	Type    string `json:"type"`
	Address string `json:"address"`
}

// ParseNodeList reads the JSON kubectl get --raw /api/v1/nodes prints.
func ParseNodeList(data []byte) ([]Node, error) {
	return decodeNodeList(bytes.NewReader(data))
}

// decodeNodeList is ParseNodeList reading as the list streams, one item
// at a time, so what it costs is the fields kept, not the list's size.
// Keys match as encoding/json matches them (case-insensitively).
func decodeNodeList(r io.Reader) ([]Node, error) {
	dec := json.NewDecoder(r)
	notList := func(err error) ([]Node, error) { return nil, fmt.Errorf("not a NodeList: %w", err) }
	if tok, err := dec.Token(); err != nil {
		return notList(err)
	} else if tok != json.Delim('{') {
		return notList(errors.New("not a JSON object"))
	}
	var l nodeList
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return notList(err)
		}
		key, _ := tok.(string)
		switch {
		case strings.EqualFold(key, "kind"):
			err = dec.Decode(&l.Kind)
		case strings.EqualFold(key, "items"):
			l.Items, err = decodeItems(dec)
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return notList(err)
		}
	}
	if _, err := dec.Token(); err != nil {
		return notList(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return notList(errors.New("more after the list"))
	}
	if l.Kind != "NodeList" {
		return nil, fmt.Errorf("not a NodeList: the kind is %q", l.Kind)
	}
	return l.Items, nil
}

// decodeItems reads the items array (or null) one Node at a time.
func decodeItems(dec *json.Decoder) ([]Node, error) {
	tok, err := dec.Token()
	if err != nil || tok == nil {
		return nil, err
	}
	if tok != json.Delim('[') {
		return nil, errors.New("items is not a list")
	}
	var out []Node
	for dec.More() {
		var n Node
		if err := dec.Decode(&n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	_, err = dec.Token()
	return out, err
}

// addressPreference is the order a node's addresses are tried in. The
// InternalIP is what the cluster's own components reach the node at and
// what a bastion or a machine in the cluster's network reaches too; an
// ExternalIP serves a node that has none; the Hostname, last, has to
// resolve from where fleet-audit runs.
var addressPreference = []string{"InternalIP", "ExternalIP", "Hostname"}

// The labels kubectl get nodes reads its ROLES column from (findNodeRoles
// in k8s.io/kubernetes pkg/printers/internalversion/printers.go): the
// suffix of every node-role.kubernetes.io/ key, and the value of the older
// kubernetes.io/role.
const (
	roleLabelPrefix = "node-role.kubernetes.io/"
	legacyRoleLabel = "kubernetes.io/role"
)

// The roles fleet-audit's checks compare by.
const (
	roleControlPlane = "control-plane"
	roleEtcd         = "etcd"
	roleWorker       = "worker"
)

// Host is a node as it is written to the inventory.
type Host struct {
	Name    string
	Address string
	// AddressType is the NodeAddress type the address was taken from.
	AddressType string
	// Roles are sorted and distinct.
	Roles []string
}

// Skipped is a node that is not written, and why.
type Skipped struct {
	Name   string
	Reason string
}

// Mapping is what MapNodes makes of a node list.
type Mapping struct {
	Hosts   []Host
	Skipped []Skipped
	// Notes are things about a written host the reviewer should know (an
	// address not used, a role label dropped). Untrusted values in them
	// are Go-quoted.
	Notes []string
}

// MapNodes maps nodes to hosts, sorted by name. A node whose name the
// inventory would refuse, whose name repeats, that has no usable address,
// or that is not a Linux node is skipped. A Windows node (an RKE2 Windows
// agent) is left out rather than written and marked: fleet-audit's probes
// are POSIX sh, so it could only ever end as a failed node, and a run
// judges it from the cluster view as not applicable anyway.
func MapNodes(nodes []Node) Mapping {
	var m Mapping
	seen := map[string]bool{}
	for _, n := range nodes {
		name := n.Metadata.Name
		if err := inventory.CheckName("host name", name); err != nil {
			m.Skipped = append(m.Skipped, Skipped{name, err.Error()})
			continue
		}
		if os := n.os(); os != "" && os != "linux" {
			m.Skipped = append(m.Skipped, Skipped{name, fmt.Sprintf("not a Linux node (%s=%q): not audited, the probes are POSIX sh run over SSH", osLabel, os)})
			continue
		}
		if seen[name] {
			m.Skipped = append(m.Skipped, Skipped{name, "the name is listed twice"})
			continue
		}
		seen[name] = true
		h := Host{Name: name}
		var notes []string
		h.Address, h.AddressType, notes = address(n.Status.Addresses)
		for _, note := range notes {
			m.Notes = append(m.Notes, fmt.Sprintf("node %q: %s", name, note))
		}
		if h.Address == "" {
			m.Skipped = append(m.Skipped, Skipped{name, "no usable InternalIP, ExternalIP or Hostname address"})
			continue
		}
		h.Roles, notes = roles(n.Metadata.Labels)
		for _, note := range notes {
			m.Notes = append(m.Notes, fmt.Sprintf("node %q: %s", name, note))
		}
		m.Hosts = append(m.Hosts, h)
	}
	slices.SortFunc(m.Hosts, func(a, b Host) int { return strings.Compare(a.Name, b.Name) })
	return m
}

// address is the first valid address in addressPreference order (the
// first of its type: kubelet lists a dual-stack node's primary family
// first), with a note for each invalid one passed over.
func address(addrs []Address) (addr, typ string, notes []string) {
	for _, t := range addressPreference {
		for _, a := range addrs {
			if a.Type != t {
				continue
			}
			if err := inventory.CheckAddress(a.Address); err != nil {
				notes = append(notes, fmt.Sprintf("%s not used: %v", t, err))
				continue
			}
			return a.Address, t, notes
		}
	}
	return "", "", notes
}

// roles maps a node's role labels to fleet-audit roles: control-plane and
// master (the older name) are control-plane, etcd is etcd, worker is
// worker; any other role name is kept as a role of its own when the
// inventory accepts it. An RKE2 server carries control-plane, etcd and
// master (k3s, which RKE2 embeds, sets them on its servers' nodes:
// ControlPlaneRoleLabelKey, MasterRoleLabelKey and ETCDRoleLabelKey in k3s
// pkg/server/server.go, pkg/util in later releases); an RKE2 agent carries
// none (kubectl shows <none>) unless Rancher or an operator added worker,
// so a node that is neither control-plane nor etcd is a worker.
func roles(labels map[string]string) ([]string, []string) {
	var names, notes []string
	for k, v := range labels {
		switch {
		case strings.HasPrefix(k, roleLabelPrefix) && k != roleLabelPrefix:
			names = append(names, strings.TrimPrefix(k, roleLabelPrefix))
		case k == legacyRoleLabel && v != "":
			names = append(names, v)
		}
	}
	var out []string
	for _, r := range names {
		switch r {
		case "master", roleControlPlane:
			out = append(out, roleControlPlane)
		case roleEtcd, roleWorker:
			out = append(out, r)
		default:
			if err := inventory.CheckRole(r); err != nil {
				notes = append(notes, fmt.Sprintf("role label dropped: %v", err))
				continue
			}
			out = append(out, r)
		}
	}
	if !slices.Contains(out, roleControlPlane) && !slices.Contains(out, roleEtcd) {
		out = append(out, roleWorker)
	}
	slices.Sort(out)
	slices.Sort(notes)
	return slices.Compact(out), notes
}
