# id: etcd
# description: RKE2's embedded etcd on this server: local snapshots (names and mtimes only), whether snapshots are disabled or go to S3 (only those config.yaml keys are read: the file holds the join token), etcd's own /health and /metrics on 127.0.0.1:2381, and the member list this member sees (RKE2's /db/info on 127.0.0.1:9345)
# needs_root: true
# timeout: 20s
# facts: etcd.snapshot.dir etcd.snapshot.disabled etcd.snapshot.s3 etcd.snapshot.count etcd.snapshot.newest_age_seconds etcd.snapshot.mount etcd.snapshot.disk_used_pct etcd.health etcd.metrics.status etcd.has_leader etcd.leader_changes etcd.db_size_bytes etcd.quota_bytes etcd.db_quota_used_pct etcd.member.self etcd.members etcd.members.status
# volatile: etcd.snapshot.count etcd.snapshot.newest_age_seconds etcd.snapshot.disk_used_pct etcd.leader_changes etcd.db_size_bytes etcd.db_quota_used_pct etcd.member.self
# role_scoped: etcd.snapshot.dir etcd.snapshot.disabled etcd.snapshot.s3 etcd.snapshot.mount etcd.health etcd.metrics.status etcd.has_leader etcd.quota_bytes etcd.members etcd.members.status
# server_only: etcd.snapshot.dir etcd.snapshot.disabled etcd.snapshot.s3 etcd.snapshot.count etcd.snapshot.newest_age_seconds etcd.snapshot.mount etcd.snapshot.disk_used_pct etcd.health etcd.metrics.status etcd.has_leader etcd.leader_changes etcd.db_size_bytes etcd.db_quota_used_pct etcd.quota_bytes etcd.member.self etcd.members etcd.members.status

# Whether this node runs etcd is told as the rke2 probe tells it: RKE2
# writes the etcd static pod manifest only on a server without
# disable-etcd (rancher/rke2 pkg/executor/staticpod). Every fact then reads
# "absent" on a server without etcd (an agent's are dropped: server_only),
# and "unreadable" where a 0700 directory on the way hides the manifest.
# "unknown" is kept for an etcd node whose answer could not be read.
facts="etcd.snapshot.dir etcd.snapshot.disabled etcd.snapshot.s3 etcd.snapshot.count etcd.snapshot.newest_age_seconds etcd.snapshot.mount etcd.snapshot.disk_used_pct etcd.health etcd.metrics.status etcd.has_leader etcd.leader_changes etcd.db_size_bytes etcd.quota_bytes etcd.db_quota_used_pct etcd.member.self etcd.members etcd.members.status"
md=$R/var/lib/rancher/rke2/agent/pod-manifests
role=absent
for d in "$R/var/lib/rancher/rke2" "$R/var/lib/rancher/rke2/agent" "$md"; do
	if [ -d "$d" ] && [ ! -x "$d" ]; then role=unreadable; fi
done
[ -e "$md/etcd.yaml" ] && role=present
if [ "$role" != present ]; then
	for f in $facts; do fact "$f" "$role"; done
	exit 0
fi

# RKE2's config: config.yaml, then config.yaml.d/*.yaml in name order, a
# later file's key winning (k3s pkg/configfilearg, dropins). Only three keys
# are read, by awk, and only their values leave it: the file holds the join
# token, which must never reach a report. Flags given on rke2's command
# line or as RKE2_* variables are not seen (rare; say so in the check).
#   etcd-disable-snapshots: the cron is started only without it (k3s
#     pkg/etcd/etcd.go Start: if !e.config.EtcdDisableSnapshots);
#   etcd-s3: snapshots are also uploaded to S3 (k3s pkg/etcd/snapshot.go);
#   etcd-snapshot-dir: default ${data-dir}/server/db/snapshots (k3s
#     pkg/etcd/snapshot.go snapshotDir; rke2-docs
#     docs/datastore/backup_restore.md).
cfg=/etc/rancher/rke2/config.yaml
def=/var/lib/rancher/rke2/server/db/snapshots
set --
for f in "$R$cfg" "$R$cfg.d"/*.yaml; do [ -f "$f" ] && set -- "$@" "$f"; done
unread=
for f; do [ -r "$f" ] || unread=yes; done
if [ -n "$unread" ]; then
	disabled=unreadable s3=unreadable dir=$def
elif [ $# = 0 ]; then
	disabled=no s3=no dir=$def
else
	# Two lines: "<disabled> <s3>", then the directory (it may hold blanks).
	conf=$(awk -v def="$def" '
	function val(l) {
		sub(/^[^:]*:[ \t]*/, "", l); sub(/[ \t]+#.*$/, "", l); sub(/[ \t]+$/, "", l)
		gsub(/^["\047]|["\047]$/, "", l)
		return l
	}
	function yes(v) { v = tolower(v); return (v == "true" || v == "yes" || v == "on" || v == "1") ? "yes" : "no" }
	/^etcd-disable-snapshots:/ { dis = yes(val($0)) }
	/^etcd-s3:/ { s3 = yes(val($0)) }
	/^etcd-snapshot-dir:/ { dir = val($0) }
	END { print (dis == "" ? "no" : dis), (s3 == "" ? "no" : s3); print (dir ~ /^\// ? dir : def) }
	' "$@" 2>/dev/null)
	l=${conf%%"$fa_nl"*}
	disabled=${l%% *} s3=${l#* }
	dir=${conf#*"$fa_nl"}
	case $conf in *"$fa_nl"*) ;; *) disabled=unknown s3=unknown dir=$def ;; esac
fi
fact etcd.snapshot.dir "$dir"
fact etcd.snapshot.disabled "$disabled"
fact etcd.snapshot.s3 "$s3"

# Snapshots: the regular files in the directory, scheduled
# (etcd-snapshot-<node>-<unix time>) and on-demand (on-demand-<node>-...),
# .zip when compressed (k3s pkg/etcd/snapshot.go (*ETCD).Snapshot). Only
# names and mtimes are looked at, one stat(1) for all; the contents, a copy
# of the whole datastore with its Secrets, are never opened. The age is
# against the node's own clock.
sd=$R$dir
if [ -d "$sd" ] && [ ! -r "$sd" ]; then
	count=unreadable age=unreadable
elif [ ! -d "$sd" ]; then
	# RKE2 creates the default directory at the first snapshot.
	count=0 age=none
else
	set --
	for f in "$sd"/*; do [ -f "$f" ] && set -- "$@" "$f"; done
	count=$#
	age=none
	if [ "$count" -gt 0 ]; then
		age=unknown
		if have stat && ts=$(stat -L -c %Y -- "$@" 2>/dev/null) && now=$(date +%s 2>/dev/null); then
			newest=
			for t in $ts; do
				case $t in *[!0-9]*) continue ;; esac
				if [ -z "$newest" ] || [ "$t" -gt "$newest" ]; then newest=$t; fi
			done
			if [ -n "$newest" ]; then
				age=$((now - newest))
				[ "$age" -lt 0 ] && age=0
			fi
		fi
	fi
fi
fact etcd.snapshot.count "$count"
fact etcd.snapshot.newest_age_seconds "$age"
# The filesystem the snapshots land on; its parent where the directory does
# not exist yet. df -P keeps it on one line: "Filesystem 1024-blocks Used
# Available Capacity Mounted on".
dd=$sd
[ -d "$dd" ] || dd=$R/var/lib/rancher
mnt=absent pct=absent
if have df; then
	mnt=unknown pct=unknown
	out=$(df -P "$dd" 2>/dev/null)
	while IFS= read -r l; do
		set -f
		# shellcheck disable=SC2086
		set -- $l
		set +f
		# shellcheck disable=SC2015 # both are tests: skip the line unless both hold
		[ $# -ge 6 ] && [ "$1" != Filesystem ] || continue
		p=${5%\%}
		case $p in "" | *[!0-9]*) continue ;; esac
		pct=$p
		shift 5
		mnt=$*
		break
	done <<EOF
$out
EOF
fi
fact etcd.snapshot.mount "$mnt"
fact etcd.snapshot.disk_used_pct "$pct"

# etcd's health and metrics: RKE2 starts etcd with its metrics listener on
# http://127.0.0.1:2381 always (k3s pkg/etcd/etcd.go listenMetricsURLs),
# where its own liveness probe asks /health (rancher/rke2
# pkg/podtemplate/spec.go); the client port needs a client certificate, and
# this probe reads no key. /health without ?serializable=true is false on
# any alarm (NOSPACE, CORRUPT) and without a leader (etcd
# server/etcdserver/api/etcdhttp health.go). The metric names are etcd's
# (server/etcdserver/metrics.go: etcd_server_has_leader,
# etcd_server_leader_changes_seen_total, etcd_server_quota_backend_bytes;
# server/storage/mvcc/metrics.go: etcd_mvcc_db_total_size_in_bytes).
# Loopback only and never through a proxy (_lib.sh, http_get).
http_get http://127.0.0.1:2381/health http://127.0.0.1:2381/metrics | awk "$fa_awk_fact"'
# A sample value is the first word after the name or its closing brace.
function sample(l,   e, f) {
	e = index(l, "}"); if (e) l = substr(l, e + 1); else sub(/^[^ \t]+/, "", l)
	if (split(l, f, " ") == 0) return ""
	return f[1]
}
/^@@FA_HTTP / {
	w = $3; sub(/.*\//, "", w)
	if (w == "health") { hcode = $2; hbody = body }
	else if (w == "metrics") { mcode = $2; mbody = body; done = 1 }
	body = ""
	next
}
{ body = body $0 "\n" }
END {
	# Without the metrics marker the client was cut off by the watchdog:
	# nothing known, no fact (the probe is a timeout).
	if (!done) exit
	t = hbody; gsub(/[ \t\n]/, "", t)
	if (hcode == "000" || hcode == "") h = "not-answering"
	else if (hcode == "no-client") h = "unknown"
	else if (index(t, "\"health\":\"true\"")) h = "healthy"
	else if (index(t, "\"health\":\"false\"")) h = "unhealthy"
	else h = "unknown"
	fact("etcd.health", h)
	st = mcode == "200" ? "ok" : mcode == "no-client" ? "no-client" : (mcode == "000" || mcode == "") ? "connect-failed" : "http-" mcode
	fact("etcd.metrics.status", st)
	n = split(mbody, row, "\n")
	for (i = 1; i <= n; i++) {
		l = row[i]
		if (l ~ /^etcd_server_has_leader[ {]/) v["leader"] = sample(l)
		else if (l ~ /^etcd_server_leader_changes_seen_total[ {]/) v["changes"] = sample(l)
		else if (l ~ /^etcd_mvcc_db_total_size_in_bytes[ {]/) v["db"] = sample(l)
		else if (l ~ /^etcd_server_quota_backend_bytes[ {]/) v["quota"] = sample(l)
	}
	# Not read is "unknown"; read and without the series (another etcd
	# release) is "absent".
	miss = st == "ok" ? "absent" : "unknown"
	fact("etcd.has_leader", ("leader" in v) ? sprintf("%.0f", v["leader"]) : miss)
	fact("etcd.leader_changes", ("changes" in v) ? sprintf("%.0f", v["changes"]) : miss)
	fact("etcd.db_size_bytes", ("db" in v) ? sprintf("%.0f", v["db"]) : miss)
	fact("etcd.quota_bytes", ("quota" in v) ? sprintf("%.0f", v["quota"]) : miss)
	fact("etcd.db_quota_used_pct", (("db" in v) && ("quota" in v) && v["quota"] > 0) ? sprintf("%.1f", v["db"] * 100 / v["quota"]) : miss)
}'

# The member list as this member sees it, and which member it is, for the
# fleet-level comparison (audit/etcdmembers.go). RKE2's supervisor on 9345
# serves GET /db/info: etcd's MemberList through RKE2's own etcd client to
# the local member, to any caller on 127.0.0.1 or ::1 without credentials
# (k3s pkg/etcd/etcd.go handler, infoHandler; pkg/server/auth/auth.go
# IsLocalOrHasRole), so no etcd client key is read. The answer is
# encoding/json of k3s's Members, {"members":[{"ID":<uint64>,"name":...,
# "peerURLs":[...],"clientURLs":[...],"isLearner":true}]}, the field
# names those of etcdserverpb.Member's json tags and each omitempty: a
# voter has no isLearner, a member added but not started no name (etcd
# api/etcdserverpb/rpc.pb.go Member). The supervisor's certificate is
# signed by RKE2's server CA, whose certificate (public) curl verifies it
# with; agents on a server reach it the same way, at https://127.0.0.1:9345.
# Its 5 s bound comes after the two on 2381: the timeout above holds all.
# The member's own name, <node name>-<8 hex> (k3s pkg/etcd/etcd.go setName),
# is in db/etcd/name, 0600 root like its directory.
nf=$R/var/lib/rancher/rke2/server/db/etcd/name
self=unknown
if [ -e "$nf" ] && [ ! -r "$nf" ]; then
	self=unreadable
elif [ -r "$nf" ]; then
	IFS= read -r self <"$nf" || [ -n "$self" ] || self=unknown
	case $self in "" | *[!A-Za-z0-9._-]*) self=unknown ;; esac
fi
fact etcd.member.self "$self"
if have curl; then
	curl -s --noproxy '*' -m 5 --cacert "$R/var/lib/rancher/rke2/server/tls/server-ca.crt" \
		-w '\n@@FA_HTTP %{http_code} %{url_effective}\n' https://127.0.0.1:9345/db/info 2>/dev/null
else
	printf '\n@@FA_HTTP no-client /info\n'
fi | awk "$fa_awk_fact"'
/^@@FA_HTTP / { code = $2; done = 1; next }
{ body = body $0 }
END {
	if (!done) exit
	st = code == "200" ? "ok" : code == "no-client" ? "no-client" : (code == "000" || code == "") ? "connect-failed" : "http-" code
	fact("etcd.members.status", st)
	if (st != "ok" || !match(body, /"members":\[/)) {
		fact("etcd.members", "unknown")
		exit
	}
	# One member object after another: none holds a nested object.
	rest = substr(body, RSTART + RLENGTH); n = 0
	while (match(rest, /^[ \t]*,?[ \t]*\{[^{}]*\}/)) {
		m = substr(rest, RSTART, RLENGTH); rest = substr(rest, RSTART + RLENGTH)
		e = ""
		if (match(m, /"name":"[^"]*"/)) e = substr(m, RSTART + 8, RLENGTH - 9)
		if (e == "" && match(m, /"ID":[0-9]+/)) e = "unstarted-" substr(m, RSTART + 5, RLENGTH - 5)
		gsub(/[^A-Za-z0-9._-]/, "_", e)
		if (e == "") e = "unnamed"
		if (m ~ /"isLearner":true/) e = e ":learner"
		# Insertion sort: a handful of members.
		for (i = n; i > 0 && e < row[i]; i--) row[i + 1] = row[i]
		row[i + 1] = e; n++
	}
	if (n == 0) { fact("etcd.members", "unknown"); exit }
	out = row[1]
	for (i = 2; i <= n; i++) out = out "," row[i]
	fact("etcd.members", out)
}'
