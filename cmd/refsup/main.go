// Command refsup is faultwin's reference supervisor: a daemon that makes
// namespaced sessions and checkpoints/restores them with CRIU, the client
// verbs that drive it, and the standalone sweep that cleans up a dead run.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	err := run(ctx, os.Stdout, os.Stderr, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "refsup:", err)
		os.Exit(1)
	}
}
