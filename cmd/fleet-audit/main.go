// Command fleet-audit audits an RKE2/Kubernetes fleet over SSH before an
// upgrade and fails the pipeline when the nodes have drifted apart.
package main

import "os"

func main() {
	ctx, stop := signalContext()
	code := run(ctx, os.Args, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
