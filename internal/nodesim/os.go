package nodesim

import (
	"slices"
	"strings"
)

// OS is a distribution an RKE2 node runs, as its packages lay it out: what
// WithOS makes a node look like. The fields are the facts a test may pick
// on (the awk to run the probes under, the package manager of a
// remediation); the layout itself is written by WithOS.
type OS struct {
	// Name is the shape's name in test output ("rocky9").
	Name string
	// Family is "debian", "rhel" or "suse".
	Family string
	// OSRelease is /etc/os-release as the distribution's release package
	// ships it (base-files, rocky-release, sles-release, SL-Micro-release).
	OSRelease string
	// Kernel is a release of the distribution's kernel package, as
	// /proc/sys/kernel/osrelease shows it.
	Kernel string
	// IPTables is what `iptables --version` prints there.
	IPTables string
	// Awk is the awk /usr/bin/awk is, with its version: Debian and Ubuntu
	// install mawk (priority required), RHEL and SUSE gawk. mawk 1.3.4
	// 20241117 and later seed srand() with nanoseconds (mawk CHANGES,
	// 20241117), which breaks `srand(); srand()` as a clock: a test picks
	// the probes' awk by this.
	Awk string
	// BinSh is the shell /bin/sh is: dash on Debian and Ubuntu (dash,
	// Essential), bash on RHEL and SUSE (bash's /bin/sh link).
	BinSh string
	// PackageManager is how packages are installed: "apt", "dnf", "zypper"
	// or "transactional-update" (a read-only root).
	PackageManager string
	// TimeUnit is the time daemon's systemd unit.
	TimeUnit string
	// SELinux is enforcing at boot and now, with rke2-selinux installed and
	// RKE2_SELINUX=true in the unit's environment.
	SELinux bool
	// RPM is RKE2 installed from its RPMs: /usr/bin/rke2, units in
	// /usr/lib/systemd/system, /etc/sysconfig/rke2-* (rke2-packaging
	// rpm/centos8/common/rke2-common.spec, server/rke2-server.spec: %prep
	// rewrites the unit's /usr/local paths to %{_bindir} and %{_unitdir}).
	// Otherwise the tarball layout of install.sh: /usr/local/bin/rke2 and
	// /usr/local/lib/systemd/system.
	RPM bool
	// ReadOnlyRoot is a root filesystem mounted read-only, changed only
	// through transactional-update snapshots (SLE Micro).
	ReadOnlyRoot bool
	// Systemd253 is systemd 253 or later (see WithSystemd253).
	Systemd253 bool
	// UFW is ufw installed and inactive, its unit enabled (Ubuntu).
	UFW bool
	// Firewalld is firewalld installed, stopped and disabled, as RKE2's
	// known issues ask ("firewalld conflicts with RKE2's default Canal").
	Firewalld bool
	// NetworkManager runs NetworkManager, with RKE2's rke2-canal.conf.
	NetworkManager bool
	// Wicked runs wicked, SUSE's network configuration service.
	Wicked bool
}

// Real /etc/os-release files. Ubuntu's come from base-files (22.04.5,
// 24.04.1), Debian's from base-files 12.4+deb12u8 and 13.8, Rocky's from
// rocky-release 9.5, SLES's from sles-release 15.6, SL Micro's from
// SL-Micro-release 6.1.
const (
	ubuntu2204Release = `PRETTY_NAME="Ubuntu 22.04.5 LTS"
NAME="Ubuntu"
VERSION_ID="22.04"
VERSION="22.04.5 LTS (Jammy Jellyfish)"
VERSION_CODENAME=jammy
ID=ubuntu
ID_LIKE=debian
HOME_URL="https://www.ubuntu.com/"
SUPPORT_URL="https://help.ubuntu.com/"
BUG_REPORT_URL="https://bugs.launchpad.net/ubuntu/"
PRIVACY_POLICY_URL="https://www.ubuntu.com/legal/terms-and-policies/privacy-policy"
UBUNTU_CODENAME=jammy
`
	ubuntu2404Release = `PRETTY_NAME="Ubuntu 24.04.1 LTS"
NAME="Ubuntu"
VERSION_ID="24.04"
VERSION="24.04.1 LTS (Noble Numbat)"
VERSION_CODENAME=noble
ID=ubuntu
ID_LIKE=debian
HOME_URL="https://www.ubuntu.com/"
SUPPORT_URL="https://help.ubuntu.com/"
BUG_REPORT_URL="https://bugs.launchpad.net/ubuntu/"
PRIVACY_POLICY_URL="https://www.ubuntu.com/legal/terms-and-policies/privacy-policy"
UBUNTU_CODENAME=noble
LOGO=ubuntu-logo
`
	debian12Release = `PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"
NAME="Debian GNU/Linux"
VERSION_ID="12"
VERSION="12 (bookworm)"
VERSION_CODENAME=bookworm
ID=debian
HOME_URL="https://www.debian.org/"
SUPPORT_URL="https://www.debian.org/support"
BUG_REPORT_URL="https://bugs.debian.org/"
`
	debian13Release = `PRETTY_NAME="Debian GNU/Linux 13 (trixie)"
NAME="Debian GNU/Linux"
VERSION_ID="13"
VERSION="13 (trixie)"
VERSION_CODENAME=trixie
DEBIAN_VERSION_FULL=13.0
ID=debian
HOME_URL="https://www.debian.org/"
SUPPORT_URL="https://www.debian.org/support"
BUG_REPORT_URL="https://bugs.debian.org/"
`
	rocky9Release = `NAME="Rocky Linux"
VERSION="9.5 (Blue Onyx)"
ID="rocky"
ID_LIKE="rhel centos fedora"
VERSION_ID="9.5"
PLATFORM_ID="platform:el9"
PRETTY_NAME="Rocky Linux 9.5 (Blue Onyx)"
ANSI_COLOR="0;32"
LOGO="fedora-logo-icon"
CPE_NAME="cpe:/o:rocky:rocky:9::baseos"
HOME_URL="https://rockylinux.org/"
VENDOR_NAME="RESF"
VENDOR_URL="https://resf.org/"
BUG_REPORT_URL="https://bugs.rockylinux.org/"
SUPPORT_END="2032-05-31"
ROCKY_SUPPORT_PRODUCT="Rocky-Linux-9"
ROCKY_SUPPORT_PRODUCT_VERSION="9.5"
REDHAT_SUPPORT_PRODUCT="Rocky Linux"
REDHAT_SUPPORT_PRODUCT_VERSION="9.5"
`
	sles15Release = `NAME="SLES"
VERSION="15-SP6"
VERSION_ID="15.6"
PRETTY_NAME="SUSE Linux Enterprise Server 15 SP6"
ID="sles"
ID_LIKE="suse"
ANSI_COLOR="0;32"
CPE_NAME="cpe:/o:suse:sles:15:sp6"
DOCUMENTATION_URL="https://documentation.suse.com/"
`
	slMicro6Release = `NAME="SL-Micro"
VERSION="6.1"
VERSION_ID="6.1"
PRETTY_NAME="SUSE Linux Micro 6.1"
ID="sl-micro"
ID_LIKE="suse"
ANSI_COLOR="0;32"
CPE_NAME="cpe:/o:suse:sl-micro:6.1"
HOME_URL="https://www.suse.com/products/micro/"
DOCUMENTATION_URL="https://documentation.suse.com/sl-micro/6.1/"
`
)

// The OS shapes. Versions are those of each release's own packages:
// iptables 1.8.7 (Ubuntu 22.04, SLES 15 SP6), 1.8.10 (Ubuntu 24.04, RHEL 9.5
// iptables-nft), 1.8.9 (Debian 12), 1.8.11 (Debian 13); mawk 1.3.4
// 20200120 (Debian 12, Ubuntu 22.04), 20240123 (Ubuntu 24.04), 20250131
// (Debian 13); systemd 249 (Ubuntu 22.04), 252 (Debian 12, RHEL 9), 254
// (SLES 15 SP6, SL Micro 6), 255 (Ubuntu 24.04), 257 (Debian 13).
var (
	// Ubuntu2204 is Ubuntu 22.04 LTS server: netplan with systemd-networkd
	// (no NetworkManager), systemd-timesyncd, ufw installed and inactive.
	Ubuntu2204 = OS{Name: "ubuntu2204", Family: "debian", OSRelease: ubuntu2204Release, Kernel: "5.15.0-131-generic",
		IPTables: "iptables v1.8.7 (nf_tables)", Awk: "mawk 1.3.4 20200120", BinSh: "dash", PackageManager: "apt",
		TimeUnit: "systemd-timesyncd", UFW: true}
	// Ubuntu2404 is Ubuntu 24.04 LTS server, laid out as 22.04.
	Ubuntu2404 = OS{Name: "ubuntu2404", Family: "debian", OSRelease: ubuntu2404Release, Kernel: "6.8.0-51-generic",
		IPTables: "iptables v1.8.10 (nf_tables)", Awk: "mawk 1.3.4 20240123", BinSh: "dash", PackageManager: "apt",
		TimeUnit: "systemd-timesyncd", UFW: true, Systemd253: true}
	// Debian12 is Debian 12 with chrony (Debian's chrony.service): no
	// firewall manager, ifupdown.
	Debian12 = OS{Name: "debian12", Family: "debian", OSRelease: debian12Release, Kernel: "6.1.0-28-amd64",
		IPTables: "iptables v1.8.9 (nf_tables)", Awk: "mawk 1.3.4 20200120", BinSh: "dash", PackageManager: "apt",
		TimeUnit: "chrony"}
	// Debian13 is Debian 13, whose mawk is past 20241117.
	Debian13 = OS{Name: "debian13", Family: "debian", OSRelease: debian13Release, Kernel: "6.12.38+deb13-amd64",
		IPTables: "iptables v1.8.11 (nf_tables)", Awk: "mawk 1.3.4 20250131", BinSh: "dash", PackageManager: "apt",
		TimeUnit: "chrony", Systemd253: true}
	// Rocky9 is Rocky Linux 9 (RHEL 9): bash is /bin/sh, RKE2 from its RPMs
	// with rke2-selinux, SELinux enforcing (RHEL's default), chronyd,
	// firewalld installed and disabled, NetworkManager with rke2-canal.conf.
	Rocky9 = OS{Name: "rocky9", Family: "rhel", OSRelease: rocky9Release, Kernel: "5.14.0-503.14.1.el9_5.x86_64",
		IPTables: "iptables v1.8.10 (nf_tables)", Awk: "GNU Awk 5.1.0", BinSh: "bash", PackageManager: "dnf",
		TimeUnit: "chronyd", SELinux: true, RPM: true, Firewalld: true, NetworkManager: true}
	// SLES15 is SUSE Linux Enterprise Server 15 SP6: AppArmor, not SELinux
	// (SLES 15's default), wicked, chronyd, firewalld installed and
	// disabled, iptables on its legacy backend (SUSE's iptables package;
	// iptables-backend-nft is not installed by default), RKE2 from the
	// tarball (RKE2's RPMs are built for SLE Micro, not SLES:
	// rke2-packaging Dockerfile.slemicro, Dockerfile.microos).
	SLES15 = OS{Name: "sles15", Family: "suse", OSRelease: sles15Release, Kernel: "6.4.0-150600.23.25-default",
		IPTables: "iptables v1.8.7 (legacy)", Awk: "GNU Awk 4.2.1", BinSh: "bash", PackageManager: "zypper",
		TimeUnit: "chronyd", Firewalld: true, Wicked: true, Systemd253: true}
	// SLEMicro6 is SUSE Linux Micro 6.1: a read-only root changed through
	// transactional-update, SELinux enforcing by default (SL Micro 6.0
	// release notes), NetworkManager in place of wicked (SL Micro 6.0
	// release notes), RKE2 from its SLE Micro RPMs with rke2-selinux
	// (rke2-packaging rpm/slemicro, rke2-selinux policy/slemicro),
	// chronyd. No firewall manager: firewalld is not in SL Micro's default
	// pattern (unverified against an installed image).
	SLEMicro6 = OS{Name: "slemicro6", Family: "suse", OSRelease: slMicro6Release, Kernel: "6.4.0-24-default",
		IPTables: "iptables v1.8.10 (nf_tables)", Awk: "GNU Awk 5.2.2", BinSh: "bash", PackageManager: "transactional-update",
		TimeUnit: "chronyd", SELinux: true, RPM: true, ReadOnlyRoot: true, NetworkManager: true, Systemd253: true}
)

// AllOS are the OS shapes, in the order tests list them.
var AllOS = []OS{Ubuntu2204, Ubuntu2404, Debian12, Debian13, Rocky9, SLES15, SLEMicro6}

// rhelNMConf is RHEL 9's stock /etc/NetworkManager/NetworkManager.conf
// (NetworkManager.spec), every setting commented out.
const rhelNMConf = "# Configuration file for NetworkManager.\n#\n# See \"man 5 NetworkManager.conf\" for details.\n\n[main]\n#plugins=keyfile,ifcfg-rh\n\n[logging]\n#level=DEBUG\n#domains=ALL\n"

// rke2CanalNMConf is /etc/NetworkManager/conf.d/rke2-canal.conf as RKE2's
// known issues give it (rke2-docs docs/known_issues.md, "NetworkManager"):
// Calico's interfaces and flannel's.
const rke2CanalNMConf = "[keyfile]\nunmanaged-devices=interface-name:flannel*;interface-name:cali*;interface-name:tunl*;interface-name:vxlan.calico;interface-name:vxlan-v6.calico;interface-name:wireguard.cali;interface-name:wg-v6.cali\n"

// selinuxConfig is /etc/selinux/config as RHEL 9's selinux-policy package
// ships it (comments cut), with the mode given.
func selinuxConfig(mode string) string {
	return "# This file controls the state of SELinux on the system.\n# SELINUX= can take one of these three values:\n#     enforcing - SELinux security policy is enforced.\n#     permissive - SELinux prints warnings instead of enforcing.\n#     disabled - No SELinux policy is loaded.\nSELINUX=" + mode + "\n# SELINUXTYPE= can take one of these three values:\n#     targeted - Targeted processes are protected,\n#     minimum - Modification of targeted policy. Only selected processes are protected.\n#     mls - Multi Level Security protection.\nSELINUXTYPE=targeted\n"
}

// semoduleList is `semodule -l` on an EL9 host with container-selinux and
// rke2-selinux: one module name a line, sorted (policycoreutils semodule.c,
// -l lists names only since 2.5). Cut to the modules around them.
func semoduleList(rke2 bool) string {
	mods := []string{"abrt", "accountsd", "acct", "afs", "chronyd", "container", "firewalld", "networkmanager"}
	if rke2 {
		mods = append(mods, "rke2")
	}
	mods = append(mods, "rpm", "sssd", "sudo", "systemd", "unconfined", "usermanage", "virt")
	return strings.Join(mods, "\n") + "\n"
}

// rke2Unit is RKE2's unit file for svc (rancher/rke2 bundle/lib/systemd/
// system/rke2-server.service, rke2-agent.service), with the RPM's %prep
// rewrites where rpm is set: /usr/local/bin to /usr/bin and
// /usr/local/lib/systemd/system to /usr/lib/systemd/system.
func rke2Unit(svc string, rpm bool) string {
	kind := strings.TrimPrefix(svc, "rke2-")
	other := map[string]string{"server": "rke2-agent", "agent": "rke2-server"}[kind]
	u := "[Unit]\nDescription=Rancher Kubernetes Engine v2 (" + kind + ")\nDocumentation=https://github.com/rancher/rke2#readme\nWants=network-online.target\nAfter=network-online.target\nConflicts=" + other + ".service\n\n[Install]\nWantedBy=multi-user.target\n\n[Service]\nType=notify\nEnvironmentFile=-/etc/default/%N\nEnvironmentFile=-/etc/sysconfig/%N\nEnvironmentFile=-/usr/local/lib/systemd/system/%N.env\nKillMode=process\nDelegate=yes\nLimitNOFILE=1048576\nLimitNPROC=infinity\nLimitCORE=infinity\nTasksMax=infinity\nTimeoutStartSec=0\nRestart=always\nRestartSec=5s\nExecStartPre=-/sbin/modprobe br_netfilter\nExecStartPre=-/sbin/modprobe overlay\nExecStart=/usr/local/bin/rke2 " + kind + "\n"
	if rpm {
		u = strings.ReplaceAll(u, "/usr/local/bin", "/usr/bin")
		u = strings.ReplaceAll(u, "/usr/local/lib/systemd/system", "/usr/lib/systemd/system")
	}
	return u
}

// rke2RPMEnv is /etc/sysconfig/rke2-server and rke2-agent as the RPMs
// install them (rke2-packaging rpm/centos8/{server,agent}/rke2-*.env).
const rke2RPMEnv = "HOME=/root\nRKE2_SELINUX=true\n"

// WithOS makes s look like a node of distribution os, as its packages lay
// it out. It starts from a Healthy node and keeps its RKE2 role, CNI and
// kube-proxy; it replaces what the distribution decides: os-release,
// kernel, iptables, the time daemon, the firewall managers, the network
// manager, SELinux, RKE2's install paths.
func WithOS(s State, os OS) State {
	s.Files = hostFiles(s)
	s.Units = copyUnits(s.Units)
	s.OSRelease = os.OSRelease
	s.Kernel = os.Kernel
	s.IPTables = os.IPTables
	ver := strings.TrimPrefix(os.IPTables, "iptables ")
	// The node's rules stay those of its CNI and kube-proxy (none of
	// kube-proxy's where it does not run or runs in nftables mode), saved
	// by this release's iptables.
	renderSaves(&s, cniOf(s), kubeProxyIPTablesChains(s))
	if strings.HasSuffix(ver, "(legacy)") {
		s.SetCommand(Command{Name: "nft", Args: "list tables", Out: ""})
		s = WithoutNFTables(s)
	} else {
		s.SetCommand(Command{Name: "nft", Args: "list tables", Out: NFTTables(kubeProxyNFTables(s)...)})
		// The nf_tables backend of iptables runs on the nf_tables module.
		if !slices.Contains(s.Modules, "nf_tables") {
			s.Modules = append(slices.Clone(s.Modules), "nf_tables")
		}
	}
	if os.Family != "debian" {
		// update-alternatives --query is Debian's (dpkg); RHEL's
		// alternatives (chkconfig) and SUSE's have no --query.
		s.RemoveCommand("update-alternatives")
	}

	// Time: one daemon, synchronised.
	delete(s.Units, "chrony")
	delete(s.Units, "chronyd")
	delete(s.Units, "systemd-timesyncd")
	if os.TimeUnit == "systemd-timesyncd" {
		s = WithTimesyncd(s, true)
	} else {
		s.Units[os.TimeUnit] = Unit{Active: "active", Enabled: "enabled"}
		s.SetCommand(Command{Name: "chronyc", Args: "-n tracking", Out: chronyTracking})
	}

	// Firewall managers.
	s.UFW = ""
	delete(s.Units, "ufw")
	delete(s.Files, "etc/ufw/ufw.conf")
	if os.UFW {
		// Ubuntu's ufw.service is enabled and "active (exited)" whether
		// or not ufw filters: it runs ufw-init, which obeys ENABLED= in
		// ufw.conf (ufw debian/ufw.service, RemainAfterExit=yes).
		s.UFW = "inactive"
		s.Units["ufw"] = Unit{Active: "active", Enabled: "enabled"}
	}
	delete(s.Units, "firewalld")
	delete(s.Files, "etc/firewalld/firewalld.conf")
	s.RemoveCommand("firewall-cmd")
	if os.Firewalld {
		// firewalld.conf of firewalld 1.x (RHEL 9, SLES 15 SP6): nftables
		// backend; stopped and disabled, so it holds no table.
		s.Units["firewalld"] = Unit{Active: "inactive", Enabled: "disabled"}
		s.Files["etc/firewalld/firewalld.conf"] = "DefaultZone=public\nFirewallBackend=nftables\n"
		s.SetCommand(Command{Name: "firewall-cmd", Args: "--state", Out: "not running\n", RC: 252})
	}

	// Network configuration.
	delete(s.Units, "NetworkManager")
	delete(s.Units, "wicked")
	for _, f := range []string{NMConf, NMEtcConfD + "rke2-canal.conf", NMLibConfD + UbuntuGloballyManaged, NMRunConfD + UbuntuGloballyManaged} {
		delete(s.Files, f)
	}
	s.RemoveCommand("nmcli")
	if os.NetworkManager {
		s.Units["NetworkManager"] = Unit{Active: "active", Enabled: "enabled"}
		s.Files[NMConf] = rhelNMConf
		s.Files[NMEtcConfD+"rke2-canal.conf"] = rke2CanalNMConf
		s = WithNMCLIDevices(s, "eth0:connected", "lo:connected (externally)", "flannel.1:unmanaged",
			"cali3f1a2b4c5d6:unmanaged", "calie8b7a6c5d4e:unmanaged")
	}
	if os.Wicked {
		s.Units["wicked"] = Unit{Active: "active", Enabled: "enabled"}
	}

	// RKE2's install layout.
	svc := "rke2-agent"
	if isServer(s) {
		svc = "rke2-server"
	}
	for _, p := range []string{"usr/local/lib/systemd/system/", "usr/lib/systemd/system/"} {
		delete(s.Files, p+"rke2-server.service")
		delete(s.Files, p+"rke2-agent.service")
	}
	delete(s.Files, "etc/sysconfig/rke2-server")
	delete(s.Files, "etc/sysconfig/rke2-agent")
	s.RKE2Path = ""
	if s.RKE2Version != "" {
		if os.RPM {
			s.RKE2Path = "usr/bin/rke2"
			s.Files["usr/lib/systemd/system/"+svc+".service"] = rke2Unit(svc, true)
			s.Files["etc/sysconfig/"+svc] = rke2RPMEnv
		} else {
			s.RKE2Path = "usr/local/bin/rke2"
			s.Files["usr/local/lib/systemd/system/"+svc+".service"] = rke2Unit(svc, false)
		}
	}

	// SELinux.
	for k := range s.Files {
		if strings.HasPrefix(k, "sys/fs/selinux/") || k == "etc/selinux/config" {
			delete(s.Files, k)
		}
	}
	s.RemoveCommand("semodule")
	s.RemoveCommand("getenforce")
	if os.SELinux {
		s = withSELinux(s, "1", "enforcing", true)
	}

	// The root filesystem: / read-only on SLE Micro, where /etc and /var
	// are their own read-write subvolumes (SL Micro 6 administration
	// guide, "Read-only file system"). Read by nothing yet beyond selinuxfs.
	mounts := "/dev/sda3 / ext4 rw,relatime 0 0\n"
	switch {
	case os.ReadOnlyRoot:
		mounts = "/dev/vda3 / btrfs ro,relatime,ssd,space_cache=v2,subvolid=266,subvol=/@/.snapshots/1/snapshot 0 0\n/dev/vda3 /etc btrfs rw,relatime,ssd,space_cache=v2,subvolid=264,subvol=/@/etc 0 0\n/dev/vda3 /var btrfs rw,relatime,ssd,space_cache=v2,subvolid=265,subvol=/@/var 0 0\n"
	case os.Family == "rhel":
		mounts = "/dev/mapper/rl-root / xfs rw,seclabel,relatime,attr2,inode64,logbufs=8,logbsize=32k,noquota 0 0\n"
	case os.Family == "suse":
		mounts = "/dev/sda2 / btrfs rw,relatime,ssd,space_cache=v2,subvolid=256,subvol=/@ 0 0\n"
	}
	if os.SELinux {
		mounts += "selinuxfs /sys/fs/selinux selinuxfs rw,nosuid,noexec,relatime 0 0\n"
	}
	s.Files["proc/self/mounts"] = mounts

	if os.Systemd253 {
		s = WithSystemd253(s)
	} else {
		delete(s.Files, "state/systemd/.v253")
	}
	return s
}

// withSELinux sets SELinux's runtime mode (the selinuxfs enforce file: "1"
// or "0", no newline, as security/selinux/selinuxfs.c sel_read_enforce
// prints it), the config's mode, and the rke2 module and RKE2_SELINUX as
// the RPMs leave them when rke2 is set. getenforce (libselinux-utils, which
// rke2-selinux requires) prints the mode capitalised.
func withSELinux(s State, enforce, config string, rke2 bool) State {
	s.Files = hostFiles(s)
	s.Files["sys/fs/selinux/enforce"] = enforce
	s.Files["etc/selinux/config"] = selinuxConfig(config)
	word := map[string]string{"1": "Enforcing\n", "0": "Permissive\n"}[enforce]
	s.SetCommand(Command{Name: "getenforce", Args: "", Out: word})
	s.SetCommand(Command{Name: "semodule", Args: "-l", Out: semoduleList(rke2)})
	return s
}

// WithSELinuxPermissive is a node left Permissive at runtime (setenforce 0
// while debugging) whose /etc/selinux/config still says enforcing: its
// next boot (the upgrade's) brings enforcing back.
func WithSELinuxPermissive(s State) State {
	s = withSELinux(s, "0", "enforcing", true)
	return s
}

// WithoutRKE2SELinuxModule is a node started with selinux (RKE2_SELINUX=true)
// whose rke2 policy module is not installed (semodule -r rke2, or
// rke2-selinux left out of a tarball install).
func WithoutRKE2SELinuxModule(s State) State {
	s.SetCommand(Command{Name: "semodule", Args: "-l", Out: semoduleList(false)})
	return s
}

// kubeProxyIPTablesChains says whether kube-proxy keeps chains in
// iptables on the node: it runs (RKE2 wrote its static pod) in iptables or
// ipvs mode; in nftables mode it removes them at start (kubernetes
// cmd/kube-proxy/app/server_linux.go platformCleanup).
func kubeProxyIPTablesChains(s State) bool {
	m, ok := s.Files[KubeProxyManifest]
	return ok && !strings.Contains(m, "--proxy-mode=nftables")
}

// kubeProxyNFTables are kube-proxy's own nftables tables where it runs in
// nftables mode (kubernetes pkg/proxy/nftables/proxier.go: table
// kube-proxy in the ip and ip6 families).
func kubeProxyNFTables(s State) []string {
	if m, ok := s.Files[KubeProxyManifest]; ok && strings.Contains(m, "--proxy-mode=nftables") {
		return []string{"table ip kube-proxy", "table ip6 kube-proxy"}
	}
	return nil
}
