// Command fleet-audit audits an RKE2/Kubernetes fleet over SSH before an
// upgrade and fails the pipeline when the nodes have drifted apart.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
