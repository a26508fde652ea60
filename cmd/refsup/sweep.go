package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"faultwin/fixtures/refsup/bugs"
	"faultwin/fixtures/refsup/faults"
	"faultwin/fixtures/refsup/sweep"
)

// cmdSweep runs the standalone sweep and prints a api.SweepReport. It
// exits 0 whatever it found; only its own failure is an error.
func cmdSweep(_ context.Context, stdout io.Writer, args []string) error {
	var c common
	fs := newFlags("sweep", &c)
	fs.Var(&c.bugs, "bug", "known-bug switch to turn on (repeatable)")
	killWait := fs.Duration("kill-wait", sweep.DefaultKillTimeout, "how long the sweep waits for the processes it killed to go")
	if err := parse(fs, args); err != nil {
		return err
	}
	lay, err := c.layout("sweep")
	if err != nil {
		return err
	}
	bs, err := c.bugSet()
	if err != nil {
		return err
	}
	logf := func(f string, a ...any) { fmt.Fprintf(os.Stderr, "sweep: "+f+"\n", a...) }
	// The sweep traces its points only for a run that still has a ledger or a
	// trace: sweeping a clean run must not create a file to clean up later.
	tracePath := ""
	for _, p := range []string{lay.Ledger(), lay.Trace()} {
		if _, err := os.Stat(p); err == nil {
			tracePath = lay.Trace()
		}
	}
	ctl := faults.NewController(faults.NewTrace(tracePath), nil, bs.On(bugs.DeadPoint), logf)
	if err := ctl.ArmFromEnv(); err != nil {
		return err
	}
	rep, err := sweep.Run(sweep.Options{Layout: lay, Bugs: bs, Ctl: ctl, Log: logf, KillTimeout: *killWait})
	if err != nil {
		return fmt.Errorf("sweep of run %s: %w", lay.Run, err)
	}
	return printJSON(stdout, rep)
}
