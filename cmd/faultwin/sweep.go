package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"faultwin/drivers/catalog"
	"faultwin/drivers/described"
	"faultwin/drivers/reclaim"
	"faultwin/internal/model"
	"faultwin/snapshots"
	"faultwin/windows/runner"
)

// runSweep cleans a host after an interrupted run: it calls each dead run's
// own supervisor sweep (the harness never cleans up on a supervisor's
// behalf), then removes only the decoys the harness itself planted, then
// what runs whose state directory is gone left behind (sweepOrphans).
func runSweep(ctx context.Context, stdout io.Writer, args []string) error {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	fs.SetOutput(stdout)
	root := fs.String("state-root", model.DefaultStateRoot, "refsup state root")
	bin := fs.String("refsup", filepath.Join(selfDir(), "refsup"), "refsup binary")
	names := fs.Bool("reclaim-names", false, "for runs of a described supervisor (podman), also remove the host-global names its description claims (named netns, bridge ports, chains); without it they are only listed, since outside a window they may be another user's")
	if err := fs.Parse(args); err != nil {
		return err
	}
	entries, err := os.ReadDir(*root)
	if errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(stdout, "sweep: %s does not exist; no run to sweep\n", *root)
		return sweepOrphans(ctx, stdout, *root)
	}
	if err != nil {
		return err
	}
	var runs, planted []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(*root, e.Name())
		if runner.IsPlanted(dir) {
			planted = append(planted, dir)
			continue
		}
		runs = append(runs, e.Name())
	}
	sort.Strings(runs)
	var errs []error
	for _, run := range runs {
		if name := described.DriverOf(filepath.Join(*root, run)); name != "" {
			errs = append(errs, sweepDescribed(ctx, stdout, *root, run, name, *names))
			continue
		}
		cmd := exec.CommandContext(ctx, *bin, "sweep", "--root", *root, "--run", run)
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if err := cmd.Run(); err != nil {
			errs = append(errs, fmt.Errorf("refsup sweep of run %s: %w: %s", run, err, strings.TrimSpace(stderr.String())))
			continue
		}
		fmt.Fprintf(stdout, "sweep: run %s: %s\n", run, strings.TrimSpace(out.String()))
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
	return errors.Join(errs...)
}

// sweepDescribed cleans a run of a supervisor described as data: its own
// sweep twice, then the harness's last resort on what is left (the run's
// processes, mounts under its state dir, cgroups, the state dir; the
// host-global names only with --reclaim-names).
func sweepDescribed(ctx context.Context, stdout io.Writer, root, run, name string, names bool) error {
	desc := catalog.Description(name)
	if desc == nil {
		return fmt.Errorf("run %s: its state dir names supervisor %q, which no description defines (%v)", run, name, catalog.Err())
	}
	reports, err := described.SweepRun(ctx, desc, root, run)
	for i, r := range reports {
		fmt.Fprintf(stdout, "sweep: run %s: %s sweep %d: %d errors\n", run, name, i+1, len(r.Errors))
	}
	if err != nil {
		return fmt.Errorf("%s sweep of run %s: %w", name, run, err)
	}
	roots := runner.AllRoots(snapshots.DefaultRoots(root))
	r := reclaim.Run(ctx, reclaim.Plan{Scope: model.NewScope(root, run), Roots: roots,
		EmptyTables: desc.Reclaim.EmptyTables, RemoveStateDir: true, Names: names})
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

// sweepNames removes what the described supervisors claim under host-global
// names when no run is left to tie it to (--reclaim-names only).
func sweepNames(stdout io.Writer, root string) error {
	roots := runner.AllRoots(snapshots.DefaultRoots(root))
	var errs []error
	for _, name := range catalog.Names() {
		desc := catalog.Description(name)
		if desc == nil {
			continue
		}
		r := reclaim.Names(roots, desc.Reclaim.EmptyTables)
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
