# id: apiserver
# description: this server's own kube-apiserver, through RKE2's node-local kubectl and rke2.yaml (127.0.0.1:6443): the failed checks of /readyz and /livez, and the deprecated APIs its clients requested (apiserver_requested_deprecated_apis)
# needs_root: true
# timeout: 40s
# facts: apiserver.readyz apiserver.readyz.failed apiserver.livez apiserver.livez.failed apiserver.deprecated_apis apiserver.deprecated_apis.first_removal apiserver.deprecated_apis.last_removal
# volatile: apiserver.readyz.failed apiserver.livez.failed apiserver.deprecated_apis apiserver.deprecated_apis.first_removal apiserver.deprecated_apis.last_removal
# server_only: apiserver.readyz apiserver.readyz.failed apiserver.livez apiserver.livez.failed apiserver.deprecated_apis apiserver.deprecated_apis.first_removal apiserver.deprecated_apis.last_removal

# Every RKE2 server runs its own kube-apiserver, and what this probe reads
# is that one process's: readyz and livez are answered by the instance
# asked, and the deprecated-API gauge counts the requests that instance
# served. rke2.yaml points at 127.0.0.1:6443, this node's own API server,
# so each server is asked of itself; the cluster probe, which runs on one
# server only, cannot tell one server's API server from another's.
#
# Whether this node runs kube-apiserver is told as the rke2 probe tells
# it: RKE2 writes its static pod manifest only on a server without
# disable-apiserver (rancher/rke2 pkg/executor/staticpod). Every fact
# then reads "absent" on a node without it (an agent's are dropped:
# server_only), "unreadable" where a 0700 directory on the way (the
# pod-manifests directory, RKE2's agent directory) or rke2.yaml (0600
# root) is closed to the probe's user, and "no-kubectl" or
# "no-kubeconfig" on a server without RKE2's kubectl or its rke2.yaml
# (write-kubeconfig moved elsewhere): the probe could not ask, which says
# nothing about the API server.
facts="apiserver.readyz apiserver.readyz.failed apiserver.livez apiserver.livez.failed apiserver.deprecated_apis apiserver.deprecated_apis.first_removal apiserver.deprecated_apis.last_removal"
md=$R/var/lib/rancher/rke2/agent/pod-manifests
role=absent
for d in "$R/var/lib/rancher/rke2" "$R/var/lib/rancher/rke2/agent" "$md"; do
	if [ -d "$d" ] && [ ! -x "$d" ]; then role=unreadable; fi
done
[ -e "$md/kube-apiserver.yaml" ] && role=present
if [ "$role" = present ]; then
	if [ ! -x "$fa_kubectl" ]; then
		role=no-kubectl
	elif [ ! -e "$fa_kubeconfig" ]; then
		role=no-kubeconfig
	elif [ ! -r "$fa_kubeconfig" ]; then
		role=unreadable
	fi
fi
if [ "$role" != present ]; then
	for f in $facts; do fact "$f" "$role"; done
	exit 0
fi

# /readyz and /livez list different checks (k8s.io/apiserver
# pkg/server/healthz.go: etcd-readiness, informer-sync and shutdown are
# readyz's alone; livez's checks wait out --livez-grace-period after
# start): both are asked. A failed check reads "failed" with the names
# in .failed; an API server that did not answer reads "unreachable", one
# whose answer said neither (refused credentials, an error) "unknown".
kube_health '/readyz?verbose'
fact apiserver.readyz "$fa_hs"
fact apiserver.readyz.failed "$fa_hf"
if [ "$fa_api" = unreachable ]; then
	# Every further call would wait out its own request timeout.
	fact apiserver.livez unreachable
	fact apiserver.livez.failed none
	for f in apiserver.deprecated_apis apiserver.deprecated_apis.first_removal apiserver.deprecated_apis.last_removal; do
		fact "$f" unknown
	done
	exit 0
fi
kube_health '/livez?verbose'
fact apiserver.livez "$fa_hs"
fact apiserver.livez.failed "$fa_hf"

# Deprecated APIs this API server has served since it started: the gauge
# apiserver_requested_deprecated_apis{group,removed_release,resource,
# subresource,version}, set to 1 on the first request of a deprecated
# version and never reset (k8s.io/apiserver pkg/endpoints/metrics/metrics.go
# deprecatedRequestGauge, set in MonitorRequest; removed_release is the
# "<major>.<minor>" of pkg/endpoints/deprecation RemovedRelease). It is
# per process: another server's API server counts its own clients, and a
# restart starts again from nothing. Prometheus' text format writes the
# labels sorted by name. Only label values of the shape Kubernetes gives
# groups, versions, resources and releases get through; at most 10 APIs
# are named. The first and last removing release are what the checks
# compare with --target-version.
out=$(kc get --raw /metrics 2>/dev/null)
rc=$?
printf '%s\n' "$out" | awk -v rc="$rc" '
	function label(s, k,   v) {
		if (!match(s, "[{,]" k "=\"[a-z0-9.-]*\"")) return ""
		v = substr(s, RSTART + length(k) + 3, RLENGTH - length(k) - 4)
		return v
	}
	function vkey(r,   p) { split(r, p, "."); return sprintf("%06d%06d", p[1], p[2]) }
	/^apiserver_requested_deprecated_apis\{/ && $NF + 0 != 0 {
		g = label($0, "group"); v = label($0, "version"); r = label($0, "resource")
		s = label($0, "subresource"); rel = label($0, "removed_release")
		if (v == "" || r == "") next
		name = r (s == "" ? "" : "/" s) " " (g == "" ? "" : g "/") v
		if (name in seen) next
		seen[name] = 1; n++
		if (rel !~ /^[0-9]+\.[0-9]+$/) rel = ""
		if (n <= 10) list = list (list == "" ? "" : ", ") name (rel == "" ? " (no removal set)" : " (removed in " rel ")")
		if (rel != "" && (first == "" || vkey(rel) < vkey(first))) first = rel
		if (rel != "" && (last == "" || vkey(last) < vkey(rel))) last = rel
	}
	END {
		if (rc != 0) { list = "unknown"; first = "unknown"; last = "unknown" }
		else {
			if (n > 10) list = list " and " (n - 10) " more"
			if (list == "") list = "none"
			first = (first == "" ? "none" : "v" first ".0")
			last = (last == "" ? "none" : "v" last ".0")
		}
		print "apiserver.deprecated_apis=" list
		print "apiserver.deprecated_apis.first_removal=" first
		print "apiserver.deprecated_apis.last_removal=" last
	}'
