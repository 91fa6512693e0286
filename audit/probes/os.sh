# id: os
# description: kernel release, OS release and hostname
# needs_root: false
# timeout: 10s
# facts: os.kernel os.id os.version_id os.pretty_name os.hostname
# volatile: os.hostname

# read(1) is a shell builtin: the two /proc files cost no fork.
k=absent
[ -r "$R/proc/sys/kernel/osrelease" ] && IFS= read -r k <"$R/proc/sys/kernel/osrelease"
h=absent
[ -r "$R/proc/sys/kernel/hostname" ] && IFS= read -r h <"$R/proc/sys/kernel/hostname"
fact os.kernel "${k:-absent}"
fact os.hostname "${h:-absent}"
id=absent ver=absent pretty=absent
if [ -r "$R/etc/os-release" ]; then
	# Parsed, never sourced: os-release is data, not a script. One awk for
	# the three keys; the first occurrence wins, as in systemd's parser.
	out=$(awk -F= '
		($1 == "ID" || $1 == "VERSION_ID" || $1 == "PRETTY_NAME") && !($1 in seen) {
			seen[$1] = 1
			v = substr($0, length($1) + 2)
			gsub(/^["'\'']|["'\'']$/, "", v)
			print $1 "\t" v
		}' "$R/etc/os-release")
	tab=$(printf '\t')
	while IFS=$tab read -r key val; do
		case $key in
		ID) id=$val ;;
		VERSION_ID) ver=$val ;;
		PRETTY_NAME) pretty=$val ;;
		esac
	done <<EOT
$out
EOT
fi
fact os.id "${id:-absent}"
fact os.version_id "${ver:-absent}"
fact os.pretty_name "${pretty:-absent}"
