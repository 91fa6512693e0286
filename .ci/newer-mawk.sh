#!/usr/bin/env bash
# newer-mawk.sh DIR: put Debian 13's mawk (1.3.4 20250131) into DIR and
# write DIR/bin/awk, a wrapper that runs it with Debian 13's own C library
# through that library's dynamic loader, on any x86-64 or arm64 Debian-like
# machine, without installing either package: the simulated nodes' probes
# run under it (FLEET_AUDIT_NEWER_MAWK, audit/kubeproxy_test.go).
#
# Why this mawk: built with clock_gettime, srand() seeds from, and returns,
# nanoseconds since the epoch (mawk bi_funct.c initial_seed, snapshots since
# 20241117 as Debian 13 and Ubuntu 25.04 ship them), where older builds
# return seconds; a probe that read the clock that way saw every kube-proxy
# sync decades old.
#
# apt reads a sources list of its own (the Debian archive this machine
# already uses, read from its sources at run time, suite trixie) and keeps
# its lists and cache in DIR: the machine's apt state is not touched.
set -euo pipefail
# Pipelines end in sed -n 1p, never head: head exits after its line and the
# writer's SIGPIPE (141) fails the pipeline under pipefail.
dir=${1:?usage: newer-mawk.sh DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
if [ -x "$dir/bin/awk" ] && "$dir/bin/awk" 'BEGIN { srand(); exit !(srand() > 1e15) }'; then
	exit 0
fi
uri=
if [ -r /etc/apt/sources.list.d/debian.sources ]; then
	uri=$(awk '$1 == "URIs:" && $2 !~ /security/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources)
fi
if [ -z "$uri" ] && [ -r /etc/apt/sources.list ]; then
	uri=$(awk '$1 == "deb" && $2 !~ /^\[/ && $2 !~ /security/ { print $2; exit }' /etc/apt/sources.list)
fi
if [ -z "$uri" ]; then
	echo "newer-mawk.sh: no Debian archive URI in /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list" >&2
	exit 1
fi
mkdir -p "$dir/parts" "$dir/lists/partial" "$dir/cache/archives/partial" "$dir/debs" "$dir/root" "$dir/bin"
cat >"$dir/parts/trixie.sources" <<SRC
Types: deb
URIs: $uri
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
apt_opts=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$dir/parts"
	-o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache" -o "Dir::Cache::Archives=$dir/cache/archives"
	-o "APT::Sandbox::User=root")
apt-get -qq "${apt_opts[@]}" update
(cd "$dir/debs" && apt-get -qq "${apt_opts[@]}" download mawk libc6)
for deb in "$dir"/debs/mawk_*.deb "$dir"/debs/libc6_*.deb; do
	dpkg-deb -x "$deb" "$dir/root"
done
loader=$(find "$dir/root/usr/lib64" "$dir/root/usr/lib" -name 'ld-linux*.so.*' -type f 2>/dev/null | sed -n 1p)
libdir=$(dirname "$(find "$dir/root/usr/lib" -name 'libc.so.6' | sed -n 1p)")
if [ -z "$loader" ] || [ -z "$libdir" ]; then
	echo "newer-mawk.sh: no dynamic loader or libc.so.6 in the extracted libc6" >&2
	exit 1
fi
cat >"$dir/bin/awk" <<WRAP
#!/bin/sh
exec "$loader" --library-path "$libdir" "$dir/root/usr/bin/mawk" "\$@"
WRAP
chmod 0755 "$dir/bin/awk"
"$dir/bin/awk" -W version 2>&1 | sed -n 1p
if ! "$dir/bin/awk" 'BEGIN { srand(); exit !(srand() > 1e15) }'; then
	echo "newer-mawk.sh: $dir/bin/awk does not return nanoseconds from srand(); not the mawk this is for" >&2
	exit 1
fi
