# Shared helpers, prepended to every probe. Files are read under
# ${FLEET_AUDIT_ROOT:-} so a simulated node can point them elsewhere; on a real
# node the variable is unset and the real /proc, /sys and /etc are read.
#
# Every process counts: a probe runs on every node of a fleet on every
# audit, so the helpers answer in variables (no $(...) around a function)
# and read files with one awk per group of files.
R=${FLEET_AUDIT_ROOT:-}
# fact KEY VALUE prints one fact on one line; newlines and CRs in the value are
# folded so a value can never forge another fact line.
# Only a value that holds a control character pays for the fork of tr: most
# do not, and a probe prints dozens of facts.
fact() {
	case $2 in
	*[[:cntrl:]]*) set -- "$1" "$(printf '%s' "$2" | tr '\r\n' '  ')" ;;
	esac
	printf '%s=%s\n' "$1" "$2"
}
# fa_awk_fact defines fact(KEY, VALUE) for an awk program, printing a fact
# as fact does here, so a probe's awk writes its facts itself instead of
# handing them to a shell loop, which would cost a process.
# shellcheck disable=SC2034 # read by the probes, which run after the library
fa_awk_fact='function fact(k, v) { gsub(/[\r\n]/, " ", v); print k "=" v }
'
# fa_nl is a newline, to cut a command's output without a process.
fa_nl='
'
have() { command -v "$1" >/dev/null 2>&1; }
# http_get URL... asks each loopback URL in turn and prints its answer's
# body, then a line "@@FA_HTTP <code> <url>" that says whose it was. One
# curl asks them all: it runs every URL of its command line in turn, and
# -w writes after each transfer, a failed one too (curl(1),
# write-out.md). Never through a proxy: a login environment's http_proxy
# (/etc/environment, which pam_env reads) would send 127.0.0.1 to the
# proxy, so curl gets --noproxy '*' (curl 7.19.4 and later), and wget,
# asked once per URL where curl is missing, runs without the proxy
# variables (GNU and busybox wget read http_proxy; only GNU wget has
# --no-proxy, busybox has -Y off). GNU wget exits 8 on an HTTP error
# status, which is an answer (a 503), not a dead port: "http-error".
# With neither client each URL gets "no-client /LAST-PATH-ELEMENT", which
# says nothing could ask, where "000" would read as nothing listening. A
# subshell, so the dropped proxy variables stay dropped there alone.
http_get() (
	if have curl; then
		curl -s --noproxy '*' -m 5 -w '\n@@FA_HTTP %{http_code} %{url_effective}\n' "$@" 2>/dev/null
	elif have wget; then
		unset http_proxy HTTP_PROXY https_proxy HTTPS_PROXY all_proxy ALL_PROXY
		for u; do
			b=$(wget -q -T 5 -O - "$u" 2>/dev/null)
			case $? in
			0) printf '%s\n@@FA_HTTP 200 %s\n' "$b" "$u" ;;
			8) printf '%s\n@@FA_HTTP http-error %s\n' "$b" "$u" ;;
			*) printf '\n@@FA_HTTP 000 %s\n' "$u" ;;
			esac
		done
	else
		for u; do printf '\n@@FA_HTTP no-client /%s\n' "${u##*/}"; done
	fi
)
# readf FILE prints the first line of FILE, or "absent" (for user probes;
# README: the helpers R, fact, readf, have and is_root are theirs too).
readf() {
	if [ -r "$R$1" ]; then
		head -n 1 "$R$1"
	else
		echo absent
	fi
}
# is_root: the bundle exports the login user's uid as fa_uid; a probe run
# through sudo, whose uid that is not, gets it empty and asks id(1), once.
is_root() {
	[ -n "${fa_uid:-}" ] || fa_uid=$(id -u)
	[ "$fa_uid" = 0 ]
}
# unit_state VERB UNIT sets fa_us to systemctl's answer to is-active or
# is-enabled, or "absent" where there is no systemd or no such unit file:
# systemd 253 and later say "not-found" for that (systemctl-is-enabled.c,
# exit 4), older ones print nothing on stdout for is-enabled. A variable,
# not output, so the caller spends no process capturing it.
unit_state() {
	fa_us=
	have systemctl && fa_us=$(systemctl "$1" "$2" 2>/dev/null)
	fa_us=${fa_us%%"$fa_nl"*}
	fa_usraw=$fa_us
	case $fa_us in
	"" | not-found) fa_us=absent ;;
	esac
}
# unit_states UNIT... asks systemd once for every unit, where a probe would
# ask is-active and is-enabled of each, and keeps their answers, as
# unit_state maps them, for unit_state_of. One `systemctl show` gives both:
#   ActiveState is the property is-active prints (systemctl-is-active.c,
#     check_unit_generic: get_state_one_unit), "inactive" for a unit
#     systemd does not know;
#   UnitFileState is the state of the unit's file (src/core/unit.c,
#     unit_get_unit_file_state: unit_file_get_state), the word is-enabled
#     prints (systemctl-is-enabled.c: the manager's GetUnitFileState), and
#     empty for a unit with no file, which is-enabled calls not-found or
#     says nothing about: absent either way.
# show prints each asked property even when empty (systemctl.c: -p sets
# BUS_PRINT_PROPERTY_SHOW_EMPTY), a block per unit in the order asked, the
# blocks apart by an empty line (systemctl-show.c, show_one). Ask units by
# their own names: show answers an alias with its unit's state, where
# is-enabled says "alias". Where no systemd runs (a container: no
# /run/systemd/system, by which sd_booted tells, sd-daemon.c) show and
# is-active fail, reaching no manager (src/shared/bus-util.c,
# bus_connect_transport), while is-enabled still reads the unit files
# (systemctl-util.c, install_client_side): is-enabled alone is then asked,
# of each unit. Should show fail where systemd runs, each unit is asked
# both, as before; and should is-active then print nothing, the manager
# did not answer (is-active names a state for every unit, "inactive" for
# one systemd does not know: systemctl-is-active.c), so both read
# "unknown": looked at, not known, never "absent".
unit_states() {
	fa_units=$fa_nl
	if ! have systemctl; then
		for fa_u; do fa_units="$fa_units$fa_u absent absent$fa_nl"; done
		return 0
	fi
	fa_booted=
	[ -d "$R/run/systemd/system" ] && fa_booted=1
	if [ -z "$fa_booted" ] ||
		! fa_o=$(systemctl show -p LoadState -p ActiveState -p UnitFileState "$@" 2>/dev/null) || [ -z "$fa_o" ]; then
		for fa_u; do
			fa_a=absent fa_e=
			if [ -n "$fa_booted" ]; then
				unit_state is-active "$fa_u"
				fa_a=$fa_us
				[ -n "$fa_usraw" ] || fa_a=unknown fa_e=unknown
			fi
			if [ -z "$fa_e" ]; then
				unit_state is-enabled "$fa_u"
				fa_e=$fa_us
			fi
			fa_units="$fa_units$fa_u $fa_a $fa_e$fa_nl"
		done
		return 0
	fi
	for fa_u; do
		fa_a='' fa_e=''
		while :; do
			fa_l=${fa_o%%"$fa_nl"*}
			if [ "$fa_l" = "$fa_o" ]; then fa_o=; else fa_o=${fa_o#*"$fa_nl"}; fi
			case $fa_l in
			"") break ;;
			ActiveState=*) fa_a=${fa_l#*=} ;;
			UnitFileState=*) fa_e=${fa_l#*=} ;;
			esac
		done
		fa_units="$fa_units$fa_u ${fa_a:-absent} ${fa_e:-absent}$fa_nl"
	done
}
# unit_state_of UNIT sets fa_ua and fa_ue to what is-active and is-enabled
# (as unit_state maps them) say of a unit unit_states asked about.
unit_state_of() {
	fa_l=${fa_units#*"$fa_nl$1 "}
	fa_l=${fa_l%%"$fa_nl"*}
	# shellcheck disable=SC2034 # read by the probes, which run after the library
	fa_ua=${fa_l%% *} fa_ue=${fa_l#* }
}
# modules_state MOD... sets fa_ms to a line "MOD loaded|builtin|absent" for
# each module, from every piece of evidence a kernel leaves, because a
# built-in module is not in /proc/modules and a kernel built without module
# support (CONFIG_MODULES=n) has no /proc/modules at all:
#   loaded   listed in /proc/modules;
#   builtin  otherwise listed in modules.builtin, =y in the kernel's config
#            (/boot/config-RELEASE, else /proc/config.gz), or its own files
#            exist: /sys/module/MOD (kernel/params.c makes it for built-in
#            modules with parameters) or what only its code registers
#            (net/bridge/br_netfilter_hooks.c: /proc/sys/net/bridge;
#            nf_conntrack_standalone.c: nf_conntrack_max; x_tables.c
#            xt_proto_init: /proc/net/ip_tables_names; ip_vs_app.c:
#            /proc/net/ip_vs).
# Nothing is loaded to find out: no modprobe, no netlink. One awk reads
# every file; gzip only runs where /boot has no config of the running
# release, and gets the path from the environment, never spliced into its
# command line.
modules_state() {
	fa_present=
	for fa_m; do
		case $fa_m in
		br_netfilter) fa_p=/proc/sys/net/bridge/bridge-nf-call-iptables ;;
		nf_conntrack) fa_p=/proc/sys/net/netfilter/nf_conntrack_max ;;
		ip_tables | x_tables) fa_p=/proc/net/ip_tables_names ;;
		ip_vs) fa_p=/proc/net/ip_vs ;;
		*) fa_p= ;;
		esac
		if [ -d "$R/sys/module/$fa_m" ] || { [ -n "$fa_p" ] && [ -e "$R$fa_p" ]; }; then
			fa_present="$fa_present $fa_m"
		fi
	done
	# shellcheck disable=SC2034 # read by the probes, which run after the library
	fa_ms=$(fa_gz="$R/proc/config.gz" awk -v root="$R" -v present="$fa_present" -v want="$*" '
	function config(l) {
		if (l ~ /^CONFIG_[A-Z0-9_]+=y$/) { sub(/^CONFIG_/, "", l); sub(/=y$/, "", l); cfg[l] = 1 }
	}
	BEGIN {
		f = root "/proc/sys/kernel/osrelease"
		if ((getline kver < f) <= 0) kver = ""
		close(f)
		f = root "/proc/modules"
		while ((getline l < f) > 0) { split(l, a, " "); loaded[a[1]] = 1 }
		close(f)
		if (kver != "") {
			# Paths ("kernel/net/bridge/br_netfilter.ko"); file names may
			# use "-" where the module name has "_".
			f = root "/lib/modules/" kver "/modules.builtin"
			while ((getline l < f) > 0) {
				sub(/.*\//, "", l); sub(/\.ko.*$/, "", l); gsub(/-/, "_", l); builtin[l] = 1
			}
			close(f)
		}
		f = root "/boot/config-" kver
		if (kver != "" && (getline l < f) > 0) {
			do config(l); while ((getline l < f) > 0)
			close(f)
		} else if ((getline l < ENVIRON["fa_gz"]) >= 0) {
			close(ENVIRON["fa_gz"])
			cmd = "exec 2>/dev/null; command -v gzip >/dev/null && gzip -dc <\"$fa_gz\""
			while ((cmd | getline l) > 0) config(l)
			close(cmd)
		}
		n = split(present, p, " ")
		for (i = 1; i <= n; i++) builtin[p[i]] = 1
		sym["br_netfilter"] = "BRIDGE_NETFILTER"; sym["nf_conntrack"] = "NF_CONNTRACK"
		sym["ip_tables"] = "IP_NF_IPTABLES"; sym["iptable_nat"] = "IP_NF_NAT"
		sym["x_tables"] = "NETFILTER_XTABLES"; sym["nf_tables"] = "NF_TABLES"; sym["ip_vs"] = "IP_VS"
		n = split(want, w, " ")
		for (i = 1; i <= n; i++) {
			m = w[i]; s = sym[m]
			# ip_vs_rr, ip_vs_wrr...: CONFIG_IP_VS_RR, CONFIG_IP_VS_WRR.
			if (s == "" && m ~ /^ip_vs_[a-z]+$/) s = toupper(m)
			st = (m in loaded) ? "loaded" : (m in builtin || (s != "" && s in cfg)) ? "builtin" : "absent"
			print m, st
		}
	}' </dev/null)
}
# RKE2's own kubectl and admin kubeconfig on a server (cluster.sh,
# apiserver.sh). rke2.yaml points at this node's API server
# (https://127.0.0.1:6443) and holds the admin client key: kubectl reads
# it, a probe only tests that it exists.
fa_kubectl=$R/var/lib/rancher/rke2/bin/kubectl
fa_kubeconfig=$R/etc/rancher/rke2/rke2.yaml
# kc ARGS... runs that kubectl. It caches discovery documents and API
# responses under --cache-dir, else $KUBECACHEDIR, else $HOME/.kube/cache
# (k8s.io/cli-runtime genericclioptions/config_flags.go,
# toDiscoveryClient): a write on the node. /dev/null cannot hold a
# directory, so every cache write fails with ENOTDIR, which kubectl logs
# at -v=1 and ignores (client-go discovery/cached/disk): nothing is
# written, not even a temporary directory to clean up afterwards.
kc() { "$fa_kubectl" --kubeconfig "$fa_kubeconfig" --cache-dir=/dev/null --request-timeout=10s "$@" </dev/null; }
# kube_health PATH asks this node's API server for a verbose health
# endpoint (/readyz?verbose, /livez?verbose) and sets fa_api (ok,
# unreachable, unauthorized, error), fa_hs (passed, failed, unreachable,
# unknown), fa_hf (the failed checks' names, comma-separated, or none) and
# fa_herr (why the API did not answer, in a fixed word, or none).
# kube-apiserver writes "[+]NAME ok" or "[-]NAME failed: reason withheld"
# per check, then "NAME check passed" with 200, or, when one failed,
# "NAME check failed" through http.Error, a 500 (k8s.io/apiserver
# pkg/server/healthz/healthz.go handleRootHealth). On the 500 kubectl
# exits 1 and prints the body on stderr, trimmed and %q-quoted, its
# newlines escaped as \n: "Error from server (InternalError): an error on
# the server (\"[+]ping ok\n[-]etcd failed: ...\") has prevented the
# request from succeeding" (client-go rest/request.go
# newUnstructuredResponseError, apimachinery errors.NewGenericServerResponse,
# kubectl cmdutil.StandardErrorMessage): both forms are read. Only check
# names leave awk, never a message.
kube_health() {
	fa_o=$(kc get --raw="$1" 2>&1)
	fa_rc=$?
	fa_l=$(printf '%s\n' "$fa_o" | awk -v rc="$fa_rc" '
	{
		gsub(/\\n/, "\n")
		n = split($0, part, "\n")
		for (i = 1; i <= n; i++) {
			s = part[i]
			if (s ~ /[a-z]+ check passed/) passed = 1
			if (s ~ /[a-z]+ check failed/) failed = 1
			if (s ~ /connection to the server .* was refused|Unable to connect to the server|dial tcp|i\/o timeout|context deadline exceeded/) down = 1
			# Why, in a fixed word: the "The connection to the server ...
			# was refused" of kubectl (pkg/cmd/util/helpers.go), the net and
			# net/http errors of Go, crypto/tls and crypto/x509.
			if (why == "" && s ~ /was refused|connection refused/) why = "connection-refused"
			if (why == "" && s ~ /i\/o timeout|context deadline exceeded|Client\.Timeout/) why = "timeout"
			if (why == "" && s ~ /no route to host|network is unreachable/) why = "no-route"
			if (why == "" && s ~ /tls: |x509: /) why = "tls"
			if (s ~ /Unauthorized|must be logged in/) denied = "unauthorized"
			else if (!denied && s ~ /Forbidden/) denied = "forbidden"
			while (match(s, /\[-\][A-Za-z0-9._\/-]+/)) {
				name = substr(s, RSTART + 3, RLENGTH - 3)
				if (!(name in seen)) { seen[name] = 1; bad = bad (bad == "" ? "" : ",") name }
				s = substr(s, RSTART + RLENGTH)
			}
		}
	}
	END {
		api = "ok"; state = "unknown"; err = "none"
		if (bad != "" || failed) state = "failed"
		else if (passed && rc == 0) state = "passed"
		else if (down) { api = "unreachable"; state = "unreachable"; err = (why == "" ? "other" : why) }
		else if (denied) { api = "unauthorized"; err = denied }
		else if (rc != 0) { api = "error"; err = "other" }
		print api, state, (bad == "" ? "none" : bad), err
	}')
	fa_api=${fa_l%% *}
	fa_l=${fa_l#* }
	fa_hs=${fa_l%% *}
	fa_l=${fa_l#* }
	fa_hf=${fa_l%% *}
	fa_herr=${fa_l#* }
	# shellcheck disable=SC2034 # read by the probes, which run after the library
	case $fa_herr in "" | *" "*) fa_api=error fa_hs=unknown fa_hf=none fa_herr=other ;; esac
}
