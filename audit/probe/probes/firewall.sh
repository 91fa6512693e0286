# id: firewall
# description: host firewall managers (ufw, firewalld) that fight kube-proxy over iptables
# needs_root: true
# timeout: 15s
# facts: ufw.installed ufw.active ufw.enabled ufw.status ufw.config_enabled ufw.default_incoming ufw.default_outgoing ufw.default_routed firewalld.installed firewalld.active firewalld.enabled
ufw_policies() {
	for k in incoming outgoing routed; do
		fact "ufw.default_$k" "$1"
	done
}
# One systemctl for the units of both managers (unit_states).
ufw_here='' fwd_here='' units=''
if have ufw || [ -e "$R/etc/ufw/ufw.conf" ]; then
	ufw_here=1 units=ufw
fi
if have firewalld || have firewall-cmd || [ -d "$R/etc/firewalld" ]; then
	fwd_here=1 units="$units firewalld"
fi
# shellcheck disable=SC2086 # one unit name a word, split on purpose
[ -n "$units" ] && unit_states $units
if [ -n "$ufw_here" ]; then
	fact ufw.installed yes
	unit_state_of ufw
	fact ufw.active "$fa_ua"
	fact ufw.enabled "$fa_ue"
	# ENABLED= in ufw.conf is what ufw-init obeys at boot, whatever the
	# unit says: Ubuntu's ufw.service is enabled and "active (exited)" even
	# when ufw filters nothing. Readable without root; read with no fork.
	cfg=absent
	if [ -r "$R/etc/ufw/ufw.conf" ]; then
		cfg=unknown
		while IFS= read -r l; do
			case $l in
			ENABLED=*)
				cfg=${l#ENABLED=}
				cfg=${cfg#\"}
				cfg=${cfg%\"}
				;;
			esac
		done <"$R/etc/ufw/ufw.conf"
	fi
	fact ufw.config_enabled "$cfg"
	if ! have ufw; then
		# ufw.conf left behind by a removed package: nothing to ask.
		fact ufw.status absent
		ufw_policies absent
	elif is_root; then
		# "Status: active", then "Default: deny (incoming), allow
		# (outgoing), deny (routed)"; an inactive ufw prints only its
		# status. Parsed by the shell: no awk.
		out=$(ufw status verbose 2>/dev/null)
		st='' pin='' pout='' prouted=''
		set -f
		while IFS= read -r l; do
			case $l in
			"Status: "*)
				# shellcheck disable=SC2086
				set -- $l
				st=$2
				;;
			"Default: "*)
				# shellcheck disable=SC2086
				set -- $l
				shift
				# Pairs of a policy and its "(direction)," word, whose
				# parentheses and commas are dropped.
				while [ $# -ge 2 ]; do
					w=$2 p=
					while [ -n "$w" ]; do
						c=${w%"${w#?}"}
						w=${w#?}
						case $c in "(" | ")" | ",") ;; *) p=$p$c ;; esac
					done
					case $p in
					incoming) pin=$1 ;;
					outgoing) pout=$1 ;;
					routed) prouted=$1 ;;
					esac
					shift 2
				done
				;;
			esac
		done <<EOF
$out
EOF
		set +f
		st=${st:-unknown}
		dflt=$st
		[ "$st" = active ] && dflt=unknown
		set -- "$st" "${pin:-$dflt}" "${pout:-$dflt}" "${prouted:-$dflt}"
		fact ufw.status "$1"
		fact ufw.default_incoming "$2"
		fact ufw.default_outgoing "$3"
		fact ufw.default_routed "$4"
	else
		fact ufw.status not-root
		ufw_policies not-root
	fi
else
	fact ufw.installed no
	fact ufw.active absent
	fact ufw.enabled absent
	fact ufw.status absent
	fact ufw.config_enabled absent
	ufw_policies absent
fi
if [ -n "$fwd_here" ]; then
	fact firewalld.installed yes
	unit_state_of firewalld
	fact firewalld.active "$fa_ua"
	fact firewalld.enabled "$fa_ue"
else
	fact firewalld.installed no
	fact firewalld.active absent
	fact firewalld.enabled absent
fi
