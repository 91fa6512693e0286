package nodesim

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// The outputs below are what the real tools print, so the host, rke2 and
// network probes' parsers meet real formats: chronyc's aligned "Key : value"
// tracking report, timedatectl's --value answers, df -P / df -Pi with one
// line per filesystem, /proc/swaps and /proc/loadavg as the kernel writes
// them, NetworkManager keyfile configuration and RKE2's CNI conflists.

// swapsHeader is /proc/swaps with no active swap: the kernel always prints
// the header line (linux mm/swapfile.c swap_show).
const swapsHeader = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"

// chronyTracking is `chronyc -n tracking` of a synchronised chronyd, in
// the layout of chrony's client.c process_cmd_tracking: "%.9O of NTP time"
// prints the absolute correction and "slow" when it is positive (the clock
// is behind), the reference time with strftime "%a %b %d %T %Y" in UTC.
const chronyTracking = `Reference ID    : C0A80001 (192.168.0.1)
Stratum         : 3
Ref time (UTC)  : Wed Dec 02 09:58:51 2026
System time     : 0.000012345 seconds slow of NTP time
Last offset     : +0.000003210 seconds
RMS offset      : 0.000021077 seconds
Frequency       : 12.517 ppm slow
Residual freq   : +0.001 ppm
Skew            : 0.033 ppm
Root delay      : 0.001234567 seconds
Root dispersion : 0.000456789 seconds
Update interval : 64.4 seconds
Leap status     : Normal
`

// chronyUnsynced is the same report from a chronyd that has lost its
// sources: no reference, leap status "Not synchronised" (client.c
// print_report %L).
const chronyUnsynced = `Reference ID    : 00000000 ()
Stratum         : 0
Ref time (UTC)  : Thu Jan 01 00:00:00 1970
System time     : 0.000000000 seconds fast of NTP time
Last offset     : +0.000000000 seconds
RMS offset      : 0.000000000 seconds
Frequency       : 12.517 ppm slow
Residual freq   : +0.000 ppm
Skew            : 0.000 ppm
Root delay      : 1.000000000 seconds
Root dispersion : 1.000000000 seconds
Update interval : 0.0 seconds
Leap status     : Not synchronised
`

// ChronyTracking returns a synchronised `chronyc -n tracking` report whose
// system clock is offsetSeconds away from NTP time (negative: slow).
func ChronyTracking(offsetSeconds float64) string {
	dir := "fast"
	if offsetSeconds < 0 {
		dir, offsetSeconds = "slow", -offsetSeconds
	}
	return strings.Replace(chronyTracking, "0.000012345 seconds slow of NTP time",
		fmt.Sprintf("%.9f seconds %s of NTP time", offsetSeconds, dir), 1)
}

// DF returns `df -P` (inodes false) or `df -Pi` output for the two paths the
// host probe asks about, both on the root filesystem at usedPct percent:
// POSIX output format, df(1) -P (coreutils df.c: the "1024-blocks" and
// "Capacity" headers, "IUse%" with -i), one line per argument even when
// both are on the same filesystem.
func DF(inodes bool, usedPct int) string {
	if inodes {
		const total = 6553600
		used := total * usedPct / 100
		line := fmt.Sprintf("/dev/sda1        %d %7d %7d %4d%% /\n", total, used, total-used, usedPct)
		return "Filesystem        Inodes   IUsed   IFree IUse% Mounted on\n" + line + line
	}
	const total = 102687672
	used := total * usedPct / 100
	line := fmt.Sprintf("/dev/sda1           %d %8d  %8d     %3d%% /\n", total, used, total-used, usedPct)
	return "Filesystem     1024-blocks     Used Available Capacity Mounted on\n" + line + line
}

// CNI config files as RKE2's charts write them to /etc/cni/net.d.
const (
	canalConflist = `{
  "name": "k8s-pod-network",
  "cniVersion": "0.3.1",
  "plugins": [
    {
      "type": "calico",
      "log_level": "info",
      "datastore_type": "kubernetes",
      "mtu": 1450,
      "ipam": {
          "type": "host-local",
          "subnet": "usePodCidr"
      },
      "policy": {
          "type": "k8s"
      },
      "kubernetes": {
          "kubeconfig": "/etc/cni/net.d/calico-kubeconfig"
      }
    },
    {
      "type": "portmap",
      "snat": true,
      "capabilities": {"portMappings": true}
    },
    {
      "type": "bandwidth",
      "capabilities": {"bandwidth": true}
    }
  ]
}
`
	calicoConflist = `{
  "name": "k8s-pod-network",
  "cniVersion": "0.3.1",
  "plugins": [
    {
      "type": "calico",
      "datastore_type": "kubernetes",
      "mtu": 0,
      "nodename_file_optional": false,
      "log_level": "Info",
      "log_file_path": "/var/log/calico/cni/cni.log",
      "ipam": { "type": "calico-ipam", "assign_ipv4" : "true", "assign_ipv6" : "false"},
      "container_settings": {
          "allow_ip_forwarding": false
      },
      "policy": {
          "type": "k8s"
      },
      "kubernetes": {
          "k8s_api_root":"https://10.43.0.1:443",
          "kubeconfig": "/etc/cni/net.d/calico-kubeconfig"
      }
    },
    {
      "type": "bandwidth",
      "capabilities": {"bandwidth": true}
    },
    {"type": "portmap", "snat": true, "capabilities": {"portMappings": true}}
  ]
}
`
	ciliumConflist = `{
  "cniVersion": "0.3.1",
  "name": "cilium",
  "plugins": [
    {
       "type": "cilium-cni",
       "enable-debug": false,
       "log-file": "/var/run/cilium/cilium-cni.log"
    }
  ]
}
`
	flannelConflist = `{
  "name":"cbr0",
  "cniVersion":"1.0.0",
  "plugins":[
    {
      "type":"flannel",
      "delegate":{
        "hairpinMode":true,
        "forceAddress":true,
        "isDefaultGateway":true
      }
    },
    {
      "type":"portmap",
      "capabilities":{
        "portMappings":true
      }
    }
  ]
}
`
	multusConf = `{
  "cniVersion": "0.3.1",
  "name": "multus-cni-network",
  "type": "multus",
  "capabilities": {"portMappings": true, "bandwidth": true},
  "kubeconfig": "/etc/cni/net.d/multus.d/multus.kubeconfig",
  "delegates": [
    {"cniVersion": "0.3.1", "name": "k8s-pod-network", "plugins": [{"type": "calico"}]}
  ]
}
`
	// calicoKubeconfig is the kubeconfig Calico's CNI plugin uses; its token
	// must never reach a report.
	calicoKubeconfig = `# Kubeconfig file for Calico CNI plugin. Installed by calico/node.
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://10.43.0.1:443
    certificate-authority-data: "LS0tLS1CRUdJTi1DRVJUSUZJQ0FURS0tLS0t"
users:
- name: calico
  user:
    token: eyJhbGciOiJSUzI1NiIsImtpZCI6ImNhbGljby1zZWNyZXQifQ.c2ltdWxhdGVkLWNhbGljby10b2tlbg.c2lnbmF0dXJl
contexts:
- name: calico-context
  context:
    cluster: local
    user: calico
current-context: calico-context
`
)

// rke2NMConf is the NetworkManager drop-in RKE2's docs prescribe
// (rke2-docs known_issues.md, "NetworkManager": rke2-canal.conf), Calico's
// list plus flannel*.
const rke2NMConf = "[keyfile]\nunmanaged-devices=interface-name:flannel*;interface-name:cali*;interface-name:tunl*;interface-name:vxlan.calico;interface-name:vxlan-v6.calico;interface-name:wireguard.cali;interface-name:wg-v6.cali\n"

// nmMainConf is a distribution's stock NetworkManager.conf.
const nmMainConf = "[main]\nplugins=ifupdown,keyfile\n\n[ifupdown]\nmanaged=false\n"

// The three conf.d directories of NetworkManager.conf(5), relative to the
// node root. NetworkManager reads /usr/lib's, then /run's, then
// NetworkManager.conf, then /etc's, and a file in /etc or /run shadows the
// /usr/lib file of the same name (/etc also shadows /run):
// NetworkManager src/core/nm-config.c, read_entire_config().
const (
	NMLibConfD = "usr/lib/NetworkManager/conf.d/"
	NMRunConfD = "run/NetworkManager/conf.d/"
	NMEtcConfD = "etc/NetworkManager/conf.d/"
	NMConf     = "etc/NetworkManager/NetworkManager.conf"
)

// NetworkManager as Ubuntu 22.04's network-manager package (1.36) installs
// it: NetworkManager.conf, and 10-globally-managed-devices.conf in
// /usr/lib, which leaves every device but Wi-Fi and modems unmanaged
// (Ubuntu's debian/10-globally-managed-devices.conf, the same on 22.04 and
// 24.04).
const (
	ubuntuNMConf          = "[main]\nplugins=ifupdown,keyfile\n\n[ifupdown]\nmanaged=false\n\n[device]\nwifi.scan-rand-mac-address=no\n"
	ubuntuGloballyManaged = "[keyfile]\nunmanaged-devices=*,except:type:wifi,except:type:gsm,except:type:cdma\n"
	// UbuntuGloballyManaged is the name of that file, which netplan
	// shadows from /run.
	UbuntuGloballyManaged = "10-globally-managed-devices.conf"
)

const ubuntu2204 = `PRETTY_NAME="Ubuntu 22.04.5 LTS"
NAME="Ubuntu"
VERSION_ID="22.04"
VERSION="22.04.5 LTS (Jammy Jellyfish)"
VERSION_CODENAME=jammy
ID=ubuntu
ID_LIKE=debian
UBUNTU_CODENAME=jammy
`

const (
	rke2Bin      = "var/lib/rancher/rke2/bin/"
	podManifests = "var/lib/rancher/rke2/agent/pod-manifests/"
	cniDir       = "etc/cni/net.d/"
)

// staticPod is a static pod manifest as RKE2 writes it to
// /var/lib/rancher/rke2/agent/pod-manifests (rancher/rke2 pkg/staticpod),
// cut to what identifies it; the probes only test that the file exists.
// The images are v1.31.4+rke2r1's: rancher/hardened-etcd
// v3.5.16-k3s1-build20241106 and rancher/hardened-kubernetes
// v1.31.4-rke2r1-build20241212 (scripts/version.sh, scripts/build-images at
// the tag).
func staticPod(name, image string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: kube-system\n  labels:\n    component: %s\n    tier: control-plane\nspec:\n  hostNetwork: true\n  containers:\n  - name: %s\n    image: %s\n", name, name, name, image)
}

// rke2Releases are the releases the simulation installs, with what each
// ships, read from rancher/rke2 at the release's tag: the containerd of the
// Dockerfile's rancher/hardened-containerd image (the k3s fork, whose
// --version carries the "-k3sN" suffix), the Go of its
// rancher/hardened-build-base image, and the tag's commit, which
// scripts/build-binary links in as GitCommit. containerd moves with RKE2's
// patch releases, not its minor lines: v1.30.8 and v1.31.4 (December 2024)
// ship the same one. A release not listed gets v1.31.4's.
var rke2Releases = map[string]struct{ containerd, goVersion, commit string }{
	"v1.30.8+rke2r1": {"v1.7.23-k3s2", "go1.22.9", "3e6fb8634f164d623f53f7b61d07b27726565d4e"},
	"v1.31.4+rke2r1": {"v1.7.23-k3s2", "go1.22.9", "5142beec71f7a61804840df5b434c2fd7137ce82"},
}

func rke2Release(v string) struct{ containerd, goVersion, commit string } {
	if r, ok := rke2Releases[v]; ok {
		return r
	}
	return rke2Releases["v1.31.4+rke2r1"]
}

// RKE2VersionOutput is what `rke2 --version` prints for release v: urfave
// cli's VersionPrinter as rancher/rke2 pkg/cli/cmds/root.go NewApp sets it,
// app.Version being "<version> (<commit>)", and the Go runtime RKE2 was
// built with, a BoringCrypto build (GOEXPERIMENT=boringcrypto in
// scripts/build-binary).
func RKE2VersionOutput(v string) string {
	r := rke2Release(v)
	return fmt.Sprintf("rke2 version %s (%s)\ngo version %s X:boringcrypto\n", v, r.commit, r.goVersion)
}

// healthyHost adds what a healthy node shows to the OS, time, disk, ports,
// NetworkManager and CNI probes: no swap, chrony synchronised, disks at 40%,
// a quiet 4-core machine, RKE2's containerd and kubelet, the ports of its
// role listening, no NetworkManager, no nm-cloud-setup, and Canal.
func healthyHost(s *State, server bool) {
	if s.Files == nil {
		s.Files = map[string]string{}
	}
	if s.Units == nil {
		s.Units = map[string]Unit{}
	}
	s.Files["proc/swaps"] = swapsHeader
	// /proc/loadavg: three averages, running/total tasks, last pid (linux
	// fs/proc/loadavg.c); cpu/online is a cpulist range (Documentation
	// ABI sysfs-devices-system-cpu).
	s.Files["proc/loadavg"] = "0.42 0.37 0.31 2/611 48213\n"
	s.Files["sys/devices/system/cpu/online"] = "0-3\n"
	s.Units["chrony"] = Unit{Active: "active", Enabled: "enabled"}
	s.SetCommand(Command{Name: "chronyc", Args: "-n tracking", Out: chronyTracking})
	// timedatectl show --value prints a boolean property as yes/no
	// (timedatectl(1), "show").
	s.SetCommand(Command{Name: "timedatectl", Args: "show -p NTPSynchronized --value", Out: "yes\n"})
	s.SetCommand(Command{Name: "df", Args: "-P *", Out: DF(false, 40)})
	s.SetCommand(Command{Name: "df", Args: "-Pi *", Out: DF(true, 7)})
	setRKE2Binaries(s, s.RKE2Version)
	// RKE2 keeps its agent directory and the static pod manifests in it
	// private to root (k3s pkg/agent: agent dir 0700; rancher/rke2
	// pkg/executor/staticpod: manifests dir 0700), and systemd mounts the
	// BPF filesystem 0700 (see bpfFS).
	s.DirModes = copyDirModes(s.DirModes)
	s.DirModes["var/lib/rancher/rke2/agent"] = 0o700
	s.DirModes[strings.TrimSuffix(podManifests, "/")] = 0o700
	s.DirModes[bpfFS] = 0o700
	// The kubelet's directory exists on every joined node.
	s.Files["var/lib/kubelet/cpu_manager_state"] = `{"policyName":"none","defaultCpuSet":"","checksum":1353318690}`
	*s = withKubeProxyManifest(*s)
	if server {
		s.Listening = append(append([]int{}, s.Listening...), 6443, 9345, 2379, 2380)
		s.Files[podManifests+"etcd.yaml"] = staticPod("etcd", "index.docker.io/rancher/hardened-etcd:v3.5.16-k3s1-build20241106")
		s.Files[podManifests+"kube-apiserver.yaml"] = staticPod("kube-apiserver", "index.docker.io/rancher/hardened-kubernetes:v1.31.4-rke2r1-build20241212")
		healthyEtcd(s)
	}
	if !hasPort(s.Listening, 10250) {
		s.Listening = append(append([]int{}, s.Listening...), 10250)
	}
	s.Files[cniDir+"10-canal.conflist"] = canalConflist
	s.Files[cniDir+"calico-kubeconfig"] = calicoKubeconfig
	*s = withAgentsAlive(*s)
	if cfg, ok := s.Files[rke2Config]; ok && server && !strings.Contains(cfg, "\ncni:") {
		s.Files[rke2Config] = cfg + "cni: canal\n"
	}
}

// rke2Config is RKE2's config file. cni: is a flag of `rke2 server` only
// (rancher/rke2 pkg/cli/cmds/server.go CNIFlag; agent.go's flag set has no
// cni, and the agent skips a config.yaml key it does not know: k3s
// pkg/configfilearg Parser.stripInvalidFlags), so only servers carry it.
const rke2Config = "etc/rancher/rke2/config.yaml"

// setRKE2Binaries installs the containerd and kubelet of RKE2 release v in
// RKE2's bin directory (nothing when v is "": RKE2 not installed).
func setRKE2Binaries(s *State, v string) {
	s.RemoveCommand("containerd")
	s.RemoveCommand("kubelet")
	if v == "" {
		return
	}
	ctr := rke2Release(v).containerd
	// containerd --version: "<app name> <package> <version> <revision>"
	// (containerd cmd/containerd/command/main.go, cli.VersionPrinter); the
	// kubelet prints "Kubernetes <version>" (k8s.io/component-base
	// version/verflag PrintAndExitIfRequested).
	s.SetCommand(Command{Name: "containerd", Path: rke2Bin + "containerd", Args: "--version",
		Out: "containerd github.com/k3s-io/containerd " + ctr + " 2e0bb8a3e4ec0d8a43c0ba6e0a2e9b7d5e6f7a8b\n"})
	s.SetCommand(Command{Name: "kubelet", Path: rke2Bin + "kubelet", Args: "--version", Out: "Kubernetes " + v + "\n"})
}

func hasPort(ports []int, port int) bool {
	for _, p := range ports {
		if p == port {
			return true
		}
	}
	return false
}

// hostFiles returns a copy of s.Files that a With helper may change without
// touching the State it was derived from.
func hostFiles(s State) map[string]string {
	out := make(map[string]string, len(s.Files)+2)
	for k, v := range s.Files {
		out[k] = v
	}
	return out
}

func hostSysctls(s State) map[string]string {
	out := make(map[string]string, len(s.Sysctls))
	for k, v := range s.Sysctls {
		out[k] = v
	}
	return out
}

// WithIPForwardOff is a node whose net.ipv4.ip_forward was reset to 0 (a
// sysctl --system run by a hardening baseline after RKE2 started).
func WithIPForwardOff(s State) State {
	s.Sysctls = hostSysctls(s)
	s.Sysctls["net.ipv4.ip_forward"] = "0"
	return s
}

// WithConntrackUse fills the conntrack table to pct percent of its current
// nf_conntrack_max (131072 on a healthy node).
func WithConntrackUse(s State, pct int) State {
	s.Sysctls = hostSysctls(s)
	max, err := strconv.Atoi(s.Sysctls["net.netfilter.nf_conntrack_max"])
	if err != nil || max <= 0 {
		max = 131072
		s.Sysctls["net.netfilter.nf_conntrack_max"] = strconv.Itoa(max)
	}
	s.Sysctls["net.netfilter.nf_conntrack_count"] = strconv.Itoa(max * pct / 100)
	return s
}

// WithConntrackMax pins nf_conntrack_max, as a tuning file that kube-proxy
// cannot override would.
func WithConntrackMax(s State, max int) State {
	s.Sysctls = hostSysctls(s)
	s.Sysctls["net.netfilter.nf_conntrack_max"] = strconv.Itoa(max)
	return s
}

// WithoutBrNetfilter is a node where br_netfilter is not loaded: as on a
// real kernel, the net.bridge.bridge-nf-call-* sysctls then do not exist.
func WithoutBrNetfilter(s State) State {
	var mods []string
	for _, m := range s.Modules {
		if m != "br_netfilter" {
			mods = append(mods, m)
		}
	}
	s.Modules = mods
	s.Sysctls = hostSysctls(s)
	delete(s.Sysctls, "net.bridge.bridge-nf-call-iptables")
	delete(s.Sysctls, "net.bridge.bridge-nf-call-ip6tables")
	return s
}

// WithRKE2Version runs RKE2 release v (e.g. "v1.30.8+rke2r1"), with the
// containerd and kubelet that release ships.
func WithRKE2Version(s State, v string) State {
	s.RKE2Version = v
	setRKE2Binaries(&s, v)
	return s
}

// WithCPUs gives the node n online cores.
func WithCPUs(s State, n int) State {
	s.Files = hostFiles(s)
	s.Files["sys/devices/system/cpu/online"] = fmt.Sprintf("0-%d\n", n-1)
	return s
}

// WithSwapOn activates a 2 GiB swap partition.
func WithSwapOn(s State) State {
	s.Files = hostFiles(s)
	s.Files["proc/swaps"] = swapsHeader + "/dev/sda3                               partition\t2097148\t\t0\t\t-2\n"
	return s
}

// WithClockUnsynced is a node whose chronyd has lost its time sources.
func WithClockUnsynced(s State) State {
	s.SetCommand(Command{Name: "chronyc", Args: "-n tracking", Out: chronyUnsynced})
	s.SetCommand(Command{Name: "timedatectl", Args: "show -p NTPSynchronized --value", Out: "no\n"})
	return s
}

// WithClockOffset is a synchronised chronyd whose clock is still
// offsetSeconds away from NTP time (it slews slowly after a jump).
func WithClockOffset(s State, offsetSeconds float64) State {
	s.SetCommand(Command{Name: "chronyc", Args: "-n tracking", Out: ChronyTracking(offsetSeconds)})
	return s
}

// WithTimesyncd replaces chrony with systemd-timesyncd; synced is what
// timedatectl reports.
func WithTimesyncd(s State, synced bool) State {
	s.RemoveCommand("chronyc")
	s.Units = copyUnits(s.Units)
	delete(s.Units, "chrony")
	s.Units["systemd-timesyncd"] = Unit{Active: "active", Enabled: "enabled"}
	s.SetCommand(Command{Name: "timedatectl", Args: "show -p NTPSynchronized --value", Out: map[bool]string{true: "yes\n", false: "no\n"}[synced]})
	return s
}

// WithoutTimeSync is a node running no time daemon at all.
func WithoutTimeSync(s State) State {
	s = WithTimesyncd(s, false)
	s.Units = copyUnits(s.Units)
	delete(s.Units, "systemd-timesyncd")
	return s
}

// WithDiskUsed fills the filesystem holding /var/lib/rancher and
// /var/lib/kubelet to usedPct percent of its blocks.
func WithDiskUsed(s State, usedPct int) State {
	s.SetCommand(Command{Name: "df", Args: "-P *", Out: DF(false, usedPct)})
	return s
}

// WithInodesUsed uses usedPct percent of that filesystem's inodes.
func WithInodesUsed(s State, usedPct int) State {
	s.SetCommand(Command{Name: "df", Args: "-Pi *", Out: DF(true, usedPct)})
	return s
}

// WithLoad sets the 1- and 15-minute load averages.
func WithLoad(s State, load1, load15 float64) State {
	s.Files = hostFiles(s)
	s.Files["proc/loadavg"] = fmt.Sprintf("%.2f %.2f %.2f 9/611 48213\n", load1, (load1+load15)/2, load15)
	return s
}

// WithNetworkManager runs NetworkManager; with rke2Conf it carries RKE2's
// drop-in leaving Calico's and Flannel's interfaces unmanaged, without it
// NetworkManager manages the CNI's interfaces.
func WithNetworkManager(s State, rke2Conf bool) State {
	s.Files = hostFiles(s)
	s.Files["etc/NetworkManager/NetworkManager.conf"] = nmMainConf
	delete(s.Files, "etc/NetworkManager/conf.d/rke2-canal.conf")
	if rke2Conf {
		s.Files["etc/NetworkManager/conf.d/rke2-canal.conf"] = rke2NMConf
	}
	s.Units = copyUnits(s.Units)
	s.Units["NetworkManager"] = Unit{Active: "active", Enabled: "enabled"}
	return s
}

// WithNetworkManagerManagingCNI is NetworkManager running without RKE2's
// drop-in: it manages cali* and flannel*.
func WithNetworkManagerManagingCNI(s State) State { return WithNetworkManager(s, false) }

// WithUbuntuNetworkManager is an Ubuntu 22.04 node running NetworkManager
// as its network-manager package installs it, without RKE2's drop-in. With
// netplanNM, netplan renders the host's network with NetworkManager
// ("renderer: NetworkManager", as on an Ubuntu desktop or a server set up
// with nmcli): netplan generate then writes an empty
// /run/NetworkManager/conf.d/10-globally-managed-devices.conf to shadow the
// distribution's unmanaged list (canonical/netplan src/configure.c, "Disable
// /usr/lib/NetworkManager/conf.d/10-globally-managed-devices.conf"), and
// NetworkManager takes Flannel's flannel.1 over. Calico's cali* veths stay
// unmanaged either way through NetworkManager's own udev rule
// (data/85-nm-unmanaged.rules: ID_NET_DRIVER=="veth" → NM_UNMANAGED=1).
// nmcli answers accordingly.
func WithUbuntuNetworkManager(s State, netplanNM bool) State {
	s.Files = hostFiles(s)
	s.OSRelease = ubuntu2204
	s.Kernel = "5.15.0-131-generic"
	s.Files[NMConf] = ubuntuNMConf
	s.Files[NMLibConfD+UbuntuGloballyManaged] = ubuntuGloballyManaged
	delete(s.Files, NMRunConfD+UbuntuGloballyManaged)
	s.Units = copyUnits(s.Units)
	s.Units["NetworkManager"] = Unit{Active: "active", Enabled: "enabled"}
	if netplanNM {
		s.Files[NMRunConfD+UbuntuGloballyManaged] = ""
		return WithNMCLIDevices(s, "eth0:connected", "flannel.1:connected (externally)",
			"cali3f1a2b4c5d6:unmanaged", "calie8b7a6c5d4e:unmanaged", "lo:unmanaged")
	}
	return WithNMCLIDevices(s, "eth0:unmanaged", "flannel.1:unmanaged",
		"cali3f1a2b4c5d6:unmanaged", "calie8b7a6c5d4e:unmanaged", "lo:unmanaged")
}

// WithNMCLIDevices installs nmcli answering `nmcli -t -f DEVICE,STATE
// device` with one "DEVICE:STATE" line per device, as nmcli(1)'s terse
// mode prints them: fields joined by ':' (a ':' or '\' inside a value
// escaped with '\'), and the state untranslated, one of
// nmc_device_state_to_string's words ("unmanaged", "unavailable",
// "disconnected", "connecting (configuring)", "connected", ...) or, for a
// connection NetworkManager generated for an externally configured device,
// "connected (externally)" (NetworkManager src/nmcli/utils.c _print_do
// and src/libnmc-base/nm-client-utils.c). No devices at all makes nmcli fail
// as it does when NetworkManager is not running ("Error: NetworkManager is
// not running.", exit 8: nmcli(1), EXIT STATUS).
func WithNMCLIDevices(s State, devices ...string) State {
	s.RemoveCommand("nmcli")
	if len(devices) == 0 {
		s.SetCommand(Command{Name: "nmcli", Args: "*", Out: "", RC: 8})
		return s
	}
	s.SetCommand(Command{Name: "nmcli", Args: "-t -f DEVICE,STATE device", Out: strings.Join(devices, "\n") + "\n"})
	return s
}

// WithNMCloudSetup has nm-cloud-setup's service and timer enabled, as on
// RHEL cloud images.
func WithNMCloudSetup(s State) State {
	s.Units = copyUnits(s.Units)
	s.Units["nm-cloud-setup"] = Unit{Active: "inactive", Enabled: "enabled"}
	s.Units["nm-cloud-setup.timer"] = Unit{Active: "active", Enabled: "enabled"}
	return s
}

// WithoutPort stops whatever listens on port (e.g. 6443 on a server whose
// kube-apiserver is down).
func WithoutPort(s State, port int) State {
	var ps []int
	for _, p := range s.Listening {
		if p != port {
			ps = append(ps, p)
		}
	}
	s.Listening = ps
	return s
}

// WithCNI replaces the node's CNI with the one RKE2 deploys for name:
// canal, calico, cilium, flannel, multus+<one of those>, or "none" for an
// empty /etc/cni/net.d; on a server, config.yaml's cni: says the same. The
// CNI config is the one its chart writes, its chains replace Canal's in
// iptables, and Cilium runs its agent (see withCiliumAgent).
// kubeProxyReplacement, for Cilium and Calico only, makes the CNI serve
// Services instead of kube-proxy, as in a cluster started with
// disable-kube-proxy: true: Cilium's agent reports KubeProxyReplacement
// True, Calico runs its eBPF dataplane (canal cannot: rke2-canal mounts no
// /sys/fs/bpf), and kube-proxy is gone with its chains. It is the one home
// of those shapes: WithCiliumKPR and WithCalicoEBPF call it.
func WithCNI(s State, name string, kubeProxyReplacement bool) State {
	s.Files = hostFiles(s)
	for k := range s.Files {
		if strings.HasPrefix(k, cniDir) {
			delete(s.Files, k)
		}
	}
	files := map[string]string{
		"canal":   "10-canal.conflist",
		"calico":  "10-calico.conflist",
		"cilium":  "05-cilium.conflist",
		"flannel": "10-flannel.conflist",
	}
	bodies := map[string]string{
		"canal": canalConflist, "calico": calicoConflist, "cilium": ciliumConflist, "flannel": flannelConflist,
	}
	base := strings.TrimPrefix(name, "multus+")
	if base != name {
		s.Files[cniDir+"00-multus.conf"] = multusConf
	}
	if f, ok := files[base]; ok {
		s.Files[cniDir+f] = bodies[base]
	}
	if base == "canal" || base == "calico" {
		s.Files[cniDir+"calico-kubeconfig"] = calicoKubeconfig
	}
	if cfg, ok := s.Files[rke2Config]; ok && isServer(s) {
		var lines []string
		for _, l := range strings.Split(cfg, "\n") {
			if !strings.HasPrefix(l, "cni:") && l != "" {
				lines = append(lines, l)
			}
		}
		if name != "none" {
			lines = append(lines, "cni: "+strings.ReplaceAll(name, "+", ","))
		}
		s.Files[rke2Config] = strings.Join(lines, "\n") + "\n"
	}
	// The agents of the CNI before stop with its files.
	for _, a := range cniAgents {
		s = agentAlive(s, a, false)
	}
	s = withAgentsAlive(s)
	replaced := kubeProxyReplacement && (base == "cilium" || base == "calico")
	switch {
	case base == "cilium" && replaced:
		s = withCiliumAgent(s, "True")
	case base == "cilium":
		s = withCiliumAgent(s, "False")
	case base == "calico" && replaced:
		s = withCalicoBPF(s)
	}
	if replaced {
		s = withoutKubeProxyAtAll(s)
	}
	if base != "none" {
		renderSaves(&s, base, !replaced)
	}
	return s
}

// WithSystemdNotRunning is a node whose systemctl finds no systemd running
// (a container, PID 1 something else): is-active and show fail, is-enabled
// still reads the unit files (see the systemctl stub).
func WithSystemdNotRunning(s State) State {
	s.SystemdNotRunning = true
	return s
}

// WithSystemdManagerDown is a node booted with systemd whose manager does
// not answer on its bus (a hung PID 1, its private socket gone): every
// systemctl verb fails, is-enabled included (see the systemctl stub).
func WithSystemdManagerDown(s State) State {
	f := make(map[string]string, len(s.Files)+1)
	maps.Copy(f, s.Files)
	f["state/systemd/.bus-refused"] = ""
	s.Files = f
	return s
}

// WithSystemd253 is a node whose systemd is v253 or later (Debian 13, Ubuntu
// 24.04): systemctl is-enabled answers "not-found" (exit 4) for a unit with
// no unit file, where older ones print nothing on stdout (see the systemctl
// stub).
func WithSystemd253(s State) State {
	f := make(map[string]string, len(s.Files)+1)
	maps.Copy(f, s.Files)
	f["state/systemd/.v253"] = ""
	s.Files = f
	return s
}

// windowsService is the Windows service RKE2 registers on a Windows agent
// (rke2-docs docs/install/quickstart.md, Windows agent: `rke2.exe agent
// service --add`, then `Start-Service rke2`).
const windowsService = "rke2"

// WindowsAgent is an RKE2 Windows agent: a Kubernetes node of the cluster
// whose kubelet reports operatingSystem windows, and no POSIX sh to run
// the probes in (a test's transport answers for its SSH side).
func WindowsAgent(hostname string) State {
	return State{Hostname: hostname, KubeletOS: "windows", RKE2Version: "v1.31.4+rke2r1",
		Units: map[string]Unit{windowsService: {Active: "active", Enabled: "enabled"}}}
}

// WithRebootRequired is a Debian or Ubuntu node where a package asked for
// a reboot: update-notifier-common's notify-reboot-required writes
// /run/reboot-required with this line and the package names to
// /run/reboot-required.pkgs (/var/run links to /run).
func WithRebootRequired(s State) State {
	s.Files = hostFiles(s)
	s.Files["run/reboot-required"] = "*** System restart required ***\n"
	s.Files["run/reboot-required.pkgs"] = "linux-image-6.1.0-30-amd64\n"
	return s
}

// WithNeedsRestarting installs RHEL's needs-restarting (dnf-utils), whose
// -r answers exit 1 when a reboot is required and 0 when not (man
// dnf-needs-restarting(8), --reboothint), printing its reason either way.
func WithNeedsRestarting(s State, reboot bool) State {
	out, rc := "No core libraries or services have been updated since boot-up.\nReboot should not be necessary.\n", 0
	if reboot {
		out, rc = "Core libraries or services have been updated since boot-up:\n  * kernel\n\nReboot is required to fully utilize these updates.\nMore information: https://access.redhat.com/solutions/27943\n", 1
	}
	s.SetCommand(Command{Name: "needs-restarting", Args: "-r", Out: out, RC: rc})
	return s
}

// WithKernelInstalled installs kernel release k beside the running one,
// as a kernel update does before the reboot that starts it.
func WithKernelInstalled(s State, k string) State {
	s.Kernels = append(slices.Clone(s.Kernels), k)
	return s
}

// WithDiskFree makes the filesystem holding /var/lib/rancher and
// /var/lib/kubelet totalKB 1024-byte blocks with availKB available, as df
// -P counts them (coreutils df.c: Capacity is used / (used + available),
// rounded up).
func WithDiskFree(s State, totalKB, availKB int) State {
	used := totalKB - availKB
	line := fmt.Sprintf("/dev/sda1           %d %8d  %8d     %3d%% /\n", totalKB, used, availKB, (used*100+totalKB-1)/totalKB)
	s.SetCommand(Command{Name: "df", Args: "-P *", Out: "Filesystem     1024-blocks     Used Available Capacity Mounted on\n" + line + line})
	return s
}
