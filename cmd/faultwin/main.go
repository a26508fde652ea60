// Command faultwin runs registered fault windows against a supervisor and
// reads back what they recorded. main only wires the process to run, so
// every verb is tested by calling run directly.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"faultwin/internal/reexec"
)

func main() {
	// First: a run of this binary as one of its helpers (a daemon's
	// reaper) is that helper, never the CLI.
	reexec.Init()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Stdout, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "faultwin:", err)
		var ec exitCoder
		if errors.As(err, &ec) {
			os.Exit(ec.ExitCode())
		}
		os.Exit(1)
	}
}
