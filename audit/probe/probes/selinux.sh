# id: selinux
# description: SELinux mode now and at the next boot, RKE2's selinux setting and its rke2 policy module (reads only the selinux key of RKE2's config: the file holds the join token)
# needs_root: true
# timeout: 15s
# facts: selinux.mode selinux.boot_mode selinux.rke2 selinux.rke2_module

# Root is needed only for the module list (semodule reads the policy store,
# /var/lib/selinux, root only); the modes and the settings are read by any
# login, so an unprivileged run still reports them.
to=
have timeout && to="timeout 10"

# The unit whose environment files RKE2 reads: the active one, else the one
# the RPMs configured (rke2-server or rke2-agent, each installs its own
# /etc/sysconfig file: rke2-packaging rpm/centos8/{server,agent}/*.spec).
unit=
if have systemctl; then
	# A line per unit, in order (systemctl-is-active.c).
	s=$(systemctl is-active rke2-server rke2-agent 2>/dev/null)
	if [ "${s%%"$fa_nl"*}" = active ]; then
		unit=rke2-server
	elif [ "${s#*"$fa_nl"}" = active ]; then
		unit=rke2-agent
	fi
fi
if [ -z "$unit" ]; then
	unit=rke2-agent
	for f in /etc/default/rke2-server /etc/sysconfig/rke2-server; do
		[ -e "$R$f" ] && unit=rke2-server
	done
fi

# RKE2's config files as k3s pkg/configfilearg reads them: config.yaml, then
# config.yaml.d/*.yaml in lexical order, a later file's key replacing an
# earlier one's. One that exists but cannot be read (0600 as non-root) makes
# the setting unknowable: "unreadable", never a guess.
cfg=$R/etc/rancher/rke2/config.yaml
blind=
set -- "$cfg"
if [ -d "$cfg.d" ]; then
	if [ -r "$cfg.d" ] && [ -x "$cfg.d" ]; then
		for f in "$cfg.d"/*.yaml; do
			[ -e "$f" ] && set -- "$@" "$f"
		done
	else
		blind=1
	fi
fi
for f; do
	if [ -e "$f" ] && [ ! -r "$f" ]; then blind=1; fi
done
sc=$R/etc/selinux/config
scblind=
if [ -e "$sc" ] && [ ! -r "$sc" ]; then scblind=1; fi

# One awk reads everything; file names reach it as operands read with
# getline (an operand with "=" would be an assignment), and no value it
# reads is printed: only the words below.
awk -v root="$R" -v unit="$unit" -v blind="$blind" -v scblind="$scblind" "$fa_awk_fact"'
function first(f,   l) {
	l = ""
	if ((getline l < f) < 0) l = "\001"
	close(f)
	return l
}
function unq(v) {
	gsub(/^[ \t]+|[ \t]+$/, "", v)
	if (v ~ /^".*"$/ || v ~ /^'\''.*'\''$/) v = substr(v, 2, length(v) - 2)
	return tolower(v)
}
# bool maps a setting to true or false: strconv.ParseBool, which urfave/cli
# applies to a flag and to its environment variable, and the YAML 1.1
# booleans k3s configfilearg decodes (yes, on). Anything else is unknown.
function bool(v) {
	v = unq(v)
	if (v ~ /^(1|t|true|y|yes|on)$/) return "true"
	if (v ~ /^(0|f|false|n|no|off)$/) return "false"
	return "unknown"
}
BEGIN {
	# Mode now: <selinuxfs>/enforce holds 1 or 0 (the kernel writes no
	# newline: security/selinux/selinuxfs.c sel_read_enforce). selinuxfs
	# is normally at /sys/fs/selinux; go-selinux findSELinuxfs also looks
	# for any mount of type selinuxfs (the old /selinux). Not mounted:
	# SELinux is disabled or not built in (go-selinux enforceMode: -1).
	mode = ""
	e = first(root "/sys/fs/selinux/enforce")
	if (e == "\001") {
		f = root "/proc/self/mounts"
		while ((getline l < f) > 0) {
			split(l, m, " ")
			if (m[3] == "selinuxfs") { e = first(root m[2] "/enforce"); break }
		}
		close(f)
	}
	if (e ~ /^[0-9]+$/) mode = (e + 0) ? "enforcing" : "permissive"
	else if (e == "\001") mode = "disabled"
	else mode = "unknown"
	# getenforce (libselinux-utils) answers where the file could not be
	# read as a number, from the same selinuxfs.
	if (mode == "unknown" || mode == "disabled") {
		cmd = "exec 2>/dev/null; command -v getenforce >/dev/null && getenforce"
		if ((cmd | getline g) > 0) {
			g = tolower(g)
			if (g ~ /^(enforcing|permissive|disabled)$/) mode = g
		}
		close(cmd)
	}
	fact("selinux.mode", mode)

	# Mode at the next boot (libselinux load_policy.c,
	# selinux_init_load_policy): the kernel command line selinux=0 disables
	# it whatever else says; enforcing=N on it wins over /etc/selinux/config;
	# else SELINUX= of the config, its first uncommented line, quotes
	# trimmed (go-selinux readConfig). No config: no SELinux userland.
	f = root "/etc/selinux/config"
	boot = "absent"
	if ((getline l < f) >= 0) {
		boot = "disabled"
		do {
			sub(/^[ \t]+/, "", l)
			if (l ~ /^SELINUX=/) {
				v = unq(substr(l, 9))
				if (v == "enforcing" || v == "permissive") boot = v
				break
			}
		} while ((getline l < f) > 0)
		close(f)
	} else if (scblind != "") {
		boot = "unreadable"
	}
	if (boot != "absent" && boot != "unreadable") {
		c = " " first(root "/proc/cmdline") " "
		if (c ~ /[ \t]selinux=0[ \t]/) boot = "disabled"
		else if (match(c, /[ \t]enforcing=[0-9]+[ \t]/)) boot = (substr(c, RSTART + 11, RLENGTH - 12) + 0) ? "enforcing" : "permissive"
	}
	fact("selinux.boot_mode", boot)

	# RKE2 started with selinux: the config files win over the unit'\''s
	# environment (k3s configfilearg turns config keys into command-line
	# flags, which urfave/cli lets override the flag'\''s EnvVar,
	# RKE2_SELINUX). The unit reads /etc/default, /etc/sysconfig and its .env
	# beside the unit, a later file overriding (rke2 bundle/lib/systemd/
	# system/rke2-server.service; the RPM moves the .env to
	# /usr/lib/systemd/system: rke2-packaging rke2-server.spec %prep).
	sel = ""
	for (i = 1; i < ARGC; i++) {
		f = ARGV[i]
		while ((getline l < f) > 0) {
			if (l ~ /^selinux[ \t]*:/) {
				v = l; sub(/^selinux[ \t]*:/, "", v); sub(/[ \t]#.*/, "", v)
				sel = bool(v)
			}
		}
		close(f)
	}
	if (sel == "") {
		n = split("/etc/default/" unit " /etc/sysconfig/" unit " /usr/local/lib/systemd/system/" unit ".env /usr/lib/systemd/system/" unit ".env", ef, " ")
		for (i = 1; i <= n; i++) {
			f = root ef[i]
			while ((getline l < f) > 0) {
				sub(/^[ \t]+/, "", l)
				if (l ~ /^RKE2_SELINUX=/) sel = bool(substr(l, 14))
			}
			close(f)
		}
	}
	# A file that could not be read may set the key, and would win over
	# the environment: the setting is then not known.
	if (blind != "") sel = "unreadable"
	fact("selinux.rke2", sel == "" ? "false" : sel)
	exit
}' "$@" </dev/null

# The rke2 policy module (rke2-selinux rke2.te: policy_module(rke2, ...)),
# installed by the package's %post with semodule -i. semodule -l prints one
# module a line, its name first. rke2-selinux requires policycoreutils,
# which ships semodule: without it no rke2 module can be installed.
if ! have semodule; then
	fact selinux.rke2_module absent
elif ! is_root; then
	fact selinux.rke2_module not-root
elif out=$($to semodule -l 2>/dev/null); then
	st=absent
	while IFS=' 	' read -r m _; do
		[ "$m" = rke2 ] && st=installed
	done <<EOF
$out
EOF
	fact selinux.rke2_module "$st"
else
	fact selinux.rke2_module unknown
fi
