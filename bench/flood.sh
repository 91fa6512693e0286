#!/bin/sh
# Client memory under an output flood: peak RSS and wall time of the built
# fleet-audit binary auditing two healthy simulated nodes plus nodes that print
# 50 MiB and 500 MiB, and what one remote.Run allocates and keeps against such
# a node. Numbers are measured here, never asserted; the benchmarks do fail if
# a flood node is not output_truncated or a healthy node not ok.
#
#   bash bench/flood.sh            BENCHTIME=10x bash bench/flood.sh
set -eu
cd "$(dirname "$0")/.."
GO=${GO:-go}
raw=$(mktemp "${TMPDIR:-/tmp}/fleet-audit-flood.XXXXXX")
trap 'rm -f "$raw"' EXIT

if ! "$GO" test -run '^$' -bench 'BenchmarkFloodRSS|BenchmarkRunFlood' -benchtime="${BENCHTIME:-3x}" \
	-timeout 30m ./cmd/fleet-audit ./remote >"$raw" 2>&1; then
	cat "$raw"
	echo "flood.sh: the benchmarks failed" >&2
	exit 1
fi
grep -E '^(cpu:|Benchmark)' "$raw"
echo

# A benchmark line is: name iterations (value unit)...; metrics are looked up
# by unit so their order does not matter.
awk '
function metric(unit,   i) {
	for (i = 3; i < NF; i += 2) if ($(i + 1) == unit) return $i
	return ""
}
function variant(name) {
	sub(/^.*flood=/, "", name)
	sub(/-[0-9]+$/, "", name)
	return name
}
/^BenchmarkFloodRSS\// {
	cli[++nc] = sprintf("%-20s %14.1f %16.2f", variant($1), metric("peak-RSS-MiB"), metric("ns/op") / 1e9)
}
/^BenchmarkRunFlood\// {
	run[++nr] = sprintf("%-20s %14d %16.1f %14.2f", variant($1), metric("kept-bytes"), metric("B/op") / 1048576, metric("ns/op") / 1e9)
}
END {
	print "fleet-audit run (subprocess), 2 healthy nodes plus:"
	printf "%-20s %14s %16s\n", "flood", "peak RSS MiB", "wall s/audit"
	for (i = 1; i <= nc; i++) print cli[i]
	print ""
	print "remote.Run against one flood node (in process):"
	printf "%-20s %14s %16s %14s\n", "flood", "kept bytes", "allocated MiB", "wall s/run"
	for (i = 1; i <= nr; i++) print run[i]
	if (nc == 0 || nr == 0) exit 1
}' "$raw"
