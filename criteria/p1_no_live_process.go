package criteria

import (
	"strings"

	"faultwin/internal/model"
	"faultwin/snapshots"
)

var _ = register(model.P1, "no process of the run, and no CRIU, is left after the sweeps", p1)

// p1 holds when, after both sweeps, no live process of the run is left and
// no criu process at all. The first real failure this guards against (W4_30) was
// CRIU's forked restorer: named criu, not a child of the supervisor, no tag
// in argv, cwd under the checkpoint dir, holding a half-made veth. A leftover
// like that poisons every later restore, so any criu is a failure here.
// Zombies have exited and only wait for a reaper: they are reported as
// zombies, never as live survivors.
func p1(c *ctx) Result {
	j := &judge{id: model.P1}
	j.gap(snapshotGaps(c.afterSweeps()...)...)
	j.gap(scopeGaps(c.in.Scope, needRun, needTag, needStateDir)...)
	found, gaps := collect(c.afterSweeps(), c.runProcesses)
	j.gap(gaps...)
	for _, n := range c.afterSweeps() {
		_, notes := c.unreadableOf(n.snap)
		for _, l := range notes {
			j.note(n.label + ": " + l)
		}
	}
	zombies := 0
	for _, f := range found {
		if f.zombie {
			zombies++
			j.note(f.lineIn() + ": zombie, not a live survivor")
			continue
		}
		j.fail(f.lineIn())
	}
	ok := "no live process of the run and no criu after the sweeps"
	if zombies > 0 {
		ok += " (" + plural(zombies, "zombie", "zombies") + " awaiting reaping)"
	}
	return j.result(ok, func(n int) string {
		return plural(n, "live process", "live processes") + " of the run or criu survived the sweeps"
	})
}

// runProcesses finds the processes of the run and every criu process in s.
// A live process that could not be read and matched nothing is a gap: it
// cannot be ruled out, unless the capture set it aside (unreadableOf).
func (c *ctx) runProcesses(s snapshots.Snapshot) ([]finding, []string) {
	why := map[model.PID][]string{}
	for _, o := range OfRun(s, c.sc, c.in.Decoys) {
		why[o.Process.ID()] = o.Why
	}
	var found []finding
	gaps, _ := c.unreadableOf(s)
	for _, p := range s.Processes {
		if isDecoyProcess(p, c.decoyProcs) {
			continue
		}
		w := why[p.ID()]
		if p.Comm == model.CRIUComm {
			w = append(w[:len(w):len(w)], whyCRIUComm)
		}
		if len(w) == 0 {
			continue
		}
		state := "live"
		if p.Zombie() {
			state = "zombie"
		}
		found = append(found, finding{
			key:    pidLine(p.ID()) + " " + state,
			line:   procLine(p) + ": " + strings.Join(w, ", "),
			zombie: p.Zombie(),
		})
	}
	return found, gaps
}

// unreadableOf sorts the unreadable processes of s that are not the run's
// (nor criu, nor decoys) into gaps and the notes of those set aside.
func (c *ctx) unreadableOf(s snapshots.Snapshot) (gaps, notes []string) {
	owned := map[model.PID]bool{}
	for _, o := range OfRun(s, c.sc, c.in.Decoys) {
		owned[o.Process.ID()] = true
	}
	for _, p := range s.Processes {
		if p.Comm == model.CRIUComm {
			owned[p.ID()] = true
		}
	}
	return unreadable(s, owned, func(p snapshots.Process) bool { return isDecoyProcess(p, c.decoyProcs) })
}
