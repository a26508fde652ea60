package main

import (
	"context"
	"faultwin/criteria"
	"fmt"
	"io"
	"strings"
	"time"

	"faultwin/drivers/catalog"
	"faultwin/drivers/reclaim"
	"faultwin/internal/model"
	"faultwin/snapshots"
	"faultwin/windows/runner"
)

// runHostcheck tells whether anything of any faultwin run is on the host:
// the same test a window's preflight applies, so `make test` can refuse an
// unclean host up front and say how to clean it.
const hostcheckUsage = `usage: faultwin hostcheck [--state-root DIR]

Says whether anything of any faultwin run is left on this host, by the test
a window's preflight applies: processes, mounts, cgroups, links, nftables
tables, X11 sockets and CRIU files of any run under the state root or
tagged as a run's, and what the described supervisors make under
host-global names. Lists every leftover and how to clean it (faultwin
sweep). A supervisor description that does not load (FAULTWIN_SUPERVISORS)
is refused: what it claims could not be seen (faultwin lint names each
problem).

Exit status: 0 clean, 1 not clean (or the host state cannot be read, or a
description does not load), 64 a usage error.
`

func runHostcheck(ctx context.Context, stdout io.Writer, args []string) error {
	fs := newFlags(stdout, "hostcheck", hostcheckUsage)
	fs.supervisors()
	root := fs.String("state-root", model.DefaultStateRoot, "refsup state root")
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := fs.noArgs(); err != nil {
		return err
	}
	if err := catalog.Err(); err != nil {
		fmt.Fprintln(stdout, err)
		return statusExit{exitFail, "hostcheck: a supervisor description does not load, so what it leaves could not be seen: correct it (faultwin lint FILE names each problem)"}
	}
	roots := runner.AllRoots(snapshots.DefaultRoots(*root))
	j, err := reclaim.Judge(ctx, "hostcheck", roots)
	if err != nil {
		return fmt.Errorf("reading host state: %w", err)
	}
	if j.Waited > 0 {
		fmt.Fprintf(stdout, "hostcheck: waited %s for zombies of a run to be reaped\n", j.Waited.Round(10*time.Millisecond))
	}
	printSetAside(stdout, "hostcheck", j.SetAside)
	if alone := criteria.NotFaultwins(j.Snapshot, roots); len(alone) > 0 {
		fmt.Fprintf(stdout, "hostcheck: not faultwin's, left alone: no run's record claims them (%d):\n", len(alone))
		for _, l := range alone {
			fmt.Fprintln(stdout, "  -", l)
		}
	}
	left := j.Left
	if len(left) == 0 {
		fmt.Fprintf(stdout, "host clean: nothing of any faultwin run under %s, no dvh* link, no faultwin or CRIU-* table, no X11 socket, no /tmp/.criu.*, nothing any run claimed under the names described supervisors use (%s)\n", *root, describedNames(roots))
		return nil
	}
	fmt.Fprintf(stdout, "host NOT clean (%d leftovers); windows would be INVALID:\n", len(left))
	for _, l := range left {
		fmt.Fprintln(stdout, "  -", l)
	}
	fmt.Fprint(stdout, runner.HowToClean(*root))
	return statusExit{exitFail, fmt.Sprintf("host not clean: %d leftovers", len(left))}
}

// printSetAside names the unreadable processes the judge set aside, tied
// to no run by what could be read of them, so a reader sees what was not
// counted and why.
func printSetAside(w io.Writer, who string, aside []string) {
	if len(aside) == 0 {
		return
	}
	fmt.Fprintf(w, "%s: set aside, unreadable but tied to no run (%d):\n", who, len(aside))
	for _, l := range aside {
		fmt.Fprintln(w, "  -", l)
	}
}

// describedNames spells the host-global names the described supervisors
// claim, for the clean-host line.
func describedNames(r snapshots.Roots) string {
	var parts []string
	for _, l := range [][]string{r.Links, r.Netns, r.Chains, r.Sockets} {
		parts = append(parts, l...)
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
