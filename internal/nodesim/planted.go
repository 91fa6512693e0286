package nodesim

import "fmt"

// Planted is a fleet of 3 etcd servers, 1 control-plane server and 10
// workers with one drift planted on each of workers 1 to 8, the issue's
// acceptance list; workers 9 and 10 are healthy. PlantedDrifts says which
// drift each planted node carries.
func Planted() []Member {
	var fleet []Member
	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("etcd-%d", i)
		fleet = append(fleet, Member{Name: name, Roles: []string{"etcd"}, State: Healthy(name, true)})
	}
	// A control-plane-only server, as RKE2's split roles run it
	// (disable-etcd): 3 etcd members, an odd count.
	fleet = append(fleet, Member{Name: "cp-1", Roles: []string{"control-plane"}, State: WithoutEtcd(Healthy("cp-1", true))})
	for i := 1; i <= 10; i++ {
		name := fmt.Sprintf("worker-%d", i)
		s := Healthy(name, false)
		if plant, ok := plantedDrifts[name]; ok {
			s = plant.apply(s)
		}
		fleet = append(fleet, Member{Name: name, Roles: []string{"worker"}, State: s})
	}
	return WithCluster(fleet)
}

type plant struct {
	what  string
	apply func(State) State
}

var plantedDrifts = map[string]plant{
	"worker-1": {"iptables-legacy backend", WithIPTablesLegacy},
	"worker-2": {"net.ipv4.ip_forward=0", WithIPForwardOff},
	"worker-3": {"conntrack table 95% full", func(s State) State { return WithConntrackUse(s, 95) }},
	"worker-4": {"firewalld active", WithFirewalld},
	"worker-5": {"older RKE2 release", func(s State) State { return WithRKE2Version(s, "v1.30.8+rke2r1") }},
	"worker-6": {"kube-proxy in IPVS mode", WithIPVS},
	"worker-7": {"br_netfilter not loaded", WithoutBrNetfilter},
	"worker-8": {"kube-proxy health port 10256 not listening", WithHealthPortDown},
}

// PlantedDrifts maps each planted node of Planted to a description of its drift.
func PlantedDrifts() map[string]string {
	out := map[string]string{}
	for n, p := range plantedDrifts {
		out[n] = p.what
	}
	return out
}
