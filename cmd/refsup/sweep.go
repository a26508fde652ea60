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

// cmdSweep runs the standalone sweep and prints a drivers.SweepReport. It
// exits 0 whatever it found; only its own failure is an error.
func cmdSweep(_ context.Context, stdout io.Writer, args []string) error {
	var c common
	fs := newFlags("sweep", &c)
	fs.Var(&c.bugs, "bug", "known-bug switch to turn on (repeatable)")
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
	ctl := faults.NewController(faults.NewTrace(lay.Trace()), nil, bs.On(bugs.DeadPoint), logf)
	if err := ctl.ArmFromEnv(); err != nil {
		return err
	}
	rep, err := sweep.Run(sweep.Options{Layout: lay, Bugs: bs, Ctl: ctl, Log: logf})
	if err != nil {
		return fmt.Errorf("sweep of run %s: %w", lay.Run, err)
	}
	return printJSON(stdout, rep)
}
