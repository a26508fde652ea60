package criteria

import (
	"strconv"

	"faultwin/internal/model"
	"faultwin/snapshots"
)

var _ = register(model.P6, "a second sweep does nothing", p6)

// p6 holds when a second sweep of the dead run is a no-op: its report shows
// no action, no error and no survivor, and nothing of the run (live
// processes, mounts, criu tmp entries, links, tables, X11 files, ledgers,
// watched sysctls) differs between the snapshots taken after each sweep. A
// sweep killed part-way (W14..W16) must be safe to rerun, and a rerun that
// still finds work shows the first one stopped early.
func p6(c *ctx) Result {
	j := &judge{id: model.P6}
	j.gap(snapshotGaps(c.afterSweeps()...)...)
	j.gap(scopeGaps(c.in.Scope, needRun, needTag, needStateDir)...)
	r := c.in.Sweep2
	switch {
	case r.Run == "" && r.Passes == 0:
		j.gap("second sweep report missing")
	case r.Run != c.in.Scope.Run:
		j.gap("second sweep report is of run " + strconv.Quote(r.Run))
	}
	j.fail(sweepActions("second sweep", r)...)
	before, g1 := c.footprint(c.in.AfterSweep)
	after, g2 := c.footprint(c.in.AfterSweep2)
	for _, g := range g1 {
		j.gap(LabelAfterSweep + ": " + g)
	}
	for _, g := range g2 {
		j.gap(LabelAfterSweep2 + ": " + g)
	}
	inAfter := map[string]bool{}
	for _, f := range after {
		inAfter[f.key] = true
	}
	inBefore := map[string]bool{}
	for _, f := range before {
		inBefore[f.key] = true
		if !inAfter[f.key] {
			j.fail("gone between sweeps: " + f.line)
		}
	}
	for _, f := range after {
		if !inBefore[f.key] {
			j.fail("appeared between sweeps: " + f.line)
		}
	}
	return j.result("second sweep was a no-op and nothing of the run changed between the sweeps",
		func(n int) string { return plural(n, "change", "changes") + " by or after the second sweep" })
}

// sweepActions lists everything a sweep report says it did, failed or left.
func sweepActions(which string, r model.SweepReport) []string {
	var out []string
	for _, k := range r.Killed {
		out = append(out, which+" killed "+pidLine(k.PID)+" "+k.Comm+": "+k.Why)
	}
	for _, m := range r.Unmounted {
		out = append(out, which+" unmounted "+m)
	}
	for _, l := range r.LinksDeleted {
		out = append(out, which+" deleted link "+l)
	}
	for _, t := range r.TablesDeleted {
		out = append(out, which+" deleted table "+t)
	}
	for _, f := range r.FilesRemoved {
		out = append(out, which+" removed "+f)
	}
	for _, s := range r.SysctlsRestored {
		out = append(out, which+" restored sysctl "+s)
	}
	for _, cg := range r.CgroupsRemoved {
		out = append(out, which+" removed cgroup "+cg)
	}
	if r.LedgerRemoved {
		out = append(out, which+" removed the ledger")
	}
	for _, k := range r.Survivors {
		out = append(out, which+" left survivor "+pidLine(k.PID)+" "+k.Comm+": "+k.Why)
	}
	for _, e := range r.Errors {
		out = append(out, which+" error: "+e)
	}
	return out
}

// footprint is everything of the run one snapshot shows, by key. Zombies
// are left out: their reaping is not the sweep's doing.
func (c *ctx) footprint(s snapshots.Snapshot) ([]finding, []string) {
	var all []finding
	var gaps []string
	for _, find := range []finder{c.runProcesses, c.runMounts, c.runNet, c.runLedgers} {
		found, g := find(s)
		gaps = append(gaps, g...)
		for _, f := range found {
			if !f.zombie {
				all = append(all, f)
			}
		}
	}
	for _, k := range c.in.Roots.Sysctls {
		if v, ok := sysctl(s, k); ok {
			l := "sysctl " + k + "=" + v
			all = append(all, finding{key: l, line: l})
		}
	}
	return all, gaps
}
