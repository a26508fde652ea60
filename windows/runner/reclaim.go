package runner

import (
	"slices"
	"strings"

	"faultwin/drivers/catalog"
	"faultwin/drivers/reclaim"
	"faultwin/internal/model"
	"faultwin/snapshots"
)

// RootsFor returns the roots a window is captured and judged with: the
// runner's, plus the host-global names the window's driver publishes (a
// described supervisor's links, named netns, chains and what it keeps by
// design).
func (r *Runner) RootsFor(w model.Window) snapshots.Roots {
	roots := r.Roots
	spec, ok := catalog.Spec(driverOf(w))
	if !ok {
		return roots
	}
	return WithNames(roots, spec.Names)
}

// WithNames adds a driver's host-global names to roots.
func WithNames(roots snapshots.Roots, n model.HostNames) snapshots.Roots {
	add := func(dst []string, src []string) []string {
		for _, s := range src {
			if !slices.Contains(dst, s) {
				dst = append(dst, s)
			}
		}
		return dst
	}
	roots.Links = add(append([]string(nil), roots.Links...), n.Links)
	roots.Netns = add(append([]string(nil), roots.Netns...), n.Netns)
	roots.Chains = add(append([]string(nil), roots.Chains...), n.Chains)
	roots.Sockets = add(append([]string(nil), roots.Sockets...), n.Sockets)
	roots.State = add(append([]string(nil), roots.State...), n.State)
	roots.Shared = add(append([]string(nil), roots.Shared...), n.Shared)
	return roots
}

// AllRoots returns roots with every known driver's host-global names, for
// the checks that do not belong to one window (hostcheck, sweep).
func AllRoots(roots snapshots.Roots) snapshots.Roots {
	for _, spec := range catalog.Specs() {
		roots = WithNames(roots, spec.Names)
	}
	return roots
}

func driverOf(w model.Window) string {
	if w.Driver == "" {
		return model.DefaultDriver
	}
	return w.Driver
}

// reclaim (step 11, after the judged snapshots): the last resort for a described
// supervisor's run, so the next window finds a clean host. refsup's own
// sweep is all its windows get.
func (x *attempt) reclaim() {
	desc := catalog.Description(driverOf(x.w))
	if desc == nil || x.in.Scope.Run == "" {
		return
	}
	_ = x.step("reclaim", func() error {
		r := reclaim.Run(x.ctx, reclaim.Plan{
			Scope: x.in.Scope, Roots: x.in.Roots, EmptyTables: desc.Reclaim.EmptyTables,
			Sysctls: x.in.Preflight.Sysctls, RemoveStateDir: true, Names: true,
		})
		x.o.Reclaim = &r
		if !r.Empty() {
			x.logf("last resort reclaimed what the sweep left (%d processes, %d mounts, %d links, %d chains, %d cgroups)",
				len(r.Killed), len(r.Unmounted), len(r.LinksDeleted), len(r.ChainsDeleted), len(r.CgroupsRemoved))
		}
		if len(r.Thawed) > 0 {
			x.logf("last resort thawed the run's frozen cgroups before its kill: %s", strings.Join(r.Thawed, ", "))
		}
		return nil
	})
}

// Disarmable reports whether w can run as a control (model.Fault.Disarmed):
// its point is an external trigger's, which can watch without killing. A
// point compiled into the supervisor fires inside it, and every later step
// of its window waits for the death.
func Disarmable(w model.Window) bool {
	spec, ok := catalog.Spec(driverOf(w))
	if !ok {
		return false
	}
	p, ok := spec.Point(w.Fault.Point)
	return ok && p.External()
}

// Control is w's control: the same window, disarmed.
func Control(w model.Window) model.Window {
	w.Fault.Disarmed = true
	return w
}
