# id: certs
# description: the first certificate of each of RKE2's server and agent certificate files (*.crt under server/tls, server/tls/etcd and agent; never a *.key), sent as the base64 of its DER for fleet-audit to read its validity
# needs_root: true
# timeout: 15s
# facts: certs.files certs.pem.tls.server-ca.0 certs.pem.tls.server-ca.1 certs.pem.tls.server-ca.2 certs.pem.tls.client-ca.0 certs.pem.tls.client-ca.1 certs.pem.tls.client-ca.2 certs.pem.tls.request-header-ca.0 certs.pem.tls.request-header-ca.1 certs.pem.tls.request-header-ca.2 certs.pem.tls.client-admin.0 certs.pem.tls.client-admin.1 certs.pem.tls.client-admin.2 certs.pem.tls.client-supervisor.0 certs.pem.tls.client-supervisor.1 certs.pem.tls.client-supervisor.2 certs.pem.tls.client-controller.0 certs.pem.tls.client-controller.1 certs.pem.tls.client-controller.2 certs.pem.tls.client-scheduler.0 certs.pem.tls.client-scheduler.1 certs.pem.tls.client-scheduler.2 certs.pem.tls.client-kube-apiserver.0 certs.pem.tls.client-kube-apiserver.1 certs.pem.tls.client-kube-apiserver.2 certs.pem.tls.client-kube-proxy.0 certs.pem.tls.client-kube-proxy.1 certs.pem.tls.client-kube-proxy.2 certs.pem.tls.client-rke2-controller.0 certs.pem.tls.client-rke2-controller.1 certs.pem.tls.client-rke2-controller.2 certs.pem.tls.client-rke2-cloud-controller.0 certs.pem.tls.client-rke2-cloud-controller.1 certs.pem.tls.client-rke2-cloud-controller.2 certs.pem.tls.client-auth-proxy.0 certs.pem.tls.client-auth-proxy.1 certs.pem.tls.client-auth-proxy.2 certs.pem.tls.serving-kube-apiserver.0 certs.pem.tls.serving-kube-apiserver.1 certs.pem.tls.serving-kube-apiserver.2 certs.pem.etcd.server-ca.0 certs.pem.etcd.server-ca.1 certs.pem.etcd.server-ca.2 certs.pem.etcd.peer-ca.0 certs.pem.etcd.peer-ca.1 certs.pem.etcd.peer-ca.2 certs.pem.etcd.client.0 certs.pem.etcd.client.1 certs.pem.etcd.client.2 certs.pem.etcd.server-client.0 certs.pem.etcd.server-client.1 certs.pem.etcd.server-client.2 certs.pem.etcd.peer-server-client.0 certs.pem.etcd.peer-server-client.1 certs.pem.etcd.peer-server-client.2 certs.pem.agent.server-ca.0 certs.pem.agent.server-ca.1 certs.pem.agent.server-ca.2 certs.pem.agent.client-ca.0 certs.pem.agent.client-ca.1 certs.pem.agent.client-ca.2 certs.pem.agent.client-kubelet.0 certs.pem.agent.client-kubelet.1 certs.pem.agent.client-kubelet.2 certs.pem.agent.serving-kubelet.0 certs.pem.agent.serving-kubelet.1 certs.pem.agent.serving-kubelet.2 certs.pem.agent.client-kube-proxy.0 certs.pem.agent.client-kube-proxy.1 certs.pem.agent.client-kube-proxy.2 certs.pem.agent.client-rke2-controller.0 certs.pem.agent.client-rke2-controller.1 certs.pem.agent.client-rke2-controller.2
# volatile: certs.files

# Why the PEM and not openssl's opinion: openssl is not on every node, its
# output differs by release, and fleet-audit reads the dates with Go's
# crypto/x509 (audit/certs.go), which turns these facts into the certs.leaf.*,
# certs.ca.* and certs.validity facts the checks and reports use; the
# certs.pem.* facts themselves never reach a report.
#
# The files are those RKE2 writes, read from k3s (pkg/daemons/control/deps
# CreateRuntimeCertFiles for server/tls and server/tls/etcd; pkg/agent/config
# get for agent): each leaf file holds the leaf and then its CA
# (deps.go createClientCertKey: EncodeCertsPEM(cert, caCerts)), and RKE2
# renews a file by its first certificate (deps.go expired: certificates[0]),
# so only the first PEM block of a file is sent. A PEM body is the base64 of
# the DER already: its lines are joined, no base64(1) needed. A value may be
# 1024 bytes (audit/probe/parse.go maxValueLen), so the body goes in pieces
# .0, .1, .2 of at most that, whole lines each; 3 pieces hold 2304 bytes of
# DER, more than an RSA-4096 CA with a long subject takes (an RKE2 ECDSA
# P-256 leaf is about 600).
#
# Only *.crt names are globbed and only the lines between the first BEGIN
# CERTIFICATE and the next ----- line are printed, so a private key is never
# read into a fact even when it was pasted into a .crt file. A file whose
# name is not declared above is dropped by the parser; certs.files counts
# every *.crt seen, so fleet-audit can tell it sent fewer.
cr=$(printf '\r')
# send_pem AREA NAME FILE prints the first certificate of FILE in pieces.
send_pem() {
	b=
	i=0
	in=no
	while IFS= read -r l || [ -n "$l" ]; do
		l=${l%"$cr"}
		case $l in
		"-----BEGIN CERTIFICATE-----")
			in=yes
			continue
			;;
		-----*)
			[ "$in" = yes ] && break
			continue
			;;
		esac
		[ "$in" = yes ] || continue
		if [ $((${#b} + ${#l})) -gt 1024 ]; then
			fact "certs.pem.$1.$2.$i" "$b"
			i=$((i + 1))
			b=
		fi
		b=$b$l
	done <"$3"
	[ -n "$b" ] && fact "certs.pem.$1.$2.$i" "$b"
}
base=$R/var/lib/rancher/rke2
n=0
blind=no
for area in tls etcd agent; do
	case $area in
	tls) d=$base/server/tls ;;
	etcd) d=$base/server/tls/etcd ;;
	agent) d=$base/agent ;;
	esac
	# RKE2 keeps these 0700 root (k3s pkg/agent, deps.go): where the probe
	# still runs without root, a directory it may not search hides the
	# files, which is "unreadable", not "none".
	if [ -d "$d" ] && [ ! -x "$d" ]; then
		blind=yes
		continue
	fi
	for f in "$d"/*.crt; do
		[ -f "$f" ] || continue
		n=$((n + 1))
		[ -r "$f" ] || continue
		name=${f##*/}
		send_pem "$area" "${name%.crt}" "$f"
	done
done
if [ "$blind" = yes ] && [ "$n" = 0 ]; then
	fact certs.files unreadable
else
	fact certs.files "$n"
fi
