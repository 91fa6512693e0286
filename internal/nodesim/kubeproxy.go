package nodesim

// healthyKubeProxy adds what a healthy node shows to the kube-proxy mode and metrics probes.
func healthyKubeProxy(s *State, server bool) {}
