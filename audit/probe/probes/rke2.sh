# id: rke2
# description: RKE2, containerd and kubelet versions, the active rke2 service and which static pods RKE2 runs here (never reads config.yaml: it holds the join token)
# needs_root: false
# timeout: 15s
# facts: rke2.version rke2.service rke2.server.active rke2.agent.active rke2.containerd.version rke2.kubelet.version rke2.manifest.etcd rke2.manifest.kube-apiserver rke2.manifest.kube-proxy
# role_scoped: rke2.service rke2.server.active rke2.agent.active rke2.manifest.etcd rke2.manifest.kube-apiserver

b() {
	if have timeout; then timeout 5 "$@"; else "$@"; fi
}
# verof prints the first word that looks like a version ("v1.7.23-k3s2"
# from "containerd github.com/k3s-io/containerd v1.7.23-k3s2 <commit>",
# "v1.31.4+rke2r1" from "Kubernetes v1.31.4+rke2r1").
verof() {
	awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^v?[0-9]+\.[0-9]+/) { print $i; exit } }'
}
bin=
for x in rke2 /usr/local/bin/rke2 /opt/rke2/bin/rke2 /usr/bin/rke2; do
	if have "$x"; then bin=$x; break; fi
done
if [ -n "$bin" ]; then
	v=$(b "$bin" --version 2>/dev/null | sed -n 's/^rke2 version \([^ ]*\).*/\1/p' | head -n 1)
	fact rke2.version "${v:-unknown}"
else
	fact rke2.version absent
fi
# RKE2's own containerd and kubelet live in its data dir (the bin link points
# at the current release); a containerd on PATH is the fallback for nodes
# where the data dir is not readable.
rb=$R/var/lib/rancher/rke2/bin
for c in containerd kubelet; do
	if [ -x "$rb/$c" ]; then
		v=$(b "$rb/$c" --version 2>/dev/null | verof)
	elif have "$c"; then
		v=$(b "$c" --version 2>/dev/null | verof)
	else
		v=absent
	fi
	fact "rke2.$c.version" "${v:-unknown}"
done
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
# The static pod manifests say which components RKE2 runs on this node: a
# server started with disable-etcd has no etcd.yaml, one with
# disable-apiserver no kube-apiserver.yaml, and disable-kube-proxy (as with
# Cilium's kube-proxy replacement) removes kube-proxy.yaml. Only existence
# is tested; the files are never read.
md=$R/var/lib/rancher/rke2/agent/pod-manifests
# A directory on the way that we may not search (0700 root as non-root)
# hides the files: that is "unreadable", not "absent".
blind=no
for d in "$R/var/lib/rancher/rke2" "$R/var/lib/rancher/rke2/agent" "$md"; do
	if [ -d "$d" ] && [ ! -x "$d" ]; then blind=yes; fi
done
for m in etcd kube-apiserver kube-proxy; do
	if [ -e "$md/$m.yaml" ]; then
		st=present
	elif [ "$blind" = yes ]; then
		st=unreadable
	else
		st=absent
	fi
	fact "rke2.manifest.$m" "$st"
done
