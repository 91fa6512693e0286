package nodesim

// healthyNetfilter adds what a healthy node shows to the firewall managers, iptables, nftables probes.
func healthyNetfilter(s *State, server bool) {}
