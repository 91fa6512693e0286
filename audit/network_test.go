package audit

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/audit/check"
	"github.com/fleet-audit/fleet-audit/audit/probe"
	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/internal/testtools"
	"github.com/fleet-audit/fleet-audit/result"
)

// nmFiles returns s with files set verbatim: "" is an empty file, which is
// how netplan shadows a NetworkManager snippet (hostFiles would delete it).
func nmFiles(s nodesim.State, files map[string]string) nodesim.State {
	out := make(map[string]string, len(s.Files)+len(files))
	for k, v := range s.Files {
		out[k] = v
	}
	for k, v := range files {
		out[k] = v
	}
	s.Files = out
	return s
}

// rke2NMDropIn is /etc/NetworkManager/conf.d/rke2-canal.conf as RKE2's
// known issues give it: Calico's list plus flannel*.
const rke2NMDropIn = "[keyfile]\nunmanaged-devices=" + rke2NMList + "\n"

const (
	calicoNMList = "interface-name:cali*;interface-name:tunl*;interface-name:vxlan.calico;interface-name:vxlan-v6.calico;interface-name:wireguard.cali;interface-name:wg-v6.cali"
	rke2NMList   = "interface-name:flannel*;" + calicoNMList
)

// TestNetworkManagerPerCNI pins that NetworkManager is judged against the
// interfaces the node's own CNI creates: Calico's list (Calico's "Configure
// NetworkManager": cali*, tunl*, vxlan.calico, vxlan-v6.calico,
// wireguard.cali, wg-v6.cali), Flannel's flannel*, Canal's cali* and
// flannel* (RKE2's rke2-canal.conf, a superset, passes too). Exactly the
// CNI's list finds nothing, one pattern short is found, and Cilium, for
// which neither RKE2 nor Cilium documents a list, is not judged.
func TestNetworkManagerPerCNI(t *testing.T) {
	var nmCheck check.Check
	for _, c := range builtinChecks(t) {
		if c.ID == "network.nm-manages-cni" {
			nmCheck = c
		}
	}
	cases := []struct {
		name, cni, list string
		want            string // nm.cni_unmanaged
		found           bool   // network.nm-manages-cni fails
	}{
		{"Canal: cali* and flannel*", "canal", "interface-name:cali*;interface-name:flannel*", "yes", false},
		{"Canal: RKE2's rke2-canal.conf", "canal", rke2NMList, "yes", false},
		{"Canal without flannel*", "canal", calicoNMList, "missing:flannel*", true},
		{"Calico: Calico's list", "calico", calicoNMList, "yes", false},
		{"Calico: RKE2's rke2-canal.conf", "calico", rke2NMList, "yes", false},
		{"Calico with Canal's two patterns", "calico", "interface-name:cali*;interface-name:flannel*", "missing:tunl*,vxlan.calico,vxlan-v6.calico,wireguard.cali,wg-v6.cali", true},
		{"Calico without wg-v6.cali", "calico", strings.TrimSuffix(calicoNMList, ";interface-name:wg-v6.cali"), "missing:wg-v6.cali", true},
		{"Calico by type: VXLAN and WireGuard devices", "calico", "interface-name:cali*;interface-name:tunl*;type:vxlan;type:wireguard", "yes", false},
		{"Flannel: flannel*", "flannel", "interface-name:flannel*", "yes", false},
		{"Flannel with Calico's list", "flannel", calicoNMList, "missing:flannel*", true},
		{"Multus over Calico: Calico's list", "multus+calico", calicoNMList, "yes", false},
		{"Multus over Flannel without flannel*", "multus+flannel", "interface-name:cali*", "missing:flannel*", true},
		{"Cilium: nothing documented", "cilium", "", "undocumented", false},
		{"no CNI config yet", "none", "", "undocumented", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := nodesim.WithCNI(nodesim.WithNetworkManager(nodesim.Healthy("w1", false), false), c.cni, false)
			s = nmFiles(s, map[string]string{nodesim.NMEtcConfD + "cni.conf": "[keyfile]\nunmanaged-devices=" + c.list + "\n"})
			facts := runProbe(t, "network", s).Facts
			hostWant(t, facts, map[string]string{"nm.cni_unmanaged": c.want})
			want := result.OutcomePass
			if c.found {
				want = result.OutcomeFail
			}
			if got, detail := nmCheck.Evaluate(facts); got != want {
				t.Errorf("%s: %s (%s), want %s", nmCheck.ID, got, detail, want)
			}
		})
	}
}

// TestNetworkManagerDevicesPerCNI pins that nmcli's devices are read for
// the node's own CNI's patterns only: Calico's tunl0 counts on a Calico
// node, and is no business of a Canal node's.
func TestNetworkManagerDevicesPerCNI(t *testing.T) {
	cases := []struct {
		name, cni string
		devices   []string
		want      string // nm.cni_devices
	}{
		{"Calico: tunl0 managed", "calico", []string{"eth0:connected", "cali3f1a2b4c5d6:unmanaged", "tunl0:connected (externally)"}, "managed"},
		{"Calico: vxlan.calico managed", "calico", []string{"vxlan.calico:disconnected", "cali3f1a2b4c5d6:unmanaged"}, "managed"},
		{"Calico: all unmanaged", "calico", []string{"eth0:connected", "tunl0:unmanaged", "vxlan.calico:unmanaged", "wireguard.cali:unmanaged"}, "unmanaged"},
		{"Canal: tunl0 is not Canal's", "canal", []string{"eth0:connected", "tunl0:connected (externally)", "flannel.1:unmanaged"}, "unmanaged"},
		{"Flannel: a cali* veth is not Flannel's", "flannel", []string{"cali3f1a2b4c5d6:disconnected", "flannel.1:unmanaged"}, "unmanaged"},
		{"Flannel: flannel-wg managed", "flannel", []string{"flannel-wg:connected (externally)"}, "managed"},
		{"Cilium: nothing documented", "cilium", []string{"cilium_host:connected (externally)"}, "undocumented"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := nodesim.WithCNI(nodesim.WithNetworkManager(nodesim.Healthy("w1", false), true), c.cni, false)
			s = nodesim.WithNMCLIDevices(s, c.devices...)
			hostWant(t, runProbe(t, "network", s).Facts, map[string]string{"nm.cni_devices": c.want})
		})
	}
}

// TestNetworkManagerConfigPrecedence pins the order in which NetworkManager
// merges its configuration (src/core/nm-config.c read_entire_config(),
// NetworkManager.conf(5)): /usr/lib/NetworkManager/conf.d, then
// /run/NetworkManager/conf.d, then NetworkManager.conf, then
// /etc/NetworkManager/conf.d, each in strcmp order of the names; a name in
// /etc or /run shadows the /usr/lib file of that name, a name in /etc the
// /run one.
func TestNetworkManagerConfigPrecedence(t *testing.T) {
	agent := nodesim.Healthy("w1", false)
	debian := nodesim.WithNetworkManager(agent, false)
	ubuntu := nodesim.WithUbuntuNetworkManager(agent, false)
	ubuntuNetplan := nodesim.WithUbuntuNetworkManager(agent, true)
	const lib, run, etc = nodesim.NMLibConfD, nodesim.NMRunConfD, nodesim.NMEtcConfD
	cases := []struct {
		name  string
		state nodesim.State
		want  string // nm.cni_unmanaged
	}{
		{"Debian: RKE2's drop-in", nodesim.WithNetworkManager(agent, true), "yes"},
		{"Debian: no drop-in", debian, "missing:cali*,flannel*"},
		{"RHEL: NetworkManager-config-server's 00-server.conf and RKE2's drop-in", nmFiles(debian, map[string]string{
			lib + "00-server.conf":  "# This configuration file changes NetworkManager's behavior to\n[main]\nno-auto-default=*\nignore-carrier=*\n",
			etc + "rke2-canal.conf": rke2NMDropIn}), "yes"},
		{"Ubuntu 22.04, networkd renders: the distribution's list leaves everything unmanaged", ubuntu, "yes"},
		{"Ubuntu 22.04, netplan renders with NetworkManager: its empty /run file shadows the distribution's list", ubuntuNetplan, "missing:cali*,flannel*"},
		{"Ubuntu 22.04 with netplan and RKE2's drop-in", nmFiles(ubuntuNetplan, map[string]string{etc + "rke2-canal.conf": rke2NMDropIn}), "yes"},
		{"an /etc file shadows the /usr/lib file of the same name", nmFiles(ubuntu, map[string]string{etc + nodesim.UbuntuGloballyManaged: ""}), "missing:cali*,flannel*"},
		{"an /etc file shadows the /run file of the same name", nmFiles(debian, map[string]string{
			run + "90-cni.conf": rke2NMDropIn, etc + "90-cni.conf": "# site: let NetworkManager have them\n"}), "missing:cali*,flannel*"},
		{"a /run file shadows the /usr/lib file of the same name", nmFiles(debian, map[string]string{
			lib + "50-cni.conf": rke2NMDropIn, run + "50-cni.conf": ""}), "missing:cali*,flannel*"},
		{"/usr/lib is read before NetworkManager.conf", nmFiles(debian, map[string]string{
			nodesim.NMConf:         "[main]\nplugins=keyfile\n\n[keyfile]\nunmanaged-devices=interface-name:cali*;interface-name:flannel*\n",
			lib + "00-docker.conf": "[keyfile]\nunmanaged-devices=interface-name:docker0\n"}), "yes"},
		{"/run is read before NetworkManager.conf", nmFiles(debian, map[string]string{
			nodesim.NMConf:         "[main]\nplugins=keyfile\n\n[keyfile]\nunmanaged-devices=interface-name:cali*;interface-name:flannel*\n",
			run + "zz-docker.conf": "[keyfile]\nunmanaged-devices=interface-name:docker0\n"}), "yes"},
		{"/etc/NetworkManager/conf.d is read after NetworkManager.conf", nmFiles(debian, map[string]string{
			nodesim.NMConf:         "[main]\nplugins=keyfile\n\n[keyfile]\nunmanaged-devices=interface-name:cali*;interface-name:flannel*\n",
			etc + "00-docker.conf": "[keyfile]\nunmanaged-devices=interface-name:docker0\n"}), "missing:cali*,flannel*"},
		{"directory by directory, not by name across them", nmFiles(debian, map[string]string{
			lib + "90-cni.conf":    rke2NMDropIn,
			run + "10-docker.conf": "[keyfile]\nunmanaged-devices=interface-name:docker0\n"}), "missing:cali*,flannel*"},
		{"by name within a directory", nmFiles(debian, map[string]string{
			etc + "10-docker.conf": "[keyfile]\nunmanaged-devices=interface-name:docker0\n",
			etc + "20-cni.conf":    rke2NMDropIn}), "yes"},
		{"nm-system-settings.conf is read instead of NetworkManager.conf", nmFiles(debian, map[string]string{
			nodesim.NMConf: "[main]\nplugins=keyfile\n\n[keyfile]\nunmanaged-devices=interface-name:cali*;interface-name:flannel*\n",
			"etc/NetworkManager/nm-system-settings.conf": "[main]\nplugins=keyfile\n"}), "missing:cali*,flannel*"},
		{"+= appends across directories", nmFiles(ubuntuNetplan, map[string]string{
			run + "50-calico.conf":  "[keyfile]\nunmanaged-devices+=interface-name:cali*\n",
			etc + "60-flannel.conf": "[keyfile]\nunmanaged-devices+=interface-name:flannel*\n"}), "yes"},
		{"-= removes an entry", nmFiles(debian, map[string]string{
			lib + "10-cni.conf":  rke2NMDropIn,
			etc + "90-site.conf": "[keyfile]\nunmanaged-devices-=interface-name:flannel*\n"}), "missing:flannel*"},
		{"the last assignment of a key in one file wins", nmFiles(debian, map[string]string{
			etc + "rke2-canal.conf": rke2NMDropIn + "unmanaged-devices=interface-name:cali*\n"}), "missing:flannel*"},
		{"a section given twice is one section", nmFiles(debian, map[string]string{
			etc + "rke2-canal.conf": "[keyfile]\nunmanaged-devices=interface-name:cali*\n[main]\ndns=default\n[keyfile]\nunmanaged-devices+=interface-name:flannel*\n"}), "yes"},
		{"CRLF line endings", nmFiles(debian, map[string]string{
			etc + "rke2-canal.conf": "[keyfile]\r\nunmanaged-devices=interface-name:cali*;interface-name:flannel*\r\n"}), "yes"},
		{"a file not named *.conf is not read", nmFiles(debian, map[string]string{
			etc + "rke2-canal.conf.disabled": rke2NMDropIn}), "missing:cali*,flannel*"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hostWant(t, runProbe(t, "network", c.state).Facts, map[string]string{"nm.installed": "yes", "nm.cni_unmanaged": c.want})
		})
	}
}

// TestNetworkManagerDeviceSpecs pins how NetworkManager matches an
// unmanaged-devices list against Calico's cali<11 hex> veths and Flannel's
// flannel.1 VXLAN device: nm_match_spec_split() and nm_match_spec_device()
// in src/core/nm-core-utils.c (the examples of its own test-core.c
// test_match_spec_device among them).
func TestNetworkManagerDeviceSpecs(t *testing.T) {
	base := nodesim.WithNetworkManager(nodesim.Healthy("w1", false), false)
	cases := []struct {
		name, value string
		want        string // nm.cni_unmanaged
	}{
		{"RKE2's list", "interface-name:cali*;interface-name:flannel*", "yes"},
		{"commas separate too", "interface-name:cali*,interface-name:flannel*", "yes"},
		{"~ is a glob as well", "interface-name:~cali*;interface-name:~flannel*", "yes"},
		{"= is an exact name, not a glob", "interface-name:=cali*;interface-name:flannel*", "missing:cali*"},
		{"? matches one character", "interface-name:cali???????????;interface-name:flannel.?", "yes"},
		{"a glob that covers only some cali* names", "interface-name:calia*;interface-name:flannel*", "missing:cali*"},
		{"tags are case-insensitive", "Interface-Name:cali*;INTERFACE-NAME:flannel*", "yes"},
		{"a space after the tag is part of the name", "interface-name: cali*;interface-name:flannel*", "missing:cali*"},
		{"spaces around entries are trimmed", "  interface-name:cali* ;\tinterface-name:flannel*  ", "yes"},
		{"an escaped separator does not split", `interface-name:cali*\;interface-name:flannel*`, "missing:cali*,flannel*"},
		{"a bare name matches that exact interface only", "cali*;flannel.1", "missing:cali*"},
		{"everything", "*", "yes"},
		// A veth's type is "ethernet" (nm-device.c get_type_description
		// renames NMDeviceVeth's), its driver "veth".
		{"by device type: cali* are veths of type ethernet, flannel.1 is VXLAN", "type:ethernet;type:vxlan", "yes"},
		{"type:veth names no NetworkManager type", "type:veth;type:vxlan", "missing:cali*"},
		{"by driver", "driver:veth;driver:vxlan", "yes"},
		{"a MAC says nothing about random veth MACs", "mac:00:11:22:33:44:55;interface-name:flannel*", "missing:cali*"},
		{"except wins over a match", "*,except:interface-name:flannel*", "missing:flannel*"},
		{"Ubuntu's list: all but Wi-Fi and modems", "*,except:type:wifi,except:type:gsm,except:type:cdma", "yes"},
		{"a list of excepts alone leaves every other device unmanaged", "except:type:wifi", "yes"},
		{"a list of excepts alone that names cali*", "except:interface-name:cali*", "missing:cali*"},
		{"except of a bare name is no fuzzy match", "*,except:flannel.1", "yes"},
		{"empty", "", "missing:cali*,flannel*"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := nmFiles(base, map[string]string{nodesim.NMEtcConfD + "rke2-canal.conf": "[keyfile]\nunmanaged-devices=" + c.value + "\n"})
			hostWant(t, runProbe(t, "network", s).Facts, map[string]string{"nm.cni_unmanaged": c.want})
		})
	}
}

// TestNetworkManagerDevicesFromNMCLI pins nm.cni_devices, read from
// `nmcli -t -f DEVICE,STATE device` (nmcli(1), terse mode): any cali* or
// flannel* device in a state other than "unmanaged" is NetworkManager's own
// word that it manages a CNI interface, whatever the files say.
func TestNetworkManagerDevicesFromNMCLI(t *testing.T) {
	nm := nodesim.WithNetworkManager(nodesim.Healthy("w1", false), true)
	cases := []struct {
		name  string
		state nodesim.State
		want  string
	}{
		{"no nmcli", nm, "absent"},
		{"all CNI devices unmanaged", nodesim.WithNMCLIDevices(nm, "eth0:connected", "flannel.1:unmanaged", "cali3f1a2b4c5d6:unmanaged", "lo:unmanaged"), "unmanaged"},
		{"flannel.1 connected externally", nodesim.WithNMCLIDevices(nm, "eth0:connected", "flannel.1:connected (externally)", "cali3f1a2b4c5d6:unmanaged"), "managed"},
		{"a cali* veth disconnected is managed", nodesim.WithNMCLIDevices(nm, "eth0:connected", "cali3f1a2b4c5d6:disconnected"), "managed"},
		{"a cali* veth unavailable is managed", nodesim.WithNMCLIDevices(nm, "cali3f1a2b4c5d6:unavailable"), "managed"},
		{"no CNI device yet", nodesim.WithNMCLIDevices(nm, "eth0:connected", "lo:unmanaged", "docker0:connected (externally)"), "none"},
		{"other devices managed do not count", nodesim.WithNMCLIDevices(nm, "eth0:connected", "docker0:connected (externally)", "flannel.1:unmanaged"), "unmanaged"},
		{"NetworkManager not running", nodesim.WithNMCLIDevices(nm), "unknown"},
		{"Ubuntu 22.04, netplan renders with NetworkManager", nodesim.WithUbuntuNetworkManager(nodesim.Healthy("w1", false), true), "managed"},
		{"Ubuntu 22.04, networkd renders", nodesim.WithUbuntuNetworkManager(nodesim.Healthy("w1", false), false), "unmanaged"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hostWant(t, runProbe(t, "network", c.state).Facts, map[string]string{"nm.cni_devices": c.want})
		})
	}
}

// TestNMManagesCNIFindings runs the whole bundle and every shipped check on
// a clean fleet with NetworkManager planted on one agent, and expects
// exactly these findings on it.
func TestNMManagesCNIFindings(t *testing.T) {
	for _, c := range nmScenarios {
		t.Run(c.name, func(t *testing.T) {
			r := judgeFixture(t, c.fixture(), nil)
			const planted = "node-2"
			var got []string
			for _, f := range r.Findings {
				if f.Kind != result.KindCheck {
					continue
				}
				got = append(got, f.Check)
				if len(f.Nodes) != 1 || f.Nodes[0] != planted {
					t.Errorf("%s on %v, want only %s", f.Check, f.Nodes, planted)
				}
			}
			sort.Strings(got)
			if strings.Join(got, " ") != strings.Join(c.checks, " ") {
				t.Errorf("findings = %v, want %v", got, c.checks)
			}
		})
	}
}

// nmScenario plants NetworkManager's configuration on node-2, an agent of a
// clean 3-node fleet.
type nmScenario struct {
	name   string
	plant  func(nodesim.State) nodesim.State
	checks []string
}

func (c nmScenario) fixture() string { return fixtureName("nm", c.name) }

func (c nmScenario) fleet() []nodesim.Member {
	fleet := nodesim.Clean(3)
	fleet[1].State = c.plant(fleet[1].State)
	return fleet
}

var nmScenarios = []nmScenario{
	{"Ubuntu 22.04, netplan renders with NetworkManager", func(s nodesim.State) nodesim.State { return nodesim.WithUbuntuNetworkManager(s, true) },
		[]string{"network.nm-manages-cni"}},
	{"Ubuntu 22.04, networkd renders", func(s nodesim.State) nodesim.State { return nodesim.WithUbuntuNetworkManager(s, false) }, nil},
	{"Ubuntu 22.04 with netplan and RKE2's drop-in, NetworkManager reloaded", func(s nodesim.State) nodesim.State {
		s = nmFiles(nodesim.WithUbuntuNetworkManager(s, true), map[string]string{nodesim.NMEtcConfD + "rke2-canal.conf": rke2NMDropIn})
		return nodesim.WithNMCLIDevices(s, "eth0:connected", "flannel.1:unmanaged", "cali3f1a2b4c5d6:unmanaged")
	}, nil},
	{"RKE2's drop-in written but NetworkManager still manages flannel.1", func(s nodesim.State) nodesim.State {
		return nmFiles(nodesim.WithUbuntuNetworkManager(s, true), map[string]string{nodesim.NMEtcConfD + "rke2-canal.conf": rke2NMDropIn})
	}, []string{"network.nm-manages-cni-devices"}},
	{"Debian with RKE2's drop-in", func(s nodesim.State) nodesim.State { return nodesim.WithNetworkManager(s, true) }, nil},
}

// TestNetworkProbeUnderEveryShell runs the network probe, as the bundle
// does (library, then probe, with the node's bin/ as the whole PATH), under
// every shell a node may have as /bin/sh, and expects the facts /bin/sh
// gave through the real bundle.
func TestNetworkProbeUnderEveryShell(t *testing.T) {
	testtools.SkipShort(t, "runs the probe under dash, bash and busybox for every state")
	shells := [][]string{{"dash"}, {"bash", "--posix"}, {"busybox", "sh"}}
	states := map[string]struct {
		state     nodesim.State
		unmanaged string // nm.cni_unmanaged
	}{
		"Ubuntu 22.04 with netplan": {nodesim.WithUbuntuNetworkManager(nodesim.Healthy("w1", false), true), "missing:cali*,flannel*"},
		"Ubuntu 22.04":              {nodesim.WithUbuntuNetworkManager(nodesim.Healthy("w1", false), false), "yes"},
		// /run shadows /usr/lib; -= takes "*" out of /run's list, leaving
		// one except and two matches that cover cali* and flannel.1.
		"shadowing, -= and +=": {nmFiles(nodesim.WithNetworkManager(nodesim.Healthy("w1", false), false), map[string]string{
			nodesim.NMLibConfD + "10-cni.conf":  "[keyfile]\nunmanaged-devices=interface-name:docker0\n",
			nodesim.NMRunConfD + "10-cni.conf":  "[keyfile]\nunmanaged-devices=*,except:interface-name:eth0\n",
			nodesim.NMEtcConfD + "90-site.conf": "[keyfile]\nunmanaged-devices-=*\nunmanaged-devices+=interface-name:~cali?*, type:vxlan\n"}), "yes"},
		"server without NetworkManager": {nodesim.Healthy("s1", true), "absent"},
	}
	for name, c := range states {
		want := runProbe(t, "network", c.state).Facts
		if want["nm.cni_unmanaged"] != c.unmanaged {
			t.Errorf("%s: nm.cni_unmanaged = %q through the bundle, want %q", name, want["nm.cni_unmanaged"], c.unmanaged)
		}
		for _, sh := range shells {
			t.Run(name+"/"+strings.Join(sh, " "), func(t *testing.T) {
				got, _ := runProbeUnder(t, sh, "network", c.state)
				for k, v := range want {
					if got.Facts[k] != v {
						t.Errorf("%s = %q, want %q as under /bin/sh", k, got.Facts[k], v)
					}
				}
				if len(got.Facts) != len(want) {
					t.Errorf("%d facts, want %d: %v", len(got.Facts), len(want), got.Facts)
				}
			})
		}
	}
}

// cniFleet is 3 RKE2 servers whose config.yaml says cni: canal and 3
// agents whose config.yaml has no cni key (RKE2's agent has no such flag),
// all running Canal.
func cniFleet() []nodesim.Member {
	var fleet []nodesim.Member
	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("server-%d", i)
		fleet = append(fleet, nodesim.Member{Name: name, Roles: []string{"control-plane", "etcd"}, State: nodesim.Healthy(name, true)})
	}
	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("agent-%d", i)
		fleet = append(fleet, nodesim.Member{Name: name, Roles: []string{"worker"}, State: nodesim.Healthy(name, false)})
	}
	return fleet
}

// cniScenario changes cniFleet.
type cniScenario struct {
	name     string
	plant    func([]nodesim.Member)
	drift    string   // cni.configured's fleet drift groups, "" for none
	findings []string // check@node of the checks reading cni.configured
	carriers string   // nodes that report cni.configured
}

func (c cniScenario) fixture() string { return fixtureName("cni", c.name) }

func (c cniScenario) fleet() []nodesim.Member {
	fleet := cniFleet()
	c.plant(fleet)
	return fleet
}

// cniProbes are the probes the cni fixtures run: the rke2 probe says which
// node is a server, the network probe reads config.yaml; the others would
// only slow the fixtures down.
var cniProbes = []string{"rke2", "network"}

func withCNIConfig(s nodesim.State, cfg string) nodesim.State {
	return nmFiles(s, map[string]string{"etc/rancher/rke2/config.yaml": "token: K10aaaabbbbccccddddeeeeffff0000111122223333::server:s3cr3t-demo-token\n" + cfg})
}

const cniServers = "server-1,server-2,server-3"

var cniScenarios = []cniScenario{
	{"3 servers with cni: canal, 3 agents without", func([]nodesim.Member) {}, "", nil, cniServers},
	{"an agent with a leftover cni: key is not judged on it", func(f []nodesim.Member) {
		f[3].State = withCNIConfig(f[3].State, "server: https://10.0.0.11:9345\ncni: cilium\n")
	}, "", nil, cniServers},
	{"a server on another CNI drifts from its peers", func(f []nodesim.Member) {
		f[2].State = nodesim.WithCNI(f[2].State, "cilium", false)
	}, "canal:server-1,server-2 cilium:server-3", nil, cniServers},
	{"a server asking for another CNI than it runs is a mismatch", func(f []nodesim.Member) {
		f[1].State = withCNIConfig(f[1].State, "cni: calico\n")
	}, "canal:server-1,server-3 calico:server-2", []string{"network.cni-mismatch@server-2"}, cniServers},
	{"a stopped server is still a server by its role", func(f []nodesim.Member) {
		f[0].State.Units = map[string]nodesim.Unit{"rke2-server": {Active: "inactive", Enabled: "enabled"}, "ufw": {Active: "inactive", Enabled: "disabled"}}
	}, "", nil, cniServers},
	{"a server without cni: drifts from its peers that set it", func(f []nodesim.Member) {
		f[0].State = withCNIConfig(f[0].State, "")
	}, "canal:server-2,server-3 unset:server-1", nil, cniServers},
}

// TestCNIConfiguredComparedAmongServersOnly: cni.configured is server_only,
// so agents neither drift against the servers nor are judged on a leftover
// cni: key, while servers still drift against each other and a server
// running another CNI than it asks for is still a mismatch.
func TestCNIConfiguredComparedAmongServersOnly(t *testing.T) {
	for _, c := range cniScenarios {
		t.Run(c.name, func(t *testing.T) {
			r := judgeFixture(t, c.fixture(), nil)
			var drift []string
			for _, d := range r.Drift {
				if d.Fact != "cni.configured" {
					continue
				}
				if d.Scope != "fleet" {
					continue // role rows repeat the fleet's over servers' roles
				}
				for _, g := range d.Groups {
					drift = append(drift, g.Value+":"+strings.Join(g.Nodes, ","))
				}
			}
			if got := strings.Join(drift, " "); got != c.drift {
				t.Errorf("cni.configured drift = %q, want %q", got, c.drift)
			}
			checks := builtinChecksByID(t)
			var findings []string
			for _, f := range r.Findings {
				if f.Kind == result.KindCheck && slices.Contains(checks[f.Check].Facts(), "cni.configured") {
					for _, n := range f.Nodes {
						findings = append(findings, f.Check+"@"+n)
					}
				}
			}
			if strings.Join(findings, " ") != strings.Join(c.findings, " ") {
				t.Errorf("findings on cni.configured = %v, want %v", findings, c.findings)
			}
			var carriers []string
			for _, n := range r.Nodes {
				if _, ok := n.Facts["cni.configured"]; ok {
					carriers = append(carriers, n.Name)
				}
			}
			if got := strings.Join(carriers, ","); got != c.carriers {
				t.Errorf("nodes reporting cni.configured = %s, want %s", got, c.carriers)
			}
		})
	}
}

// TestServerOnlyHeader pins the header's contract: only facts the probe
// declares, only on node probes.
func TestServerOnlyHeader(t *testing.T) {
	const head = "# id: c\n# description: d\n# needs_root: false\n# timeout: 5s\n"
	p, err := probe.ParseProbe("c.sh", head+"# facts: a.b a.c\n# server_only: a.c\n")
	if err != nil || strings.Join(p.ServerOnly, " ") != "a.c" {
		t.Fatalf("ParseProbe = %+v, %v", p, err)
	}
	for name, text := range map[string]string{
		"undeclared fact":    head + "# facts: a.b\n# server_only: a.c\n",
		"on a cluster probe": head + "# scope: cluster\n# facts: cluster.x\n# server_only: cluster.x\n",
	} {
		if _, err := probe.ParseProbe("c.sh", text); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
