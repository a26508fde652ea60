package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/snapshots"
	"faultwin/snapshots/host"
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
sweep).

Exit status: 0 clean, 1 not clean (or the host state cannot be read), 64 a
usage error.
`

func runHostcheck(ctx context.Context, stdout io.Writer, args []string) error {
	fs := newFlags(stdout, "hostcheck", hostcheckUsage)
	root := fs.String("state-root", model.DefaultStateRoot, "refsup state root")
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := fs.noArgs(); err != nil {
		return err
	}
	roots := runner.AllRoots(snapshots.DefaultRoots(*root))
	s, err := host.Capture(ctx, "hostcheck", roots, snapshots.Decoys{})
	if err != nil {
		return fmt.Errorf("reading host state: %w", err)
	}
	// Zombies alone are dead and wait for their parent (often init) to reap
	// them: wait for that as a window's preflight does, and say so.
	if runner.OnlyZombies(s, roots) {
		t0 := time.Now()
		for time.Since(t0) < runner.PreflightZombieWait && runner.OnlyZombies(s, roots) {
			time.Sleep(50 * time.Millisecond)
			if s, err = host.Capture(ctx, "hostcheck", roots, snapshots.Decoys{}); err != nil {
				return fmt.Errorf("reading host state: %w", err)
			}
		}
		fmt.Fprintf(stdout, "hostcheck: waited %s for zombies of a run to be reaped\n", time.Since(t0).Round(10*time.Millisecond))
	}
	left := criteria.Leftovers(s, roots) // unreadable parts count as leftovers there
	if len(left) == 0 {
		fmt.Fprintf(stdout, "host clean: nothing of any faultwin run under %s, no dvh* link, no faultwin or CRIU-* table, no X11 socket, no /tmp/.criu.*, nothing a described supervisor claims (%s)\n", *root, describedNames(roots))
		return nil
	}
	fmt.Fprintf(stdout, "host NOT clean (%d leftovers); windows would be INVALID:\n", len(left))
	for _, l := range left {
		fmt.Fprintln(stdout, "  -", l)
	}
	fmt.Fprintf(stdout, "clean it with the supervisor's own sweep: sudo make sweep   (= bin/faultwin sweep --state-root %s)\n", *root)
	fmt.Fprintln(stdout, "  for a described supervisor's leftovers under host-global names (podman's netns, bridge, chains) add --reclaim-names: bin/faultwin sweep --reclaim-names")
	fmt.Fprintln(stdout, "  it sweeps each run under the state root with its supervisor, removes the harness's decoys, and kills what runs whose state dir is gone left (by tag, namespace or cgroup)")
	fmt.Fprintln(stdout, "anything it names as left was not tied to a faultwin run: remove it by hand")
	return statusExit{exitFail, fmt.Sprintf("host not clean: %d leftovers", len(left))}
}

// describedNames spells the host-global names the described supervisors
// claim, for the clean-host line.
func describedNames(r snapshots.Roots) string {
	var parts []string
	for _, l := range [][]string{r.Links, r.Netns, r.Chains} {
		parts = append(parts, l...)
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
