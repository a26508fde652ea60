package criteria

import (
	"strconv"
	"strings"

	"faultwin/internal/model"
	"faultwin/snapshots"
)

// A holder is a process no rule ties to a run (no tag, no namespace of
// the run, not in its cgroup) that holds a file, its working or root
// directory or a mapping through a mount of one of a run's own mount
// namespaces, as the run's tie record names it (RecordedMount.NS): opened
// through a process of the run (/proc/<pid>/root), say. It is not the
// run's, so no sweep kills it; but while it holds the mount, the mount
// lives on detached after the namespace is gone, with the filesystem and
// the memory behind it, so a host with a holder is never clean. Rows
// recorded before such mounts were recorded have no holders.

// holderLine names what p holds through a mount of run's own mount
// namespaces, or "" when it holds nothing there. run "" is any run; the
// line names the first run whose mount it holds.
func holderLine(p snapshots.Process, records []snapshots.TieRecord, run string) string {
	byID := map[uint64]snapshots.RecordedMount{}
	runOf := map[uint64]string{}
	for _, r := range records {
		if run != "" && r.Run != run {
			continue
		}
		for _, m := range r.Mounts {
			if m.ID != 0 && m.NS != 0 {
				byID[m.ID], runOf[m.ID] = m, r.Run
			}
		}
	}
	var held []string
	of := ""
	for _, h := range p.Held {
		m, ok := byID[h.Mnt]
		if !ok || h.Mnt == 0 || (of != "" && runOf[h.Mnt] != of) {
			continue
		}
		of = runOf[h.Mnt]
		what := "open file"
		switch {
		case h.Map:
			what = "mapping of"
		case h.Dir != "":
			what = h.Dir
		}
		held = append(held, what+" ino "+strconv.FormatUint(h.Ino, 10)+" on "+cleanPath(m.MountPoint)+
			" of its mount ns "+strconv.FormatUint(m.NS, 10)+" (mount id "+strconv.FormatUint(h.Mnt, 10)+")")
	}
	if len(held) == 0 {
		return ""
	}
	return "pid " + strconv.Itoa(p.PID) + " (" + p.Comm + ") holds " + strings.Join(held, ", ") + " of run " + of +
		": not the run's, left alone; the run's mount stays alive until it lets go"
}

// holders lists the holder lines of the processes of s that owned does
// not hold as a run's, for run ("" any run); skip excludes decoys.
func holders(s snapshots.Snapshot, owned map[model.PID]bool, run string, skip func(snapshots.Process) bool) []string {
	var out []string
	for _, p := range s.Processes {
		if owned[p.ID()] || skip(p) || p.Zombie() {
			continue
		}
		if l := holderLine(p, s.Records, run); l != "" {
			out = append(out, l)
		}
	}
	return out
}
