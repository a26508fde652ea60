package criteria

import (
	"strconv"

	"faultwin/internal/model"
	"faultwin/snapshots"
)

// unreadable sorts the live processes of s that could not be read fully and
// that owned does not hold. Each is a gap, "cannot rule out", unless the
// capture set it aside (SetAside: what could be read of it ties it to no
// run) and its parent is neither owned nor itself such a gap: then it is a
// note. Rows recorded before SetAside existed have none, so every such
// process is a gap there, as it was judged. skip leaves out processes (the
// window's decoys).
func unreadable(s snapshots.Snapshot, owned map[model.PID]bool, skip func(snapshots.Process) bool) (gaps, notes []string) {
	isGap := func(p snapshots.Process) bool {
		return !owned[p.ID()] && p.Unreadable != "" && !p.Zombie() && !skip(p)
	}
	for _, p := range s.Processes {
		if !isGap(p) {
			continue
		}
		line := procLine(p) + " unreadable (" + p.Unreadable + ")"
		switch parent, tied := parentTies(s, p, owned, isGap); {
		case p.SetAside == "":
			gaps = append(gaps, line+": cannot rule out")
		case tied:
			gaps = append(gaps, line+": cannot rule out (set aside by the capture, but its parent pid "+strconv.Itoa(parent)+" is "+
				"of a run or unreadable)")
		default:
			notes = append(notes, line+"; set aside: "+p.SetAside)
		}
	}
	return gaps, notes
}

// parentTies reports whether p's parent, as s shows it (started before p),
// is owned or a gap itself, and names its pid.
func parentTies(s snapshots.Snapshot, p snapshots.Process, owned map[model.PID]bool, isGap func(snapshots.Process) bool) (int, bool) {
	for _, q := range s.Processes {
		if q.PID == p.PPID && q.StartTime <= p.StartTime && (owned[q.ID()] || (isGap(q) && q.SetAside == "")) {
			return q.PID, true
		}
	}
	return p.PPID, false
}

// SetAside lists the processes of s the capture set aside, unreadable but
// tied to no run, as the preflight, hostcheck and sweep's last word note
// them rather than count them (Leftovers).
func SetAside(s snapshots.Snapshot, r snapshots.Roots) []string {
	_, _, _, notes := leftovers(s, r)
	return notes
}
