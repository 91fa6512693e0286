package audit

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/result"
)

// nfNotRoot makes the simulated node's id(1) report an unprivileged user, so
// the probes take their not-root paths even when the tests run as root.
func nfNotRoot(s nodesim.State) nodesim.State {
	s.SetCommand(nodesim.Command{Name: "id", Args: "-u", Out: "1000\n"})
	return s
}

// nfWantFacts compares the listed facts only; "" means the fact must be missing.
func nfWantFacts(t *testing.T, got map[string]string, want map[string]string) {
	t.Helper()
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, ok := got[k]
		if want[k] == "" {
			if ok {
				t.Errorf("%s = %q, want it not emitted", k, v)
			}
			continue
		}
		if !ok || v != want[k] {
			t.Errorf("%s = %q (emitted %v), want %q", k, v, ok, want[k])
		}
	}
}

// Counts of the healthy simulated iptables-save, by hand from
// nodesim.IPTablesSave's text (grep -c '^:KUBE-', grep -cE '^-A KUBE-| -j KUBE-',
// wc -l), so the probe's awk is checked against an independent count.
const (
	nfHealthyLines      = "107"
	nfHealthyKubeChains = "24"
	nfHealthyKubeRules  = "41"
)

func TestIptablesProbe(t *testing.T) {
	healthy := nodesim.Healthy("n1", false)
	dup := healthy
	save := nodesim.IPTablesSave("iptables-nft-save", "v1.8.4 (nf_tables)", true, "ACCEPT")
	// The 1.8.0-1.8.4 bug: each resync appends the same rules again. Two
	// copies go into mangle (1 duplicate) and two into filter, which already
	// holds that rule (2 more).
	save = strings.Replace(save, "COMMIT\n", "-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP\n-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP\nCOMMIT\n", 2)
	dup.SetCommand(nodesim.Command{Name: "iptables-save", Args: "*", Out: save})
	drop := healthy
	drop.SetCommand(nodesim.Command{Name: "iptables-save", Args: "*", Out: nodesim.IPTablesSave("iptables-nft-save", "v1.8.10 (nf_tables)", true, "DROP")})
	saveFails := healthy
	saveFails.SetCommand(nodesim.Command{Name: "iptables-save", Args: "*", RC: 1})
	otherFails := healthy
	otherFails.SetCommand(nodesim.Command{Name: "iptables-legacy-save", Args: "*", RC: 1})
	noOther := healthy
	noOther.RemoveCommand("iptables-legacy-save")
	absent := healthy
	absent.IPTables = ""
	for _, c := range []string{"iptables-save", "iptables-nft-save", "iptables-legacy-save", "update-alternatives"} {
		absent.RemoveCommand(c)
	}
	old16 := healthy
	old16.IPTables = "iptables v1.6.1"
	noAltGroup := healthy
	noAltGroup.SetCommand(nodesim.Command{Name: "update-alternatives", Args: "--query iptables", RC: 2})
	garbled := healthy
	garbled.IPTables = "iptables: something else"

	cases := []struct {
		name  string
		state nodesim.State
		want  map[string]string
	}{
		{"healthy nf_tables node", healthy, map[string]string{
			"iptables.version": "1.8.10", "iptables.backend": "nf_tables", "iptables.alternative": "iptables-nft",
			"iptables.save.lines": nfHealthyLines, "iptables.kube_chains": nfHealthyKubeChains, "iptables.kube_rules": nfHealthyKubeRules,
			"iptables.duplicate_rules": "0", "iptables.forward_policy": "ACCEPT",
			"iptables.other_backend.kube_rules": "0", "iptables.dual_backend": "no"}},
		{"legacy backend", nodesim.WithIPTablesLegacy(healthy), map[string]string{
			"iptables.version": "1.8.9", "iptables.backend": "legacy", "iptables.alternative": "iptables-legacy",
			"iptables.kube_rules": nfHealthyKubeRules, "iptables.other_backend.kube_rules": "0", "iptables.dual_backend": "no"}},
		{"iptables 1.8.4", nodesim.WithIPTablesOld(healthy), map[string]string{
			"iptables.version": "1.8.4", "iptables.backend": "nf_tables", "iptables.kube_rules": nfHealthyKubeRules}},
		{"KUBE rules in both backends", nodesim.WithKubeRulesInBothBackends(healthy), map[string]string{
			"iptables.save.lines": "108", "iptables.kube_rules": nfHealthyKubeRules,
			"iptables.other_backend.kube_rules": nfHealthyKubeRules, "iptables.dual_backend": "yes"}},
		{"kube-proxy programmed nothing", nodesim.WithFewKubeRules(healthy), map[string]string{
			"iptables.kube_chains": "0", "iptables.kube_rules": "0", "iptables.dual_backend": "no", "iptables.forward_policy": "ACCEPT"}},
		{"duplicated rules", dup, map[string]string{"iptables.duplicate_rules": "3", "iptables.kube_rules": "45"}},
		{"FORWARD DROP", drop, map[string]string{"iptables.forward_policy": "DROP"}},
		{"iptables-save fails", saveFails, map[string]string{
			"iptables.save.lines": "error", "iptables.kube_rules": "error", "iptables.dual_backend": "error", "iptables.version": "1.8.10"}},
		{"other backend's save fails", otherFails, map[string]string{
			"iptables.kube_rules": nfHealthyKubeRules, "iptables.other_backend.kube_rules": "error", "iptables.dual_backend": "error"}},
		{"no iptables-legacy-save", noOther, map[string]string{
			"iptables.kube_rules": nfHealthyKubeRules, "iptables.other_backend.kube_rules": "absent", "iptables.dual_backend": "absent"}},
		{"not root", nfNotRoot(healthy), map[string]string{
			"iptables.version": "1.8.10", "iptables.backend": "nf_tables", "iptables.alternative": "iptables-nft",
			"iptables.save.lines": "not-root", "iptables.kube_chains": "not-root", "iptables.kube_rules": "not-root",
			"iptables.duplicate_rules": "not-root", "iptables.forward_policy": "not-root",
			"iptables.other_backend.kube_rules": "not-root", "iptables.dual_backend": "not-root"}},
		{"no iptables at all", absent, map[string]string{
			"iptables.version": "absent", "iptables.backend": "absent", "iptables.alternative": "absent",
			"iptables.kube_rules": "absent", "iptables.dual_backend": "absent", "iptables.forward_policy": "absent"}},
		{"pre-1.8 iptables is legacy", old16, map[string]string{"iptables.version": "1.6.1", "iptables.backend": "legacy"}},
		{"unparsable --version", garbled, map[string]string{"iptables.version": "unknown", "iptables.backend": "unknown",
			"iptables.other_backend.kube_rules": "absent"}},
		{"no alternatives group", noAltGroup, map[string]string{"iptables.alternative": "absent"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nfWantFacts(t, runProbe(t, "iptables", tc.state).Facts, tc.want)
		})
	}
}

// TestNetlinkProbesLeaveNFTablesUnloaded runs every probe that may ask
// nf_tables something over netlink on nodes without the module, where the
// simulated nft and iptables-nft-save load it as the kernel's autoload
// would (a change of the node root's /proc/modules): none may load it, and
// each still reports what it can (the stubs' own test,
// nodesim's TestStubSideEffects, shows the load happens when asked).
func TestNetlinkProbesLeaveNFTablesUnloaded(t *testing.T) {
	healthy := nodesim.Healthy("n", false)
	legacy := nodesim.WithoutNFTables(nodesim.WithIPTablesLegacy(healthy))
	cases := []struct {
		name, probe string
		state       nodesim.State
		want        map[string]string
	}{
		{"iptables on a legacy node", "iptables", legacy, map[string]string{
			"iptables.backend": "legacy", "iptables.kube_rules": nfHealthyKubeRules,
			"iptables.other_backend.kube_rules": "0", "iptables.dual_backend": "no"}},
		{"nftables on a legacy node", "nftables", legacy, map[string]string{"nft.tables": "not-loaded"}},
		{"kubeproxy_mode on a legacy node", "kubeproxy_mode", legacy, map[string]string{"kubeproxy.module.nf_tables": "absent"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var root string
			got := runProbeTweaked(t, tc.probe, tc.state, func(r string) { root = r })
			nfWantFacts(t, got.Facts, tc.want)
			b, err := os.ReadFile(filepath.Join(root, "proc", "modules"))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), "nf_tables ") {
				t.Errorf("the probe loaded nf_tables; /proc/modules:\n%s", b)
			}
		})
	}
}

// TestIptablesProbeAlternativesSymlink covers nodes without
// update-alternatives (RHEL's alternatives has no --query): the selection is
// read from the /etc/alternatives symlink, which nodesim.State cannot plant.
func TestIptablesProbeAlternativesSymlink(t *testing.T) {
	s := nodesim.Healthy("n1", false)
	s.RemoveCommand("update-alternatives")
	for _, tc := range []struct {
		name, target, want string
	}{
		{"symlink to legacy", "/usr/sbin/iptables-legacy", "iptables-legacy"},
		{"symlink to nft", "/usr/sbin/iptables-nft", "iptables-nft"},
		{"no symlink", "", "absent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := runProbeTweaked(t, "iptables", s, func(root string) {
				if tc.target == "" {
					return
				}
				if err := os.MkdirAll(filepath.Join(root, "etc/alternatives"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(tc.target, filepath.Join(root, "etc/alternatives/iptables")); err != nil {
					t.Fatal(err)
				}
			})
			nfWantFacts(t, got.Facts, map[string]string{"iptables.alternative": tc.want})
		})
	}
}

func TestFirewallProbe(t *testing.T) {
	healthy := nodesim.Healthy("n1", false)
	noUFW := healthy
	noUFW.UFW = ""
	// Ubuntu's default: ufw.service enabled and "active (exited)" while ufw
	// itself was never enabled.
	ubuntuIdle := healthy
	ubuntuIdle.Units = map[string]nodesim.Unit{"ufw": {Active: "active", Enabled: "enabled"}}
	customDefaults := nodesim.WithUFWActive(healthy)
	customDefaults.Files = map[string]string{"state/ufw.defaults": "reject (incoming), allow (outgoing), disabled (routed)\n"}
	leftover := noUFW
	leftover.Files = map[string]string{"etc/ufw/ufw.conf": "ENABLED=\"yes\"\nLOGLEVEL=low\n"}
	noEnabledLine := healthy
	noEnabledLine.Files = map[string]string{"etc/ufw/ufw.conf": "LOGLEVEL=low\n"}
	noUnits := healthy
	noUnits.Units = map[string]nodesim.Unit{}

	absentPolicies := map[string]string{"ufw.default_incoming": "absent", "ufw.default_outgoing": "absent", "ufw.default_routed": "absent"}
	cases := []struct {
		name  string
		state nodesim.State
		want  map[string]string
	}{
		{"healthy: ufw installed, stopped, disabled", healthy, map[string]string{
			"ufw.installed": "yes", "ufw.active": "inactive", "ufw.enabled": "disabled", "ufw.status": "inactive",
			"ufw.config_enabled": "no", "ufw.default_incoming": "inactive", "ufw.default_outgoing": "inactive", "ufw.default_routed": "inactive",
			"firewalld.installed": "no", "firewalld.active": "absent", "firewalld.enabled": "absent"}},
		{"ufw active", nodesim.WithUFWActive(healthy), map[string]string{
			"ufw.active": "active", "ufw.enabled": "enabled", "ufw.status": "active", "ufw.config_enabled": "yes",
			"ufw.default_incoming": "deny", "ufw.default_outgoing": "allow", "ufw.default_routed": "deny"}},
		{"ufw active with other defaults", customDefaults, map[string]string{
			"ufw.default_incoming": "reject", "ufw.default_outgoing": "allow", "ufw.default_routed": "disabled"}},
		{"ufw stopped but enabled", nodesim.WithUFWEnabledInactive(healthy), map[string]string{
			"ufw.active": "inactive", "ufw.enabled": "enabled", "ufw.status": "inactive", "ufw.config_enabled": "yes"}},
		{"ubuntu's idle ufw.service", ubuntuIdle, map[string]string{
			"ufw.active": "active", "ufw.enabled": "enabled", "ufw.status": "inactive", "ufw.config_enabled": "no"}},
		{"not root: status unknown, ufw.conf still read", nfNotRoot(nodesim.WithUFWActive(healthy)), map[string]string{
			"ufw.active": "active", "ufw.status": "not-root", "ufw.config_enabled": "yes",
			"ufw.default_incoming": "not-root", "ufw.default_outgoing": "not-root", "ufw.default_routed": "not-root"}},
		{"ufw not installed", noUFW, mergeFacts(absentPolicies, map[string]string{
			"ufw.installed": "no", "ufw.active": "absent", "ufw.enabled": "absent", "ufw.status": "absent", "ufw.config_enabled": "absent"})},
		{"ufw.conf left by a removed package", leftover, mergeFacts(absentPolicies, map[string]string{
			"ufw.installed": "yes", "ufw.status": "absent", "ufw.config_enabled": "yes"})},
		{"ufw.conf without ENABLED", noEnabledLine, map[string]string{"ufw.config_enabled": "unknown"}},
		{"no unit file", noUnits, map[string]string{
			"ufw.active": "inactive", "ufw.enabled": "absent"}},
		{"firewalld running", nodesim.WithFirewalld(healthy), map[string]string{
			"firewalld.installed": "yes", "firewalld.active": "active", "firewalld.enabled": "enabled"}},
		{"firewalld stopped but enabled", nodesim.WithFirewalldEnabledInactive(healthy), map[string]string{
			"firewalld.installed": "yes", "firewalld.active": "inactive", "firewalld.enabled": "enabled"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nfWantFacts(t, runProbe(t, "firewall", tc.state).Facts, tc.want)
		})
	}
}

func TestNftablesProbe(t *testing.T) {
	healthy := nodesim.Healthy("n1", false)
	noNFT := healthy
	noNFT.RemoveCommand("nft")
	fails := healthy
	fails.SetCommand(nodesim.Command{Name: "nft", Args: "list tables", RC: 1})
	// nft lists tables in creation order; the fact must not depend on it.
	shuffled := healthy
	shuffled.SetCommand(nodesim.Command{Name: "nft", Args: "list tables", Out: "table ip6 nat\ntable ip kube-proxy\ntable ip filter\n"})
	// Without nf_tables loaded nft must not run: its netlink request would
	// autoload the module. The stub would answer with a kube-proxy table.
	unloaded := shuffled
	var mods []string
	for _, m := range unloaded.Modules {
		if m != "nf_tables" {
			mods = append(mods, m)
		}
	}
	unloaded.Modules = mods
	// Byte order ("ip6" before "ip:"), whatever the node's locale.
	const iptTables = "ip6:filter,ip6:mangle,ip6:nat,ip:filter,ip:mangle,ip:nat"
	cases := []struct {
		name  string
		state nodesim.State
		want  map[string]string
	}{
		{"healthy: iptables-nft's tables", healthy, map[string]string{"nft.installed": "yes", "nft.tables": iptTables, "nft.kube_proxy_table": "no"}},
		{"kube-proxy nftables mode", nodesim.WithNFTKubeProxy(healthy), map[string]string{
			"nft.tables": "ip6:filter,ip6:kube-proxy,ip6:mangle,ip6:nat,ip:filter,ip:kube-proxy,ip:mangle,ip:nat", "nft.kube_proxy_table": "yes"}},
		{"legacy node: no nft table", nodesim.WithIPTablesLegacy(healthy), map[string]string{"nft.tables": "none", "nft.kube_proxy_table": "no"}},
		{"firewalld's table", nodesim.WithFirewalld(healthy), map[string]string{"nft.tables": "inet:firewalld," + iptTables}},
		{"creation order does not matter", shuffled, map[string]string{"nft.tables": "ip6:nat,ip:filter,ip:kube-proxy", "nft.kube_proxy_table": "yes"}},
		{"nft not installed", noNFT, map[string]string{"nft.installed": "no", "nft.tables": "absent", "nft.kube_proxy_table": "absent"}},
		{"not root", nfNotRoot(healthy), map[string]string{"nft.installed": "yes", "nft.tables": "not-root", "nft.kube_proxy_table": "not-root"}},
		{"nft fails", fails, map[string]string{"nft.tables": "error", "nft.kube_proxy_table": "error"}},
		{"nf_tables not loaded: nft not run", unloaded, map[string]string{"nft.installed": "yes", "nft.tables": "not-loaded", "nft.kube_proxy_table": "no"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nfWantFacts(t, runProbe(t, "nftables", tc.state).Facts, tc.want)
		})
	}
}

// healthyNetfilterFacts is what the three probes report on a healthy node.
func healthyNetfilterFacts() map[string]string {
	return map[string]string{
		"ufw.installed": "yes", "ufw.active": "inactive", "ufw.enabled": "disabled", "ufw.status": "inactive", "ufw.config_enabled": "no",
		"ufw.default_incoming": "inactive", "ufw.default_outgoing": "inactive", "ufw.default_routed": "inactive",
		"firewalld.installed": "no", "firewalld.active": "absent", "firewalld.enabled": "absent",
		"iptables.version": "1.8.10", "iptables.backend": "nf_tables", "iptables.alternative": "iptables-nft",
		"iptables.save.lines": "107", "iptables.kube_chains": "24", "iptables.kube_rules": "41", "iptables.duplicate_rules": "0",
		"iptables.forward_policy": "ACCEPT", "iptables.other_backend.kube_rules": "0", "iptables.dual_backend": "no",
		"nft.installed": "yes", "nft.tables": "ip:filter", "nft.kube_proxy_table": "no",
		// The kubeproxy_mode probe's fact that iptables.kube-rules-low picks
		// a node's peers by.
		"kubeproxy.mode": "iptables",
	}
}

func TestNetfilterChecks(t *testing.T) {
	byID := builtinChecksByID(t)
	set := func(kv ...string) func(map[string]string) {
		return func(f map[string]string) {
			for i := 0; i+1 < len(kv); i += 2 {
				f[kv[i]] = kv[i+1]
			}
		}
	}
	cases := []struct {
		name  string
		check string
		plant func(map[string]string)
		want  result.Outcome // outcome on the planted node; the 4 healthy peers must pass
	}{
		{"ufw running", "firewall.ufw-active", set("ufw.active", "active", "ufw.enabled", "enabled", "ufw.status", "active", "ufw.config_enabled", "yes"), result.OutcomeFail},
		// Without root ufw's own status is unknown: not a pass, not a
		// finding, but a node the gate does not pass blind (partial).
		{"ufw running, audited without root", "firewall.ufw-active", set("ufw.active", "active", "ufw.status", "not-root", "ufw.config_enabled", "yes"), result.OutcomeUnjudged},
		{"ubuntu's idle ufw.service is not ufw running", "firewall.ufw-active", set("ufw.active", "active", "ufw.enabled", "enabled", "ufw.status", "inactive"), result.OutcomePass},
		{"idle ufw.service, without root, ENABLED=no", "firewall.ufw-active", set("ufw.active", "active", "ufw.status", "not-root", "ufw.config_enabled", "no"), result.OutcomePass},
		{"ufw stopped, enabled, ENABLED=yes", "firewall.ufw-enabled-inactive", set("ufw.enabled", "enabled", "ufw.config_enabled", "yes"), result.OutcomeFail},
		{"ufw stopped, enabled, ufw.conf unreadable", "firewall.ufw-enabled-inactive", set("ufw.enabled", "enabled", "ufw.config_enabled", "absent"), result.OutcomeFail},
		{"ufw stopped, enabled, but ufw disable'd", "firewall.ufw-enabled-inactive", set("ufw.enabled", "enabled", "ufw.config_enabled", "no"), result.OutcomePass},
		{"ufw running is the critical, not this", "firewall.ufw-enabled-inactive", set("ufw.active", "active", "ufw.enabled", "enabled", "ufw.config_enabled", "yes"), result.OutcomePass},
		{"ufw not installed", "firewall.ufw-enabled-inactive", set("ufw.installed", "no", "ufw.active", "absent", "ufw.enabled", "absent", "ufw.config_enabled", "absent"), result.OutcomePass},
		{"firewalld running", "firewall.firewalld-active", set("firewalld.installed", "yes", "firewalld.active", "active", "firewalld.enabled", "enabled"), result.OutcomeFail},
		{"firewalld stopped, enabled", "firewall.firewalld-enabled-inactive", set("firewalld.installed", "yes", "firewalld.active", "inactive", "firewalld.enabled", "enabled"), result.OutcomeFail},
		{"firewalld stopped, masked", "firewall.firewalld-enabled-inactive", set("firewalld.installed", "yes", "firewalld.active", "inactive", "firewalld.enabled", "masked"), result.OutcomePass},
		{"firewalld running is the critical, not this", "firewall.firewalld-enabled-inactive", set("firewalld.active", "active", "firewalld.enabled", "enabled"), result.OutcomePass},
		{"one legacy node", "iptables.backend-mixed", set("iptables.backend", "legacy"), result.OutcomeFail},
		{"node without iptables is not compared", "iptables.backend-mixed", set("iptables.backend", "absent"), result.OutcomePass},
		{"iptables 1.8.4", "iptables.version-buggy", set("iptables.version", "1.8.4"), result.OutcomeFail},
		{"iptables 1.8.0", "iptables.version-buggy", set("iptables.version", "1.8.0"), result.OutcomeFail},
		{"iptables 1.8.5", "iptables.version-buggy", set("iptables.version", "1.8.5"), result.OutcomePass},
		{"iptables 1.6.1", "iptables.version-buggy", set("iptables.version", "1.6.1"), result.OutcomePass},
		{"iptables version unknown", "iptables.version-buggy", set("iptables.version", "unknown"), result.OutcomeSkip},
		{"KUBE rules in both backends", "iptables.kube-rules-both-backends", set("iptables.dual_backend", "yes", "iptables.other_backend.kube_rules", "41"), result.OutcomeFail},
		{"KUBE rules in both, not root", "iptables.kube-rules-both-backends", set("iptables.dual_backend", "not-root", "iptables.other_backend.kube_rules", "not-root"), result.OutcomeUnjudged},
		{"3 KUBE rules vs 41 on the peers", "iptables.kube-rules-low", set("iptables.kube_rules", "3"), result.OutcomeFail},
		{"21 KUBE rules (51% of the median)", "iptables.kube-rules-low", set("iptables.kube_rules", "21"), result.OutcomePass},
		{"20 KUBE rules (48% of the median)", "iptables.kube-rules-low", set("iptables.kube_rules", "20"), result.OutcomeFail},
		{"rule count not collected without root", "iptables.kube-rules-low", set("iptables.kube_rules", "not-root"), result.OutcomeUnjudged},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := byID[tc.check]
			if !ok {
				t.Fatalf("no check %s", tc.check)
			}
			var nodes []result.Node
			for i := 1; i <= 5; i++ {
				f := healthyNetfilterFacts()
				if i == 1 {
					tc.plant(f)
				}
				nodes = append(nodes, result.Node{Name: "node-" + string(rune('0'+i)), Status: result.StatusOK, Facts: f})
			}
			for _, r := range check.Judge(nodes, nil, []check.Check{c}, nil) {
				want := result.OutcomePass
				if r.Node == "node-1" {
					want = tc.want
				}
				if r.Outcome != want {
					t.Errorf("%s on %s: %s (%s), want %s", c.ID, r.Node, r.Outcome, r.Detail, want)
				}
			}
		})
	}
}

// netfilterProbes are this area's probes; kubeproxy_mode too, since
// iptables.kube-rules-low compares a node with the nodes in its
// kubeproxy.mode. The netfilter-planted fixture runs only these: the other
// areas are covered by their own tests.
var netfilterProbes = []string{"firewall", "iptables", "nftables", "kubeproxy_mode"}

// judgeNetfilter judges fixture name with this area's checks only.
func judgeNetfilter(t *testing.T, name string) *result.Report {
	t.Helper()
	return judgeFixture(t, name, func(r *result.Report, rules *Rules) {
		for _, n := range r.Nodes {
			if n.Status != result.StatusOK {
				t.Fatalf("node %s: %s (%s)", n.Name, n.Status, n.Message)
			}
		}
		var cs []check.Check
		for _, c := range rules.Checks {
			if strings.HasPrefix(c.ID, "firewall.") || strings.HasPrefix(c.ID, "iptables.") {
				cs = append(cs, c)
			}
		}
		if len(cs) < 8 {
			t.Fatalf("netfilter checks %d", len(cs))
		}
		rules.Checks = cs
	})
}

// netfilterPlantedFleet is a clean fleet with one netfilter drift per
// node beside a healthy node-1.
func netfilterPlantedFleet() []nodesim.Member {
	fleet := nodesim.Clean(8)
	plant := map[string]func(nodesim.State) nodesim.State{
		"node-2": nodesim.WithIPTablesLegacy,
		"node-3": nodesim.WithFirewalld,
		"node-4": nodesim.WithUFWEnabledInactive,
		"node-5": nodesim.WithKubeRulesInBothBackends,
		"node-6": nodesim.WithFewKubeRules,
		"node-7": nodesim.WithIPTablesOld,
		"node-8": nodesim.WithFirewalldEnabledInactive,
	}
	for i := range fleet {
		if f, ok := plant[fleet[i].Name]; ok {
			fleet[i].State = f(fleet[i].State)
		}
	}
	return fleet
}

// TestNetfilterScenarios judges this area's checks on the facts of
// netfilterPlantedFleet: each planted node gets its own finding and no
// other netfilter finding.
func TestNetfilterScenarios(t *testing.T) {
	r := judgeNetfilter(t, "netfilter-planted")
	got := map[string]string{}
	for _, f := range r.Findings {
		if f.Kind == result.KindCheck && (strings.HasPrefix(f.Check, "firewall.") || strings.HasPrefix(f.Check, "iptables.")) {
			got[f.Check] = strings.Join(f.Nodes, ",")
		}
	}
	want := map[string]string{
		"iptables.backend-mixed":              "node-2",
		"firewall.firewalld-active":           "node-3",
		"firewall.ufw-enabled-inactive":       "node-4",
		"iptables.kube-rules-both-backends":   "node-5",
		"iptables.kube-rules-low":             "node-6",
		"iptables.version-buggy":              "node-7",
		"firewall.firewalld-enabled-inactive": "node-8",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s fails on %q, want %q", k, got[k], v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected finding %s on %s", k, v)
		}
	}
}

// TestIncidentNetfilterFindings: the seed incident fleet keeps its UFW
// finding on exactly the four nodes and gains no other netfilter finding
// (the healthy baseline and the UFW nodes agree on iptables).
func TestIncidentNetfilterFindings(t *testing.T) {
	r := judgeNetfilter(t, "incident")
	for _, f := range r.Findings {
		if f.Kind != result.KindCheck || !(strings.HasPrefix(f.Check, "firewall.") || strings.HasPrefix(f.Check, "iptables.")) {
			continue
		}
		if f.Check != "firewall.ufw-active" {
			t.Errorf("unexpected finding %s on %v", f.Check, f.Nodes)
			continue
		}
		if got := strings.Join(f.Nodes, ","); got != "etcd-1,etcd-2,worker-2,worker-4" {
			t.Errorf("firewall.ufw-active on %s", got)
		}
	}
}

// TestMedianChecksCompareNodesInTheSameProxyMode: kube-proxy's IPVS mode
// keeps Services in the IPVS table and matches them in iptables through
// ipsets, "to make sure the number of IPTABLES rules be constant, no matter
// how many services we have" (kubernetes pkg/proxy/ipvs/README.md, "When
// IPVS falls back to IPTABLES"), while iptables mode writes chains and
// rules per Service and endpoint (pkg/proxy/iptables/proxier.go). The rule counts of a mixed-mode fleet
// are therefore compared within each kubeproxy.mode, and the "at least 3
// nodes" rule holds per mode.
func TestMedianChecksCompareNodesInTheSameProxyMode(t *testing.T) {
	byID := builtinChecksByID(t)
	type node struct {
		name, mode, count string
		want              result.Outcome
	}
	fleet := []node{
		{"ipvs-1", "ipvs", "14", result.OutcomePass}, {"ipvs-2", "ipvs", "14", result.OutcomePass}, {"ipvs-3", "ipvs", "13", result.OutcomePass},
		{"ipt-1", "iptables", "412", result.OutcomePass}, {"ipt-2", "iptables", "409", result.OutcomePass}, {"ipt-3", "iptables", "415", result.OutcomePass},
		{"ipt-4", "iptables", "410", result.OutcomePass},
		// Genuinely stale among its own kind: still flagged.
		{"ipt-low", "iptables", "52", result.OutcomeFail},
		// Two nftables nodes are too few peers to call either an outlier.
		{"nft-1", "nftables", "3", result.OutcomeSkip}, {"nft-2", "nftables", "400", result.OutcomeSkip},
		// Without its mode a node has no peers to be compared with.
		{"no-mode", "", "5", result.OutcomeSkip},
	}
	for _, tc := range []struct{ check, fact string }{
		{"iptables.kube-rules-low", "iptables.kube_rules"},
		{"kubeproxy.rules-below-peers", "kubeproxy.metrics.iptables_rules_nat"},
	} {
		t.Run(tc.check, func(t *testing.T) {
			c, ok := byID[tc.check]
			if !ok {
				t.Fatalf("no check %s", tc.check)
			}
			var nodes []result.Node
			want := map[string]result.Outcome{}
			for _, n := range fleet {
				f := map[string]string{tc.fact: n.count}
				if n.mode != "" {
					f["kubeproxy.mode"] = n.mode
				}
				nodes = append(nodes, result.Node{Name: n.name, Status: result.StatusOK, Facts: f})
				want[n.name] = n.want
			}
			for _, r := range check.Judge(nodes, nil, []check.Check{c}, nil) {
				if r.Outcome != want[r.Node] {
					t.Errorf("%s: %s (%s), want %s", r.Node, r.Outcome, r.Detail, want[r.Node])
				}
			}
		})
	}
}

// On systemd 253 and later (Debian 13, Ubuntu 24.04) systemctl is-enabled
// says "not-found" for a unit with no unit file; that is the same absence
// older systemd shows with an empty answer, never a unit state.
func TestUnitStateOnSystemd253(t *testing.T) {
	// firewalld removed, its /etc/firewalld left behind (dpkg keeps
	// changed conffiles): installed by that sign, with no unit file.
	s := withFile(nodesim.WithSystemd253(nodesim.Healthy("w1", false)), "etc/firewalld/firewalld.conf", "DefaultZone=public\n")
	fw := runProbe(t, "firewall", s).Facts
	wantFacts(t, fw, map[string]string{"firewalld.installed": "yes", "firewalld.enabled": "absent", "ufw.enabled": "disabled"})
	net := runProbe(t, "network", s).Facts
	wantFacts(t, net, map[string]string{"nm.cloud_setup": "absent"})
}

// Where systemd does not run (a container), systemctl show and is-active
// fail but is-enabled still reads the unit files: the probes ask each unit
// as they did before asking show, so the facts are the ones they always
// gave there.
func TestUnitStateWithoutSystemdRunning(t *testing.T) {
	s := withFile(nodesim.WithSystemdNotRunning(nodesim.WithNMCloudSetup(nodesim.WithNetworkManager(nodesim.Healthy("w1", false), true))), "etc/firewalld/firewalld.conf", "DefaultZone=public\n")
	fw := runProbe(t, "firewall", s).Facts
	wantFacts(t, fw, map[string]string{"ufw.active": "absent", "ufw.enabled": "disabled", "firewalld.installed": "yes", "firewalld.active": "absent", "firewalld.enabled": "absent"})
	net := runProbe(t, "network", s).Facts
	wantFacts(t, net, map[string]string{"nm.active": "absent", "nm.cloud_setup": "enabled"})
}

// TestHostIPTablesIsNoRKE2Gate pins the severity of the checks whose
// premise is the host's iptables package: RKE2's kube-proxy and CNIs run
// their image's iptables (k3s-root's, whose iptables-detect picks each
// node's backend: k3s-io/k3s-root iptables-detect/iptables-detect.sh,
// rancher/image-build-kubernetes Dockerfile), so a host iptables 1.8.4 and
// nodes on different backends are worth knowing, never a gate. Two
// backends on one node still are (iptables.kube-rules-both-backends).
func TestHostIPTablesIsNoRKE2Gate(t *testing.T) {
	r := judgeNetfilter(t, "netfilter-planted")
	want := map[string]result.Severity{
		"iptables.version-buggy":            result.SeverityInfo,
		"iptables.backend-mixed":            result.SeverityInfo,
		"iptables.kube-rules-both-backends": result.SeverityCritical,
	}
	seen := map[string]bool{}
	for _, f := range r.Findings {
		if w, ok := want[f.Check]; ok {
			seen[f.Check] = true
			if f.Severity != w {
				t.Errorf("%s on %v is %s, want %s", f.Check, f.Nodes, f.Severity, w)
			}
		}
	}
	for c := range want {
		if !seen[c] {
			t.Errorf("%s not found on the planted fleet", c)
		}
	}
}
