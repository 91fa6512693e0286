package audit

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fleet-audit/fleet-audit/internal/nodesim"
	"github.com/fleet-audit/fleet-audit/result"
)

// The IPv6 settings are judged where the cluster has IPv6 pods and only
// there: RKE2 sets IPv6 forwarding and bridge-nf-call-ip6tables only when
// its cluster CIDRs hold IPv6 (k3s pkg/agent/syssetup kernelSysctls). On a
// dual-stack fleet a node with IPv6 forwarding off, with the bridge
// sysctl off, or with far fewer kube-proxy rules in ip6tables is found on
// exactly that node; on an IPv4 fleet a node whose bridge-nf-call-ip6tables
// RKE2 never set is silent; healthy dual-stack and IPv6-primary nodes, with
// a proxied login too, give no warning or critical at all.
func TestIPFamilyFleets(t *testing.T) {
	sysctl := func(name, v string) func(nodesim.State) nodesim.State {
		return func(s nodesim.State) nodesim.State {
			m := map[string]string{}
			for k, x := range s.Sysctls {
				m[k] = x
			}
			m[name] = v
			s.Sysctls = m
			return s
		}
	}
	few6 := func(s nodesim.State) nodesim.State {
		s.SetCommand(nodesim.Command{Name: "ip6tables-save", Args: "*", Out: nodesim.IPTablesSave("ip6tables-nft-save", "v1.8.10 (nf_tables)", false, "ACCEPT")})
		return s
	}
	ipv6First := func(s nodesim.State) nodesim.State { return nodesim.WithIPv6Primary(nodesim.WithDualStack(s)) }
	type member struct {
		name  string
		shape []func(nodesim.State) nodesim.State
		want  string // the one warning or critical finding of the node, "" for none
	}
	fleets := []struct {
		name    string
		members []member
	}{
		{"dual-stack", []member{
			{"ok-1", []func(nodesim.State) nodesim.State{nodesim.WithDualStack}, ""},
			{"ok-2", []func(nodesim.State) nodesim.State{nodesim.WithDualStack, nodesim.WithHTTPProxyEnv}, ""},
			{"ok-3", []func(nodesim.State) nodesim.State{ipv6First}, ""},
			{"no-forward", []func(nodesim.State) nodesim.State{nodesim.WithDualStack, sysctl("net.ipv6.conf.all.forwarding", "0")}, "sysctl.ipv6-forward"},
			{"no-bridge6", []func(nodesim.State) nodesim.State{nodesim.WithDualStack, sysctl("net.bridge.bridge-nf-call-ip6tables", "0")}, "sysctl.bridge-nf-call-ip6tables"},
			{"few-v6-rules", []func(nodesim.State) nodesim.State{nodesim.WithDualStack, few6}, "iptables.ip6-kube-rules-low"},
		}},
		{"IPv4", []member{
			{"ok-1", nil, ""},
			{"ok-2", []func(nodesim.State) nodesim.State{nodesim.WithHTTPProxyEnv}, ""},
			{"bridge6-unset", []func(nodesim.State) nodesim.State{sysctl("net.bridge.bridge-nf-call-ip6tables", "0")}, ""},
		}},
		{"IPv6-primary", []member{
			{"ok-1", []func(nodesim.State) nodesim.State{nodesim.WithIPv6Primary}, ""},
			{"ok-2", []func(nodesim.State) nodesim.State{nodesim.WithIPv6Primary, nodesim.WithHTTPProxyEnv}, ""},
			{"ok-3", []func(nodesim.State) nodesim.State{nodesim.WithIPv6Primary}, ""},
		}},
	}
	for _, fl := range fleets {
		t.Run(fl.name, func(t *testing.T) {
			var fleet []nodesim.Member
			want := map[string]string{}
			for i, m := range fl.members {
				s := nodesim.Healthy(m.name, i == 0)
				for _, f := range m.shape {
					s = f(s)
				}
				role := map[bool]string{true: "control-plane", false: "worker"}[i == 0]
				fleet = append(fleet, nodesim.Member{Name: m.name, Roles: []string{role}, State: s})
				want[m.name] = m.want
			}
			inv, tr := simulate(t, nodesim.WithCluster(fleet))
			r := runSim(t, inv, tr)
			got := map[string][]string{}
			for _, f := range r.Findings {
				if f.Severity != result.SeverityWarning && f.Severity != result.SeverityCritical {
					continue
				}
				nodes := f.Nodes
				if len(nodes) == 0 {
					nodes = []string{"(fleet)"}
				}
				for _, n := range nodes {
					got[n] = append(got[n], fmt.Sprintf("%s (%s)", f.Check, f.Severity))
				}
			}
			for n, w := range want {
				var exp []string
				if w != "" {
					for _, g := range got[n] {
						if len(g) > len(w) && g[:len(w)+1] == w+" " {
							exp = append(exp, g)
						}
					}
					if len(exp) == 0 {
						t.Errorf("%s: %s not found; findings %v", n, w, got[n])
					}
				}
				if extra := slices.DeleteFunc(slices.Clone(got[n]), func(g string) bool { return slices.Contains(exp, g) }); len(extra) > 0 {
					t.Errorf("%s: unexpected findings %v", n, extra)
				}
			}
			if extra := got["(fleet)"]; len(extra) > 0 {
				t.Errorf("fleet findings %v", extra)
			}
		})
	}
}

// The cluster's IP families come from kube-proxy's --cluster-cidr, else
// from config.yaml's cluster-cidr key (and nothing else of that file,
// which holds the join token), else they are unknown.
func TestSysctlProbeIPFamilies(t *testing.T) {
	hide := func(s nodesim.State) nodesim.State { return withoutFile(s, nodesim.KubeProxyManifest) }
	config := func(s nodesim.State, body string) nodesim.State {
		return withFile(s, "etc/rancher/rke2/config.yaml", "token: K10secret::server:s3cr3t\n"+body)
	}
	cases := []struct {
		name  string
		state nodesim.State
		want  map[string]string
	}{
		{"IPv4", healthy(), map[string]string{"net.ip_families": "ipv4", "sysctl.net.ipv6.conf.all.forwarding": "0"}},
		{"dual-stack", nodesim.WithDualStack(healthy()), map[string]string{"net.ip_families": "dual", "sysctl.net.ipv6.conf.all.forwarding": "1"}},
		{"IPv6-primary", nodesim.WithIPv6Primary(healthy()), map[string]string{"net.ip_families": "ipv6"}},
		{"config.yaml, quoted", config(hide(healthy()), "cluster-cidr: \"10.42.0.0/16,2001:cafe:42::/56\" # dual\n"), map[string]string{"net.ip_families": "dual"}},
		{"config.yaml without the key", config(hide(healthy()), "cni: canal\n"), map[string]string{"net.ip_families": "unknown"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := runProbe(t, "sysctl", c.state).Facts
			wantFacts(t, got, c.want)
			for k, v := range got {
				if strings.Contains(v, "s3cr3t") {
					t.Errorf("%s carries the token: %q", k, v)
				}
			}
		})
	}
}
