# id: hosts
# description: whether /etc/hosts maps the node's own hostname (an example user probe)
# needs_root: false
# timeout: 5s
# facts: hosts.self

# An example of a --probes DIR probe. The header ends at the first line that
# is not a comment. The body runs like the builtin probes, with the helpers
# of _lib.sh (R, fact, readf): read-only, files read under "$R", one fact
# line per declared key. Names are matched case-insensitively and by
# their short form too, since "10.0.0.5 worker-1.example.com worker-1" and
# "10.0.0.5 worker-1" both let the node resolve itself.
h=$(readf /proc/sys/kernel/hostname)
if [ ! -r "$R/etc/hosts" ]; then
	fact hosts.self absent
elif [ "$h" = absent ] || [ -z "$h" ]; then
	fact hosts.self unknown
else
	fact hosts.self "$(awk -v h="$h" '
		BEGIN { h = tolower(h); s = h; sub(/\..*/, "", s); found = 0 }
		{
			sub(/#.*/, "")
			for (i = 2; i <= NF; i++) {
				n = tolower($i); ns = n; sub(/\..*/, "", ns)
				if (n == h || n == s || ns == h) found = 1
			}
		}
		END { print (found ? "present" : "missing") }' "$R/etc/hosts")"
fi
