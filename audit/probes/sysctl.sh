# id: sysctl
# description: forwarding and bridge-netfilter sysctls, conntrack table use
# needs_root: false
# timeout: 10s
# facts: sysctl.net.ipv4.ip_forward sysctl.net.bridge.bridge-nf-call-iptables sysctl.net.bridge.bridge-nf-call-ip6tables conntrack.count conntrack.max
# volatile: conntrack.count
for k in net.ipv4.ip_forward net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables; do
	# Read /proc/sys directly: sysctl(8) may be absent in minimal images.
	fact "sysctl.$k" "$(readf "/proc/sys/$(printf '%s' "$k" | tr . /)")"
done
fact conntrack.count "$(readf /proc/sys/net/netfilter/nf_conntrack_count)"
fact conntrack.max "$(readf /proc/sys/net/netfilter/nf_conntrack_max)"
