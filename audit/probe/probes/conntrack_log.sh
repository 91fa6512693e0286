# id: conntrack_log
# description: the kernel's "nf_conntrack: table full, dropping packet" messages of this boot, counted and never printed, from the journal (journalctl -k -b), else the ring buffer (dmesg), else /var/log/kern.log
# needs_root: true
# timeout: 25s
# facts: conntrack.table_full_logged conntrack.table_full_log
# volatile: conntrack.table_full_logged conntrack.table_full_log

# __nf_conntrack_alloc (linux net/netfilter/nf_conntrack_core.c) logs
# net_warn_ratelimited("nf_conntrack: table full, dropping packet\n") for a
# packet it drops because the table is at nf_conntrack_max and early_drop
# found no entry to evict; recent kernels say "table full in netns %u,
# dropping packet" for a namespace other than the host's. net_ratelimit
# lets 10 through a burst (net.core.message_burst), so the count is a
# floor of the drops, which the sysctl probe's conntrack.drop counts.
#
# Only the count leaves the node: the lines hold addresses and names.
# Sources in order, each read-only, each given at most 10 s (timeout(1),
# where there is one; the probe's own limit is above):
#   journalctl -k -b: this boot's kernel messages. It needs root, or
#     the systemd-journal group (or one the journal's ACL names: adm,
#     wheel); anyone else reads only their own journal files, gets a
#     "Hint: You are currently not seeing messages from ..." notice on
#     stderr and exits 0 with "-- No entries --" (systemd
#     src/shared/journal-util.c, journal_access_check_and_warn), which
#     looks like a clean log: the notice, kept on purpose (no -q), or
#     "No journal files were opened due to insufficient permissions.",
#     rejects the answer. "No journal files were found." (journald with
#     Storage=none keeps nothing, same file) is no answer either: the
#     ring buffer is asked next.
#   dmesg: the ring buffer since boot (older messages may have been
#     overwritten: a floor again). With kernel.dmesg_restrict = 1 it
#     needs CAP_SYSLOG and fails with "Operation not permitted", exit 1
#     (Documentation/admin-guide/sysctl/kernel.rst). Never -c or -C,
#     which clear the buffer.
#   /var/log/kern.log: rsyslog's copy (Debian, Ubuntu; root:adm 0640),
#     counted from the last "Linux version" banner (init/main.c
#     linux_banner, the first message of a boot, after its "[time]" where
#     printk.time is on) to count this boot only.
# Nothing read: where a source refused the login, "not-root" (the
# probe ran without root: become fixes it, as for every root probe),
# "unreadable" where one refused root itself (an LSM), else "unknown" (no
# source at all, or one that failed); never 0.
fa_to=
have timeout && fa_to="timeout 10"
# fa_tfc counts the table-full lines of a source's output; the output
# ends with "@@FA_RC <exit status>", which no log line can forge (every
# journalctl and dmesg line starts with a time stamp). It prints "COUNT
# STATE RC", STATE 0 for an answer, 1 for a refusal, 2 for a journal
# that stores nothing.
# shellcheck disable=SC2016 # an awk program: its $ are awk's
fa_tfc='
/^@@FA_RC / { rc = $2; next }
/^Hint: You are currently not seeing messages from/ { refused = 1; next }
/^No journal files were opened due to insufficient permissions/ { refused = 1; next }
/^No journal files were found/ { if (!refused) refused = 2; next }
/Operation not permitted/ && !/kernel:/ && !/^\[/ { refused = 1; next }
boot && /kernel: (\[ *[0-9.]+\] )?Linux version / { n = 0 }
/nf_conntrack: table full/ { n++ }
END { print n + 0, refused + 0, (rc == "" ? 0 : rc) }'
fa_n='' fa_src='' fa_refused=''
if have journalctl; then
	fa_r=$({ $fa_to journalctl -k -b --no-pager 2>&1; echo "@@FA_RC $?"; } | awk "$fa_tfc")
	# shellcheck disable=SC2086 # the awk program prints three words, split on purpose
	set -- $fa_r
	if [ "$#" = 3 ] && [ "$2" = 0 ] && [ "$3" = 0 ]; then
		fa_n=$1 fa_src=journal
	elif [ "$2" = 1 ]; then
		fa_refused=1
	fi
fi
if [ -z "$fa_src" ] && have dmesg; then
	fa_r=$({ $fa_to dmesg 2>&1; echo "@@FA_RC $?"; } | awk "$fa_tfc")
	# shellcheck disable=SC2086 # the awk program prints three words, split on purpose
	set -- $fa_r
	if [ "$#" = 3 ] && [ "$2" = 0 ] && [ "$3" = 0 ]; then
		fa_n=$1 fa_src=dmesg
	elif [ "$2" = 1 ]; then
		fa_refused=1
	fi
fi
if [ -z "$fa_src" ] && [ -e "$R/var/log/kern.log" ]; then
	if [ -r "$R/var/log/kern.log" ]; then
		fa_r=$(awk -v boot=1 "$fa_tfc" "$R/var/log/kern.log")
		fa_n=${fa_r%% *} fa_src=kern.log
	else
		fa_refused=1
	fi
fi
if [ -z "$fa_src" ]; then
	fa_src=none fa_n=unknown
	if [ -n "$fa_refused" ]; then
		fa_n=unreadable
		is_root || fa_n=not-root
	fi
fi
fact conntrack.table_full_logged "$fa_n"
fact conntrack.table_full_log "$fa_src"
