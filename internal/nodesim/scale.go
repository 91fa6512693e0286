package nodesim

import (
	"fmt"
	"strings"

	"github.com/fleet-audit/fleet-audit/audit/probe"
)

// ScaleIncident is the seed incident at n nodes, for the benchmarks: 3
// etcd, 2 control-plane and the rest workers; UFW active (kube-proxy
// answering 503, its pod in CrashLoopBackOff) on every tenth node, a newer
// kernel on every hundredth. The first probe.MaxClusterNodes (the most
// one Kubernetes cluster holds) are one cluster; a larger fleet is several
// clusters, and the one a run asks lists only its own.
func ScaleIncident(n int) []Member {
	var fleet []Member
	for i := 1; i <= n; i++ {
		name, roles, server := fmt.Sprintf("worker-%05d", i), []string{"worker"}, false
		switch {
		case i <= 3:
			name, roles, server = fmt.Sprintf("etcd-%d", i), []string{"etcd"}, true
		case i <= 5:
			name, roles, server = fmt.Sprintf("cp-%d", i-3), []string{"control-plane"}, true
		}
		s := Healthy(name, server)
		if i%10 == 0 {
			s = WithUFWActive(s)
		}
		if i%100 == 7 {
			s.Kernel = "6.1.0-31-amd64"
		}
		fleet = append(fleet, Member{Name: name, Roles: roles, State: s})
	}
	k8s := min(n, probe.MaxClusterNodes)
	return append(WithCluster(fleet[:k8s]), fleet[k8s:]...)
}

// ScaleClass is what a ScaleIncident node's bundle output depends on
// besides its name: its kind of node and its drift. Nodes of one class
// can replay one recorded run under their own names.
func ScaleClass(m Member) string {
	return fmt.Sprintf("%s ufw=%s kernel=%s", strings.Join(m.Roles, "+"), m.State.UFW, m.State.Kernel)
}
