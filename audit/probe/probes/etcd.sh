# id: etcd
# description: RKE2's embedded etcd on this server: local snapshots (names and mtimes only), whether snapshots are disabled or go to S3 (only those config.yaml keys are read: the file holds the join token), and etcd's own /health and /metrics on 127.0.0.1:2381
# needs_root: true
# timeout: 15s
# facts: etcd.snapshot.dir etcd.snapshot.disabled etcd.snapshot.s3 etcd.snapshot.count etcd.snapshot.newest_age_seconds etcd.snapshot.mount etcd.snapshot.disk_used_pct etcd.health etcd.metrics.status etcd.has_leader etcd.leader_changes etcd.db_size_bytes etcd.quota_bytes etcd.db_quota_used_pct
# volatile: etcd.snapshot.count etcd.snapshot.newest_age_seconds etcd.snapshot.disk_used_pct etcd.leader_changes etcd.db_size_bytes etcd.db_quota_used_pct
# role_scoped: etcd.snapshot.dir etcd.snapshot.disabled etcd.snapshot.s3 etcd.snapshot.mount etcd.health etcd.metrics.status etcd.has_leader etcd.quota_bytes
# server_only: etcd.snapshot.dir etcd.snapshot.disabled etcd.snapshot.s3 etcd.snapshot.count etcd.snapshot.newest_age_seconds etcd.snapshot.mount etcd.snapshot.disk_used_pct etcd.health etcd.metrics.status etcd.has_leader etcd.leader_changes etcd.db_size_bytes etcd.db_quota_used_pct etcd.quota_bytes

# Whether this node runs etcd is told as the rke2 probe tells it: RKE2
# writes the etcd static pod manifest only on a server without
# disable-etcd (rancher/rke2 pkg/executor/staticpod). Every fact then reads
# "absent" on a server without etcd (an agent's are dropped: server_only),
# and "unreadable" where a 0700 directory on the way hides the manifest.
# "unknown" is kept for an etcd node whose answer could not be read.
facts="etcd.snapshot.dir etcd.snapshot.disabled etcd.snapshot.s3 etcd.snapshot.count etcd.snapshot.newest_age_seconds etcd.snapshot.mount etcd.snapshot.disk_used_pct etcd.health etcd.metrics.status etcd.has_leader etcd.leader_changes etcd.db_size_bytes etcd.quota_bytes etcd.db_quota_used_pct"
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
