# id: cluster
# description: the Kubernetes view through RKE2's node-local kubectl and rke2.yaml (nodes, kube-proxy pods, logs, RBAC and drain blockers), so a broken service network cannot hide it
# needs_root: true
# timeout: 110s
# scope: cluster
# facts: cluster.kubectl cluster.api cluster.api.error cluster.server_version cluster.nodes.count cluster.nodes.not_ready cluster.etcd.members cluster.kubeproxy.pods cluster.kubeproxy.crashloop cluster.kubeproxy.restarted cluster.kubeproxy.logs_checked cluster.kubeproxy.ds cluster.kubeproxy.ds.liveness_path cluster.kubeproxy.ds.startup_path cluster.cni.agents cluster.cni.agent.unhealthy cluster.rbac.kube_proxy_can_get_nodes cluster.rbac.crb.kube_proxy cluster.rbac.crb.node_proxier cluster.etcd.s3.source
# node_facts: k8s.node.os k8s.cni.agent k8s.cni.agent.health k8s.cni.multus.health k8s.cni.agent.problem k8s.node.ready k8s.node.kubelet_version k8s.node.kube_proxy_version k8s.node.internal_ip k8s.node.roles k8s.kubeproxy.pod.name k8s.kubeproxy.pod.phase k8s.kubeproxy.pod.ready k8s.kubeproxy.pod.restarts k8s.kubeproxy.pod.reason k8s.kubeproxy.pod.last_exit k8s.kubeproxy.liveness_path k8s.kubeproxy.startup_path k8s.kubeproxy.previous_rbac_denied k8s.kubeproxy.previous_rbac_denials k8s.kubeproxy.previous_rbac_can_i k8s.kubeproxy.liveness_503 k8s.kubeproxy.sync_errors k8s.drain.pdb_blocked k8s.drain.pdb_blocked.pods k8s.drain.unmanaged k8s.drain.unmanaged.pods k8s.drain.emptydir k8s.drain.emptydir.pods k8s.drain.single_replica k8s.drain.single_replica.pods k8s.etcd.s3.snapshots k8s.etcd.s3.newest_age_seconds
# volatile: k8s.cni.agent.problem k8s.node.internal_ip k8s.node.roles k8s.kubeproxy.pod.name k8s.kubeproxy.pod.restarts k8s.kubeproxy.pod.last_exit k8s.kubeproxy.previous_rbac_denied k8s.kubeproxy.previous_rbac_denials k8s.kubeproxy.previous_rbac_can_i k8s.kubeproxy.liveness_503 k8s.kubeproxy.sync_errors k8s.drain.pdb_blocked k8s.drain.pdb_blocked.pods k8s.drain.unmanaged k8s.drain.unmanaged.pods k8s.drain.emptydir k8s.drain.emptydir.pods k8s.drain.single_replica k8s.drain.single_replica.pods k8s.etcd.s3.snapshots k8s.etcd.s3.newest_age_seconds

# RKE2's own kubectl with rke2.yaml (kc, _lib.sh) talks to the API server
# on this node (127.0.0.1:6443), exactly as an SRE does when cluster
# networking is suspect. Log lines are never printed, only whether they
# hold RBAC denials of kube-proxy and the verb:resource names of those,
# checked against the shape of Kubernetes names.
if [ ! -x "$fa_kubectl" ]; then
	fact cluster.kubectl absent
	exit 0
fi
if [ ! -e "$fa_kubeconfig" ]; then
	fact cluster.kubectl no-kubeconfig
	exit 0
fi
if [ ! -r "$fa_kubeconfig" ]; then
	# rke2.yaml is 0600 root: the inventory needs become: sudo.
	fact cluster.kubectl kubeconfig-unreadable
	exit 0
fi
fact cluster.kubectl ok
set -f # the words split out of awk's answers below are never globs
tab=$(printf '\t')

# Whether this server's API answers at all, and why not, is what tells
# audit whether this server gave a view of the cluster (audit/cluster.go
# apiUnanswered). /readyz is asked because it answers even while a check
# fails; what it says of this one API server is the apiserver probe's,
# which asks it on every server.
kube_health '/readyz?verbose'
api=$fa_api
fact cluster.api "$api"
fact cluster.api.error "$fa_herr"
if [ "$api" = unreachable ]; then
	# Every further call would wait out its own request timeout.
	exit 0
fi

v=$(kc get --raw /version 2>/dev/null | awk '
	match($0, /"gitVersion" *: *"[^"]*"/) {
		s = substr($0, RSTART, RLENGTH); sub(/^"gitVersion" *: *"/, "", s); sub(/"$/, "", s); print s; exit
	}')
fact cluster.server_version "${v:-unknown}"

# Nodes and kube-system pods in two calls, joined by one awk that prints the
# per-node lines itself (folding CR/LF as fact does): a fact call per value
# would cost two forks for every key of every node of a large cluster.
nodes=$(kc get nodes -o jsonpath='{range .items[*]}{.metadata.name}{"\t"}{.status.conditions[?(@.type=="Ready")].status}{"\t"}{.status.nodeInfo.kubeletVersion}{"\t"}{.status.nodeInfo.kubeProxyVersion}{"\t"}{.status.addresses[?(@.type=="InternalIP")].address}{"\t"}{.metadata.labels}{"\t"}{.status.nodeInfo.operatingSystem}{"\n"}{end}' 2>/dev/null)
nrc=$?
# RKE2 runs kube-proxy as a static pod (mirror pod kube-proxy-<node>, label
# component=kube-proxy); kubeadm-style clusters run a DaemonSet (label
# k8s-app=kube-proxy). No single selector matches both, so the filter is awk's.
pods=$(kc -n kube-system get pods -o jsonpath='{range .items[*]}{.metadata.name}{"\t"}{.spec.nodeName}{"\t"}{.status.phase}{"\t"}{.metadata.labels.component}{"\t"}{.metadata.labels.k8s-app}{"\t"}{.status.containerStatuses[?(@.name=="kube-proxy")].ready}{"\t"}{.status.containerStatuses[?(@.name=="kube-proxy")].restartCount}{"\t"}{.status.containerStatuses[?(@.name=="kube-proxy")].state.waiting.reason}{"\t"}{.status.containerStatuses[?(@.name=="kube-proxy")].state.running.startedAt}{"\t"}{.status.containerStatuses[?(@.name=="kube-proxy")].state.terminated.reason}{"\t"}{.status.containerStatuses[?(@.name=="kube-proxy")].lastState.terminated.reason}{"\t"}{.status.containerStatuses[?(@.name=="kube-proxy")].lastState.terminated.exitCode}{"\t"}{.spec.containers[?(@.name=="kube-proxy")].livenessProbe.httpGet.path}{"\t"}{.spec.containers[?(@.name=="kube-proxy")].startupProbe.httpGet.path}{"\n"}{end}' 2>/dev/null)
prc=$?
# kubelet's proof that it killed kube-proxy: its prober records a Warning
# event, reason Unhealthy (kubernetes pkg/kubelet/events/event.go
# ContainerUnhealthy), message "Liveness probe failed: " + the HTTP
# prober's "HTTP probe failed with statuscode: 503" (pkg/kubelet/prober/
# prober.go runProbeWithRetries/recordContainerEvent; pkg/probe/http/
# http.go DoHTTPProbe), and its event correlator folds repeats into one
# event's count (client-go tools/record events_cache.go). Events live an
# hour (kube-apiserver --event-ttl, default 1h), so this counts the last
# hour. The API filters by involvedObject.kind and reason (pkg/registry/
# core/event/strategy.go ToSelectableFields); awk keeps kube-proxy's pods
# and counts, and no message is ever printed.
events=$(kc -n kube-system get events --field-selector involvedObject.kind=Pod,reason=Unhealthy -o jsonpath='{range .items[*]}{.involvedObject.name}{"\t"}{.count}{"\t"}{.message}{"\n"}{end}' 2>/dev/null)
erc=$?
# The CNI agents' DaemonSet pods, by the labels RKE2's charts give them
# (rancher/rke2-charts packages/*/charts/templates): rke2-canal
# daemonset.yaml (kube-system, k8s-app=canal; calico-node and kube-flannel
# containers, init install-cni and flexvol-driver), rke2-cilium
# cilium-agent/daemonset.yaml (kube-system, k8s-app=cilium), rke2-flannel
# (kube-system, app=flannel), rke2-multus daemonSet.yaml (kube-system,
# app=rke2-multus, container kube-rke2-multus); rke2-calico's operator
# makes calico-system/calico-node, k8s-app=calico-node (tigera/operator
# pkg/common/common.go, pkg/render/node.go). Two label keys, so two calls,
# each only of the agents' pods: listing every pod of a large cluster
# would cost more than the rest of the probe. Per container:
# name/ready/restarts/waiting reason/last exit time, space-separated.
agent_tpl='{range .items[*]}{.metadata.namespace}{"\t"}{.metadata.name}{"\t"}{.spec.nodeName}{"\t"}{.status.phase}{"\t"}{.metadata.labels.k8s-app}{"\t"}{.metadata.labels.app}{"\t"}{.metadata.ownerReferences[0].kind}{"\t"}{range .status.initContainerStatuses[*]}{.name}/{.ready}/{.restartCount}/{.state.waiting.reason}/{.lastState.terminated.finishedAt}{" "}{end}{"\t"}{range .status.containerStatuses[*]}{.name}/{.ready}/{.restartCount}/{.state.waiting.reason}/{.lastState.terminated.finishedAt}{" "}{end}{"\n"}{end}'
agents=$(kc get pods -A -l 'k8s-app in (canal,calico-node,cilium)' -o jsonpath="$agent_tpl" 2>/dev/null)
arc=$?
agents2=$(kc get pods -A -l 'app in (flannel,rke2-multus)' -o jsonpath="$agent_tpl" 2>/dev/null) || arc=1
# kubeproxy_pods prints name<TAB>node<TAB>restarts for each kube-proxy pod.
kubeproxy_pods() {
	printf '%s\n' "$pods" | awk -F "$tab" '
		13 <= NF && $2 != "" && ($1 ~ /^kube-proxy-/ || $4 == "kube-proxy" || $5 == "kube-proxy") && !($2 in seen) {
			seen[$2] = 1; print $1 "\t" $2 "\t" ($7 == "" ? 0 : $7)
		}'
}
{
	printf '@@nodes %s\n' "$nrc"
	printf '%s\n' "$nodes"
	printf '@@pods %s\n' "$prc"
	printf '%s\n' "$pods"
	printf '@@agents %s\n' "$arc"
	printf '%s\n%s\n' "$agents" "$agents2"
	printf '@@events %s\n' "$erc"
	printf '%s\n' "$events"
} | awk -F "$tab" -v now="$(date +%s)" '
	function emit(node, key, val) {
		gsub(/[\r\n]/, " ", val)
		if (val == "") val = "absent"
		print "@" node " " key "=" val
	}
	# epoch reads the RFC 3339 UTC time the API server writes (metav1.Time,
	# "2006-01-02T15:04:05Z"), -1 for anything else: POSIX awk has no
	# mktime. Days since 1970-01-01 by the days_from_civil algorithm
	# (H. Hinnant, "chrono-Compatible Low-Level Date Algorithms").
	function epoch(ts,   y, m, d, era, yoe, doy) {
		if (ts !~ /^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z$/) return -1
		y = substr(ts, 1, 4) + 0; m = substr(ts, 6, 2) + 0; d = substr(ts, 9, 2) + 0
		if (m <= 2) y--
		era = int(y / 400); yoe = y - era * 400
		doy = int((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1
		d = era * 146097 + yoe * 365 + int(yoe / 4) - int(yoe / 100) + doy - 719468
		return ((d * 24 + substr(ts, 12, 2)) * 60 + substr(ts, 15, 2)) * 60 + substr(ts, 18, 2)
	}
	# containers judges the container list of one pod ($8 init, $9 the others)
	# into st (its rank: 0 ok, 1 restarting, 2 not-ready, 3 crashloop),
	# why, ctr and rs (restarts of them all). A container that stopped
	# within the last hour and runs again is "restarting": an old restart
	# (an OOM kill weeks ago) is no upgrade blocker, a crash loop caught
	# between two back-offs is.
	function containers(list, init,   n, i, c, f, r) {
		n = split(list, c, " ")
		for (i = 1; i <= n; i++) {
			if (split(c[i], f, "/") < 5) continue
			r = f[3] + 0; rs += r
			if (f[4] == "CrashLoopBackOff") {
				if (st < 3) { st = 3; why = (init ? "Init:" : "") f[4]; ctr = f[1] }
			} else if (f[4] != "") {
				if (st < 2) { st = 2; why = (init ? "Init:" : "") f[4]; ctr = f[1] }
			} else if (!init && f[2] != "true") {
				if (st < 2) { st = 2; why = "NotReady"; ctr = f[1] }
			} else if (0 < r && 0 <= epoch(f[5]) && now - epoch(f[5]) < 3600) {
				if (st < 1) { st = 1; why = "Restarted"; ctr = f[1] }
			}
		}
	}
	BEGIN { word[0] = "ok"; word[1] = "restarting"; word[2] = "not-ready"; word[3] = "crashloop" }
	/^@@nodes / { sect = "n"; nrc = substr($0, 9); next }
	/^@@pods / { sect = "p"; prc = substr($0, 8); next }
	/^@@agents / { sect = "a"; arc = substr($0, 10); next }
	/^@@events / { sect = "e"; erc = substr($0, 10); next }
	# A message of another probe may span lines: only a line starting with
	# a kube-proxy pod name and a count is an event of theirs.
	sect == "e" && 3 <= NF && ($1 in podnode) && $3 ~ /^Liveness probe failed: HTTP probe failed with statuscode: 503/ {
		live503[$1] += ($2 ~ /^[0-9]+$/ ? $2 : 1)
		next
	}
	sect == "a" && 9 <= NF {
		# The namespace and label of each agent, as in the charts above;
		# only DaemonSet pods scheduled to a node are agents of a node.
		cni = ""
		if ($1 == "kube-system" && $5 == "canal") cni = "canal"
		else if ($1 == "calico-system" && $5 == "calico-node") cni = "calico"
		else if ($1 == "kube-system" && $5 == "cilium") cni = "cilium"
		else if ($1 == "kube-system" && $6 == "flannel") cni = "flannel"
		else if ($1 == "kube-system" && $6 == "rke2-multus") cni = "multus"
		if (cni == "" || $7 != "DaemonSet" || $3 == "") next
		agentcni[cni] = 1
		st = 0; why = ""; ctr = ""; rs = 0
		containers($8, 1)
		containers($9, 0)
		if ($4 != "Running" && st < 2) { st = 2; why = ($4 == "" ? "unknown" : $4); ctr = "" }
		if (st >= 1) bad++
		r = (cni == "multus" ? "m" : "p")
		# Two pods of one agent on a node (a rollout caught midway): the worse counts.
		if ((r SUBSEP $3) in rank && st <= rank[r, $3]) next
		rank[r, $3] = st
		if (r == "p") primary[$3] = cni
		if (st >= 1) problem[r, $3] = cni " " $1 "/" $2 ": " why (ctr == "" ? "" : " (" ctr ")") ", " rs " restarts"
		else delete problem[r, $3]
		agentnode[$3] = 1
		next
	}
	sect == "n" && 6 <= NF && $1 != "" {
		node[$1] = 1; count++
		# The OS as the kubelet reports it (nodeInfo.operatingSystem, its
		# runtime.GOOS), else its kubernetes.io/os label.
		os = $7
		if (os == "" && match($6, /"kubernetes\.io\/os":"[^"]*"/)) os = substr($6, RSTART + 18, RLENGTH - 19)
		nodeos[$1] = (os == "" ? "unknown" : os)
		emit($1, "k8s.node.os", nodeos[$1])
		ready = ($2 == "" ? "Unknown" : $2)
		if (ready != "True") notready++
		emit($1, "k8s.node.ready", ready)
		emit($1, "k8s.node.kubelet_version", $3)
		emit($1, "k8s.node.kube_proxy_version", $4)
		ip = $5; sub(/ .*/, "", ip)
		emit($1, "k8s.node.internal_ip", ip)
		roles = ""; s = $6
		while (match(s, /"node-role\.kubernetes\.io\/[^"]*"/)) {
			r = substr(s, RSTART + 25, RLENGTH - 26)
			if (r != "") roles = roles (roles == "" ? "" : ",") r
			s = substr(s, RSTART + RLENGTH)
		}
		emit($1, "k8s.node.roles", roles == "" ? "none" : roles)
		# RKE2 labels the Node of each etcd member
		# node-role.kubernetes.io/etcd=true (k3s pkg/util ETCDRoleLabelKey,
		# set by the node handler of pkg/etcd; the snapshot controller lists the
		# etcd nodes by it): the member count without a client key of etcd.
		if (index($6, "\"node-role.kubernetes.io/etcd\":\"true\"")) etcd++
		next
	}
	sect == "p" && 13 <= NF && ($1 ~ /^kube-proxy-/ || $4 == "kube-proxy" || $5 == "kube-proxy") {
		pods++
		# An unscheduled pod has no node; a second one on a node is a leftover.
		if ($2 == "" || $2 in pod) next
		pod[$2] = 1
		podnode[$1] = $2
		restarts = ($7 == "" ? 0 : $7)
		if (0 < restarts + 0) restarted++
		if ($8 != "") reason = $8
		else if ($10 != "") reason = $10
		else if ($9 != "") reason = "Running"
		else reason = ($3 == "" ? "unknown" : $3)
		if (reason == "CrashLoopBackOff") crash++
		emit($2, "k8s.kubeproxy.pod.name", $1)
		emit($2, "k8s.kubeproxy.pod.phase", $3)
		emit($2, "k8s.kubeproxy.pod.ready", $6 == "" ? "false" : $6)
		emit($2, "k8s.kubeproxy.pod.restarts", restarts)
		emit($2, "k8s.kubeproxy.pod.reason", reason)
		emit($2, "k8s.kubeproxy.pod.last_exit", $11 == "" ? "none" : $11 "/" $12)
		emit($2, "k8s.kubeproxy.liveness_path", $13 == "" ? "none" : $13)
		emit($2, "k8s.kubeproxy.startup_path", $14 == "" ? "none" : $14)
		# Only restarted pods have a previous log; the loop below reads it.
		if (restarts + 0 == 0) {
			emit($2, "k8s.kubeproxy.previous_rbac_denied", "not-checked")
			emit($2, "k8s.kubeproxy.previous_rbac_denials", "none")
			emit($2, "k8s.kubeproxy.previous_rbac_can_i", "none")
		}
	}
	END {
		for (p in podnode) emit(podnode[p], "k8s.kubeproxy.liveness_503", erc + 0 == 0 ? live503[p] + 0 : "unknown")
		for (n in node) if (!(n in pod) && prc + 0 == 0) {
			emit(n, "k8s.kubeproxy.liveness_503", "absent")
			emit(n, "k8s.kubeproxy.pod.name", "absent")
			emit(n, "k8s.kubeproxy.pod.phase", "absent")
			emit(n, "k8s.kubeproxy.pod.ready", "absent")
			emit(n, "k8s.kubeproxy.pod.reason", "absent")
		}
		# The pod list failed while the nodes were read ("a partial view
		# is a view"): every node kube-proxy pod is unknown, so the checks
		# on it say they could not judge instead of skipping unseen.
		if (prc + 0 != 0) for (n in node) {
			emit(n, "k8s.kubeproxy.pod.name", "unknown")
			emit(n, "k8s.kubeproxy.pod.phase", "unknown")
			emit(n, "k8s.kubeproxy.pod.ready", "unknown")
			emit(n, "k8s.kubeproxy.pod.reason", "unknown")
			emit(n, "k8s.kubeproxy.pod.restarts", "unknown")
			emit(n, "k8s.kubeproxy.liveness_503", "unknown")
		}
		print "cluster.nodes.count=" (nrc + 0 == 0 ? count + 0 : "error")
		print "cluster.nodes.not_ready=" (nrc + 0 == 0 ? notready + 0 : "error")
		print "cluster.etcd.members=" (nrc + 0 == 0 ? etcd + 0 : "error")
		print "cluster.kubeproxy.pods=" (prc + 0 == 0 ? pods + 0 : "error")
		print "cluster.kubeproxy.crashloop=" (prc + 0 == 0 ? crash + 0 : "error")
		print "cluster.kubeproxy.restarted=" (prc + 0 == 0 ? restarted + 0 : "error")
		agents = ""
		for (c in agentcni) if (c != "multus") { prim = 1; agents = agents (agents == "" ? "" : ",") c }
		if ("multus" in agentcni) agents = agents (agents == "" ? "" : ",") "multus"
		print "cluster.cni.agents=" (arc + 0 == 0 ? (agents == "" ? "none" : agents) : "error")
		print "cluster.cni.agent.unhealthy=" (arc + 0 == 0 ? bad + 0 : "error")
		# The agents could not be listed: every Linux node of the list has
		# an agent that is unknown, not absent and not fine.
		if (arc + 0 != 0) {
			for (n in nodeos) if (nodeos[n] == "linux" || nodeos[n] == "unknown") {
				emit(n, "k8s.cni.agent", "unknown")
				emit(n, "k8s.cni.agent.health", "unknown")
				emit(n, "k8s.cni.multus.health", "unknown")
				emit(n, "k8s.cni.agent.problem", "unknown")
			}
			exit
		}
		# A node the DaemonSets select (every Linux node: their
		# nodeSelector is kubernetes.io/os: linux, and they tolerate every
		# NoSchedule and NoExecute taint) without the pod its peers have
		# is "absent"; a non-Linux node is no node of theirs.
		# Without the node list, the nodes the agents run on are the ones known.
		if (nrc + 0 != 0) for (n in agentnode) nodeos[n] = "unknown"
		for (n in nodeos) {
			if (nodeos[n] != "linux" && nodeos[n] != "unknown") continue
			if (n in primary) {
				emit(n, "k8s.cni.agent", primary[n])
				emit(n, "k8s.cni.agent.health", word[rank["p", n]])
			} else {
				emit(n, "k8s.cni.agent", prim ? "absent" : "none")
				emit(n, "k8s.cni.agent.health", prim ? "absent" : "none")
			}
			if (("m" SUBSEP n) in rank) emit(n, "k8s.cni.multus.health", word[rank["m", n]])
			else emit(n, "k8s.cni.multus.health", ("multus" in agentcni) ? "absent" : "none")
			p = ""
			if (("p" SUBSEP n) in problem) p = problem["p", n]
			if (("m" SUBSEP n) in problem) p = p (p == "" ? "" : "; ") problem["m", n]
			emit(n, "k8s.cni.agent.problem", p == "" ? "none" : p)
		}
	}'

ci=$(kc auth can-i get nodes --as=system:kube-proxy 2>/dev/null)
case $ci in
yes*) ci=yes ;;
no*) ci=no ;;
*) ci=unknown ;;
esac
fact cluster.rbac.kube_proxy_can_get_nodes "$ci"
# A binding that does not exist is a NotFound line on stderr; any other
# error leaves both unknown rather than claiming they are gone.
out=$(kc get clusterrolebinding system:kube-proxy system:node-proxier -o jsonpath='{range .items[*]}{.metadata.name}{"\t"}{.roleRef.name}{"\n"}{end}' 2>&1)
# shellcheck disable=SC2046
set -- $(printf '%s\n' "$out" | awk -F "$tab" '
	NF == 2 { ref[$1] = ($2 == "" ? "none" : $2); next }
	/NotFound/ && /"system:kube-proxy"/ { ref["system:kube-proxy"] = "absent"; next }
	/NotFound/ && /"system:node-proxier"/ { ref["system:node-proxier"] = "absent"; next }
	END {
		a = ref["system:kube-proxy"]; b = ref["system:node-proxier"]
		print (a == "" ? "unknown" : a), (b == "" ? "unknown" : b)
	}')
fact cluster.rbac.crb.kube_proxy "${1:-unknown}"
fact cluster.rbac.crb.node_proxier "${2:-unknown}"

if out=$(kc -n kube-system get ds kube-proxy -o jsonpath='{.spec.template.spec.containers[0].livenessProbe.httpGet.path}{"\t"}{.spec.template.spec.containers[0].startupProbe.httpGet.path}' 2>&1); then
	fact cluster.kubeproxy.ds present
	live=${out%%"$tab"*}
	start=
	case $out in *"$tab"*) start=${out#*"$tab"} ;; esac
	fact cluster.kubeproxy.ds.liveness_path "${live:-none}"
	fact cluster.kubeproxy.ds.startup_path "${start:-none}"
else
	case $out in
	*NotFound* | *'not found'*) ds=absent ;;
	*) ds=unknown ;;
	esac
	fact cluster.kubeproxy.ds "$ds"
	fact cluster.kubeproxy.ds.liveness_path "$ds"
	fact cluster.kubeproxy.ds.startup_path "$ds"
fi

# The etcd snapshots each server uploaded to S3 (a server with etcd-s3
# uploads each snapshot it takes, named after itself, k3s
# pkg/etcd/snapshot.go): per node, how many can be restored and how old the
# newest is, by this node's clock. Recent releases record every snapshot,
# local or S3, as a cluster-scoped ETCDSnapshotFile (k3s
# pkg/apis/k3s.cattle.io/v1 types.go): spec.nodeName took it, spec.s3 is
# set exactly for one uploaded to S3, spec.location is its s3:// URI,
# status.creationTime (metav1.Time, RFC 3339 in UTC) when etcd took it and
# status.readyToUse whether it can be restored. Older releases kept the
# ConfigMap kube-system/rke2-etcd-snapshots, a key per snapshot whose value
# is the JSON of k3s pkg/etcd snapshot.go snapshotFile: name first, then
# location, nodeName, createdAt, status ("successful" or "failed") and s3
# when uploaded. The CRD is asked first; where the API has no such type,
# the ConfigMap; where it has neither, no snapshot was ever recorded. Names
# and times only: the metadata and S3 settings are not printed.
s3rows=$(kc get etcdsnapshotfiles.k3s.cattle.io -o jsonpath='{range .items[*]}{.spec.nodeName}{"\t"}{.spec.s3.bucket}{"\t"}{.spec.location}{"\t"}{.status.creationTime}{"\t"}{.status.readyToUse}{"\n"}{end}' 2>&1)
s3rc=$? s3src=crd
if [ "$s3rc" != 0 ]; then
	case $s3rows in
	*"doesn't have a resource type"* | *"the server could not find the requested resource"*)
		s3rows=$(kc -n kube-system get configmap rke2-etcd-snapshots -o jsonpath='{.data}' 2>&1)
		s3rc=$? s3src=configmap
		case $s3rc:$s3rows in
		0:*) ;;
		*NotFound* | *"not found"*) s3rows='' s3rc=0 s3src=none ;;
		esac
		;;
	esac
fi
[ "$s3rc" = 0 ] || s3src=unknown
fact cluster.etcd.s3.source "$s3src"
printf '%s\n' "$s3rows" | awk -F "$tab" -v src="$s3src" -v now="$(date +%s)" -v nodes="$(printf '%s\n' "$nodes" | awk -F "$tab" '{ printf "%s ", $1 }')" '
# epoch of an RFC 3339 UTC time, 2026-12-05T04:00:00Z (Howard Hinnant,
# days_from_civil), or -1.
function epoch(t,   y, m, d, era, yoe, doy, doe) {
	if (t !~ /^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]/) return -1
	y = substr(t, 1, 4) + 0; m = substr(t, 6, 2) + 0; d = substr(t, 9, 2) + 0
	if (m <= 2) y--
	era = int(y / 400); yoe = y - era * 400
	doy = int((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1
	doe = yoe * 365 + int(yoe / 4) - int(yoe / 100) + doy
	return (era * 146097 + doe - 719468) * 86400 + substr(t, 12, 2) * 3600 + substr(t, 15, 2) * 60 + substr(t, 18, 2)
}
function seen(node, t,   e) {
	e = epoch(t)
	if (e < 0 || node == "") return
	n[node]++
	if (!(node in newest) || newest[node] < e) newest[node] = e
}
src == "crd" && NF >= 5 {
	if (($2 != "" || $3 ~ /^s3:\/\//) && $5 == "true") seen($1, $4)
	next
}
src == "configmap" { gsub(/\\"/, "\""); body = body $0 }
END {
	# One snapshot a chunk: each snapshotFile begins with its name.
	k = split(body, chunk, /"name":"/)
	for (i = 2; i <= k; i++) {
		c = chunk[i]
		if (c !~ /"location":"s3:\/\// || c !~ /"status":"successful"/) continue
		if (match(c, /"nodeName":"[^"]*"/)) node = substr(c, RSTART + 12, RLENGTH - 13); else continue
		if (match(c, /"createdAt":"[^"]*"/)) seen(node, substr(c, RSTART + 13, RLENGTH - 14))
	}
	m = split(nodes, name, " ")
	for (i = 1; i <= m; i++) {
		if (name[i] == "") continue
		count = "unknown"; age = "unknown"
		if (src != "unknown") {
			count = n[name[i]] + 0; age = "none"
			if (name[i] in newest) { age = now - newest[name[i]]; if (age < 0) age = 0 }
		}
		print "@" name[i] " k8s.etcd.s3.snapshots=" count
		print "@" name[i] " k8s.etcd.s3.newest_age_seconds=" age
	}
}'

# What kubectl drain refuses or waits on, per node (kubectl pkg/drain
# filters.go, in its order): DaemonSet pods (with --ignore-daemonsets) and
# mirror pods (annotation kubernetes.io/config.mirror) are left alone, and
# a Succeeded or Failed pod always goes; of the others, one with an emptyDir
# volume is refused without --delete-emptydir-data (localStorageFilter), one
# without a controller ownerReference without --force (unreplicatedFilter).
# An eviction a PodDisruptionBudget with status.disruptionsAllowed 0
# covers is answered 429, and drain retries it every 5 s until its
# --timeout, by default forever (kubectl pkg/drain/drain.go
# evictPods). A Deployment (its pods' controller is the ReplicaSet
# <deployment>-<pod-template-hash>, kubernetes pkg/controller/deployment
# util.DefaultDeploymentUniqueLabelKey) or StatefulSet of one replica is
# down while its node drains. Pod labels and a PDB's matchLabels are compact
# JSON maps; a PDB selector with matchExpressions is not matched here, a
# null one selects no pod and an empty one every pod of its namespace
# (k8s.io/api policy/v1 types.go PodDisruptionBudgetSpec.Selector). Counts per
# node, and at most 3 names of each kind.
dpods=$(kc get pods -A -o jsonpath='{range .items[*]}{.metadata.namespace}{"\t"}{.metadata.name}{"\t"}{.spec.nodeName}{"\t"}{.status.phase}{"\t"}{.metadata.ownerReferences[?(@.controller==true)].kind}{"\t"}{.metadata.ownerReferences[?(@.controller==true)].name}{"\t"}{.metadata.annotations.kubernetes\.io/config\.mirror}{"\t"}{.spec.volumes[?(@.emptyDir)].name}{"\t"}{.metadata.labels}{"\n"}{end}' 2>/dev/null)
dprc=$?
pdbs=$(kc get poddisruptionbudgets.policy -A -o jsonpath='{range .items[*]}{.metadata.namespace}{"\t"}{.metadata.name}{"\t"}{.status.disruptionsAllowed}{"\t"}{.spec.selector.matchLabels}{"\t"}{.spec.selector.matchExpressions}{"\t"}{.spec.selector}{"\n"}{end}' 2>/dev/null)
pdrc=$?
wls=$(kc get deployments.apps,statefulsets.apps -A -o jsonpath='{range .items[*]}{.kind}{"\t"}{.metadata.namespace}{"\t"}{.metadata.name}{"\t"}{.spec.replicas}{"\n"}{end}' 2>/dev/null)
wlrc=$?
{
	printf '@@nodes %s\n' "$nrc"
	printf '%s\n' "$nodes"
	printf '@@pdbs %s\n' "$pdrc"
	printf '%s\n' "$pdbs"
	printf '@@workloads %s\n' "$wlrc"
	printf '%s\n' "$wls"
	printf '@@pods %s\n' "$dprc"
	printf '%s\n' "$dpods"
} | awk -F "$tab" '
	function add(kind, node, name) {
		cnt[kind, node]++
		if (cnt[kind, node] <= 3) names[kind, node] = names[kind, node] (names[kind, node] == "" ? "" : ", ") name
	}
	function emit(node, key, val) {
		gsub(/[\r\n]/, " ", val)
		print "@" node " " key "=" val
	}
	BEGIN { split("pdb_blocked unmanaged emptydir single_replica", kinds, " ") }
	/^@@nodes / { sect = "n"; nrc = substr($0, 9); next }
	/^@@pdbs / { sect = "b"; pdrc = substr($0, 8); next }
	/^@@workloads / { sect = "w"; wlrc = substr($0, 13); next }
	/^@@pods / { sect = "p"; dprc = substr($0, 8); next }
	sect == "n" && $1 != "" { node[$1] = 1; next }
	sect == "b" && 6 <= NF && $3 == "0" && $5 == "" && $6 != "" {
		npdb++; pns[npdb] = $1; pname[npdb] = $2; np = 0
		s = $4
		while (match(s, /"[^"]*":"[^"]*"/)) {
			pair[npdb, ++np] = substr(s, RSTART, RLENGTH)
			s = substr(s, RSTART + RLENGTH)
		}
		npair[npdb] = np
		next
	}
	sect == "w" && 4 <= NF { replicas[$1, $2 "/" $3] = $4; next }
	sect == "p" && 9 <= NF && $3 != "" {
		if ($7 != "" || $5 == "DaemonSet" || $4 == "Succeeded" || $4 == "Failed") next
		pod = $1 "/" $2
		for (i = 1; i <= npdb; i++) {
			if (pns[i] != $1) continue
			ok = 1
			for (j = 1; j <= npair[i] && ok; j++) if (!index($9, pair[i, j])) ok = 0
			if (ok) { add("pdb_blocked", $3, pod " (PDB " pname[i] ")"); break }
		}
		if ($5 == "") add("unmanaged", $3, pod)
		if ($8 != "") add("emptydir", $3, pod)
		w = ""
		if ($5 == "StatefulSet") w = "StatefulSet" SUBSEP $1 "/" $6
		else if ($5 == "ReplicaSet" && match($9, /"pod-template-hash":"[^"]*"/)) {
			h = substr($9, RSTART + 21, RLENGTH - 22)
			d = $6
			if (substr(d, length(d) - length(h)) == "-" h) w = "Deployment" SUBSEP $1 "/" substr(d, 1, length(d) - length(h) - 1)
		}
		if (w != "" && replicas[w] == "1") { split(w, wk, SUBSEP); add("single_replica", $3, wk[1] " " wk[2]) }
	}
	END {
		if (nrc + 0 != 0) for (k in cnt) { split(k, p, SUBSEP); node[p[2]] = 1 }
		for (n in node) for (i = 1; i <= 4; i++) {
			kd = kinds[i]
			bad = (dprc + 0 != 0) || (kd == "pdb_blocked" && pdrc + 0 != 0) || (kd == "single_replica" && wlrc + 0 != 0)
			c = cnt[kd, n] + 0
			emit(n, "k8s.drain." kd, bad ? "unknown" : c)
			emit(n, "k8s.drain." kd ".pods", bad ? "unknown" : (c == 0 ? "none" : names[kd, n] (c > 3 ? " and " (c - 3) " more" : "")))
		}
	}'

# Previous logs of restarted pods, last: each may wait out its request
# timeout when the node's kubelet is unreachable (UFW blocks 10250 too), so
# at most 20 are read and none is started after 40 seconds.
#
# A denial is the API server's 403 text as client-go logs it: NewForbidden's
# "<resource> is forbidden: <msg>" (k8s.io/apimachinery pkg/api/errors
# errors.go) around forbiddenMessage's `User "system:kube-proxy" cannot VERB
# resource "RES[/SUB]" in API group "GROUP" at the cluster scope` (or `in the
# namespace "NS"`; k8s.io/apiserver pkg/endpoints/handlers/responsewriters
# errors.go), unstructured or inside klog's err="..." with the inner quotes
# escaped. It prints one verb:resource[.group][/sub] key per distinct denial,
# at most 4; only names of the shape Kubernetes gives verbs, resources and
# groups get through, so no other text of the log ever reaches the output.
# shellcheck disable=SC2016 # an awk program: its $ are awk's
denials_awk='
	BEGIN {
		re = "forbidden: User \"system:kube-proxy\" cannot [a-z]+ resource \"[a-z0-9.-]+(/[a-z0-9.-]+)?\"( in API group \"[a-z0-9.-]*\")?"
	}
	{
		gsub(/\\+"/, "\"")
		s = $0
		while (n < 4 && match(s, re)) {
			m = substr(s, RSTART, RLENGTH)
			s = substr(s, RSTART + RLENGTH)
			sub(/^forbidden: User "system:kube-proxy" cannot /, "", m)
			verb = m; sub(/ .*/, "", verb)
			res = m; sub(/^[a-z]+ resource "/, "", res); sub(/".*/, "", res)
			grp = ""
			if (m ~ /in API group "/) { grp = m; sub(/.* in API group "/, "", grp); sub(/".*/, "", grp) }
			sr = ""
			if (i = index(res, "/")) { sr = substr(res, i); res = substr(res, 1, i - 1) }
			key = verb ":" res (grp == "" ? "" : "." grp) sr
			if (!(key in seen)) { seen[key] = 1; n++; print key }
		}
	}'
# cani KEY sets ans to what `kubectl auth can-i VERB RESOURCE[.GROUP]
# [--subresource=SUB] --as=system:kube-proxy` says now: a
# SelfSubjectAccessReview, read-only. kubectl prints "yes" or "no" (exit 0 or
# 1; kubectl pkg/cmd/auth/cani.go RunAccessCheck); anything else is unknown.
# Answers are kept in $canis, at most 6 are asked, and none after the
# deadline.
cani() {
	case $canis in
	*" $1=yes "*) ans=yes && return ;;
	*" $1=no "*) ans=no && return ;;
	*" $1=unknown "*) ans=unknown && return ;;
	esac
	ans=unknown
	if [ "$asked" -lt 6 ] && [ "$(date +%s)" -lt "$deadline" ]; then
		asked=$((asked + 1))
		cv=${1%%:*}
		cr=${1#*:}
		cs=
		case $cr in */*) cs=${cr#*/} cr=${cr%%/*} ;; esac
		case $(kc auth can-i "$cv" "$cr" ${cs:+"--subresource=$cs"} --as=system:kube-proxy 2>/dev/null) in
		yes*) ans=yes ;;
		no*) ans=no ;;
		esac
	fi
	canis="$canis$1=$ans "
}
kubeproxy_pods | {
	checked=0
	asked=0
	canis=" get:nodes=$ci "
	deadline=$(($(date +%s) + 40))
	while IFS="$tab" read -r pod node restarts; do
		[ "$restarts" -gt 0 ] 2>/dev/null || continue
		d=not-checked
		list=none
		can=none
		if [ "$checked" -lt 20 ] && [ "$(date +%s)" -lt "$deadline" ]; then
			checked=$((checked + 1))
			logs=$(kc -n kube-system logs "$pod" -c kube-proxy --previous --tail=200 2>/dev/null)
			if [ -z "$logs" ]; then
				d=unavailable
			else
				keys=$(printf '%s\n' "$logs" | awk "$denials_awk")
				d=no
				if [ -n "$keys" ]; then
					# Transient only if can-i says yes to every denied
					# verb and resource now; one no is a real RBAC gap.
					d=yes
					list=
					can=yes
					for k in $keys; do
						list=${list:+$list,}$k
						cani "$k"
						case $ans in
						no) can=no ;;
						unknown) [ "$can" = no ] || can=unknown ;;
						esac
					done
				fi
			fi
		fi
		printf '@%s k8s.kubeproxy.previous_rbac_denied=%s\n' "$node" "$d"
		printf '@%s k8s.kubeproxy.previous_rbac_denials=%s\n' "$node" "$list"
		printf '@%s k8s.kubeproxy.previous_rbac_can_i=%s\n' "$node" "$can"
	done
	fact cluster.kubeproxy.logs_checked "$checked"
}

# The current log of each kube-proxy pod (its last 500 lines), for the
# errors of a failing rule sync, counted and never printed: kube-proxy's
# "Failed to execute iptables-restore" and "Sync failed" (pkg/proxy/
# iptables/proxier.go syncProxyRules, klog.ErrorS), and iptables' own
# "Another app is currently holding the xtables lock" (iptables
# xshared.c xtables_lock), which iptables-restore prints when the lock is
# held and kube-proxy logs with the failure. After the previous logs, with
# a budget of its own (20 logs, 30 seconds), so a kubelet that does not
# answer (UFW blocks 10250 too) cannot starve the RBAC evidence.
sync_awk='/Failed to execute iptables-restore|xtables lock|Sync failed/ { n++ } END { print n + 0 }'
kubeproxy_pods | {
	cur=0
	deadline=$(($(date +%s) + 30))
	while IFS="$tab" read -r pod node restarts; do
		se=not-checked
		if [ "$cur" -lt 20 ] && [ "$(date +%s)" -lt "$deadline" ]; then
			cur=$((cur + 1))
			if logs=$(kc -n kube-system logs "$pod" -c kube-proxy --tail=500 2>/dev/null); then
				se=$(printf '%s\n' "$logs" | awk "$sync_awk")
			else
				se=unavailable
			fi
		fi
		printf '@%s k8s.kubeproxy.sync_errors=%s\n' "$node" "$se"
	done
}
exit 0
