package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"faultwin/criteria"
	"faultwin/drivers/reclaim"
	"faultwin/internal/model"
	"faultwin/snapshots"
	"faultwin/snapshots/host"
)

// sweepOrphans cleans what runs whose state directory is gone left behind:
// no supervisor sweep can, since the ledger went with the directory. It acts
// only on what the ownership rules tie to a faultwin run (an argv or
// environment tag, a faultwin cgroup, or membership of such a process's pid
// or mount namespace or another namespace or a file it held, see criteria), thaws those runs' frozen
// cgroups (reclaim.Thaw), kills each by (pid, start time) through a pidfd, and
// removes those runs' cgroups in every hierarchy, deepest first. A process it cannot
// tie to a run (a criu with no tag) is named and left.
func sweepOrphans(ctx context.Context, stdout io.Writer, root string) error {
	roots := snapshots.DefaultRoots(root)
	s, err := host.Capture(ctx, "sweep", roots, snapshots.Decoys{})
	if err != nil {
		return fmt.Errorf("reading host state: %w", err)
	}
	hasDir := func(run string) bool {
		fi, err := os.Stat(model.StateDir(root, run))
		return err == nil && fi.IsDir()
	}
	owned := criteria.LeftoverProcesses(s, roots)
	runOf := attributeRuns(s, owned, root)
	var errs []error
	var doomed []criteria.Owned
	deadRuns := map[string]bool{}
	for _, o := range owned {
		p := o.Process
		run := runOf[p.ID()]
		switch {
		case p.Zombie():
			// dead already; it goes when its parent (killed here, or init) reaps it
		case run == "":
			fmt.Fprintf(stdout, "sweep: left pid %d (%s): no run marks it (%s); remove it by hand if it is yours\n", p.PID, p.Comm, strings.Join(o.Why, ", "))
		case hasDir(run):
			// its run's own supervisor sweep owns it
		default:
			doomed = append(doomed, o)
			deadRuns[run] = true
		}
	}
	// A process in a frozen cgroup takes no SIGKILL: thaw those runs'
	// frozen cgroups first (only the runs', never a neighbour's).
	var procs []snapshots.Process
	for _, o := range doomed {
		procs = append(procs, o.Process)
	}
	th := reclaim.Thaw(host.Host{}, slices.Sorted(maps.Keys(deadRuns)), procs, reclaim.ThawWait)
	for _, t := range th.Thawed {
		fmt.Fprintf(stdout, "sweep: thawed frozen cgroup %s before the kill\n", t)
	}
	for _, e := range th.Errors {
		errs = append(errs, errors.New(e))
	}
	var killed []snapshots.Process
	for _, o := range doomed {
		p, run := o.Process, runOf[o.Process.ID()]
		if err := reclaim.KillExact(p.ID()); err != nil {
			errs = append(errs, fmt.Errorf("pid %d of run %s: %w", p.PID, run, err))
			continue
		}
		killed = append(killed, p)
		fmt.Fprintf(stdout, "sweep: killed pid %d (%s) of run %s, whose state dir is gone (%s)\n", p.PID, p.Comm, run, strings.Join(o.Why, ", "))
	}
	for _, p := range reclaim.WaitGone(killed, 5*time.Second) {
		errs = append(errs, errors.New(th.StillThere(p, 5*time.Second)))
	}
	runs := map[string]bool{}
	for _, cg := range s.Cgroups {
		if run, ok := model.RunOfCgroup(cg); ok && !hasDir(run) {
			runs[run] = true
		}
	}
	for _, run := range slices.Sorted(maps.Keys(runs)) {
		r := reclaim.Cgroups(run)
		for _, cg := range r.CgroupsRemoved {
			fmt.Fprintf(stdout, "sweep: removed cgroup %s of run %s, whose state dir is gone\n", cg, run)
		}
		for _, e := range r.Errors {
			errs = append(errs, fmt.Errorf("run %s: %s", run, e))
		}
	}
	return errors.Join(errs...)
}

// attributeRuns names the run of every owned process: by its own marks, or
// else by the run dir of the mount it was tied through (a run filesystem,
// a pinned namespace), or by the process it was tied through (a namespace
// mate, its pid namespace's init, its parent).
func attributeRuns(s snapshots.Snapshot, owned []criteria.Owned, root string) map[model.PID]string {
	runOf := map[model.PID]string{}
	byPID := map[int]snapshots.Process{}
	for _, o := range owned {
		byPID[o.Process.PID] = o.Process
		if run := criteria.RunOf(o.Process); run != "" {
			runOf[o.Process.ID()] = run
		} else if run := runOfPath(o.ViaMount, root); run != "" {
			runOf[o.Process.ID()] = run
		} else if o.ViaRun != "" {
			runOf[o.Process.ID()] = o.ViaRun
		}
	}
	for changed := true; changed; {
		changed = false
		for _, o := range owned {
			p := o.Process
			if runOf[p.ID()] != "" {
				continue
			}
			if v, ok := byPID[o.Via]; ok && runOf[v.ID()] != "" {
				runOf[p.ID()], changed = runOf[v.ID()], true
				continue
			}
			for _, q := range owned {
				r := runOf[q.Process.ID()]
				if r == "" {
					continue
				}
				samePid := p.NS["pid"] != 0 && p.NS["pid"] == q.Process.NS["pid"] && len(q.Process.NSpid) > 1
				sameMnt := p.NS["mnt"] != 0 && p.NS["mnt"] == q.Process.NS["mnt"] && len(q.Process.NSpid) > 1
				if samePid || sameMnt || q.Process.PID == p.PPID {
					runOf[p.ID()], changed = r, true
					break
				}
			}
		}
	}
	return runOf
}

// runOfPath names the run whose state dir holds p: its first component
// below the state root.
func runOfPath(p, root string) string {
	if p == "" || !model.Below(p, root) {
		return ""
	}
	rest := strings.TrimPrefix(path.Clean(p), path.Clean(root)+"/")
	run, _, _ := strings.Cut(rest, "/")
	return run
}
