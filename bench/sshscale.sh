#!/bin/sh
# The client's cost per node over real SSH (issue 31): BenchmarkSSHScale in
# cmd/fleet-audit/internal/transport at 100, 1,000 and 10,000 nodes on
# 127.0.0.1, each node an in-process SSH server of the fleet process (the
# test binary started again) replaying recorded probe output, so that the
# CPU measured is the client's alone. connect is a dial, one empty script
# and a close; audit is audit.Run with every probe and check. One process
# per size and mode, so that each peak RSS is that run's. Per node: client
# CPU, allocations, the heap kept (beside the facts' own size), context
# switches and goroutines started (wake-ups). Numbers are
# measured here, never asserted in tests. About five minutes on 2 cores.
#
# BEFORE=REV also builds the benchmark of git revision REV (one that has
# it) and runs the two binaries alternately, before then after at each
# size and mode, ROUNDS times (default 1), so both see the same load; the
# load average is printed beside each run, since the CPU of a busy machine
# is slower.
#
#   sh bench/sshscale.sh      NODES="100 1000" MODES=audit BEFORE=main~3 ROUNDS=2 sh bench/sshscale.sh
set -eu
cd "$(dirname "$0")/.."
GO=${GO:-go}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fleet-audit-sshscale.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
pkg=./cmd/fleet-audit/internal/transport

"$GO" test -c -o "$tmp/after.test" "$pkg"
builds=after
if [ -n "${BEFORE:-}" ] && ! git rev-parse --quiet --verify "$BEFORE^{commit}" >/dev/null 2>&1; then
	echo "sshscale.sh: no git revision $BEFORE here (not a clone?): after only" >&2
	BEFORE=
fi
if [ -n "${BEFORE:-}" ]; then
	mkdir "$tmp/before-src"
	git archive "$BEFORE" | tar -x -C "$tmp/before-src"
	(cd "$tmp/before-src" && "$GO" test -c -o "$tmp/before.test" "$pkg")
	builds="before after"
fi

# A fleet of 10,000 nodes holds a listening socket per node: Go raises its
# soft open-file limit to the hard one at start (Go 1.19 release notes, os),
# so a hard limit below 10,000 plus a few is what fails.
round=1
while [ "$round" -le "${ROUNDS:-1}" ]; do
	for n in ${NODES:-100 1000 10000}; do
		for mode in ${MODES:-connect audit}; do
			for build in $builds; do
				load=$(cut -d' ' -f1 /proc/loadavg)
				out="$tmp/$build-$n-$mode-$round.txt"
				if ! (cd "$pkg" && "$tmp/$build.test" -test.run '^$' -test.bench "^BenchmarkSSHScale\$/^nodes=$n\$/^mode=$mode\$" \
					-test.benchtime 1x -test.timeout 30m) >"$out" 2>&1; then
					cat "$out"
					echo "sshscale.sh: the $build benchmark failed at $n nodes, $mode" >&2
					exit 1
				fi
				grep '^BenchmarkSSHScale/' "$out" | sed "s/\$/ $build build $load load $round round/" >>"$tmp/raw.txt"
			done
		done
	done
	round=$((round + 1))
done

# A benchmark line is: name iterations (value unit)...; metrics are looked
# up by unit so their order does not matter.
awk '
function metric(unit,   i) {
	for (i = 3; i < NF; i += 2) if ($(i + 1) == unit) return $i
	return ""
}
{
	n = $1; sub(/^.*nodes=/, "", n); sub(/\/.*$/, "", n)
	mode = $1; sub(/^.*mode=/, "", mode); sub(/-[0-9]+$/, "", mode)
	facts = metric("facts-KiB/node")
	beyond = facts == "" ? "-" : sprintf("%.1f", metric("kept-KiB/node") - facts)
	heap = metric("facts-heap-KiB/node")
	rows[++r] = sprintf("%6s %-8s %-7s %5s %5s %8.1f %7.2f %9.0f %9.0f %8.1f %6.1f %6s %6s %6s %6.1f %6.1f", n, mode, metric("build"), metric("round"), metric("load"),
		metric("wall-s"), metric("cpu-ms/node"), metric("allocs/node"), metric("alloc-KiB/node"), metric("peak-RSS-MiB"),
		metric("kept-KiB/node"), facts == "" ? "-" : sprintf("%.1f", facts), heap == "" ? "-" : sprintf("%.1f", heap), beyond,
		metric("ctxsw/node"), metric("goroutines/node"))
}
END {
	if (r == 0) exit 1
	print "client over SSH, per node: connect = dial + empty script + close; audit = audit.Run, every probe and check"
	print "kept: heap held per node while the report lives; facts: their keys and values, and what their maps and strings hold"
	printf "%6s %-8s %-7s %5s %5s %8s %7s %9s %9s %8s %6s %6s %6s %6s %6s %6s\n", "nodes", "mode", "build", "round", "load", "wall s", "CPU ms", "allocs", "alloc", "peak RSS", "kept", "facts", "facts", "kept-", "ctxsw", "gorout"
	printf "%6s %-8s %-7s %5s %5s %8s %7s %9s %9s %8s %6s %6s %6s %6s %6s %6s\n", "", "", "", "", "1 min", "", "/node", "/node", "KiB/node", "MiB", "KiB", "KiB", "heap", "facts", "/node", "/node"
	for (i = 1; i <= r; i++) print rows[i]
}' "$tmp/raw.txt"
