package audit

import (
	"slices"
	"strings"

	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/audit/probe"
)

// This file is the one home of what fleet-audit reports or judges that no
// probe script and no checks file declares: the findings built in Go and
// the facts invented in Go. Waivers (WaivableIDs), --only/--skip
// (SelectableIDs), user-probe validation (LoadProbeDir), `fleet-audit
// probes` and docs/catalogue.md (Catalogue) all read these tables, so a new
// finding built in Go is one constant and one row here.

// Ids of the findings built in Go. The code that builds a finding names it
// by its constant; TestGoFindingsAreDeclared holds that.
const (
	ClusterUnavailableID          = "cluster.unavailable"
	ClusterServerAPIUnavailableID = "cluster.server-api-unavailable"
	ClusterNodesNotInInventoryID  = "cluster.nodes-not-in-inventory"
	ClusterNodeMatchAmbiguousID   = "cluster.node-match-ambiguous"
	SkewServersID                 = "skew.servers"
	SkewKubeletNewerID            = "skew.kubelet-newer"
	SkewKubeletTooOldID           = "skew.kubelet-too-old"
	SkewMixedVersionsID           = "skew.mixed-versions"
	SkewBundledComponentID        = "skew.bundled-component"
	SkewTargetSkipsMinorID        = "skew.target-skips-minor"
	SkewTargetDowngradeID         = "skew.target-downgrade"
	SkewUpgradeOrderID            = "skew.upgrade-order"
	// Waiver bookkeeping is never waivable or skippable: waiving
	// "waiver.expired" would silence exactly the signal it exists for.
	WaiverExpiredID = "waiver.expired"
	WaiverUnusedID  = "waiver.unused"
	// CorrelationPrefix + a symptom check's id is that symptom's
	// correlation finding; it follows its symptom check in and out of a run.
	CorrelationPrefix = "correlation."
)

// GoFinding is a finding built in Go rather than declared in a checks file.
type GoFinding struct {
	ID string
	// About says what it reports, for the catalogue and `fleet-audit probes`.
	About string
	// Operator: a waiver may accept it and --only/--skip may select it.
	// The bookkeeping of waivers themselves is not the operator's to hide.
	Operator bool
}

// GoFindings lists every finding built in Go, in catalogue order.
var GoFindings = []GoFinding{
	{CorrelationPrefix + "<symptom>", "the fact value whose split of the fleet best matches a symptom check's failing nodes, ranked with evidence counts; or that nothing explains it; or that every node fails (cluster-wide). Selected with its symptom check.", true},
	{SkewServersID, "RKE2 servers more than one minor apart (Kubernetes version skew policy: kube-apiserver instances of an HA cluster).", true},
	{SkewKubeletNewerID, "an agent's kubelet newer than a server's kube-apiserver it may reach (skew policy: kubelet must not be newer than kube-apiserver).", true},
	{SkewKubeletTooOldID, "an agent's kubelet more than three minors older than the newest server (skew policy).", true},
	{SkewMixedVersionsID, "nodes running different RKE2 releases.", true},
	{SkewBundledComponentID, "a node whose containerd or kubelet differs from the other nodes on the same RKE2 release (RKE2 ships both in the release).", true},
	{SkewTargetSkipsMinorID, "--target-version more than one minor ahead of a node: RKE2 upgrades one minor at a time.", true},
	{SkewTargetDowngradeID, "--target-version older than a node's release: a downgrade, not an upgrade.", true},
	{SkewUpgradeOrderID, "the path to --target-version: servers first, one at a time, then agents.", true},
	{ClusterUnavailableID, "the cluster-scoped probes could not run: no server answered, or none was reachable.", true},
	{ClusterServerAPIUnavailableID, "servers whose node-local API did not answer before another server's did.", true},
	{ClusterNodesNotInInventoryID, "Kubernetes nodes that no inventory host matches (not audited).", true},
	{ClusterNodeMatchAmbiguousID, "Kubernetes nodes that several inventory hosts match at the same priority (their facts joined to none).", true},
	{WaiverExpiredID, "waivers past their expiry date: they no longer apply.", false},
	{WaiverUnusedID, "waivers that matched no finding.", false},
}

// GoFact is a fact no probe emits: fleet-audit computes it in Go.
type GoFact struct {
	// Key is the fact's name, or a pattern with <...> for a family.
	Key   string
	About string
	// Checkable: a check (a user's too) may read it in its conditions.
	Checkable bool
}

// Facts invented in Go that checks read by name.
const (
	TargetVersionFact  = "target.version"
	NodeRegisteredFact = "k8s.node.registered"
	// medianFactPattern names the family of medians check.Judge puts
	// beside a node's facts for pct_of_median_lt conditions.
	medianFactPattern = "median <fact> [among <peers fact>]"
)

// GoFacts lists every fact invented in Go.
var GoFacts = []GoFact{
	{TargetVersionFact, "--target-version, the RKE2 release the fleet is about to be upgraded to; every node and cluster check sees it.", true},
	{NodeRegisteredFact, "yes when the cluster view lists the node, no when a server answered without it: joined in Go from the cluster probe's node list.", true},
	{medianFactPattern, "the median a pct_of_median_lt condition compares a node with, over the audited nodes (or those with the same peers fact); shown in the check's detail.", false},
	{probe.MetaSudo, "how the bundle's root side went under sudo (ok, password_required, requiretty, absent): it sets the node's status, not a fact a check reads.", false},
	{probe.MetaUID, "the uid the probes that do not need root ran as: printed by the bundle and parsed, neither kept in the report nor read by checks.", false},
	{probe.MetaTimeout, "whether the node has timeout(1) to bound each probe (timeout or absent): printed by the bundle and parsed, neither kept in the report nor read by checks.", false},
}

// WaivableIDs lists every finding id a waiver may name: the checks, the
// correlation finding of each symptom check, and the operator's findings
// built in Go.
func WaivableIDs(checks []check.Check) []string {
	ids := append(check.IDs(checks), GoSelectableIDs()...)
	for _, c := range checks {
		if c.Symptom {
			ids = append(ids, CorrelationPrefix+c.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

// GoSelectableIDs are the findings built in Go that --only and --skip may
// name besides the checks (a correlation finding follows its symptom check,
// so it is not among them).
func GoSelectableIDs() []string {
	var ids []string
	for _, f := range GoFindings {
		if f.Operator && !strings.HasPrefix(f.ID, CorrelationPrefix) {
			ids = append(ids, f.ID)
		}
	}
	return ids
}

// checkableGoFacts are the Go facts a check may read.
func checkableGoFacts() []string {
	var out []string
	for _, f := range GoFacts {
		if f.Checkable {
			out = append(out, f.Key)
		}
	}
	return out
}
