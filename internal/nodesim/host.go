package nodesim

// healthyHost adds what a healthy node shows to the OS, time, disk, ports, NetworkManager, CNI probes.
func healthyHost(s *State, server bool) {}
