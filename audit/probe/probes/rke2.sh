# id: rke2
# description: RKE2, containerd and kubelet versions, the active rke2 service and which static pods RKE2 runs here (never reads config.yaml: it holds the join token)
# needs_root: true
# timeout: 15s
# facts: rke2.version rke2.service rke2.server.active rke2.agent.active rke2.containerd.version rke2.kubelet.version rke2.manifest.etcd rke2.manifest.kube-apiserver rke2.manifest.kube-proxy
# role_scoped: rke2.service rke2.server.active rke2.agent.active rke2.manifest.etcd rke2.manifest.kube-apiserver

# Every version comes from the tool itself, bounded by timeout(1), and is
# cut out of its output by the shell: one process per tool and no awk,
# sed or head.
to=
have timeout && to="timeout 5"
# first_version TEXT sets fa_v to the first word that looks like a version
# (v?DIGITS.DIGITS...): "v1.7.23-k3s2" from "containerd
# github.com/k3s-io/containerd v1.7.23-k3s2 <commit>", "v1.31.4+rke2r1" from
# "Kubernetes v1.31.4+rke2r1".
first_version() {
	fa_v=
	set -f
	# shellcheck disable=SC2086
	set -- $1
	set +f
	for w; do
		x=${w#v}
		d=${x%%.*}
		case $d in "" | *[!0-9]*) continue ;; esac
		[ "$d" = "$x" ] && continue
		case ${x#*.} in [0-9]*) fa_v=$w && return ;; esac
	done
}
# rke2 on PATH, else where its installs put it: install.sh's tarball in
# /usr/local (or /opt/rke2 where /usr/local is read-only), the RPMs in
# /usr/bin (rke2-packaging rke2-common.spec, %{_bindir}). Those paths are
# the node's, so under $R like every file a probe reads.
bin=
if have rke2; then
	bin=rke2
else
	for x in /usr/local/bin/rke2 /opt/rke2/bin/rke2 /usr/bin/rke2; do
		if [ -f "$R$x" ] && [ -x "$R$x" ]; then bin=$R$x; break; fi
	done
fi
if [ -n "$bin" ]; then
	# "rke2 version v1.31.4+rke2r1 (abcdef0)": the first such line.
	out=$($to "$bin" --version 2>/dev/null)
	v=
	while IFS= read -r l; do
		case $l in
		"rke2 version "?*)
			v=${l#rke2 version }
			v=${v%% *}
			break
			;;
		esac
	done <<EOF
$out
EOF
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
		first_version "$($to "$rb/$c" --version 2>/dev/null)"
		v=$fa_v
	elif have "$c"; then
		first_version "$($to "$c" --version 2>/dev/null)"
		v=$fa_v
	else
		v=absent
	fi
	fact "rke2.$c.version" "${v:-unknown}"
done
# One systemctl for both units: is-active prints a line per unit, in
# order, "inactive" for one it does not know (systemctl-is-active.c).
svc=none
set --
if have systemctl; then
	s=$(systemctl is-active rke2-server rke2-agent 2>/dev/null)
	set -f
	# shellcheck disable=SC2086
	set -- $s
	set +f
fi
for u in server agent; do
	s=${1:-}
	[ $# -gt 0 ] && shift
	fact "rke2.$u.active" "${s:-absent}"
	[ "$s" = active ] && svc="rke2-$u"
done
fact rke2.service "$svc"
# The static pod manifests say which components RKE2 runs on this node: a
# server started with disable-etcd has no etcd.yaml, one with
# disable-apiserver no kube-apiserver.yaml, and disable-kube-proxy (as with
# Cilium's kube-proxy replacement) removes kube-proxy.yaml. Only existence
# is tested; the files are never read. RKE2 keeps the agent directory and
# pod-manifests 0700 root (k3s pkg/agent, rancher/rke2
# pkg/executor/staticpod), hence needs_root: a login user sees nothing
# there, and where this probe still runs without root (no sudo), a
# directory on the way that it may not search hides the files: that is
# "unreadable", which no check takes for present or absent.
md=$R/var/lib/rancher/rke2/agent/pod-manifests
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
