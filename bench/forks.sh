#!/bin/sh
# Forks and CPU a healthy simulated node pays per probe and for the whole
# bundle (issue 17's lighter touch): BenchmarkProbeCost in audit. Forks are
# counted system-wide (/proc/stat), so run it on an idle machine.
set -eu
cd "$(dirname "$0")/.."
go test -run '^$' -bench 'BenchmarkProbeCost' -benchtime "${BENCHTIME:-5x}" ./audit |
	awk '/^BenchmarkProbeCost\// {
		name = $1; sub(/^BenchmarkProbeCost\//, "", name); sub(/-[0-9]+$/, "", name)
		for (i = 2; i < NF; i++) { if ($(i+1) == "forks/op") f = $i; if ($(i+1) == "cpu-ms/op") c = $i }
		printf "%-24s %8s forks %9s ms CPU\n", name, f, c
	}'
