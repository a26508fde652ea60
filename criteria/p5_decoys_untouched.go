package criteria

import (
	"faultwin/internal/model"
	"faultwin/snapshots"
)

var _ = register(model.P5, "nothing the run does not own (the decoys) was touched", p5)

// p5 holds when every decoy outlived both sweeps untouched: each decoy
// process is alive with the same (pid, start) and not a zombie, each decoy
// mount is still mounted and each decoy file still exists, and neither sweep
// report claims to have killed, unmounted or removed one. The decoys are a
// process tagged with a prefix-colliding sibling run (r1 vs r10) and mounts
// at unrecorded paths: a sweep that matches by substring or by name, rather
// than by the run's own records, takes them with it. With no decoy planted
// this proves nothing, so it is not judged.
func p5(c *ctx) Result {
	j := &judge{id: model.P5}
	after := named{LabelAfterSweep2, c.in.AfterSweep2}
	j.gap(snapshotGaps(after)...)
	d := c.in.Decoys
	if len(d.Processes) == 0 {
		j.gap("no decoy process planted")
	}
	if len(d.Mounts) == 0 {
		j.gap("no decoy mount planted")
	}
	s := c.in.AfterSweep2
	procs := map[int]snapshots.Process{}
	for _, p := range s.Processes {
		procs[p.PID] = p
	}
	for _, dp := range d.Processes {
		p, ok := procs[dp.PID.PID]
		switch {
		case !ok:
			j.fail("decoy " + pidLine(dp.PID) + " " + dp.Tag + " gone")
		case p.StartTime != dp.StartTime:
			j.fail("decoy " + pidLine(dp.PID) + " " + dp.Tag + " gone (pid reused by " + pidLine(p.ID()) + ")")
		case p.Zombie():
			j.fail("decoy " + pidLine(dp.PID) + " " + dp.Tag + " is a zombie (state " + p.State + ")")
		}
	}
	// Only the host's own mount counts: a copy inside a session's mount
	// namespace outlives an unmount of the decoy on the host.
	mounted := map[string]bool{}
	for _, m := range s.Mounts {
		if !m.Foreign {
			mounted[cleanPath(m.MountPoint)] = true
		}
	}
	for _, mp := range d.Mounts {
		if !mounted[cleanPath(mp)] {
			j.fail("decoy mount " + mp + " gone")
		}
	}
	files := map[string]bool{}
	for _, f := range s.Extra {
		files[cleanPath(f.Path)] = true
	}
	for _, f := range d.Files {
		if !files[cleanPath(f)] {
			j.fail("decoy file " + f + " gone")
		}
	}
	c.sweptDecoys(j, "first sweep", c.in.Sweep1)
	c.sweptDecoys(j, "second sweep", c.in.Sweep2)
	return j.result("decoys untouched: "+plural(len(d.Processes), "process", "processes")+", "+
		plural(len(d.Mounts), "mount", "mounts")+", "+plural(len(d.Files), "file", "files"),
		func(n int) string { return "decoys touched (" + plural(n, "finding", "findings") + ")" })
}

// sweptDecoys fails j for every decoy a sweep report says it acted on.
func (c *ctx) sweptDecoys(j *judge, which string, r model.SweepReport) {
	for _, k := range r.Killed {
		if c.decoyProcs[k.PID] {
			j.fail(which + " killed decoy " + pidLine(k.PID) + " " + k.Comm + ": " + k.Why)
		}
	}
	for _, mp := range r.Unmounted {
		if c.decoyMounts[cleanPath(mp)] {
			j.fail(which + " unmounted decoy mount " + mp)
		}
	}
	for _, f := range r.FilesRemoved {
		if c.decoyFiles[cleanPath(f)] {
			j.fail(which + " removed decoy file " + f)
		}
	}
}
