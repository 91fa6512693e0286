package nodesim

import (
	"fmt"
	"slices"
	"strings"
)

// The outputs below are what the real tools print on a small RKE2 node with
// Canal (flannel + Calico policy) and kube-proxy in iptables mode, so the
// probes' parsers meet real formats: iptables-save's *table / :CHAIN policy
// [packets:bytes] / -A rule / COMMIT layout, `nft list tables`, and
// `update-alternatives --query`.

// iptablesSaveBody is one node's rule set: Calico's (cali-) and flannel's
// chains from Canal, kube-proxy's KUBE- chains in iptables mode, the filter
// FORWARD policy as %[1]s. Chains are listed before rules, rules chain by
// chain, as iptables-save prints them.
const iptablesSaveBody = `*mangle
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
:KUBE-IPTABLES-HINT - [0:0]
:KUBE-KUBELET-CANARY - [0:0]
:KUBE-PROXY-CANARY - [0:0]
:cali-PREROUTING - [0:0]
-A PREROUTING -m comment --comment "cali:6gwbT8clXdHdC1b1" -j cali-PREROUTING
-A cali-PREROUTING -m comment --comment "cali:6BJqBjBC7crtA-7-" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
COMMIT
*filter
:INPUT ACCEPT [0:0]
:FORWARD %[1]s [0:0]
:OUTPUT ACCEPT [0:0]
:FLANNEL-FWD - [0:0]
:KUBE-EXTERNAL-SERVICES - [0:0]
:KUBE-FIREWALL - [0:0]
:KUBE-FORWARD - [0:0]
:KUBE-KUBELET-CANARY - [0:0]
:KUBE-NODEPORTS - [0:0]
:KUBE-PROXY-CANARY - [0:0]
:KUBE-PROXY-FIREWALL - [0:0]
:KUBE-SERVICES - [0:0]
:cali-FORWARD - [0:0]
:cali-INPUT - [0:0]
-A INPUT -m comment --comment "cali:Cz_u1IQiXIMmKD4c" -j cali-INPUT
-A INPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL
-A INPUT -m comment --comment "kubernetes health check service ports" -j KUBE-NODEPORTS
-A INPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes externally-visible service portals" -j KUBE-EXTERNAL-SERVICES
-A INPUT -j KUBE-FIREWALL
-A FORWARD -m comment --comment "cali:wUHhoiAYhphO9Mso" -j cali-FORWARD
-A FORWARD -m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL
-A FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD
-A FORWARD -m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A FORWARD -m conntrack --ctstate NEW -m comment --comment "kubernetes externally-visible service portals" -j KUBE-EXTERNAL-SERVICES
-A FORWARD -m comment --comment "flanneld forward" -j FLANNEL-FWD
-A OUTPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL
-A OUTPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A OUTPUT -j KUBE-FIREWALL
-A FLANNEL-FWD -s 10.42.0.0/16 -m comment --comment "flanneld forward" -j ACCEPT
-A FLANNEL-FWD -d 10.42.0.0/16 -m comment --comment "flanneld forward" -j ACCEPT
-A KUBE-FIREWALL ! -s 127.0.0.0/8 -d 127.0.0.0/8 -m comment --comment "block incoming localnet connections" -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP
-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP
-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT
-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
-A cali-FORWARD -m comment --comment "cali:vjrMJCRpqwy5oRoX" -j MARK --set-xmark 0x0/0xe0000
-A cali-INPUT -m comment --comment "cali:msRIDfJRWnYwzW4g" -m mark --mark 0x10000/0x10000 -j ACCEPT
COMMIT
*nat
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
:FLANNEL-POSTRTG - [0:0]
:KUBE-KUBELET-CANARY - [0:0]
:KUBE-MARK-MASQ - [0:0]
:KUBE-NODEPORTS - [0:0]
:KUBE-POSTROUTING - [0:0]
:KUBE-PROXY-CANARY - [0:0]
:KUBE-SEP-2ZL6PQHBIPXKVAK5 - [0:0]
:KUBE-SEP-IT2ZTR26TO4XFPTO - [0:0]
:KUBE-SEP-N4G2XR5TDX7PQE7P - [0:0]
:KUBE-SEP-YIL6JZP7A3QYXJU2 - [0:0]
:KUBE-SERVICES - [0:0]
:KUBE-SVC-ERIFXISQEP7F7OF4 - [0:0]
:KUBE-SVC-NPX46M4PTMTKRN6Y - [0:0]
:KUBE-SVC-TCOU7JCQXEZGVUNU - [0:0]
-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING
-A POSTROUTING -m comment --comment "flanneld masq" -j FLANNEL-POSTRTG
-A FLANNEL-POSTRTG -m mark --mark 0x4000/0x4000 -m comment --comment "flanneld masq" -j RETURN
-A FLANNEL-POSTRTG -s 10.42.0.0/16 -d 10.42.0.0/16 -m comment --comment "flanneld masq" -j RETURN
-A FLANNEL-POSTRTG -s 10.42.0.0/16 ! -d 224.0.0.0/4 -m comment --comment "flanneld masq" -j MASQUERADE --random-fully
-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000
-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
-A KUBE-POSTROUTING -j MARK --set-xmark 0x4000/0x0
-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully
-A KUBE-SEP-2ZL6PQHBIPXKVAK5 -s 10.42.0.4/32 -m comment --comment "kube-system/rke2-coredns-rke2-coredns:udp-53" -j KUBE-MARK-MASQ
-A KUBE-SEP-2ZL6PQHBIPXKVAK5 -p udp -m comment --comment "kube-system/rke2-coredns-rke2-coredns:udp-53" -m udp -j DNAT --to-destination 10.42.0.4:53
-A KUBE-SEP-IT2ZTR26TO4XFPTO -s 10.42.0.4/32 -m comment --comment "kube-system/rke2-coredns-rke2-coredns:tcp-53" -j KUBE-MARK-MASQ
-A KUBE-SEP-IT2ZTR26TO4XFPTO -p tcp -m comment --comment "kube-system/rke2-coredns-rke2-coredns:tcp-53" -m tcp -j DNAT --to-destination 10.42.0.4:53
-A KUBE-SEP-N4G2XR5TDX7PQE7P -s 10.42.1.3/32 -m comment --comment "kube-system/rke2-coredns-rke2-coredns:udp-53" -j KUBE-MARK-MASQ
-A KUBE-SEP-N4G2XR5TDX7PQE7P -p udp -m comment --comment "kube-system/rke2-coredns-rke2-coredns:udp-53" -m udp -j DNAT --to-destination 10.42.1.3:53
-A KUBE-SEP-YIL6JZP7A3QYXJU2 -s 192.0.2.11/32 -m comment --comment "default/kubernetes:https" -j KUBE-MARK-MASQ
-A KUBE-SEP-YIL6JZP7A3QYXJU2 -p tcp -m comment --comment "default/kubernetes:https" -m tcp -j DNAT --to-destination 192.0.2.11:6443
-A KUBE-SERVICES -d 10.43.0.10/32 -p udp -m comment --comment "kube-system/rke2-coredns-rke2-coredns:udp-53 cluster IP" -m udp --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU
-A KUBE-SERVICES -d 10.43.0.10/32 -p tcp -m comment --comment "kube-system/rke2-coredns-rke2-coredns:tcp-53 cluster IP" -m tcp --dport 53 -j KUBE-SVC-ERIFXISQEP7F7OF4
-A KUBE-SERVICES -d 10.43.0.1/32 -p tcp -m comment --comment "default/kubernetes:https cluster IP" -m tcp --dport 443 -j KUBE-SVC-NPX46M4PTMTKRN6Y
-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS
-A KUBE-SVC-ERIFXISQEP7F7OF4 ! -s 10.42.0.0/16 -d 10.43.0.10/32 -p tcp -m comment --comment "kube-system/rke2-coredns-rke2-coredns:tcp-53 cluster IP" -m tcp --dport 53 -j KUBE-MARK-MASQ
-A KUBE-SVC-ERIFXISQEP7F7OF4 -m comment --comment "kube-system/rke2-coredns-rke2-coredns:tcp-53 -> 10.42.0.4:53" -j KUBE-SEP-IT2ZTR26TO4XFPTO
-A KUBE-SVC-NPX46M4PTMTKRN6Y ! -s 10.42.0.0/16 -d 10.43.0.1/32 -p tcp -m comment --comment "default/kubernetes:https cluster IP" -m tcp --dport 443 -j KUBE-MARK-MASQ
-A KUBE-SVC-NPX46M4PTMTKRN6Y -m comment --comment "default/kubernetes:https -> 192.0.2.11:6443" -j KUBE-SEP-YIL6JZP7A3QYXJU2
-A KUBE-SVC-TCOU7JCQXEZGVUNU ! -s 10.42.0.0/16 -d 10.43.0.10/32 -p udp -m comment --comment "kube-system/rke2-coredns-rke2-coredns:udp-53 cluster IP" -m udp --dport 53 -j KUBE-MARK-MASQ
-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/rke2-coredns-rke2-coredns:udp-53 -> 10.42.0.4:53" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-2ZL6PQHBIPXKVAK5
-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/rke2-coredns-rke2-coredns:udp-53 -> 10.42.1.3:53" -j KUBE-SEP-N4G2XR5TDX7PQE7P
COMMIT
`

// IPTablesSave renders iptables-save output as iptables 1.8 writes it
// (iptables/iptables-save.c do_output for legacy, iptables/xtables-save.c
// __do_output for nf_tables): per table a "# Generated by <program> v<version>
// on <ctime>" line, *table, the chains (":NAME POLICY [packets:bytes]", "-"
// for a user chain), the -A rules, COMMIT and "# Completed on <ctime>".
// saver is the name the tool was run as ("iptables-nft-save",
// "iptables-save"), version what follows its "v": iptables-legacy-save
// prints PACKAGE_VERSION alone ("1.8.9"), iptables-nft-save its
// program_version, which carries " (nf_tables)" from 1.8.9 on ("1.8.10
// (nf_tables)") and not before ("1.8.4"). kube=false leaves out
// kube-proxy's chains and rules (a node where kube-proxy programmed
// nothing, or the backend it does not use); forward is the filter FORWARD
// policy.
func IPTablesSave(saver, version string, kube bool, forward string) string {
	const stamp = "Wed Dec  2 10:00:00 2026" // ctime(3)
	var b strings.Builder
	for _, line := range strings.SplitAfter(fmt.Sprintf(iptablesSaveBody, forward), "\n") {
		switch {
		case line == "":
		case !kube && strings.Contains(line, "KUBE-"):
		case strings.HasPrefix(line, "*"):
			fmt.Fprintf(&b, "# Generated by %s %s on %s\n%s", saver, version, stamp, line)
		case line == "COMMIT\n":
			fmt.Fprintf(&b, "COMMIT\n# Completed on %s\n", stamp)
		default:
			b.WriteString(line)
		}
	}
	return b.String()
}

// kubeletChains are the chains kubelet itself creates since Kubernetes
// 1.28 (IPTablesOwnershipCleanup GA, KEP-3178): KUBE-IPTABLES-HINT,
// KUBE-KUBELET-CANARY and KUBE-FIREWALL (kubernetes
// pkg/kubelet/kubelet_network_linux.go). Every other KUBE- chain of
// iptablesSaveBody is kube-proxy's, KUBE-MARK-MASQ and KUBE-POSTROUTING
// included (kubelet stopped creating those with 1.28).
var kubeletChains = []string{"KUBE-IPTABLES-HINT", "KUBE-KUBELET-CANARY", "KUBE-FIREWALL"}

// ciliumChains are the chains the Cilium agent installs, with its
// "cilium-feeder:" jump from the built-in chain each hangs off (cilium
// pkg/datapath/iptables/iptables.go, ciliumChains; the raw table's two are
// left out, as iptablesSaveBody has no raw table).
var ciliumChains = []struct{ table, hook, name string }{
	{"mangle", "PREROUTING", "CILIUM_PRE_mangle"}, {"mangle", "POSTROUTING", "CILIUM_POST_mangle"},
	{"filter", "INPUT", "CILIUM_INPUT"}, {"filter", "FORWARD", "CILIUM_FORWARD"}, {"filter", "OUTPUT", "CILIUM_OUTPUT"},
	{"nat", "PREROUTING", "CILIUM_PRE_nat"}, {"nat", "OUTPUT", "CILIUM_OUTPUT_nat"}, {"nat", "POSTROUTING", "CILIUM_POST_nat"},
}

// RuleSet renders iptables-save output (see IPTablesSave for saver and
// version) for a node running cni ("canal", "calico", "flannel" or
// "cilium") with kubelet's chains, and kube-proxy's when kubeProxy is
// true: iptablesSaveBody with the chains of the CNIs the node does not run
// left out, and Cilium's added for "cilium". forward is the filter FORWARD
// policy.
func RuleSet(saver, version, cni string, kubeProxy bool, forward string) string {
	const stamp = "Wed Dec  2 10:00:00 2026" // ctime(3)
	owner := func(line string) string {
		for _, c := range kubeletChains {
			if strings.Contains(line, c+" ") || strings.HasSuffix(strings.TrimSpace(line), c) {
				return "kubelet"
			}
		}
		switch {
		case strings.Contains(line, "KUBE-"):
			return "kube-proxy"
		case strings.Contains(line, "cali"):
			return "calico"
		case strings.Contains(line, "FLANNEL") || strings.Contains(line, "flannel"):
			return "flannel"
		}
		return ""
	}
	keep := map[string]bool{"": true, "kubelet": true, "kube-proxy": kubeProxy,
		"calico": cni == "canal" || cni == "calico", "flannel": cni == "canal" || cni == "flannel"}
	var b strings.Builder
	table := ""
	var decls, rules []string
	flush := func() {
		if cni == "cilium" {
			for _, c := range ciliumChains {
				if c.table != table {
					continue
				}
				decls = append(decls, ":"+c.name+" - [0:0]\n")
				// The agent inserts its feeders first in the built-in chains.
				rules = append([]string{fmt.Sprintf("-A %s -m comment --comment \"cilium-feeder: %s\" -j %s\n", c.hook, c.name, c.name)}, rules...)
			}
			if table == "filter" {
				rules = append(rules,
					"-A CILIUM_FORWARD -o cilium_host -m comment --comment \"cilium: any->cluster on cilium_host forward accept\" -j ACCEPT\n",
					"-A CILIUM_FORWARD -i cilium_host -m comment --comment \"cilium: cluster->any on cilium_host forward accept (nodeport)\" -j ACCEPT\n")
			}
		}
		b.WriteString(strings.Join(decls, ""))
		b.WriteString(strings.Join(rules, ""))
		fmt.Fprintf(&b, "COMMIT\n# Completed on %s\n", stamp)
		decls, rules = nil, nil
	}
	for _, line := range strings.SplitAfter(fmt.Sprintf(iptablesSaveBody, forward), "\n") {
		switch {
		case line == "":
		case strings.HasPrefix(line, "*"):
			table = strings.TrimSpace(line[1:])
			fmt.Fprintf(&b, "# Generated by %s %s on %s\n%s", saver, version, stamp, line)
		case line == "COMMIT\n":
			flush()
		case !keep[owner(line)]:
		case strings.HasPrefix(line, ":") && !strings.Contains(line, " - ["):
			b.WriteString(line) // a built-in chain's policy
		case strings.HasPrefix(line, ":"):
			decls = append(decls, line)
		default:
			rules = append(rules, line)
		}
	}
	return b.String()
}

// legacyTablesWarning is the comment iptables-nft-save prints when the
// legacy backend also holds tables: nft_check_xt_legacy(family, true),
// called by xtables-save.c do_output after the last table, so it is the
// output's last line (iptables -L prints its own variant first).
const legacyTablesWarning = "# Warning: iptables-legacy tables present, use iptables-legacy-save to see them\n"

// NFTTables renders `nft list tables` for a node whose iptables runs on
// nf_tables (the tables iptables-nft creates); extra lines are appended,
// e.g. "table inet firewalld".
func NFTTables(extra ...string) string {
	out := "table ip mangle\ntable ip6 mangle\ntable ip filter\ntable ip6 filter\ntable ip nat\ntable ip6 nat\n"
	for _, e := range extra {
		out += e + "\n"
	}
	return out
}

// alternativesQuery renders `update-alternatives --query iptables` (Debian's
// format) with value the selected path and status auto or manual.
func alternativesQuery(status, value string) string {
	return fmt.Sprintf(`Name: iptables
Link: /usr/sbin/iptables
Slaves:
 iptables-restore /usr/sbin/iptables-restore
 iptables-save /usr/sbin/iptables-save
Status: %s
Best: /usr/sbin/iptables-nft
Value: %s

Alternative: /usr/sbin/iptables-legacy
Priority: 10
Slaves:
 iptables-restore /usr/sbin/iptables-legacy-restore
 iptables-save /usr/sbin/iptables-legacy-save

Alternative: /usr/sbin/iptables-nft
Priority: 20
Slaves:
 iptables-restore /usr/sbin/iptables-nft-restore
 iptables-save /usr/sbin/iptables-nft-save
`, status, value)
}

// setSaves installs the three *-save commands: iptables-save answers as the
// selected backend, the variant commands as themselves.
func setSaves(s *State, selected, nft, legacy string) {
	s.SetCommand(Command{Name: "iptables-save", Args: "*", Out: selected})
	s.SetCommand(Command{Name: "iptables-nft-save", Args: "*", Out: nft})
	s.SetCommand(Command{Name: "iptables-legacy-save", Args: "*", Out: legacy})
}

// healthyNetfilter adds what a healthy node shows to the firewall managers,
// iptables and nftables probes: Debian 12 with iptables on nf_tables, kube-
// proxy's rules only there, FORWARD ACCEPT (RKE2 with Canal leaves the
// distribution's default; flannel and kube-proxy add their own accepts),
// and nftables holding only iptables-nft's tables. UFW (stopped, disabled,
// ENABLED=no) comes from Healthy itself; firewalld is not installed.
func healthyNetfilter(s *State, server bool) {
	const ver = "v1.8.10 (nf_tables)"
	nft := IPTablesSave("iptables-nft-save", ver, true, "ACCEPT")
	setSaves(s, nft, nft, "")
	// kube-proxy programs both families wherever ip6tables works, also in
	// an IPv4-only cluster (cmd/kube-proxy/app/server_linux.go
	// platformCheckSupported: dual-stack when both iptables interfaces are
	// present); the rule text is IPv4's, only the counts are read.
	s.SetCommand(Command{Name: "ip6tables-save", Args: "*", Out: IPTablesSave("ip6tables-nft-save", ver, true, "ACCEPT")})
	s.SetCommand(Command{Name: "update-alternatives", Args: "--query iptables", Out: alternativesQuery("auto", "/usr/sbin/iptables-nft")})
	s.SetCommand(Command{Name: "nft", Args: "list tables", Out: NFTTables()})
	// The nf_tables backend of iptables runs on the nf_tables module.
	s.Modules = append(append([]string{}, s.Modules...), "nf_tables")
}

func copyFiles(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// WithIPTablesLegacy is a node built from an older image: the alternatives
// select iptables-legacy, so kube-proxy and Canal programmed x_tables, and
// nftables holds no table.
func WithIPTablesLegacy(s State) State {
	s.IPTables = "iptables v1.8.9 (legacy)"
	legacy := IPTablesSave("iptables-save", "v1.8.9", true, "ACCEPT")
	setSaves(&s, legacy, "", legacy)
	s.SetCommand(Command{Name: "update-alternatives", Args: "--query iptables", Out: alternativesQuery("manual", "/usr/sbin/iptables-legacy")})
	s.SetCommand(Command{Name: "nft", Args: "list tables", Out: ""})
	return s
}

// WithoutNFTables is a node whose kernel has not loaded nf_tables, as a
// legacy-backend node that nothing ever asked for nftables shows: the
// simulated nft and iptables-nft-save load it when run (stubs/nfnetlink.pre).
func WithoutNFTables(s State) State {
	s.Modules = slices.DeleteFunc(slices.Clone(s.Modules), func(m string) bool { return m == "nf_tables" })
	return s
}

// WithIPTablesOld is a node with iptables 1.8.4 on nf_tables (Ubuntu 20.04
// with iptables-nft selected), the range with the duplicate-rule bugs.
func WithIPTablesOld(s State) State {
	s.IPTables = "iptables v1.8.4 (nf_tables)"
	nft := IPTablesSave("iptables-save", "v1.8.4", true, "ACCEPT")
	setSaves(&s, nft, nft, "")
	return s
}

// WithKubeRulesInBothBackends is a nf_tables node where kube-proxy's rules
// also sit in legacy x_tables (an older kube-proxy image, or a backend
// switch without a reboot): iptables-nft-save warns about the legacy tables
// and iptables-legacy-save (the same 1.8.10 package) shows KUBE- rules.
func WithKubeRulesInBothBackends(s State) State {
	nft := IPTablesSave("iptables-nft-save", "v1.8.10 (nf_tables)", true, "ACCEPT") + legacyTablesWarning
	setSaves(&s, nft, nft, IPTablesSave("iptables-legacy-save", "v1.8.10", true, "ACCEPT"))
	return s
}

// WithFewKubeRules is a node whose kube-proxy programmed none of its Service
// rules (stale or half-synced dataplane): Canal's chains only.
func WithFewKubeRules(s State) State {
	nft := IPTablesSave("iptables-nft-save", "v1.8.10 (nf_tables)", false, "ACCEPT")
	setSaves(&s, nft, nft, "")
	return s
}

// WithFirewalld is a node with firewalld installed, enabled and running on
// its nftables backend (its "table inet firewalld").
func WithFirewalld(s State) State {
	s.Units = copyUnits(s.Units)
	s.Units["firewalld"] = Unit{Active: "active", Enabled: "enabled"}
	s.Files = copyFiles(s.Files)
	s.Files["etc/firewalld/firewalld.conf"] = "DefaultZone=public\nFirewallBackend=nftables\n"
	s.SetCommand(Command{Name: "firewall-cmd", Args: "--state", Out: "running\n"})
	s.SetCommand(Command{Name: "nft", Args: "list tables", Out: NFTTables("table inet firewalld")})
	return s
}

// WithFirewalldEnabledInactive is firewalld stopped but still enabled: it
// starts again at the next boot.
func WithFirewalldEnabledInactive(s State) State {
	s = WithFirewalld(s)
	s.Units["firewalld"] = Unit{Active: "inactive", Enabled: "enabled"}
	s.SetCommand(Command{Name: "firewall-cmd", Args: "--state", Out: "not running\n", RC: 252})
	s.SetCommand(Command{Name: "nft", Args: "list tables", Out: NFTTables()})
	return s
}

// WithUFWEnabledInactive is the seed's unfinished cleanup: UFW stopped
// (systemctl stop ufw) but neither disabled nor `ufw disable`d, so
// ufw.service and ENABLED=yes bring it back at boot.
func WithUFWEnabledInactive(s State) State {
	s.UFW = "inactive"
	s.Units = copyUnits(s.Units)
	s.Units["ufw"] = Unit{Active: "inactive", Enabled: "enabled"}
	s.Files = copyFiles(s.Files)
	s.Files["etc/ufw/ufw.conf"] = UFWConf(true)
	return s
}

// WithNFTKubeProxy is kube-proxy in nftables mode: its own tables in
// nftables and only its canary and hint chains left in iptables.
func WithNFTKubeProxy(s State) State {
	s.SetCommand(Command{Name: "nft", Args: "list tables", Out: NFTTables("table ip kube-proxy", "table ip6 kube-proxy")})
	return s
}
