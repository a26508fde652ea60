package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"faultwin/criteria"
	"faultwin/model"
	"faultwin/snapshots"
	"faultwin/snapshots/host"
)

// runHostcheck tells whether anything of any faultwin run is on the host:
// the same test a window's preflight applies, so `make test` can refuse an
// unclean host up front and say how to clean it.
func runHostcheck(ctx context.Context, stdout io.Writer, args []string) error {
	fs := flag.NewFlagSet("hostcheck", flag.ContinueOnError)
	fs.SetOutput(stdout)
	root := fs.String("state-root", model.DefaultStateRoot, "refsup state root")
	if err := fs.Parse(args); err != nil {
		return err
	}
	roots := snapshots.DefaultRoots(*root)
	s, err := host.Capture(ctx, "hostcheck", roots, snapshots.Decoys{})
	if err != nil {
		return fmt.Errorf("reading host state: %w", err)
	}
	left := criteria.Leftovers(s, roots) // unreadable parts count as leftovers there
	if len(left) == 0 {
		fmt.Fprintf(stdout, "host clean: nothing of any faultwin run under %s, no dvh* link, no faultwin or CRIU-* table, no X11 socket, no /tmp/.criu.*\n", *root)
		return nil
	}
	fmt.Fprintf(stdout, "host NOT clean (%d leftovers); windows would be INVALID:\n", len(left))
	for _, l := range left {
		fmt.Fprintln(stdout, "  -", l)
	}
	fmt.Fprintf(stdout, "clean it with the supervisor's own sweep: sudo make sweep   (= bin/faultwin sweep --state-root %s)\n", *root)
	fmt.Fprintln(stdout, "anything left after that was not made by a faultwin run's supervisor: remove it by hand")
	return statusExit{1, fmt.Sprintf("host not clean: %d leftovers", len(left))}
}
