package audit

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/fleet-audit/fleet-audit/inventory"
)

// maxClusterAttempts bounds how many server nodes are tried for the cluster
// probes before giving up; each try costs up to a node timeout.
const maxClusterAttempts = 3

// serverCandidates lists the audited nodes that run rke2-server, in
// inventory order; nodes whose role only says so come after them.
func serverCandidates(nodes []Node) []int {
	var byFact, byRole []int
	for i, n := range nodes {
		if !n.Status.HasFacts() {
			continue
		}
		switch {
		case n.Facts["rke2.server.active"] == "active":
			byFact = append(byFact, i)
		case n.Facts["rke2.server.active"] == "" && hasServerRole(n.Roles):
			byRole = append(byRole, i)
		}
	}
	return append(byFact, byRole...)
}

func hasServerRole(roles []string) bool {
	for _, r := range roles {
		switch rolloutClass(r) {
		case "etcd", "control-plane":
			return true
		}
	}
	return false
}

// runCluster runs the cluster probes on the first server node that answers
// and joins their per-node facts to the inventory nodes. It never fails the
// run: when no server can be used, the Cluster says why.
func runCluster(ctx context.Context, o RunOptions, probes []Probe, nodes []Node) *Cluster {
	c := &Cluster{Status: ClusterNoServer, Facts: map[string]string{}, Probes: []ProbeRun{}, Joined: map[string]string{}}
	cands := serverCandidates(nodes)
	if len(cands) == 0 {
		c.Message = "no reachable RKE2 server node: the cluster-scoped probes (pods, readyz, RBAC) did not run"
		return c
	}
	var tried []string
	for _, i := range cands {
		if len(tried) == maxClusterAttempts || ctx.Err() != nil {
			break
		}
		h := o.Inventory.Hosts[i]
		tried = append(tried, h.Name)
		parsed, ok, why := clusterOn(ctx, o, h, probes)
		c.Node, c.Probes = h.Name, parsed.Runs
		if !ok {
			c.Status, c.Message = ClusterFailed, fmt.Sprintf("cluster probes on %s: %s", h.Name, why)
			continue
		}
		c.Status, c.Message = ClusterOK, ""
		c.Facts = parsed.Facts
		joinNodeFacts(c, parsed.NodeFacts, nodes)
		return c
	}
	if len(tried) > 1 {
		c.Message += fmt.Sprintf(" (tried %s)", strings.Join(tried, ", "))
	}
	return c
}

func clusterOn(ctx context.Context, o RunOptions, h inventory.Host, probes []Probe) (Parsed, bool, string) {
	ctx, cancel := context.WithTimeout(ctx, o.NodeTimeout)
	defer cancel()
	sess, err := o.Transport.Open(ctx, h)
	if err != nil {
		return Parsed{}, false, firstLine(err.Error())
	}
	defer sess.Close()
	parsed, _, err := execBundle(ctx, sess, probes, becomeOf(h))
	if err != nil {
		return parsed, false, firstLine(err.Error())
	}
	for _, r := range parsed.Runs {
		if r.Status != ProbeOK {
			return parsed, len(parsed.Facts) > 0, fmt.Sprintf("probe %s: %s (exit %d) %s", r.ID, r.Status, r.ExitCode, r.Stderr)
		}
	}
	if len(parsed.Facts) == 0 {
		return parsed, false, "no facts came back"
	}
	return parsed, true, ""
}

// joinNodeFacts attaches each Kubernetes node's facts to the inventory node
// it names. Kubernetes names nodes by hostname, so a node matches by its
// inventory name, its os.hostname fact, its address, or, when exactly one
// inventory name is a dash-suffix of it ("cluster-a-etcd-1" for "etcd-1"),
// by that suffix.
func joinNodeFacts(c *Cluster, perNode map[string]map[string]string, nodes []Node) {
	exact := map[string]int{}
	for i, n := range nodes {
		for _, key := range []string{n.Name, n.Facts["os.hostname"], n.Address} {
			if key != "" {
				if _, taken := exact[strings.ToLower(key)]; !taken {
					exact[strings.ToLower(key)] = i
				}
			}
		}
	}
	joined := map[int]bool{}
	k8sNames := sortedKeys(perNode)
	for _, k := range k8sNames {
		i, ok := exact[k]
		if !ok {
			if ip := perNode[k]["k8s.node.internal_ip"]; ip != "" {
				i, ok = exact[ip]
			}
		}
		if !ok {
			i, ok = suffixMatch(k, nodes)
		}
		if !ok || joined[i] {
			c.Joined[k] = ""
			continue
		}
		joined[i] = true
		c.Joined[k] = nodes[i].Name
		for key, v := range perNode[k] {
			nodes[i].Facts[key] = v
		}
		nodes[i].Facts["k8s.node.registered"] = "yes"
	}
	for i := range nodes {
		if nodes[i].Status.HasFacts() && !joined[i] {
			nodes[i].Facts["k8s.node.registered"] = "no"
		}
	}
}

func suffixMatch(k8sName string, nodes []Node) (int, bool) {
	var hits []int
	for i, n := range nodes {
		name := strings.ToLower(n.Name)
		if strings.HasSuffix(k8sName, "-"+name) || strings.HasSuffix(k8sName, "."+name) {
			hits = append(hits, i)
		}
	}
	sort.Ints(hits)
	if len(hits) == 1 {
		return hits[0], true
	}
	return 0, false
}

// UnjoinedK8sNodes lists the Kubernetes nodes the inventory does not name.
func (c *Cluster) UnjoinedK8sNodes() []string {
	var out []string
	for k, inv := range c.Joined {
		if inv == "" {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// clusterFindings reports what the cluster probes could not do or found
// outside the inventory.
func clusterFindings(c *Cluster) []Finding {
	if c == nil {
		return nil
	}
	var out []Finding
	if c.Status != ClusterOK {
		out = append(out, Finding{
			Check: "cluster.unavailable", Kind: KindCheck, Severity: SeverityInfo, Nodes: []string{},
			Title:       "cluster-scoped probes did not run",
			Summary:     c.Message + "; the node-level audit went on without the Kubernetes view (pods, readyz, RBAC).",
			Evidence:    []string{c.Message},
			Remediation: "Make sure a server node is reachable and the audit user can read /etc/rancher/rke2/rke2.yaml (become: sudo).",
		})
	}
	if extra := c.UnjoinedK8sNodes(); len(extra) > 0 {
		out = append(out, Finding{
			Check: "cluster.nodes-not-in-inventory", Kind: KindCheck, Severity: SeverityWarning, Nodes: []string{},
			Title:       "the cluster has nodes the inventory does not list",
			Summary:     fmt.Sprintf("%d Kubernetes %s not audited because no inventory host matches: %s.", len(extra), map[bool]string{true: "node is", false: "nodes are"}[len(extra) == 1], strings.Join(extra, ", ")),
			Evidence:    extra,
			Remediation: "Add these nodes to the inventory (or set their inventory name or address to match), so drift on them is seen before the upgrade.",
		})
	}
	return out
}
