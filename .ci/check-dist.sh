#!/bin/sh
# Holds make dist's artifacts to what the README promises a user who
# installs from them (issue 28 item 3): run by .ci/run after make dist,
# from the repository's root. Needs tar, rpm (rpm -qlp reads a package's
# file list without installing it) and python3.
set -eu
cd dist
fail() { echo "check-dist: $*" >&2; exit 1; }

# Every tarball: the binary, README, LICENSE, and the man page and
# completions laid out as under /usr/local/share.
for tgz in fleet-audit_*.tar.gz; do
	name=${tgz%.tar.gz}
	list=$(tar -tzf "$tgz")
	for f in fleet-audit README.md LICENSE share/man/man1/fleet-audit.1.gz \
		share/bash-completion/completions/fleet-audit share/zsh/site-functions/_fleet-audit \
		share/fish/vendor_completions.d/fleet-audit.fish; do
		printf '%s\n' "$list" | grep -qx "$name/$f" || fail "$tgz lacks $name/$f"
	done
done

# The RPM's zsh completion is where RHEL's zsh looks (site-functions); the
# .deb's where Debian's does (vendor-completions). Both put the binary
# where the systemd example runs it.
for rpm in fleet-audit-*.rpm; do
	files=$(rpm -qlp "$rpm" 2>/dev/null)
	printf '%s\n' "$files" | grep -qx /usr/share/zsh/site-functions/_fleet-audit || fail "$rpm: zsh completion not in /usr/share/zsh/site-functions"
	printf '%s\n' "$files" | grep -qx /usr/share/zsh/vendor-completions/_fleet-audit && fail "$rpm: zsh completion on Debian's path"
	printf '%s\n' "$files" | grep -qx /usr/bin/fleet-audit || fail "$rpm: no /usr/bin/fleet-audit"
done
for deb in fleet-audit_*.deb; do
	files=$(dpkg-deb -c "$deb" | awk '{print $NF}' | sed 's|^\.||')
	printf '%s\n' "$files" | grep -qx /usr/share/zsh/vendor-completions/_fleet-audit || fail "$deb: zsh completion not in vendor-completions"
	printf '%s\n' "$files" | grep -qx /usr/bin/fleet-audit || fail "$deb: no /usr/bin/fleet-audit"
done
grep -q '^ExecStart=/usr/bin/fleet-audit ' ../examples/ci/fleet-audit.service || fail "the systemd example does not run the packages' /usr/bin/fleet-audit"

# Every SBOM lists the Go standard library and a licence for every
# dependency module (fleet-audit itself excepted: see the Makefile).
for sbom in *.cdx.json; do
	python3 - "$sbom" <<'PY' || fail "$sbom"
import json, sys
doc = json.load(open(sys.argv[1]))
comps = doc.get("components", [])
names = {c["name"] for c in comps}
if "std" not in names:
    sys.exit("no std component")
bare = [c["name"] for c in comps if c["name"] != "std" and not c.get("licenses") and not c.get("evidence", {}).get("licenses")]
if bare:
    sys.exit("no licence for " + ", ".join(bare))
PY
done
echo "check-dist: tarballs, packages and SBOMs carry what the README says"
