package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"faultwin/drivers/catalog"
	"faultwin/drivers/reclaim"
	"faultwin/internal/model"
	"faultwin/snapshots"
	"faultwin/windows/runner"
)

const sweepUsage = `usage: faultwin sweep [--state-root DIR] [--refsup BIN] [--reclaim-names]

Cleans a host after an interrupted run. Each run under the state root is
swept by its own supervisor's sweep, through the driver whose run its state
dir says it is (the harness never cleans up on a supervisor's behalf); a
described supervisor's run (podman) is then given the harness's last resort
on what its sweep left. Then the decoys the harness itself planted are
removed, and what runs whose state dir is gone left behind (processes tied
to a run by tag, namespace or cgroup; empty cgroups of those runs) is
killed or removed, the runs' frozen cgroups thawed first (never one
holding a task of no run). Anything not tied to a faultwin run is named
and left.

Last, the host is judged as hostcheck and every window's preflight judge
it; what is left is listed.

Exit status: 0 when every sweep and removal succeeded and the host is
clean after them, 1 when one failed or anything of a run is left (named
in the output), 64 a usage error.
`

// runSweep cleans a host after an interrupted run: it calls each dead run's
// own supervisor sweep (the harness never cleans up on a supervisor's
// behalf), then removes only the decoys the harness itself planted, then
// what runs whose state directory is gone left behind (sweepOrphans).
func runSweep(ctx context.Context, stdout io.Writer, args []string) error {
	fs := newFlags(stdout, "sweep", sweepUsage)
	fs.supervisors()
	root := fs.String("state-root", model.DefaultStateRoot, "refsup state root")
	bin := fs.String("refsup", filepath.Join(selfDir(), "refsup"), "refsup binary")
	names := fs.Bool("reclaim-names", false, "for runs of a described supervisor (podman), also remove the host-global names its description claims (named netns, bridge ports, chains); without it they are only listed, since outside a window they may be another user's")
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := fs.noArgs(); err != nil {
		return err
	}
	runs, planted, err := reclaim.RunDirs(*root)
	if errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(stdout, "sweep: %s does not exist; no run to sweep\n", *root)
		return sweepOrphans(ctx, stdout, *root)
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, run := range runs {
		errs = append(errs, sweepRun(ctx, stdout, catalog.Options{Bin: *bin, StateRoot: *root}, run, *names))
	}
	for _, dir := range planted {
		if err := runner.RemovePlanted(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(stdout, "sweep: removed harness decoys in %s\n", dir)
	}
	if len(runs)+len(planted) == 0 {
		fmt.Fprintf(stdout, "sweep: no run under %s\n", *root)
	}
	errs = append(errs, sweepOrphans(ctx, stdout, *root))
	if *names {
		errs = append(errs, sweepNames(stdout, *root))
	}
	errs = append(errs, sweepCheck(ctx, stdout, *root))
	return errors.Join(errs...)
}

// sweepCheck is the sweep's last word: the judge every preflight and
// hostcheck use, so a sweep that says it is done and a window that then
// refuses the host cannot disagree. Anything of a run still there fails
// the sweep.
func sweepCheck(ctx context.Context, stdout io.Writer, root string) error {
	j, err := reclaim.Judge(ctx, "sweep", runner.AllRoots(snapshots.DefaultRoots(root)))
	if err != nil {
		return fmt.Errorf("reading host state after the sweep: %w", err)
	}
	printSetAside(stdout, "sweep", j.SetAside)
	if j.Clean() {
		fmt.Fprintln(stdout, "sweep: host clean")
		return nil
	}
	fmt.Fprintf(stdout, "sweep: host NOT clean after the sweep (%d leftovers); windows would be INVALID:\n", len(j.Left))
	for _, l := range j.Left {
		fmt.Fprintln(stdout, "  -", l)
	}
	return statusExit{exitFail, fmt.Sprintf("sweep: %d leftovers of a run are still on the host", len(j.Left))}
}

// sweepRun cleans one dead run: its supervisor's own sweep, through the
// driver that owns the run, then, for a supervisor described as data, the
// harness's last resort on what is left (the run's processes, mounts under
// its state dir, cgroups, the state dir; the host-global names only with
// --reclaim-names).
func sweepRun(ctx context.Context, stdout io.Writer, o catalog.Options, run string, names bool) error {
	name, reports, err := catalog.SweepDead(ctx, o, run)
	for i, r := range reports {
		fmt.Fprintf(stdout, "sweep: run %s: %s sweep %d: %s\n", run, name, i+1, sweepText(r))
	}
	if err != nil {
		return fmt.Errorf("run %s: %w", run, err)
	}
	tables, ok := catalog.LastResort(name)
	if !ok {
		return nil
	}
	roots := runner.AllRoots(snapshots.DefaultRoots(o.StateRoot))
	r := reclaim.Run(ctx, reclaim.Plan{Scope: model.NewScope(o.StateRoot, run), Roots: roots,
		EmptyTables: tables, RemoveStateDir: true, Names: names})
	b, _ := json.Marshal(r)
	fmt.Fprintf(stdout, "sweep: run %s: last resort after %s's sweep: %s\n", run, name, b)
	if !names {
		fmt.Fprintf(stdout, "sweep: host-global names %s may claim were left; `faultwin hostcheck` lists any, `faultwin sweep --reclaim-names` removes them\n", name)
	}
	if len(r.Errors) > 0 {
		return fmt.Errorf("last resort for run %s: %s", run, strings.Join(r.Errors, "; "))
	}
	return nil
}

// sweepText sums up one sweep's report: what it did, its errors.
func sweepText(r model.SweepReport) string {
	var parts []string
	for _, c := range []struct {
		what string
		n    int
	}{{"killed", len(r.Killed)}, {"unmounted", len(r.Unmounted)}, {"links deleted", len(r.LinksDeleted)},
		{"tables deleted", len(r.TablesDeleted)}, {"files removed", len(r.FilesRemoved)},
		{"sysctls restored", len(r.SysctlsRestored)}, {"cgroups removed", len(r.CgroupsRemoved)},
		{"survivors", len(r.Survivors)}, {"refused", len(r.Refused)}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", c.what, c.n))
		}
	}
	if r.LedgerRemoved {
		parts = append(parts, "ledger removed")
	}
	parts = append(parts, count(len(r.Errors), "error"))
	s := strings.Join(parts, ", ")
	if len(r.Errors) > 0 {
		s += ": " + strings.Join(r.Errors, "; ")
	}
	return s
}

// sweepNames removes what the described supervisors claim under host-global
// names when no run is left to tie it to (--reclaim-names only).
func sweepNames(stdout io.Writer, root string) error {
	roots := runner.AllRoots(snapshots.DefaultRoots(root))
	var errs []error
	for _, name := range catalog.Names() {
		tables, ok := catalog.LastResort(name)
		if !ok {
			continue
		}
		r := reclaim.Names(roots, tables)
		if !r.Empty() {
			b, _ := json.Marshal(r)
			fmt.Fprintf(stdout, "sweep: host-global names of %s: %s\n", name, b)
		}
		for _, e := range r.Errors {
			errs = append(errs, fmt.Errorf("%s: %s", name, e))
		}
	}
	return errors.Join(errs...)
}
