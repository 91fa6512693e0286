#!/bin/sh
# Speed and memory of the comparator and the output parser, and the wall time
# and peak RSS of a whole demo audit. Numbers are measured here, never
# asserted in tests.
set -eu
cd "$(dirname "$0")/.."
# BenchmarkProbeCost and BenchmarkScale have scripts of their own
# (forks.sh, scale.sh), which make bench runs after this one.
go test -run '^$' -bench '^Benchmark(Analyze|ParseOutput|BundleOnHealthyNode)$' -benchmem -count "${COUNT:-3}" ./audit
make -s build
if [ -x /usr/bin/time ]; then
	/usr/bin/time -v ./bin/fleet-audit demo --out "${TMPDIR:-/tmp}/fleet-audit-bench" 2>&1 >/dev/null |
		grep -E 'Elapsed|Maximum resident'
else
	time ./bin/fleet-audit demo --out "${TMPDIR:-/tmp}/fleet-audit-bench" >/dev/null
fi
# Peak RSS and wall time under an output flood of 50 MiB and 500 MiB.
sh bench/flood.sh
