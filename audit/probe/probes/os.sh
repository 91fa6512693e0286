# id: os
# description: kernel release, OS release and hostname
# needs_root: false
# timeout: 10s
# facts: os.kernel os.id os.version_id os.pretty_name os.hostname
# volatile: os.hostname

# One awk reads the two /proc files and os-release. Not the shell's read
# builtin: dash and busybox read one byte per read(2), which procfs files
# do not all support (the integer sysctls return nothing past offset 0).
# os-release is parsed, never sourced: it is data, not a script; the first
# occurrence of a key wins, as in systemd's parser.
awk -v root="$R" "$fa_awk_fact"'
function first(f,   v) {
	v = ""
	if ((getline v < (root f)) < 0) v = "absent"
	close(root f)
	return v == "" ? "absent" : v
}
BEGIN {
	fact("os.kernel", first("/proc/sys/kernel/osrelease"))
	fact("os.hostname", first("/proc/sys/kernel/hostname"))
	v["ID"] = v["VERSION_ID"] = v["PRETTY_NAME"] = "absent"
	f = root "/etc/os-release"
	while ((getline l < f) > 0) {
		k = l; sub(/=.*/, "", k)
		if ((k in v) && !(k in seen) && index(l, "=")) {
			seen[k] = 1
			x = substr(l, length(k) + 2)
			gsub(/^["'\'']|["'\'']$/, "", x)
			v[k] = x == "" ? "absent" : x
		}
	}
	close(f)
	fact("os.id", v["ID"])
	fact("os.version_id", v["VERSION_ID"])
	fact("os.pretty_name", v["PRETTY_NAME"])
}' </dev/null
