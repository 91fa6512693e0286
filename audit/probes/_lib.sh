# Shared helpers, prepended to every probe. Files are read under
# ${FLEET_AUDIT_ROOT:-} so a simulated node can point them elsewhere; on a real
# node the variable is unset and the real /proc, /sys and /etc are read.
R=${FLEET_AUDIT_ROOT:-}
# fact KEY VALUE prints one fact on one line; newlines and CRs in the value are
# folded so a value can never forge another fact line.
# Only a value that holds a CR or LF pays for the fork of tr: most do not,
# and a probe prints dozens of facts.
fa_cr=$(printf '\r')
fact() {
	case $2 in
	*"$fa_cr"* | *'
'*) set -- "$1" "$(printf '%s' "$2" | tr '\r\n' '  ')" ;;
	esac
	printf '%s=%s\n' "$1" "$2"
}
have() { command -v "$1" >/dev/null 2>&1; }
# readf FILE prints the first line of FILE, or "absent".
readf() {
	if [ -r "$R$1" ]; then
		head -n 1 "$R$1"
	else
		echo absent
	fi
}
is_root() { [ "$(id -u)" = 0 ]; }
