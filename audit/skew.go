package audit

// VersionSkew judges RKE2 versions across the fleet and against the target.
func VersionSkew(nodes []Node, target string) []Finding { return nil }
