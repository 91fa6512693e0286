# id: rke2
# description: RKE2 version and which rke2 service is active (never reads config.yaml: it holds the join token)
# needs_root: false
# timeout: 10s
# facts: rke2.version rke2.service rke2.server.active rke2.agent.active
# role_scoped: rke2.service rke2.server.active rke2.agent.active
bin=
for b in rke2 /usr/local/bin/rke2 /opt/rke2/bin/rke2 /usr/bin/rke2; do
	if have "$b"; then bin=$b; break; fi
done
if [ -n "$bin" ]; then
	v=$("$bin" --version 2>/dev/null | sed -n 's/^rke2 version \([^ ]*\).*/\1/p' | head -n 1)
	fact rke2.version "${v:-unknown}"
else
	fact rke2.version absent
fi
svc=none
for u in server agent; do
	if have systemctl; then
		s=$(systemctl is-active "rke2-$u" 2>/dev/null | head -n 1)
	else
		s=
	fi
	fact "rke2.$u.active" "${s:-absent}"
	[ "$s" = active ] && svc="rke2-$u"
done
fact rke2.service "$svc"
