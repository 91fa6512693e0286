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
if have ufw || [ -e "$R/etc/ufw/ufw.conf" ]; then
	fact ufw.installed yes
	fact ufw.active "$(unit_state is-active ufw)"
	fact ufw.enabled "$(unit_state is-enabled ufw)"
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
		# (outgoing), deny (routed)"; an inactive ufw prints only its status.
		set -f
		# shellcheck disable=SC2046
		set -- $(ufw status verbose 2>/dev/null | awk '
/^Status: / { s = $2 }
/^Default: / {
	for (i = 2; i < NF; i += 2) { p = $(i + 1); gsub(/[(),]/, "", p); d[p] = $i }
}
END {
	if (s == "") s = "unknown"
	dflt = (s == "active") ? "unknown" : s
	for (i = 1; i <= 3; i++) { p = (i == 1) ? "incoming" : (i == 2) ? "outgoing" : "routed"; if (!(p in d)) d[p] = dflt }
	print s, d["incoming"], d["outgoing"], d["routed"]
}')
		set +f
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
if have firewalld || have firewall-cmd || [ -d "$R/etc/firewalld" ]; then
	fact firewalld.installed yes
	fact firewalld.active "$(unit_state is-active firewalld)"
	fact firewalld.enabled "$(unit_state is-enabled firewalld)"
else
	fact firewalld.installed no
	fact firewalld.active absent
	fact firewalld.enabled absent
fi
