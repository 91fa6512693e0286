# id: firewall
# description: host firewall managers (ufw, firewalld) that fight kube-proxy over iptables
# needs_root: true
# timeout: 15s
# facts: ufw.installed ufw.active ufw.enabled ufw.status firewalld.installed firewalld.active firewalld.enabled
unit_state() {
	# systemctl prints a state word even for unknown units; an empty answer
	# (no systemd, unit file missing for is-enabled) is reported as absent.
	if have systemctl; then
		s=$(systemctl "$1" "$2" 2>/dev/null | head -n 1)
		[ -n "$s" ] || s=absent
	else
		s=absent
	fi
	printf '%s' "$s"
}
if have ufw || [ -e "$R/etc/ufw/ufw.conf" ]; then
	fact ufw.installed yes
	fact ufw.active "$(unit_state is-active ufw)"
	fact ufw.enabled "$(unit_state is-enabled ufw)"
	if is_root && have ufw; then
		st=$(ufw status 2>/dev/null | sed -n 's/^Status: //p' | head -n 1)
		fact ufw.status "${st:-unknown}"
	else
		fact ufw.status not-root
	fi
else
	fact ufw.installed no
	fact ufw.active absent
	fact ufw.enabled absent
	fact ufw.status absent
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
