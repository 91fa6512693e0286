package audit

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/fleet-audit/fleet-audit/audit/catalog"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/result"
)

// maxClusterAttempts bounds how many server nodes are tried for the cluster
// probes before giving up; each try costs up to a node timeout.
const maxClusterAttempts = 3

// serverCandidates lists the audited nodes that run rke2-server, in
// inventory order; nodes whose role only says so come after them.
func serverCandidates(nodes []result.Node) []string {
	var byFact, byRole []string
	for _, n := range nodes {
		if !n.Status.HasFacts() {
			continue
		}
		switch {
		case n.Facts["rke2.server.active"] == "active":
			byFact = append(byFact, n.Name)
		case n.Facts["rke2.server.active"] == "" && hasServerRole(n.Roles):
			byRole = append(byRole, n.Name)
		}
	}
	return append(byFact, byRole...)
}

// runCluster asks the server nodes in turn, never past the run's context,
// for the cluster view (askServers), and joins the per-node facts of the
// server that answered to the inventory nodes. A shard keeps those facts
// as they came (Cluster.NodeFacts): its own nodes are not all the nodes
// they describe, and merge joins them again to every shard's.
func runCluster(ctx context.Context, o RunOptions, probes []probe.Probe, nodes []result.Node) *result.Cluster {
	targets := map[string]Target{}
	for _, t := range o.Fleet.Targets {
		targets[t.Name] = t
	}
	b := newBundle(probes)
	c, perNode := askServers(serverCandidates(nodes), func(name string) (clusterTry, bool) {
		if ctx.Err() != nil {
			return clusterTry{}, false
		}
		parsed, why := clusterOn(ctx, o, targets[name], b)
		// Before it is joined into the Message.
		return clusterTry{why: probe.RedactText(why), facts: parsed.Facts, runs: parsed.Runs, nodeFacts: parsed.NodeFacts}, true
	})
	if c.Status == result.ClusterOK {
		joinNodeFacts(c, perNode, nodes)
		if o.Shard != nil && len(perNode) > 0 {
			c.NodeFacts = perNode
		}
	}
	return c
}

// clusterTry is what asking one server for the cluster view gave.
type clusterTry struct {
	// why is "" when the server's node-local API answered, else why not.
	why       string
	facts     map[string]string
	runs      []result.ProbeRun
	nodeFacts map[string]map[string]string
}

// askServers asks the candidate servers (serverCandidates, in its order)
// in turn, at most maxClusterAttempts, for the cluster view, and returns
// it with the per-node facts of the server that answered. ask false means
// the run ended before that server was asked. A server that gives facts
// but no view (kubeconfig missing, API unreachable) is a failed attempt
// like one that cannot be reached: each server has its own API server, so
// the next may answer. It never fails the run: the Cluster says which
// server answered, which did not and why.
//
// A run asks the servers over SSH; merge asks the shards' records of the
// same servers, so that the view it keeps is the one a single run over
// all the shards' nodes would have had: the same candidates in the same
// order, stopped at the same server.
func askServers(cands []string, ask func(name string) (clusterTry, bool)) (*result.Cluster, map[string]map[string]string) {
	c := &result.Cluster{Status: result.ClusterNoServer, Facts: map[string]string{}, Probes: []result.ProbeRun{}, Joined: map[string]string{}}
	if len(cands) == 0 {
		c.Message = "no reachable RKE2 server node: the cluster-scoped probes (pods, nodes, RBAC) did not run"
		return c, nil
	}
	var failed []string
	kept, ended := false, false
	for _, name := range cands {
		if len(c.Attempts) == maxClusterAttempts {
			break
		}
		try, asked := ask(name)
		if !asked {
			ended = true
			break
		}
		if try.why == "" {
			c.Attempts = append(c.Attempts, result.ClusterAttempt{Node: name, Outcome: result.ClusterOK})
			c.Node, c.Status, c.Probes, c.Facts, c.Message = name, result.ClusterOK, try.runs, try.facts, ""
			if len(failed) > 0 {
				c.Message = fmt.Sprintf("cluster view from %s; %s", name, strings.Join(failed, "; "))
			}
			return c, try.nodeFacts
		}
		c.Attempts = append(c.Attempts, result.ClusterAttempt{Node: name, Outcome: result.ClusterFailed, Reason: try.why})
		failed = append(failed, name+": "+try.why)
		// When no server answers, the first one's facts (cluster.api=unreachable...)
		// are still what the cluster checks judge.
		if !kept && len(try.facts) > 0 {
			kept = true
			c.Node, c.Probes, c.Facts = name, try.runs, try.facts
		}
	}
	c.Status = result.ClusterFailed
	if len(c.Attempts) == 0 {
		c.Message = "the run ended before any server was asked for the cluster view"
		return c, nil
	}
	c.Message = "no server answered: " + strings.Join(failed, "; ")
	if rest := len(cands) - len(c.Attempts); rest > 0 {
		if ended {
			c.Message += fmt.Sprintf(" (the run ended before the other %d asked)", rest)
		} else {
			c.Message += fmt.Sprintf(" (%d more not asked: at most %d servers are)", rest, maxClusterAttempts)
		}
	}
	return c, nil
}

// clusterOn runs b, the cluster probes, on one server. why is "" when that
// server's node-local API answered, else what went wrong there.
func clusterOn(ctx context.Context, o RunOptions, h Target, b bundle) (probe.Parsed, string) {
	ctx, cancel := context.WithTimeout(ctx, o.NodeTimeout)
	defer cancel()
	sess, err := o.Transport.Open(ctx, h)
	if err != nil {
		return probe.Parsed{}, firstLine(err.Error())
	}
	defer sess.Close()
	parsed, _, err := execBundle(ctx, sess, b, h.Become)
	if err != nil {
		return parsed, firstLine(err.Error())
	}
	if len(parsed.Facts) == 0 {
		if why := unfinished(parsed.Runs); why != "" {
			return parsed, why
		}
		return parsed, "no facts came back"
	}
	if why := apiUnanswered(parsed.Facts); why != "" {
		return parsed, why
	}
	// The API answered, but a probe that did not finish printed only the
	// part of the view it reached: what it never printed would read as
	// "nothing there" (no pod crash-looping, no node NotReady), so the
	// view is no view, and the next server may give a whole one.
	return parsed, unfinished(parsed.Runs)
}

// unfinished says which cluster probe did not finish ok and how ("" when
// all did): killed by its watchdog, exited non-zero, or its end marker
// never came.
func unfinished(runs []result.ProbeRun) string {
	for _, r := range runs {
		switch r.Status {
		case result.ProbeOK:
		case result.ProbeTruncated, result.ProbeMissing:
			return strings.TrimSpace(fmt.Sprintf("probe %s: %s (its end marker never came) %s", r.ID, r.Status, firstLine(r.Stderr)))
		default:
			return strings.TrimSpace(fmt.Sprintf("probe %s: %s (exit %d) %s", r.ID, r.Status, r.ExitCode, firstLine(r.Stderr)))
		}
	}
	return ""
}

// apiErrorText reads the probe's cluster.api.error word.
var apiErrorText = map[string]string{
	"connection-refused": "connection refused",
	"timeout":            "timed out",
	"no-route":           "no route to host",
	"tls":                "TLS or certificate error",
	"unauthorized":       "Unauthorized",
	"forbidden":          "Forbidden",
}

// apiUnanswered says why the cluster facts of one server are no view of
// the cluster ("" when they are): RKE2's kubectl or kubeconfig unusable
// there, its API server not answering, or every kubectl call failing.
func apiUnanswered(f map[string]string) string {
	switch k := f["cluster.kubectl"]; k {
	case "ok":
	case "absent":
		return "RKE2's kubectl is not installed (/var/lib/rancher/rke2/bin/kubectl)"
	case "no-kubeconfig":
		return "no kubeconfig (/etc/rancher/rke2/rke2.yaml)"
	case "kubeconfig-unreadable":
		return "/etc/rancher/rke2/rke2.yaml unreadable (the cluster probe needs become: sudo)"
	case "":
		return "the probe ended before it reached kubectl"
	default:
		return "kubectl not usable (cluster.kubectl=" + k + ")"
	}
	api := f["cluster.api"]
	why := func(s string) string {
		if t := apiErrorText[f["cluster.api.error"]]; t != "" {
			return s + " (" + t + ")"
		}
		return s
	}
	switch {
	case api == "ok":
		return ""
	case api == "":
		return "the probe ended before the API answered"
	case api == "unreachable":
		return why("API unreachable")
	case f["cluster.nodes.count"] != "error" || f["cluster.kubeproxy.pods"] != "error":
		return "" // readyz failed, but nodes or pods were read: a partial view is a view
	case api == "unauthorized":
		return why("API refused the kubeconfig's credentials")
	default:
		return "every kubectl call failed"
	}
}

// joinNodeFacts attaches each Kubernetes node's facts to the inventory node
// it names. Kubernetes names nodes by hostname, so a node matches, in strict
// priority, by inventory name, by address (its name or InternalIP), by the
// os.hostname fact, or, when exactly one inventory name is a dash-suffix of
// it ("cluster-a-etcd-1" for "etcd-1"), by that suffix. Every Kubernetes
// node is first matched at the highest priority, then what is left at the
// next, so os.hostname, which the node itself reports, never takes a name
// the inventory gives another host. Two hosts matching one Kubernetes node
// at the same priority (or two Kubernetes nodes one host) is ambiguous: the
// facts go to neither and Cluster.Ambiguous names them, unless the
// inventory name settles the tie (namesK8sNode), as it outranks what a
// node says of itself.
func joinNodeFacts(c *result.Cluster, perNode map[string]map[string]string, nodes []result.Node) {
	lower := strings.ToLower
	// Each tier's candidates are looked up in an index of the nodes by
	// the key that tier compares, built once: scanning every node for
	// every Kubernetes node took 11 s at 10,000 nodes.
	index := func(key func(n result.Node) string) map[string][]int {
		out := map[string][]int{}
		for i, n := range nodes {
			if k := key(n); k != "" {
				out[k] = append(out[k], i)
			}
		}
		return out
	}
	byName := index(func(n result.Node) string { return lower(n.Name) })
	byAddress := index(func(n result.Node) string { return lower(n.Address) })
	byHostname := index(func(n result.Node) string { return lower(n.Facts["os.hostname"]) })
	tiers := []func(k string) []int{
		func(k string) []int { return byName[k] },
		func(k string) []int {
			ip := lower(perNode[k]["k8s.node.internal_ip"])
			if ip == "" || ip == k {
				return byAddress[k]
			}
			return mergeSorted(byAddress[k], byAddress[ip])
		},
		func(k string) []int { return byHostname[k] },
	}
	k8sNames := slices.Sorted(maps.Keys(perNode))
	match := map[string]int{}
	taken := map[int]bool{}
	ambiguous := map[string][]string{}
	settled := func(k string) bool {
		_, m := match[k]
		_, a := ambiguous[k]
		return m || a
	}
	assign := func(claims map[string][]int) {
		// A node's reported hostname and its kubelet's InternalIP are
		// both said by the node itself; the inventory name is the
		// operator's. So a tie at the address or hostname tier that the
		// inventory name settles (exactly one claimant whose name is the
		// Kubernetes node's dash or dot suffix) is no tie: otherwise one
		// host repeating another's hostname unjoins the other's facts.
		for k, is := range claims {
			if len(is) > 1 {
				if named := slices.DeleteFunc(slices.Clone(is), func(i int) bool { return !namesK8sNode(nodes[i].Name, k) }); len(named) == 1 {
					claims[k] = named
				}
			}
		}
		byNode := map[int][]string{}
		for k, is := range claims {
			if len(is) == 1 {
				byNode[is[0]] = append(byNode[is[0]], k)
			}
		}
		for i, ks := range byNode {
			if len(ks) < 2 {
				continue
			}
			named := slices.DeleteFunc(slices.Clone(ks), func(k string) bool { return !namesK8sNode(nodes[i].Name, k) })
			if len(named) != 1 {
				continue
			}
			// The Kubernetes nodes the name does not settle stay unjoined
			// (named as not in the inventory), not ambiguous.
			for _, k := range ks {
				if k != named[0] {
					delete(claims, k)
				}
			}
			byNode[i] = named
		}
		for k, is := range claims {
			if len(is) > 1 || len(byNode[is[0]]) > 1 {
				for _, i := range is {
					ambiguous[k] = append(ambiguous[k], nodes[i].Name)
				}
				continue
			}
			match[k] = is[0]
			taken[is[0]] = true
		}
	}
	for _, tier := range tiers {
		claims := map[string][]int{}
		for _, k := range k8sNames {
			if settled(k) {
				continue
			}
			for _, i := range tier(k) {
				if !taken[i] {
					claims[k] = append(claims[k], i)
				}
			}
		}
		assign(claims)
	}
	claims := map[string][]int{}
	for _, k := range k8sNames {
		if !settled(k) {
			if i, ok := suffixMatch(k, byName, taken); ok {
				claims[k] = []int{i}
			}
		}
	}
	assign(claims)
	for _, k := range k8sNames {
		i, ok := match[k]
		if !ok {
			c.Joined[k] = ""
			continue
		}
		c.Joined[k] = nodes[i].Name
		for key, v := range perNode[k] {
			nodes[i].Facts[key] = v
		}
		nodes[i].Facts[catalog.NodeRegisteredFact] = "yes"
	}
	for i := range nodes {
		if nodes[i].Status.HasFacts() && !taken[i] {
			nodes[i].Facts[catalog.NodeRegisteredFact] = "no"
		}
	}
	if len(ambiguous) > 0 {
		c.Ambiguous = ambiguous
	}
	for _, k := range k8sNames {
		why := notApplicable(perNode[k])
		if why == "" {
			continue
		}
		if c.NotApplicable == nil {
			c.NotApplicable = map[string]string{}
		}
		c.NotApplicable[k] = why
		if i, ok := match[k]; ok {
			// Whatever the SSH attempt gave (a Windows node has no POSIX
			// sh: usually an error) is no finding about the node.
			n := &nodes[i]
			n.Status, n.Message, n.Error, n.Probes = result.StatusNotApplicable, why, "", []result.ProbeRun{}
		}
	}
}

// nodeOSFact is the cluster probe's node fact naming a node's operating
// system: its kubelet's nodeInfo.operatingSystem, else its
// kubernetes.io/os label.
const nodeOSFact = "k8s.node.os"

// notApplicable says why the audit does not apply to a Kubernetes node
// with these facts, "" when it does: the probes are POSIX sh run over SSH,
// so a node whose kubelet runs on another OS (RKE2's Windows agents) is
// not audited. A node whose OS is unknown is audited.
func notApplicable(f map[string]string) string {
	os := f[nodeOSFact]
	switch os {
	case "", "linux", "unknown", "absent":
		return ""
	case "windows":
		return "Windows node (kubernetes.io/os=windows): not audited, the probes are POSIX sh run over SSH"
	}
	return fmt.Sprintf("%s node (kubernetes.io/os=%s): not audited, the probes are POSIX sh run over SSH", os, os)
}

// suffixMatch is the one node whose name (byName: lower-cased name → node
// indexes) is what follows a dash or a dot in k8sName, when there is
// exactly one and it is not taken.
func suffixMatch(k8sName string, byName map[string][]int, taken map[int]bool) (int, bool) {
	var hits []int
	for p := 0; p < len(k8sName); p++ {
		if k8sName[p] == '-' || k8sName[p] == '.' {
			hits = append(hits, byName[k8sName[p+1:]]...)
		}
	}
	if len(hits) == 1 && !taken[hits[0]] {
		return hits[0], true
	}
	return 0, false
}

// namesK8sNode says whether the inventory name is the Kubernetes node's
// name or what follows a dash or a dot in it, as suffixMatch matches.
func namesK8sNode(name, k8sName string) bool {
	name, k8sName = strings.ToLower(name), strings.ToLower(k8sName)
	return name != "" && (k8sName == name || strings.HasSuffix(k8sName, "-"+name) || strings.HasSuffix(k8sName, "."+name))
}

// mergeSorted is the union of two ascending lists, ascending.
func mergeSorted(a, b []int) []int {
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	return slices.Compact(out)
}

// clusterFindings reports what the cluster probes could not do or found
// outside the inventory.
func clusterFindings(c *result.Cluster, limited bool) []result.Finding {
	if c == nil {
		return nil
	}
	var out []result.Finding
	if c.Status == result.ClusterOK {
		var nodes, evidence []string
		for _, a := range c.Attempts {
			if a.Outcome == result.ClusterFailed {
				nodes = append(nodes, a.Node)
				evidence = append(evidence, a.Node+": "+a.Reason)
			}
		}
		if len(nodes) > 0 {
			sort.Strings(nodes)
			out = append(out, result.Finding{
				Check: catalog.ClusterServerAPIUnavailableID, Kind: result.KindCheck, Severity: catalog.GoFindingOf(catalog.ClusterServerAPIUnavailableID).Severity, Nodes: nodes,
				Title: "a server's node-local Kubernetes API did not answer (the cluster view came from another server)",
				Summary: fmt.Sprintf("RKE2's kubectl with /etc/rancher/rke2/rke2.yaml got no answer from the API server on %s (the evidence says why), so the cluster view (pods, nodes, RBAC) came from %s. A server whose own API server does not answer cannot be upgraded safely.",
					strings.Join(nodes, ", "), c.Node),
				Evidence:    evidence,
				Remediation: catalog.GoFindingOf(catalog.ClusterServerAPIUnavailableID).Fix,
			})
		}
	}
	if c.Status != result.ClusterOK {
		title := "cluster-scoped probes did not run"
		if len(c.Attempts) > 0 {
			title = "no server gave the Kubernetes view of the cluster"
		}
		out = append(out, result.Finding{
			Check: catalog.ClusterUnavailableID, Kind: result.KindCheck, Severity: catalog.GoFindingOf(catalog.ClusterUnavailableID).Severity, Nodes: []string{},
			Title:       title,
			Summary:     c.Message + "; the node-level audit went on without the Kubernetes view (pods, nodes, RBAC).",
			Evidence:    []string{c.Message},
			Remediation: catalog.GoFindingOf(catalog.ClusterUnavailableID).Fix,
		})
	}
	if len(c.Ambiguous) > 0 {
		var hosts, evidence []string
		seen := map[string]bool{}
		for _, k := range slices.Sorted(maps.Keys(c.Ambiguous)) {
			evidence = append(evidence, fmt.Sprintf("Kubernetes node %s: matched by %s", k, strings.Join(c.Ambiguous[k], ", ")))
			for _, h := range c.Ambiguous[k] {
				if !seen[h] {
					seen[h] = true
					hosts = append(hosts, h)
				}
			}
		}
		sort.Strings(hosts)
		out = append(out, result.Finding{
			Check: catalog.ClusterNodeMatchAmbiguousID, Kind: result.KindCheck, Severity: catalog.GoFindingOf(catalog.ClusterNodeMatchAmbiguousID).Severity, Nodes: hosts,
			Title:       "inventory hosts and Kubernetes nodes do not match one to one",
			Summary:     fmt.Sprintf("At the same priority (inventory name, address, os.hostname, name suffix) the match is not one to one, so no Kubernetes facts (pods, registration) were joined to %s: %s.", strings.Join(hosts, ", "), strings.Join(evidence, "; ")),
			Evidence:    evidence,
			Remediation: catalog.GoFindingOf(catalog.ClusterNodeMatchAmbiguousID).Fix,
		})
	}
	// A run limited by --limit leaves inventory hosts out on purpose; the
	// reports list the unjoined nodes without calling it a finding.
	if extra := c.UnjoinedK8sNodes(); len(extra) > 0 && !limited {
		out = append(out, result.Finding{
			Check: catalog.ClusterNodesNotInInventoryID, Kind: result.KindCheck, Severity: catalog.GoFindingOf(catalog.ClusterNodesNotInInventoryID).Severity, Nodes: []string{},
			Title:       "the cluster has nodes the inventory does not list",
			Summary:     fmt.Sprintf("%d Kubernetes %s not audited because no inventory host matches: %s.", len(extra), map[bool]string{true: "node is", false: "nodes are"}[len(extra) == 1], strings.Join(extra, ", ")),
			Evidence:    extra,
			Remediation: catalog.GoFindingOf(catalog.ClusterNodesNotInInventoryID).Fix,
		})
	}
	return out
}
