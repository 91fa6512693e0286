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
tab=$(printf '\t')
out=$(awk -v root="$R" '
function first(f,   v) {
	v = ""
	if ((getline v < (root f)) < 0) v = "absent"
	close(root f)
	return v == "" ? "absent" : v
}
BEGIN {
	print "os.kernel\t" first("/proc/sys/kernel/osrelease")
	print "os.hostname\t" first("/proc/sys/kernel/hostname")
	f = root "/etc/os-release"
	while ((getline l < f) > 0) {
		k = l; sub(/=.*/, "", k)
		if ((k == "ID" || k == "VERSION_ID" || k == "PRETTY_NAME") && !(k in seen) && index(l, "=")) {
			seen[k] = 1
			v = substr(l, length(k) + 2)
			gsub(/^["'\'']|["'\'']$/, "", v)
			print "os." k "\t" v
		}
	}
	close(f)
}' </dev/null)
k=absent h=absent id=absent ver=absent pretty=absent
while IFS=$tab read -r key val; do
	case $key in
	os.kernel) k=$val ;;
	os.hostname) h=$val ;;
	os.ID) id=$val ;;
	os.VERSION_ID) ver=$val ;;
	os.PRETTY_NAME) pretty=$val ;;
	esac
done <<EOT
$out
EOT
fact os.kernel "${k:-absent}"
fact os.hostname "${h:-absent}"
fact os.id "${id:-absent}"
fact os.version_id "${ver:-absent}"
fact os.pretty_name "${pretty:-absent}"
