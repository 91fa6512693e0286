# id: kubeproxy
# description: kube-proxy /healthz and /livez (127.0.0.1:10256, or [::1] on IPv6-primary nodes) and its sync metrics (127.0.0.1:10249), asked from the node itself
# needs_root: false
# timeout: 20s
# facts: kubeproxy.port10256.listening kubeproxy.healthz.address kubeproxy.health kubeproxy.healthz.code kubeproxy.healthz.body kubeproxy.healthz.node_eligible kubeproxy.healthz.stale_seconds kubeproxy.livez.code kubeproxy.livez.body kubeproxy.metrics.status kubeproxy.metrics.sync_count kubeproxy.metrics.sync_sum_seconds kubeproxy.metrics.sync_mean_seconds kubeproxy.metrics.sync_p50_seconds kubeproxy.metrics.sync_p95_seconds kubeproxy.metrics.sync_p99_seconds kubeproxy.metrics.netprog_p99_seconds kubeproxy.metrics.iptables_rules_filter kubeproxy.metrics.iptables_rules_nat kubeproxy.metrics.sync_age_seconds kubeproxy.metrics.queue_lag_seconds kubeproxy.metrics.restore_failures kubeproxy.metrics.endpoint_changes_pending kubeproxy.metrics.service_changes_pending kubeproxy.metrics.healthz_503 kubeproxy.metrics.livez_503
# volatile: kubeproxy.healthz.body kubeproxy.livez.body kubeproxy.healthz.stale_seconds kubeproxy.metrics.sync_count kubeproxy.metrics.sync_sum_seconds kubeproxy.metrics.sync_mean_seconds kubeproxy.metrics.sync_p50_seconds kubeproxy.metrics.sync_p95_seconds kubeproxy.metrics.sync_p99_seconds kubeproxy.metrics.netprog_p99_seconds kubeproxy.metrics.iptables_rules_filter kubeproxy.metrics.iptables_rules_nat kubeproxy.metrics.sync_age_seconds kubeproxy.metrics.queue_lag_seconds kubeproxy.metrics.restore_failures kubeproxy.metrics.endpoint_changes_pending kubeproxy.metrics.service_changes_pending kubeproxy.metrics.healthz_503 kubeproxy.metrics.livez_503

# Health and metrics share one probe (one shell and one timeout(1) fewer per
# node): both are kube-proxy's own view of its dataplane, and neither can
# explain the other's symptoms. The proxy mode and its kernel modules are a
# separate probe (kubeproxy_mode) on purpose: the comparator never offers a
# symptom's own probe as its cause, and a missing ip_vs module must be able to
# explain a failing /healthz.
#
# Where kube-proxy listens: its manifest's --healthz-bind-address and
# --metrics-bind-address, where this login can read it (RKE2's
# pod-manifests directory is 0700 root). RKE2 binds health to ::1 instead
# of 127.0.0.1 when the node's first node-ip is IPv6 (k3s
# pkg/daemons/agent/agent_linux.go kubeProxyArgs) and leaves metrics on
# kube-proxy's default 127.0.0.1:10249; an address without a port keeps
# the default one (kube-proxy cmd/kube-proxy/app/options.go). Without the
# manifest both loopbacks are asked, 127.0.0.1 first: the one nothing
# listens on refuses at once, and the answer that connected counts.
#
# One http_get (_lib.sh) asks every endpoint, each answer closed by a
# "@@FA_HTTP <code> <url>" line; one awk reads them with /proc/net/tcp and
# prints every fact. Only loopback is ever asked, and never through a
# proxy. Where no client could ask, the codes read "no-client", where
# "absent" would read as if nothing listened (the checks on these facts
# are then unjudged).
#
# The staleness of /healthz comes from the two times in its own body, so it
# depends on no clock. The sync age is kube-proxy's own currentTime (the
# /healthz body, else /livez's) minus its last sync timestamp: one clock
# gives both. Only where no health body carries a time is the node's
# date(1) asked. Never awk's srand(): mawk 1.3.4 built with clock_gettime
# seeds from, and returns, nanoseconds since the epoch (bi_funct.c
# initial_seed: tv_sec * 1e9 + tv_nsec; Debian 13's mawk 1.3.4-20250131
# prints 1.8e18 for BEGIN { srand(); print srand() }), which made every
# sync look decades old. Label values may hold spaces, so a sample's value
# is taken after the closing brace. Series of both IP families (ip_family
# labels, newer kube-proxy) are summed per bucket, and the family that
# synced longest ago counts for the age.
kpm=$R/var/lib/rancher/rke2/agent/pod-manifests/kube-proxy.yaml
hz="127.0.0.1:10256 [::1]:10256"
mx=127.0.0.1:10249
if [ -r "$kpm" ]; then
	# One "- --flag=value" line per argument; the last of a repeated flag
	# wins, as in kube-proxy's flag parsing. 0.0.0.0 is reached at
	# 127.0.0.1, :: (both families) at ::1.
	set -f
	# shellcheck disable=SC2046
	set -- $(awk '
	function addr(v, port,   h) {
		if (v ~ /^\[.*\]:[0-9]+$/) { sub(/^\[::\]/, "[::1]", v); return v }
		if (v ~ /^[0-9.]+:[0-9]+$/) { sub(/^0\.0\.0\.0:/, "127.0.0.1:", v); return v }
		if (v == "::" || v == "::1") return "[::1]:" port
		if (v == "0.0.0.0") return "127.0.0.1:" port
		return v ":" port
	}
	{ sub(/^[ \t]*-[ \t]*/, "") }
	sub(/^--healthz-bind-address=/, "") { h = addr($0, 10256) }
	sub(/^--metrics-bind-address=/, "") { m = addr($0, 10249) }
	END { print (h == "" ? "127.0.0.1:10256" : h), (m == "" ? "127.0.0.1:10249" : m) }' "$kpm" 2>/dev/null)
	set +f
	[ $# = 2 ] && hz=$1 mx=$2
fi
urls=
for a in $hz; do urls="$urls http://$a/healthz http://$a/livez"; done
urls="$urls http://$mx/metrics"
# shellcheck disable=SC2086
http_get $urls | awk -v root="$R" "$fa_awk_fact"'
# put prints a fact with the blanks around its value trimmed.
function put(k, v) { sub(/^[ \t]+/, "", v); sub(/[ \t]+$/, "", v); fact(k, v) }
# answer keeps the answer of endpoint w: the first one that connected, of the
# addresses asked in turn.
function answer(w, b, c, a) {
	if ((w in code) && code[w] != "000") return
	code[w] = c; body[w] = b; addr[w] = a
}
# secs turns Go time.Time.String() ("2026-12-02 10:00:00.5 +0000 UTC
# m=+12.3") into Unix time: days from the civil date (March-based years;
# 719469 is the count of 1970-01-01), then the time of day and the zone.
function secs(t,   a, d, c, y, m, s, sign) {
	if (split(t, a, " ") < 3 || split(a[1], d, "-") != 3 || split(a[2], c, ":") != 3) return ""
	y = d[1] + 0; m = d[2] + 0
	if (y <= 1) return "zero"
	if (m <= 2) { y--; m += 12 }
	s = (365 * y + int(y / 4) - int(y / 100) + int(y / 400) + int((153 * (m - 3) + 2) / 5) + d[3] - 719469) * 86400
	s += c[1] * 3600 + c[2] * 60 + c[3]
	sign = substr(a[3], 1, 1) == "-" ? -1 : 1
	return s - sign * (substr(a[3], 2, 2) * 3600 + substr(a[3], 4, 2) * 60)
}
function jtime(b, key,   s) {
	if (!match(b, "\"" key "\": *\"[^\"]*\"")) return ""
	s = substr(b, RSTART, RLENGTH)
	sub(/^[^:]*: *"/, "", s)
	sub(/"$/, "", s)
	return secs(s)
}
function label(l, k) {
	if (!match(l, k "=\"[^\"]*\"")) return ""
	return substr(l, RSTART + length(k) + 2, RLENGTH - length(k) - 3)
}
# bucket adds one _bucket sample to histogram h, keyed by its le label.
function bucket(h, le, v) {
	if (!((h, le) in cnt)) { nle[h]++; les[h, nle[h]] = le }
	cnt[h, le] += v
}
# quantile is histogram_quantile(): the bucket holding the rank, with linear
# interpolation inside it; a rank in the +Inf bucket gives the highest finite
# bound, as Prometheus does. No observation at all is "none", not a number.
function quantile(h, q,   i, j, n, u, c, x, y, rank, lo, below) {
	if (!((h, "+Inf") in cnt) || cnt[h, "+Inf"] == 0) return "none"
	n = 0
	for (i = 1; i <= nle[h]; i++) {
		if (les[h, i] == "+Inf") continue
		x = les[h, i] + 0; y = cnt[h, les[h, i]]
		for (j = n; 0 < j && x < u[j]; j--) { u[j + 1] = u[j]; c[j + 1] = c[j] }
		u[j + 1] = x; c[j + 1] = y; n++
	}
	rank = q * cnt[h, "+Inf"]
	for (i = 1; i <= n; i++) if (rank <= c[i]) break
	if (n < i) return n ? sprintf("%.3f", u[n]) : "none"
	if (i == 1) { if (u[1] <= 0) return sprintf("%.3f", u[1]); lo = 0; below = 0 }
	else { lo = u[i - 1]; below = c[i - 1] }
	return sprintf("%.3f", lo + (u[i] - lo) * (rank - below) / (c[i] - below))
}
function metric(l,   p, e, name, lab, rest, f, v, fam) {
	if (l !~ /^kubeproxy_/) return
	p = index(l, "{")
	if (p) {
		name = substr(l, 1, p - 1); e = index(l, "}")
		lab = substr(l, p + 1, e - p - 1); rest = substr(l, e + 1)
	} else {
		p = index(l, " "); name = substr(l, 1, p - 1); lab = ""; rest = substr(l, p)
	}
	if (split(rest, f, " ") == 0) return
	v = f[1] + 0; fam = label(lab, "ip_family")
	if (name == "kubeproxy_sync_proxy_rules_duration_seconds_bucket") bucket("sync", label(lab, "le"), v)
	else if (name == "kubeproxy_sync_proxy_rules_duration_seconds_sum") { ssum += v; seen["sum"] = 1 }
	else if (name == "kubeproxy_sync_proxy_rules_duration_seconds_count") { scount += v; seen["count"] = 1 }
	else if (name == "kubeproxy_network_programming_duration_seconds_bucket") bucket("netprog", label(lab, "le"), v)
	else if (name == "kubeproxy_sync_proxy_rules_iptables_total") { rules[label(lab, "table")] += v; seen["rules"] = 1 }
	else if (name == "kubeproxy_sync_proxy_rules_last_timestamp_seconds") { last[fam] = v; seen["last"] = 1 }
	else if (name == "kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds") queued[fam] = v
	else if (name == "kubeproxy_sync_proxy_rules_iptables_restore_failures_total" || name == "kubeproxy_sync_proxy_rules_nftables_sync_failures_total") { fails += v; seen["fails"] = 1 }
	# Its health server counts its own answers by code (pkg/proxy/
	# healthcheck/proxy_health.go ServeHTTP; pkg/proxy/metrics/metrics.go
	# ProxyHealthzTotal, ProxyLivezTotal): the 503s since kube-proxy
	# started, the failed probes of kubelet among them.
	else if (name == "kubeproxy_proxy_healthz_total") { seen["hz"] = 1; if (label(lab, "code") == "503") hz503 += v }
	else if (name == "kubeproxy_proxy_livez_total") { seen["lz"] = 1; if (label(lab, "code") == "503") lz503 += v }
	else if (name == "kubeproxy_sync_proxy_rules_endpoint_changes_pending") { epend += v; seen["epend"] = 1 }
	else if (name == "kubeproxy_sync_proxy_rules_service_changes_pending") { spend += v; seen["spend"] = 1 }
}
# val prints a metric fact: the value where the metrics answer has the
# series, else miss().
function val(k, present, fmtv, v) { put("kubeproxy.metrics." k, (ok && present) ? sprintf(fmtv, v) : miss()) }
# miss is the value of a metric not read. "absent": the answer of kube-proxy
# was read and lacks the series (older versions, another mode), or nothing
# of kube-proxy answers on the node, on neither port (not running, or
# replaced by Cilium or Calico eBPF). "unknown": the metrics should be
# there and were not read, looked at and not known: the port answered
# other than with the 200 of kube-proxy (a 403 or 401 of an auth proxy
# such as kube-rbac-proxy in front of it, a 500), no HTTP client could ask,
# or it refused while kube-proxy answered on its health port (metrics
# bound where this login could not see: the manifest is root-only).
function miss(   hc) {
	if (ok) return "absent"
	hc = code["healthz"]
	if ((mcode == "000" || mcode == "") && (hc == "000" || hc == "")) return "absent"
	return "unknown"
}
# 10256 is 0x2810; state 0A is LISTEN. /proc/net/tcp needs no root, unlike
# ss -p.
function listening(   i, f, l, w, a, found) {
	for (i = 1; i <= 2; i++) {
		f = root (i == 1 ? "/proc/net/tcp" : "/proc/net/tcp6")
		if ((getline l < f) > 0)
			while ((getline l < f) > 0)
				if (split(l, w, " ") >= 4 && w[4] == "0A" && split(w[2], a, ":") >= 2 && a[2] == "2810") found = 1
		close(f)
	}
	return found ? "yes" : "no"
}
function health(   w, c, b, t, el, lu, ct, st, d, hc, lc, h) {
	for (w in code) {
		c = code[w]
		if (c == "000" || c == "") c = "connect-failed"
		put("kubeproxy." w ".code", c)
		put("kubeproxy." w ".body", (body[w] == "" ? "absent" : substr(body[w], 1, 2048)))
	}
	# KEP-3836: since 1.28 /healthz also fails on a Node being deleted or
	# marked ToBeDeletedByClusterAutoscaler (SyncNode; cordon and drain set
	# neither); the body says so with "nodeEligible": false.
	b = body["healthz"]; t = b; gsub(/[ \t]/, "", t)
	el = index(t, "\"nodeEligible\":false") ? "false" : index(t, "\"nodeEligible\":true") ? "true" : "absent"
	put("kubeproxy.healthz.node_eligible", el)
	lu = jtime(b, "lastUpdated"); ct = jtime(b, "currentTime")
	if (lu == "" || ct == "") st = "absent"
	else if (lu == "zero") st = "never"
	else { d = ct - lu; st = sprintf("%.1f", d < 0 ? 0 : d) }
	put("kubeproxy.healthz.stale_seconds", st)
	# What the two answers mean, by the rules of kube-proxy itself
	# (pkg/proxy/healthcheck/proxy_health.go, 1.28+): both endpoints run
	# the same sync-health test and /healthz also requires nodeEligible. So
	# a late or failing sync loop answers 503 on both; /healthz 503 with
	# /livez 200 means only that the Node is being deleted or scaled down.
	# Before 1.28 there is no /livez (404) and /healthz 503 is the loop.
	hc = code["healthz"]; lc = code["livez"]
	if (hc == "200") h = "healthy"
	else if (hc == "000" || hc == "") h = "not-answering"
	else if (hc != "503") h = "unknown"
	else if (lc == "503") h = "unhealthy"
	else if (lc == "200") h = el == "false" ? "ineligible" : "unknown"
	else if (lc == "404") h = el == "false" ? "ineligible" : "unhealthy"
	else h = "unknown"
	put("kubeproxy.health", h)
}
# The lines of each answer are kept up to its "@@FA_HTTP <code> <url>"
# line, which says whose they are: a health body is joined by blanks, the
# first metrics answer that connected is read line by line.
/^@@FA_HTTP / {
	w = $3; sub(/.*\//, "", w); a = $3; sub(/^[a-z]*:\/\//, "", a); sub(/\/.*/, "", a)
	if (w != "metrics") {
		hb = ""
		for (i = 1; i <= nl; i++) hb = hb (i > 1 ? " " : "") line[i]
		answer(w, hb, $2, a)
	} else if (mcode == "" || mcode == "000") {
		done = 1
		mcode = $2
		for (i = 1; i <= nl; i++) metric(line[i])
	}
	nl = 0
	next
}
{ line[++nl] = $0 }
END {
	# The metrics URL is asked last, and curl (or the wget loop) closes
	# every answer with its marker, a failed one too: without the metrics
	# marker the client was killed mid-request by the watchdog of the probe, and
	# what it did not get is no answer ("connect-failed") but nothing known.
	# No fact is printed then; the probe is a timeout.
	if (!done) exit
	put("kubeproxy.port10256.listening", listening())
	put("kubeproxy.healthz.address", code["healthz"] == "" || code["healthz"] == "000" || code["healthz"] == "no-client" ? "none" : addr["healthz"])
	health()
	status = mcode == "200" ? "ok" : mcode == "no-client" ? "no-client" : (mcode == "000" || mcode == "") ? "connect-failed" : "http-" mcode
	put("kubeproxy.metrics.status", status)
	ok = status == "ok"
	val("sync_count", "count" in seen, "%.0f", scount)
	val("sync_sum_seconds", "sum" in seen, "%.3f", ssum)
	put("kubeproxy.metrics.sync_mean_seconds", !(ok && ("count" in seen) && ("sum" in seen)) ? miss() : scount == 0 ? "none" : sprintf("%.3f", ssum / scount))
	put("kubeproxy.metrics.sync_p50_seconds", (ok && nle["sync"]) ? quantile("sync", 0.5) : miss())
	put("kubeproxy.metrics.sync_p95_seconds", (ok && nle["sync"]) ? quantile("sync", 0.95) : miss())
	put("kubeproxy.metrics.sync_p99_seconds", (ok && nle["sync"]) ? quantile("sync", 0.99) : miss())
	put("kubeproxy.metrics.netprog_p99_seconds", (ok && nle["netprog"]) ? quantile("netprog", 0.99) : miss())
	val("iptables_rules_filter", "rules" in seen, "%.0f", rules["filter"])
	val("iptables_rules_nat", "rules" in seen, "%.0f", rules["nat"])
	# queued after last means a sync is still waiting; a healthy loop runs
	# it within --iptables-min-sync-period plus one sync.
	oldest = ""; worst = 0
	for (f in last) {
		if (oldest == "" || last[f] < oldest) oldest = last[f]
		if ((f in queued) && worst < queued[f] - last[f]) worst = queued[f] - last[f]
	}
	# The clock of kube-proxy (see the top), else the one of the node.
	now = jtime(body["healthz"], "currentTime")
	if (now == "" || now == "zero") now = jtime(body["livez"], "currentTime")
	if ((now == "" || now == "zero") && ("last" in seen)) {
		c = "exec date +%s 2>/dev/null"
		if ((c | getline now) <= 0) now = ""
		close(c)
	}
	age = now - oldest
	val("sync_age_seconds", ("last" in seen) && now != "", "%.0f", age < 0 ? 0 : age)
	val("queue_lag_seconds", "last" in seen, "%.0f", worst)
	val("restore_failures", "fails" in seen, "%.0f", fails)
	val("endpoint_changes_pending", "epend" in seen, "%.0f", epend)
	val("service_changes_pending", "spend" in seen, "%.0f", spend)
	val("healthz_503", "hz" in seen, "%.0f", hz503)
	val("livez_503", "lz" in seen, "%.0f", lz503)
}'
