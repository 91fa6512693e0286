# id: os
# description: kernel release, OS release and hostname
# needs_root: false
# timeout: 10s
# facts: os.kernel os.id os.version_id os.pretty_name os.hostname
# volatile: os.hostname
fact os.kernel "$(readf /proc/sys/kernel/osrelease)"
fact os.hostname "$(readf /proc/sys/kernel/hostname)"
if [ -r "$R/etc/os-release" ]; then
	# Parsed with sed, never sourced: os-release is data, not a script.
	osr() { sed -n "s/^$1=//p" "$R/etc/os-release" | head -n 1 | sed 's/^"//; s/"$//'; }
	fact os.id "$(osr ID)"
	fact os.version_id "$(osr VERSION_ID)"
	fact os.pretty_name "$(osr PRETTY_NAME)"
else
	fact os.id absent
	fact os.version_id absent
	fact os.pretty_name absent
fi
