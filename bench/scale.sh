#!/bin/sh
# The client alone at 100, 1,000 and 10,000 nodes (issue 17, "linear to
# 10,000 nodes"): audit.BenchmarkScale, one process per fleet size so that
# each peak RSS is that run's, printed as one table. The nodes replay a
# recorded bundle output and cost nothing; SSH is not in it. Numbers are
# measured here, never asserted in tests. About a minute on 2 cores.
#
#   sh bench/scale.sh            NODES="100 1000" sh bench/scale.sh
set -eu
cd "$(dirname "$0")/.."
GO=${GO:-go}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fleet-audit-scale.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

"$GO" test -c -o "$tmp/audit.test" ./audit
for n in ${NODES:-100 1000 10000}; do
	if ! (cd audit && "$tmp/audit.test" -test.run '^$' -test.bench "^BenchmarkScale\$/^nodes=$n\$" \
		-test.benchtime 1x -test.timeout 15m) >"$tmp/$n.txt" 2>&1; then
		cat "$tmp/$n.txt"
		echo "scale.sh: the benchmark failed at $n nodes" >&2
		exit 1
	fi
	grep '^BenchmarkScale/' "$tmp/$n.txt" >>"$tmp/raw.txt"
done

# A benchmark line is: name iterations (value unit)...; metrics are looked up
# by unit so their order does not matter.
awk '
function metric(unit,   i) {
	for (i = 3; i < NF; i += 2) if ($(i + 1) == unit) return $i
	return ""
}
function kib(unit) { return sprintf("%.0f", metric(unit) / 1024) }
{
	n = $1; sub(/^.*nodes=/, "", n); sub(/-[0-9]+$/, "", n)
	run[++rows] = sprintf("%6s %8.1f %8.1f %8.2f %9.0f %9.1f %8.0f", n, metric("wall-s"), metric("cpu-s"),
		metric("cpu-ms/node"), metric("peak-RSS-MiB"), metric("allocs/op") / 1e6, metric("B/op") / 1048576)
	size[rows] = sprintf("%6s %9s %9s %9s %9s %9s %9s %9s", n, kib("json-bytes"), kib("markdown-bytes"),
		kib("markdown-summary-bytes"), kib("html-bytes"), kib("junit-bytes"), kib("prom-bytes"), kib("terminal-bytes"))
	took[rows] = sprintf("%6s %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f", n, metric("json-s"), metric("markdown-s"),
		metric("markdown-summary-s"), metric("html-s"), metric("junit-s"), metric("prom-s"), metric("terminal-s"))
}
END {
	if (rows == 0) exit 1
	print "client alone: audit.Run over replayed nodes, then every report format written"
	printf "%6s %8s %8s %8s %9s %9s %8s\n", "nodes", "wall s", "CPU s", "CPU ms", "peak RSS", "allocs", "alloc"
	printf "%6s %8s %8s %8s %9s %9s %8s\n", "", "", "", "/node", "MiB", "M", "MiB"
	for (i = 1; i <= rows; i++) print run[i]
	print ""
	print "report size, KiB"
	printf "%6s %9s %9s %9s %9s %9s %9s %9s\n", "nodes", "json", "markdown", "md-summ.", "html", "junit", "prom", "terminal"
	for (i = 1; i <= rows; i++) print size[i]
	print ""
	print "render and write, s"
	printf "%6s %9s %9s %9s %9s %9s %9s %9s\n", "nodes", "json", "markdown", "md-summ.", "html", "junit", "prom", "terminal"
	for (i = 1; i <= rows; i++) print took[i]
}' "$tmp/raw.txt"
