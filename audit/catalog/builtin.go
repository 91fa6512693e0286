package catalog

import (
	"slices"
	"strings"

	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/result"
)

// This file is the one home of what fleet-audit reports or judges that no
// probe script and no checks file declares: the findings built in Go and
// the facts invented in Go. Waivers (WaivableIDs), --only/--skip
// (GoSelectableIDs), user-probe validation (Load), explain, `fleet-audit
// probes` and docs/catalogue.md all read these tables, so a new finding
// built in Go is one constant and one row here.

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
	EtcdMembersDisagreeID         = "etcd.members-disagree"
	EtcdMemberNotListedID         = "etcd.member-not-listed"
	EtcdMembersUnauditedID        = "etcd.members-unaudited"
	EtcdMembersCountID            = "etcd.members-count"
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
	// Severity is every such finding's; zero for the correlations, which
	// take their symptom check's when a fact explains it (info otherwise).
	Severity result.Severity
	// Why, References and Facts are what `fleet-audit explain` prints
	// beside About, as a checks file gives them for a check: why it
	// matters for an upgrade, where that is written upstream, and the facts
	// the Go code reads to build it. Fix is the remediation: the finding's
	// own where it names nothing of the run, else the general form of what
	// the code writes with the nodes and versions it found.
	Why        string
	References []string
	Facts      []string
	Fix        string
	// Area is the readiness area its findings count in; a correlation
	// counts in its symptom check's, and the waivers' own bookkeeping in
	// result.AreaOther (both zero here).
	Area result.Area
}

// GoFindingOf is the GoFindings row of id. Every id constant has one
// (TestGoFindingsAreDeclared); the zero row would show as an unknown
// severity in a report, never as a wrong one.
func GoFindingOf(id string) GoFinding {
	for _, f := range GoFindings {
		if f.ID == id {
			return f
		}
	}
	return GoFinding{ID: id}
}

// GoFindings lists every finding built in Go, in catalogue order.
var GoFindings = []GoFinding{
	{
		ID:       CorrelationPrefix + "<symptom>",
		About:    "the fact value whose split of the fleet best matches a symptom check's failing nodes, ranked with evidence counts; or that nothing explains it; or that every node fails (cluster-wide). Selected with its symptom check.",
		Operator: true,
		Why:      "A symptom such as kube-proxy in CrashLoopBackOff on some nodes only is rarely a cluster defect: it follows node drift (a host firewall, an iptables backend, a sysctl, a module) that the symptom's own logs do not show. Upgrading with the cause still on those nodes brings the symptom back on the first restart, and fixing the symptom alone (a probe path, a pod delete) hides it until then. When every node fails, the cause is cluster-wide configuration, and the rollback plan must cover it.",
		References: []string{
			"https://kubernetes.io/docs/tasks/debug/debug-application/debug-service/",
			"kubernetes/kubernetes pkg/proxy/healthcheck/proxy_health.go (why /healthz and /livez fail while the logs look normal)",
			"fleet-audit README.md, Checks, drift and correlation",
		},
		Fix: "Fix the fact the finding names on the failing nodes, one node at a time, then restart the symptom's component there (for kube-proxy: delete its pod) and run the audit again; when nothing explains it, test one failing node by hand against a healthy one.",
	},
	{
		ID:       SkewServersID,
		Area:     result.AreaVersions,
		About:    "RKE2 servers more than one minor apart (Kubernetes version skew policy: kube-apiserver instances of an HA cluster).",
		Operator: true,
		Why:      "The skew policy allows the newest and oldest kube-apiserver of an HA cluster at most one minor apart (the state while they are upgraded one at a time). Beyond that, clients, controllers and kubelets get different APIs and fields depending on which server answers, and the next upgrade starts from a state the policy does not support.",
		References: []string{
			"https://kubernetes.io/releases/version-skew-policy/#kube-apiserver",
			"https://docs.rke2.io/upgrades/manual_upgrade",
		},
		Facts:    []string{"rke2.version", "rke2.service", "rke2.server.active"},
		Fix:      "Upgrade the oldest servers, one at a time, to within one minor of the newest before anything else.",
		Severity: result.SeverityCritical,
	},
	{
		ID:       SkewKubeletNewerID,
		Area:     result.AreaVersions,
		About:    "an agent's kubelet newer than a server's kube-apiserver it may reach (skew policy: kubelet must not be newer than kube-apiserver).",
		Operator: true,
		Why:      "A kubelet (and its kube-proxy) must never be newer than the kube-apiserver it talks to: it may send fields and use APIs that server does not know. It happens when agents are upgraded before servers, or one server is left behind; upgrading agents further, or the lagging server last, makes it worse.",
		References: []string{
			"https://kubernetes.io/releases/version-skew-policy/#kubelet",
			"https://kubernetes.io/releases/version-skew-policy/#kube-proxy",
			"https://docs.rke2.io/upgrades/manual_upgrade",
		},
		Facts:    []string{"rke2.version", "rke2.service", "rke2.server.active", "rke2.agent.active"},
		Fix:      "Upgrade the lagging servers to the release the other servers run, one at a time; never upgrade agents ahead of the servers (RKE2 does not support downgrading them).",
		Severity: result.SeverityCritical,
	},
	{
		ID:       SkewKubeletTooOldID,
		Area:     result.AreaVersions,
		About:    "an agent's kubelet more than three minors older than the newest server (skew policy).",
		Operator: true,
		Why:      "A kubelet may be at most three minors older than every kube-apiserver it reaches. Upgrading the servers one more minor would put these agents outside the supported skew, where the API server may have removed the APIs and behaviour their kubelet and kube-proxy rely on.",
		References: []string{
			"https://kubernetes.io/releases/version-skew-policy/#kubelet",
			"https://docs.rke2.io/upgrades/manual_upgrade",
		},
		Facts:    []string{"rke2.version", "rke2.service", "rke2.server.active", "rke2.agent.active"},
		Fix:      "Upgrade these agents one minor at a time until they are within three minors of the newest server.",
		Severity: result.SeverityCritical,
	},
	{
		ID:       SkewMixedVersionsID,
		Area:     result.AreaVersions,
		About:    "nodes running different RKE2 releases.",
		Operator: true,
		Why:      "Mixed releases are expected during an upgrade, not before one: a node left behind by the last upgrade starts this one further back, may need to skip a minor, and behaves unlike the nodes the upgrade was tested on.",
		References: []string{
			"https://docs.rke2.io/upgrades/manual_upgrade",
			"https://kubernetes.io/releases/version-skew-policy/",
		},
		Facts:    []string{"rke2.version"},
		Fix:      "Bring these nodes to the fleet's release (servers one at a time, then agents) before starting the next upgrade.",
		Severity: result.SeverityWarning,
	},
	{
		ID:       SkewBundledComponentID,
		Area:     result.AreaVersions,
		About:    "a node whose containerd or kubelet differs from the other nodes on the same RKE2 release (RKE2 ships both in the release).",
		Operator: true,
		Why:      "RKE2 ships containerd and the kubelet inside its release and links /var/lib/rancher/rke2/bin to that release's data directory at start, ignoring a failed re-link. A node on the same release with other builds runs a stale link or a runtime from another install, so the upgrade starts from a state nobody tested and may keep running the old binaries afterwards.",
		References: []string{
			"rancher/rke2 pkg/bootstrap/bootstrap.go (Stage: extracts the release's binaries and re-links /var/lib/rancher/rke2/bin)",
			"https://docs.rke2.io/install/packaged_components",
		},
		Facts:    []string{"rke2.version", "rke2.containerd.version", "rke2.kubelet.version"},
		Fix:      "On each node named: readlink -f /var/lib/rancher/rke2/bin must end in data/<the node's RKE2 release>-<hash>/bin; compare /var/lib/rancher/rke2/bin/containerd --version and /var/lib/rancher/rke2/bin/kubelet --version with a peer's. See which binary really runs: readlink /proc/$(pgrep -xo containerd)/exe and readlink /proc/$(pgrep -xo kubelet)/exe, and command -v containerd kubelet for another install on PATH (Docker's containerd.io, a distribution package). Then reinstall the RKE2 release the peers run (curl -sfL https://get.rke2.io | INSTALL_RKE2_VERSION=<release> sh -, or the same RPMs), remove or disable the other containerd, and restart rke2-server or rke2-agent, one node at a time (kubectl drain NODE --ignore-daemonsets first, kubectl uncordon NODE after).",
		Severity: result.SeverityWarning,
	},
	{
		ID:       SkewTargetSkipsMinorID,
		Area:     result.AreaVersions,
		About:    "--target-version more than one minor ahead of a node: RKE2 upgrades one minor at a time.",
		Operator: true,
		Why:      "Kubernetes, and so RKE2, supports upgrading one minor at a time: storage migrations, API removals and the kubelet skew are only tested from the previous minor. Nothing in the RKE2 upgrade process stops a skip, so it fails in the middle instead.",
		References: []string{
			"https://docs.rke2.io/upgrades/manual_upgrade",
			"https://kubernetes.io/releases/version-skew-policy/#supported-component-upgrade-order",
		},
		Facts:    []string{"rke2.version", "target.version"},
		Fix:      "Upgrade to the latest release of each minor in between first (servers one at a time, then agents), then to the target.",
		Severity: result.SeverityCritical,
	},
	{
		ID:       SkewTargetDowngradeID,
		Area:     result.AreaVersions,
		About:    "--target-version older than a node's release: a downgrade, not an upgrade.",
		Operator: true,
		Why:      "RKE2 does not support downgrades: etcd's data and the API server's stored objects may already be in the newer format. Going back needs a restore from an etcd snapshot, which is a different change with its own outage.",
		References: []string{
			"https://docs.rke2.io/upgrades/roll-back",
			"https://docs.rke2.io/datastore/backup_restore",
		},
		Facts:    []string{"rke2.version", "target.version"},
		Fix:      "Check --target-version; restoring an older release needs an etcd snapshot restore, not an upgrade.",
		Severity: result.SeverityCritical,
	},
	{
		ID:       SkewUpgradeOrderID,
		Area:     result.AreaVersions,
		About:    "the path to --target-version: servers first, one at a time, then agents.",
		Operator: true,
		Why:      "The skew policy forbids a kubelet newer than its API server, so servers go first; etcd keeps quorum only if they go one at a time. This is the order the change plan should follow, node by node.",
		References: []string{
			"https://docs.rke2.io/upgrades/manual_upgrade",
			"https://docs.rke2.io/upgrades/automated_upgrade",
			"https://kubernetes.io/releases/version-skew-policy/#supported-component-upgrade-order",
		},
		Facts:    []string{"rke2.version", "rke2.service", "rke2.server.active", "rke2.agent.active", "target.version"},
		Fix:      "Upgrade in the order of the rollout: each server alone, waiting for it to be Ready, then the agents.",
		Severity: result.SeverityInfo,
	},
	{
		ID:       EtcdMembersDisagreeID,
		Area:     result.AreaEtcd,
		About:    "etcd servers whose member list differs from the other etcd servers' (another cluster, or another view of the membership).",
		Operator: true,
		Why:      "Every member of one etcd cluster answers MemberList with the same members. A server with another list runs another cluster (a --cluster-reset done on it alone, a data directory restored from elsewhere), so the cluster it serves is not the one the others serve: upgrading it restarts a split that loses one side's writes, and the quorum the rollout counts on is not there.",
		References: []string{
			"k3s-io/k3s pkg/etcd/etcd.go (infoHandler: GET /db/info answers the local member's MemberList; Reset: a cluster-reset server starts a new one-member cluster)",
			"k3s-io/k3s pkg/server/auth/auth.go (IsLocalOrHasRole: /db/info needs no credentials from 127.0.0.1)",
			"etcd-io/etcd api/etcdserverpb/rpc.proto (Member: ID, name, peerURLs, clientURLs, isLearner)",
			"https://docs.rke2.io/datastore/backup_restore",
		},
		Facts:    []string{"etcd.members", "etcd.member.self", "etcd.members.status"},
		Fix:      "On each server named, and on one that agrees: curl -s --noproxy '*' --cacert /var/lib/rancher/rke2/server/tls/server-ca.crt https://127.0.0.1:9345/db/info and compare the members. A server that is alone in its own cluster must rejoin: stop rke2-server on it, move /var/lib/rancher/rke2/server/db aside, remove its old member from the others (the rke2-server log of a server names the member ids), and start it again so it joins. Do not upgrade until every etcd server lists the same members.",
		Severity: result.SeverityCritical,
	},
	{
		ID:       EtcdMemberNotListedID,
		Area:     result.AreaEtcd,
		About:    "audited servers running etcd whose own member is not in the member list the etcd servers agree on.",
		Operator: true,
		Why:      "A server whose etcd member is not a member of the cluster the others list serves a datastore of its own or none: its API server's view diverges from the cluster's, and the upgrade's restart of it changes nothing the cluster's quorum depends on while the rollout counts it as a member.",
		References: []string{
			"k3s-io/k3s pkg/etcd/etcd.go (setName: the member name <node name>-<8 hex> kept in db/etcd/name; Test: a server that is no member fails)",
			"https://docs.rke2.io/datastore/backup_restore",
		},
		Facts:    []string{"etcd.member.self", "etcd.members", "etcd.members.status"},
		Fix:      "cat /var/lib/rancher/rke2/server/db/etcd/name on the server and compare with the members another server lists (curl -s --noproxy '*' --cacert /var/lib/rancher/rke2/server/tls/server-ca.crt https://127.0.0.1:9345/db/info); journalctl -u rke2-server | grep -i member. Rejoin it (stop rke2-server, move /var/lib/rancher/rke2/server/db aside, start it) before the upgrade.",
		Severity: result.SeverityCritical,
	},
	{
		ID:       EtcdMembersUnauditedID,
		Area:     result.AreaEtcd,
		About:    "members of the etcd cluster that no audited etcd server says it is (a server not in the inventory, or a removed or reset server's member left behind).",
		Operator: true,
		Why:      "Quorum is a majority of every member etcd lists, running or not. A member left behind by a removed or reset server is down for good and costs the cluster one failure it could otherwise survive, which the one-at-a-time restarts of an upgrade spend; a server left out of the inventory goes into the upgrade unaudited.",
		References: []string{
			"https://etcd.io/docs/v3.5/faq/#what-is-failure-tolerance",
			"k3s-io/k3s pkg/etcd/etcd.go (RemovePeer: a deleted Node's member is removed; a server reset or reinstalled keeps its old member in the others' list)",
		},
		Facts:    []string{"etcd.members", "etcd.member.self"},
		Fix:      "Add a server that is missing to the inventory; remove a member whose server is gone (kubectl delete node of that server makes RKE2 remove its member; otherwise etcdctl member remove <id> from inside an etcd pod) before the upgrade.",
		Severity: result.SeverityWarning,
	},
	{
		ID:       EtcdMembersCountID,
		Area:     result.AreaEtcd,
		About:    "the etcd cluster's voting members do not match the Nodes Kubernetes labels node-role.kubernetes.io/etcd.",
		Operator: true,
		Why:      "RKE2 labels a Node node-role.kubernetes.io/etcd where etcd runs and keeps the etcd membership in step with those Nodes. Another count means a member without a Node (left behind) or a Node whose member is gone or still a learner: the quorum the upgrade must keep is not the one the Node list suggests.",
		References: []string{
			"https://etcd.io/docs/v3.5/faq/#what-is-failure-tolerance",
			"k3s-io/k3s pkg/etcd/etcd.go (manageLearners: members against Nodes with the etcd role)",
		},
		Facts:    []string{"etcd.members", "cluster.etcd.members"},
		Fix:      "Compare kubectl get nodes -l node-role.kubernetes.io/etcd=true with the members (curl -s --noproxy '*' --cacert /var/lib/rancher/rke2/server/tls/server-ca.crt https://127.0.0.1:9345/db/info on a server); remove stale members and wait for learners to be promoted before the upgrade.",
		Severity: result.SeverityWarning,
	},
	{
		ID:       ClusterUnavailableID,
		Area:     result.AreaControlPlane,
		About:    "the cluster-scoped probes could not run: no server answered, or none was reachable.",
		Operator: true,
		Why:      "Without the cluster's own view the audit cannot see pods in CrashLoopBackOff, NotReady nodes or kube-proxy's RBAC: the gate passes on node facts alone, blind to the state an upgrade most depends on.",
		References: []string{
			"https://docs.rke2.io/cluster_access",
			"https://kubernetes.io/docs/reference/using-api/health-checks/",
		},
		Facts:    []string{"cluster.kubectl", "cluster.api"},
		Fix:      "Make sure a server node is reachable and the audit user can read /etc/rancher/rke2/rke2.yaml (become: sudo).",
		Severity: result.SeverityInfo,
	},
	{
		ID:       ClusterServerAPIUnavailableID,
		Area:     result.AreaControlPlane,
		About:    "servers whose node-local API did not answer before another server's did.",
		Operator: true,
		Why:      "Upgrading servers one at a time assumes every other server keeps serving the API. A server whose own API server does not answer already counts as down: taking another server down for its upgrade may leave too few API servers, or etcd members, to keep the cluster up.",
		References: []string{
			"https://docs.rke2.io/install/ha",
			"https://kubernetes.io/docs/reference/using-api/health-checks/",
		},
		Facts:    []string{"cluster.api", "cluster.api.error"},
		Fix:      "On each of these server nodes: sudo ss -lntp | egrep ':6443|:2379|:9345'; sudo systemctl status rke2-server; sudo journalctl -u rke2-server --since -30min. Then retry: sudo /var/lib/rancher/rke2/bin/kubectl --kubeconfig /etc/rancher/rke2/rke2.yaml get --raw='/readyz?verbose'",
		Severity: result.SeverityWarning,
	},
	{
		ID:       ClusterNodesNotInInventoryID,
		Area:     result.AreaControlPlane,
		About:    "Kubernetes nodes that no inventory host matches (not audited).",
		Operator: true,
		Why:      "The upgrade touches every node of the cluster, audited or not: a node missing from the inventory carries whatever drift it has into the upgrade unseen, and the gate's pass says nothing about it.",
		References: []string{
			"https://kubernetes.io/docs/concepts/architecture/nodes/",
			"fleet-audit README.md, Nodes from the cluster (fleet-audit discover)",
		},
		Facts:    []string{"cluster.nodes.count", "k8s.node.registered", "k8s.node.internal_ip", "os.hostname"},
		Fix:      "Add these nodes to the inventory (or set their inventory name or address to match), so drift on them is seen before the upgrade.",
		Severity: result.SeverityWarning,
	},
	{
		ID:       ClusterNodeMatchAmbiguousID,
		Area:     result.AreaControlPlane,
		About:    "Kubernetes nodes that several inventory hosts match at the same priority (their facts joined to none).",
		Operator: true,
		Why:      "When hosts and Kubernetes nodes do not match one to one, no pod, readiness or RBAC fact is joined to those hosts, so their kube-proxy and Ready checks silently skip: exactly the checks an upgrade needs.",
		References: []string{
			"https://kubernetes.io/docs/concepts/architecture/nodes/#node-name-uniqueness",
			"https://docs.rke2.io/install/requirements",
		},
		Facts:    []string{"k8s.node.internal_ip", "os.hostname"},
		Fix:      "Give each host an inventory name or address that is its Kubernetes node's name or InternalIP (kubectl get nodes -o wide), and check the hostname each of these hosts reports (hostname; cat /etc/hostname).",
		Severity: result.SeverityWarning,
	},
	{
		ID:    WaiverExpiredID,
		About: "waivers past their expiry date: they no longer apply.",
		Why:   "A waiver is an accepted risk with an end date. Once it expires the finding counts against the gate again; reporting it on its own tells the change board why a gate that passed yesterday fails today, and that the risk needs accepting again or fixing.",
		References: []string{
			"fleet-audit README.md, Waivers",
		},
		Fix:      "Fix the finding, or renew the waiver: have its owner re-accept the risk and move expires to a new date in the waivers file.",
		Severity: result.SeverityWarning,
	},
	{
		ID:    WaiverUnusedID,
		About: "waivers that matched no finding.",
		Why:   "A waiver that matches nothing is fixed debt, a check skipped in this run, or a duplicate; left in place it will silently hide the next regression of the same finding, perhaps one the upgrade causes.",
		References: []string{
			"fleet-audit README.md, Waivers",
		},
		Fix:      "Remove the waiver from the waivers file once the finding is fixed on every node it names.",
		Severity: result.SeverityInfo,
	},
}

// GoFact is a fact no probe emits: fleet-audit computes it in Go.
type GoFact struct {
	// Key is the fact's name, or a pattern with <...> for a family.
	Key   string
	About string
	// Checkable: a check (a user's too) may read it in its conditions.
	Checkable bool
	// Volatile facts differ between healthy nodes by nature (dates, days
	// left), as a probe's volatile header says: drift, correlation and
	// diff leave them out.
	Volatile bool
}

// Facts invented in Go that checks read by name.
const (
	TargetVersionFact = "target.version"
	// The run's thresholds (result.Thresholds), as every check sees them.
	EtcdSnapshotMaxAgeFact = "run.etcd_snapshot_max_age_seconds"
	CAHorizonFact          = "run.ca_horizon_days"
	NodeRegisteredFact     = "k8s.node.registered"
	// medianFactPattern names the family of medians check.Judge puts
	// beside a node's facts for pct_of_median_lt conditions.
	medianFactPattern = "median <fact> [among <peers fact>]"
)

// The facts audit/certs.go reads from the certs probe's certificates.
const (
	CertsLeafNotAfterFact  = "certs.leaf.not_after"
	CertsLeafFileFact      = "certs.leaf.file"
	CertsLeafDaysLeftFact  = "certs.leaf.days_left"
	CertsLeafRenewDaysFact = "certs.leaf.renew_days"
	CertsCANotAfterFact    = "certs.ca.not_after"
	CertsCAFileFact        = "certs.ca.file"
	CertsCADaysLeftFact    = "certs.ca.days_left"
	CertsValidityFact      = "certs.validity"
	CertsUnparsedFact      = "certs.unparsed"
)

// TargetVersionNotGiven is why a judgement that needs --target-version
// was skipped.
const TargetVersionNotGiven = TargetVersionFact + " not given: judged only with --target-version"

// GoFacts lists every fact invented in Go.
var GoFacts = []GoFact{
	{TargetVersionFact, "--target-version, the RKE2 release the fleet is about to be upgraded to; every node and cluster check sees it.", true, false},
	{EtcdSnapshotMaxAgeFact, "--etcd-snapshot-max-age in seconds (24h unless given): how old the newest etcd snapshot, local or in S3, may be; every node and cluster check sees it.", true, false},
	{CAHorizonFact, "--ca-horizon in days (365d unless given): a CA ending within it ends before the next planned upgrade; every node and cluster check sees it.", true, false},
	{NodeRegisteredFact, "yes when the cluster view lists the node, no when a server answered without it: joined in Go from the cluster probe's node list.", true, false},
	{medianFactPattern, "the median a pct_of_median_lt condition compares a node with, over the audited nodes (or those with the same peers fact); shown in the check's detail.", false, false},
	{probe.MetaSudo, "how the bundle's root side went under sudo (ok, password_required, requiretty, absent, timeout): it sets the node's status, not a fact a check reads.", false, false},
	{probe.MetaUID, "the uid the probes that do not need root ran as: printed by the bundle and parsed, neither kept in the report nor read by checks.", false, false},
	{probe.MetaTimeout, "whether the bundle's watchdog bounds each probe (watchdog, or absent on a node without sleep(1)): printed by the bundle and parsed, neither kept in the report nor read by checks.", false, false},
	{CertsLeafNotAfterFact, "the earliest expiry (UTC date) among the node's RKE2 leaf certificates (server/tls, server/tls/etcd, agent), read with crypto/x509 from the PEM the certs probe sent.", true, true},
	{CertsLeafFileFact, "the file under /var/lib/rancher/rke2 whose leaf certificate expires first.", true, true},
	{CertsLeafDaysLeftFact, "whole days until that leaf certificate expires, counted from the run's clock: negative once expired.", true, true},
	{CertsLeafRenewDaysFact, "the renewal window of the node's RKE2 release (90 days before the May 2025 releases, 120 since): a leaf with fewer days left is renewed at RKE2's next start; unknown without a version.", true, true},
	{CertsCANotAfterFact, "the earliest expiry (UTC date) among the node's RKE2 CA certificates, which RKE2 never renews.", true, true},
	{CertsCAFileFact, "the file under /var/lib/rancher/rke2 whose CA certificate expires first.", true, true},
	{CertsCADaysLeftFact, "whole days until that CA certificate expires, counted from the run's clock.", true, true},
	{CertsValidityFact, "what healthy peers share whatever day they joined: the leaves' lifetime and state against the renewal window, and a hash of the CA keys the agent trusts; a node that missed a rotation differs (drift).", true, false},
	{CertsUnparsedFact, "the certificate files the certs probe sent that crypto/x509 could not read (cut short, not a certificate), or none.", true, false},
}

// waivableIDs lists every finding id a waiver may name among checks and
// the findings built in Go (Catalog.WaivableIDs).
func waivableIDs(checks []check.Check) []string {
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

// CheckableGoFacts are the Go facts a check may read.
func CheckableGoFacts() []string {
	var out []string
	for _, f := range GoFacts {
		if f.Checkable {
			out = append(out, f.Key)
		}
	}
	return out
}
