# id: kubeproxy
# description: kube-proxy /healthz and /livez on 127.0.0.1:10256, asked from the node itself
# needs_root: false
# timeout: 20s
# facts: kubeproxy.port10256.listening kubeproxy.healthz.code kubeproxy.healthz.body kubeproxy.healthz.node_eligible kubeproxy.livez.code kubeproxy.livez.body
# volatile: kubeproxy.healthz.body kubeproxy.livez.body
# 10256 is 0x2810; state 0A is LISTEN. /proc/net/tcp needs no root, unlike ss -p.
listening=no
for f in /proc/net/tcp /proc/net/tcp6; do
	if [ -r "$R$f" ] && awk 'NR != 1 && $4 == "0A" { split($2, a, ":"); if (a[2] == "2810") found = 1 } END { exit !found }' "$R$f"; then
		listening=yes
	fi
done
fact kubeproxy.port10256.listening "$listening"
# get PATH prints the body, a newline, and the HTTP code (000 when the
# connection failed). Only loopback is ever asked.
get() {
	if have curl; then
		curl -s -m 5 -w '\n%{http_code}' "http://127.0.0.1:10256$1" 2>/dev/null
	elif have wget; then
		b=$(wget -q -T 5 -O - "http://127.0.0.1:10256$1" 2>/dev/null) && printf '%s\n200' "$b" || printf '\n000'
	else
		printf '\nabsent'
	fi
}
for p in healthz livez; do
	out=$(get "/$p")
	code=$(printf '%s\n' "$out" | tail -n 1)
	body=$(printf '%s\n' "$out" | sed '$d' | dd bs=2048 count=1 2>/dev/null)
	case $code in
	000 | "") code=connect-failed ;;
	esac
	fact "kubeproxy.$p.code" "$code"
	fact "kubeproxy.$p.body" "${body:-absent}"
	if [ "$p" = healthz ]; then
		# KEP-3836: since 1.28 /healthz also fails on a node being drained or
		# deleted; the body says so with "nodeEligible": false.
		case $(printf '%s' "$body" | tr -d ' \t\n') in
		*'"nodeEligible":false'*) el=false ;;
		*'"nodeEligible":true'*) el=true ;;
		*) el=absent ;;
		esac
		fact kubeproxy.healthz.node_eligible "$el"
	fi
done
