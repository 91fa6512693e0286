#!/bin/sh
# ShellCheck over the probes as a node runs them (make lint): each probe's
# subshell runs _lib.sh, a line break, then the probe (audit/probe/bundle.go,
# quotedProbe), user probes too, so each probe is checked after the library,
# where the fa_ variables it reads are set, and shellcheck's line numbers
# are mapped back to the probe's own file. The library is checked alone,
# once. Probes are POSIX sh: -s sh.
set -eu
lib=audit/probe/probes/_lib.sh
shellcheck -s sh "$lib" .ci/shellcheck.sh
# Lines of the library and the line break before the probe.
skip=$(($(wc -l <"$lib") + 1))
found=0
for p in audit/probe/probes/*.sh examples/probes/*.sh; do
	[ "$p" = "$lib" ] && continue
	# The library's own findings were reported above.
	if ! { cat "$lib"; echo; cat "$p"; } | shellcheck -s sh -f gcc - |
		awk -F: -v skip="$skip" -v p="$p" '$2 > skip { $1 = p; $2 -= skip; print; n++ } END { exit n > 0 }' OFS=:; then
		found=1
	fi
done
exit "$found"
