package audit

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fleet-audit/fleet-audit/audit/catalog"
	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/result"
)

// Kubernetes' version skew policy, as RKE2 inherits it: the API servers of
// an HA control plane are within one minor of each other; a kubelet (and
// kube-proxy) is never newer than the oldest API server and at most three
// minors older than the newest.
const (
	maxServerSkew  = 1
	maxKubeletSkew = 3
)

// TargetVersionRe is the form --target-version accepts, an RKE2 release
// such as v1.31.4+rke2r1; the CLI validates the flag with this one. Anything
// looser would let "1.31" or "v1.31" through and make the skew checks
// compare the wrong thing.
var TargetVersionRe = regexp.MustCompile(`^v1\.[0-9]+\.[0-9]+\+rke2r[0-9]+$`)

type nodeVersion struct {
	name   string
	server bool
	raw    string
	minor  int
}

// minorOf returns the Kubernetes minor of "v1.31.4+rke2r1".
func minorOf(v string) (int, bool) {
	p, ok := check.ParseVersion(v)
	if !ok || len(p) < 2 || p[0] != 1 {
		return 0, false
	}
	return p[1], true
}

// fleetVersions reads each audited node's RKE2 version and whether it is a
// server. Nodes without a parseable version are left out: the rke2 checks
// report those.
func fleetVersions(nodes []result.Node) []nodeVersion {
	var out []nodeVersion
	for _, n := range nodes {
		if !n.Status.HasFacts() {
			continue
		}
		raw := n.Facts["rke2.version"]
		minor, ok := minorOf(raw)
		if !ok {
			continue
		}
		server := isServer(n)
		out = append(out, nodeVersion{name: n.Name, server: server, raw: raw, minor: minor})
	}
	return out
}

// VersionSkew judges the RKE2 versions across the fleet with the skew policy
// and, when target is set, the upgrade path to it: RKE2 may not skip a
// minor, and servers go first, one at a time, then agents.
func VersionSkew(nodes []result.Node, target string) []result.Finding {
	vs := fleetVersions(nodes)
	if len(vs) == 0 {
		return nil
	}
	var out []result.Finding
	var servers, agents []nodeVersion
	for _, v := range vs {
		if v.server {
			servers = append(servers, v)
		} else {
			agents = append(agents, v)
		}
	}
	if f, ok := mixedVersions(vs); ok {
		out = append(out, f)
	}
	if len(servers) > 0 {
		lo, hi := minMaxMinor(servers)
		if hi-lo > maxServerSkew {
			var names, ev []string
			for _, s := range servers {
				if s.minor == lo || s.minor == hi {
					names = append(names, s.name)
				}
				ev = append(ev, fmt.Sprintf("%s: server at %s", s.name, s.raw))
			}
			out = append(out, skewFinding(catalog.SkewServersID, names, ev,
				"API servers are more than one minor apart",
				fmt.Sprintf("The HA API servers run 1.%d to 1.%d; Kubernetes supports at most %d minor between them.", lo, hi, maxServerSkew),
				catalog.GoFindingOf(catalog.SkewServersID).Fix))
		}
		if f, ok := kubeletNewer(servers, agents, lo, hi); ok {
			out = append(out, f)
		}
		// A kubelet may be three minors older than every API server it may
		// reach, so the newest one bounds it: with servers at 1.31 and 1.30
		// the oldest kubelet allowed is 1.28 (the policy's HA note).
		var older, evO []string
		for _, a := range agents {
			if hi-a.minor > maxKubeletSkew {
				older = append(older, a.name)
				evO = append(evO, fmt.Sprintf("%s: agent at %s, %d minors behind the newest server 1.%d", a.name, a.raw, hi-a.minor, hi))
			}
		}
		if len(older) > 0 {
			out = append(out, skewFinding(catalog.SkewKubeletTooOldID, older, evO,
				"kubelet more than three minors older than the API server",
				fmt.Sprintf("A kubelet may be at most %d minors older than every API server it may reach, the newest included (%s).", maxKubeletSkew, skewPolicy),
				catalog.GoFindingOf(catalog.SkewKubeletTooOldID).Fix))
		}
	}
	if f, ok := bundledSkew(nodes); ok {
		out = append(out, f)
	}
	if target != "" {
		out = append(out, upgradePath(vs, target)...)
	}
	return out
}

// skewPolicy is where the rules judged here are written down.
const skewPolicy = "kubernetes.io/releases/version-skew-policy"

// kubeletNewer judges the policy's "kubelet must not be newer than
// kube-apiserver" and names the side that is out of step. Agents newer than
// every server were upgraded ahead of the control plane: they are at fault.
// But HA API servers may be one minor apart mid-upgrade, and the policy then
// narrows the kubelets allowed to those not newer than the oldest instance;
// when the agents run no newer than the newest servers, the outlier is the
// server left behind, and upgrading it to the others' release is the fix
// (the agents could only be "fixed" by a downgrade RKE2 does not support).
func kubeletNewer(servers, agents []nodeVersion, lo, hi int) (result.Finding, bool) {
	var ahead []nodeVersion // agents newer than every server
	newest := lo            // the newest agent minor not past the servers
	for _, a := range agents {
		switch {
		case a.minor > hi:
			ahead = append(ahead, a)
		case a.minor > lo:
			newest = max(newest, a.minor)
		}
	}
	var lagging []nodeVersion
	for _, s := range servers {
		if s.minor < newest {
			lagging = append(lagging, s)
		}
	}
	if len(ahead)+len(lagging) == 0 {
		return result.Finding{}, false
	}
	var names, ev []string
	summary := fmt.Sprintf("A kubelet (and kube-proxy) must not be newer than any kube-apiserver it may reach; HA API servers may be one minor apart only while they are upgraded (%s).", skewPolicy)
	var fix []string
	if len(lagging) > 0 {
		// What the newest servers run is what the lagging ones are upgraded to.
		count := map[string]int{}
		for _, s := range servers {
			if s.minor == hi {
				count[s.raw]++
			}
		}
		releases := slices.Sorted(maps.Keys(count))
		to := releases[0]
		for _, r := range releases[1:] {
			a, _ := check.ParseVersion(r)
			b, _ := check.ParseVersion(to)
			if check.CompareVersions(a, b) > 0 {
				to = r
			}
		}
		var lag []string
		for _, s := range lagging {
			n, top := 0, s.minor
			for _, a := range agents {
				if a.minor > s.minor && a.minor <= hi {
					n, top = n+1, max(top, a.minor)
				}
			}
			names, lag = append(names, s.name), append(lag, s.name)
			ev = append(ev, fmt.Sprintf("%s: server at %s, behind the other servers (%s) and %d %s up to 1.%d", s.name, s.raw, strings.Join(releases, ", "), n, result.Plural(n, "agent"), top))
		}
		sort.Strings(lag)
		step := fmt.Sprintf("Upgrade %s to %s, the release the other servers run, before anything else: one server at a time, waiting for each to be Ready before the next.", strings.Join(lag, ", then "), to)
		if len(ahead) == 0 {
			summary += fmt.Sprintf(" The agents run no newer than the newest servers (1.%d), so the outlier is the server left behind: %s. The agents are not at fault.", hi, strings.Join(lag, ", "))
			step += " Leave the agents as they are."
		} else {
			summary += fmt.Sprintf(" %s %s behind the newest servers (1.%d) and the agents that match them.", strings.Join(lag, ", "), isAre(len(lag)), hi)
		}
		fix = append(fix, step)
	}
	if len(ahead) > 0 {
		top := hi
		var over []string
		for _, a := range ahead {
			top = max(top, a.minor)
			names, over = append(names, a.name), append(over, a.name)
			ev = append(ev, fmt.Sprintf("%s: agent at %s, newest server at 1.%d", a.name, a.raw, hi))
		}
		sort.Strings(over)
		summary += fmt.Sprintf(" %s %s newer than every API server: upgraded ahead of the control plane.", strings.Join(over, ", "), isAre(len(over)))
		verb := "Upgrade"
		if len(fix) > 0 {
			verb = "Then upgrade"
		}
		fix = append(fix, fmt.Sprintf("%s the servers to the agents' minor 1.%d, one minor at a time and one server at a time (RKE2 does not support downgrading the agents); never upgrade agents ahead of the servers.", verb, top))
	}
	return skewFinding(catalog.SkewKubeletNewerID, names, ev,
		"kubelet newer than the API server", summary, strings.Join(fix, " ")), true
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// bundledComponents are the binaries an RKE2 release ships, with the facts
// the rke2 probe reads their versions into.
var bundledComponents = []struct{ name, fact string }{
	{"containerd", "rke2.containerd.version"},
	{"kubelet", "rke2.kubelet.version"},
}

// bundledSkew names the nodes whose containerd or kubelet differs from the
// other nodes on the same RKE2 release. RKE2 ships both in its release: at
// start it extracts the runtime image's bin into
// /var/lib/rancher/rke2/data/<release>/bin and re-links
// /var/lib/rancher/rke2/bin to it, ignoring a failed re-link (rancher/rke2
// pkg/bootstrap/bootstrap.go, Stage). So nodes on one release run the same
// builds, and one that does not has a stale link or runs a containerd or
// kubelet from elsewhere. Releases are compared only with themselves: every
// release ships its own builds. A value that is not a version (absent,
// unknown) says nothing about skew.
func bundledSkew(nodes []result.Node) (result.Finding, bool) {
	byRelease := map[string][]result.Node{}
	for _, n := range nodes {
		if !n.Status.HasFacts() {
			continue
		}
		if rel := n.Facts["rke2.version"]; isVersion(rel) {
			byRelease[rel] = append(byRelease[rel], n)
		}
	}
	var names, ev []string
	named := map[string]bool{}
	for _, rel := range slices.Sorted(maps.Keys(byRelease)) {
		for _, c := range bundledComponents {
			count := map[string]int{}
			known := 0
			for _, n := range byRelease[rel] {
				if v := n.Facts[c.fact]; isVersion(v) {
					count[v]++
					known++
				}
			}
			if len(count) < 2 {
				continue
			}
			majority, tie := check.MajorityOf(count)
			var split []string
			for _, v := range slices.Sorted(maps.Keys(count)) {
				split = append(split, fmt.Sprintf("%s on %d", v, count[v]))
			}
			for _, n := range byRelease[rel] {
				v := n.Facts[c.fact]
				if !isVersion(v) || (!tie && v == majority) {
					continue
				}
				if tie {
					ev = append(ev, fmt.Sprintf("%s: %s %s; the %d nodes on %s have no majority (%s)", n.Name, c.name, v, known, rel, strings.Join(split, ", ")))
				} else {
					ev = append(ev, fmt.Sprintf("%s: %s %s, peers on %s run %s", n.Name, c.name, v, rel, majority))
				}
				if !named[n.Name] {
					named[n.Name] = true
					names = append(names, n.Name)
				}
			}
		}
	}
	if len(names) == 0 {
		return result.Finding{}, false
	}
	return skewFinding(catalog.SkewBundledComponentID, names, ev,
		"containerd or kubelet differs from the other nodes on the same RKE2 release",
		"RKE2 ships containerd and the kubelet in its release, extracted to /var/lib/rancher/rke2/data/<release>/bin and linked from /var/lib/rancher/rke2/bin, so nodes on the same release run the same builds. These nodes run another build: the bin link points at another release's data dir (RKE2 ignores a failed re-link), or a containerd or kubelet from another install is the one that runs. The node then behaves unlike its peers, and the upgrade starts from a state nobody tested.",
		catalog.GoFindingOf(catalog.SkewBundledComponentID).Fix), true
}

// isVersion says whether a probe's value is a version rather than one of
// its words for "not known" (absent, unknown, not-root).
func isVersion(v string) bool {
	_, ok := check.ParseVersion(v)
	return ok
}

// mixedVersions reports the nodes whose RKE2 release differs from the
// fleet's most common one. Mixed releases are allowed mid-upgrade, but
// before one starts they mean a node was missed last time.
func mixedVersions(vs []nodeVersion) (result.Finding, bool) {
	count := map[string]int{}
	for _, v := range vs {
		count[v.raw]++
	}
	if len(count) < 2 {
		return result.Finding{}, false
	}
	majority, tie := check.MajorityOf(count)
	var names, ev []string
	for _, v := range vs {
		if tie || v.raw != majority {
			names = append(names, v.name)
			ev = append(ev, fmt.Sprintf("%s: rke2.version=%s", v.name, v.raw))
		}
	}
	summary := fmt.Sprintf("These nodes do not run the fleet's RKE2 release %s; a node left behind by the last upgrade is upgraded from further back this time.", majority)
	if tie {
		summary = "No RKE2 release runs on a majority of the nodes; the fleet is mid-upgrade or was upgraded piecemeal."
	}
	return skewFinding(catalog.SkewMixedVersionsID, names, ev,
		"nodes run different RKE2 releases", summary,
		catalog.GoFindingOf(catalog.SkewMixedVersionsID).Fix), true
}

// upgradePath judges the way from each node's release to the target.
func upgradePath(vs []nodeVersion, target string) []result.Finding {
	tMinor, ok := minorOf(target)
	if !ok {
		return nil
	}
	tv, _ := check.ParseVersion(target)
	var skip, down, evS, evD, servers, agents []string
	for _, v := range vs {
		cur, _ := check.ParseVersion(v.raw)
		switch {
		case check.CompareVersions(cur, tv) > 0:
			down = append(down, v.name)
			evD = append(evD, fmt.Sprintf("%s: at %s, newer than the target %s", v.name, v.raw, target))
		case tMinor-v.minor > 1:
			skip = append(skip, v.name)
			evS = append(evS, fmt.Sprintf("%s: at %s; the target %s skips %s", v.name, v.raw, target, skippedMinors(v.minor, tMinor)))
		}
		if check.CompareVersions(cur, tv) < 0 {
			if v.server {
				servers = append(servers, v.name)
			} else {
				agents = append(agents, v.name)
			}
		}
	}
	var out []result.Finding
	if len(skip) > 0 {
		out = append(out, skewFinding(catalog.SkewTargetSkipsMinorID, skip, evS,
			"the upgrade to the target would skip a minor release",
			fmt.Sprintf("RKE2 upgrades must go one minor at a time; these nodes are more than one minor behind %s.", target),
			fmt.Sprintf("Upgrade to the latest v1.%d release first (servers one at a time, then agents), then to %s.", tMinor-1, target)))
	}
	if len(down) > 0 {
		out = append(out, skewFinding(catalog.SkewTargetDowngradeID, down, evD,
			"the target is older than what these nodes run",
			"RKE2 does not support downgrades; the target would move these nodes backwards.",
			catalog.GoFindingOf(catalog.SkewTargetDowngradeID).Fix))
	}
	if len(servers)+len(agents) > 0 {
		f := skewFinding(catalog.SkewUpgradeOrderID, append(append([]string{}, servers...), agents...), nil,
			"upgrade order to "+target,
			fmt.Sprintf("%d server and %d agent %s to upgrade to %s: servers first, one at a time, then agents.", len(servers), len(agents), result.Plural(len(servers)+len(agents), "node"), target),
			catalog.GoFindingOf(catalog.SkewUpgradeOrderID).Fix)
		if len(servers) > 0 {
			f.Rollout = append(f.Rollout, result.RolloutStep{Class: result.ClassServer, Nodes: servers, OneAtATime: true})
		}
		if len(agents) > 0 {
			f.Rollout = append(f.Rollout, result.RolloutStep{Class: result.ClassAgent, Nodes: agents})
		}
		f.Evidence = []string{"servers: " + strings.Join(orNone(servers), ", "), "agents: " + strings.Join(orNone(agents), ", ")}
		out = append(out, f)
	}
	return out
}

func skippedMinors(from, to int) string {
	var m []string
	for i := from + 1; i < to; i++ {
		m = append(m, "v1."+strconv.Itoa(i))
	}
	return strings.Join(m, ", ")
}

func orNone(s []string) []string {
	if len(s) == 0 {
		return []string{"none"}
	}
	return s
}

func minMaxMinor(vs []nodeVersion) (lo, hi int) {
	lo, hi = vs[0].minor, vs[0].minor
	for _, v := range vs[1:] {
		lo, hi = min(lo, v.minor), max(hi, v.minor)
	}
	return lo, hi
}

// skewFinding builds one skew finding with its severity from GoFindings;
// remediation is its own (the row's Fix, or one naming its versions).
func skewFinding(id string, nodes, evidence []string, title, summary, remediation string) result.Finding {
	sort.Strings(nodes)
	sort.Strings(evidence)
	return result.Finding{Check: id, Kind: result.KindCheck, Severity: catalog.GoFindingOf(id).Severity, Nodes: nodes, Title: title,
		Summary: summary, Evidence: evidence, Remediation: remediation}
}
