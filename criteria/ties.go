package criteria

import (
	"strconv"
	"strings"

	"faultwin/snapshots"
)

// tieKinds are the namespace kinds whose sharing ties a process to a run
// beyond the pid and mount rules of owners, in the order they are tried.
var tieKinds = []string{"net", "ipc", "uts", "cgroup", "user", "time"}

// NSKinds are the namespace kinds a run's process can be tied by: the
// kinds an nsfs mount of a run can pin, and those a tie record keeps.
var NSKinds = append([]string{"pid", "mnt"}, tieKinds...)

// nsKey is one namespace: its kind and inode.
type nsKey struct {
	kind string
	ino  uint64
}

// ties is what a snapshot's mounts and host namespaces say about
// ownership beyond the processes' own marks. Rows recorded before these
// facts existed give an empty ties, and so judge as they always did.
type ties struct {
	host map[uint64]bool
	devs map[string]string // a run filesystem's dev -> its mount point
	pins map[nsKey]string  // a namespace pinned by a run's nsfs mount -> mount point
	// recNS and recMnt are what the tie records judged with name: a
	// namespace by kind and inode -> its id and run, a mount by its
	// never-reused id -> its run and mount point.
	recNS  map[nsKey]recordedNS
	recMnt map[uint64]recordedMount
}

type recordedNS struct {
	id  uint64
	run string
}

// recordedMount is a recorded mount's run and mount point, and the run's
// own mount namespace it was in (0: the harness's table showed it).
type recordedMount struct {
	run, at string
	ns      uint64
}

// records indexes the tie records rs for newTies.
func (t *ties) records(rs []snapshots.TieRecord) {
	t.recNS, t.recMnt = map[nsKey]recordedNS{}, map[uint64]recordedMount{}
	for _, r := range rs {
		for _, n := range r.NS {
			if n.ID != 0 && t.foreign(n.Ino) {
				t.recNS[nsKey{n.Kind, n.Ino}] = recordedNS{n.ID, r.Run}
			}
		}
		for _, m := range r.Mounts {
			if m.ID != 0 {
				t.recMnt[m.ID] = recordedMount{r.Run, cleanPath(m.MountPoint), m.NS}
			}
		}
	}
}

// newTies reads the run filesystems and pinned namespaces off the mounts
// ownedMount accepts. A pin of a host namespace is ignored: it would claim
// the whole host.
//
// records are the tie records whose runs are judged: a process in one of
// their namespaces (the same id, not only the same inode) or holding a file
// through one of their mounts is that run's, though the run left nothing
// else.
func newTies(s snapshots.Snapshot, ownedMount func(snapshots.Mount) bool, records []snapshots.TieRecord) ties {
	t := ties{host: map[uint64]bool{}, devs: map[string]string{}, pins: map[nsKey]string{}}
	for _, ino := range s.HostNS {
		t.host[ino] = true
	}
	t.records(records)
	for _, m := range s.Mounts {
		if (m.Dev == "" && m.Pins == "") || !ownedMount(m) {
			continue
		}
		if _, seen := t.devs[m.Dev]; m.Dev != "" && !seen {
			t.devs[m.Dev] = cleanPath(m.MountPoint)
		}
		if k, ok := parsePin(m.Pins); ok && t.foreign(k.ino) {
			if _, seen := t.pins[k]; !seen {
				t.pins[k] = cleanPath(m.MountPoint)
			}
		}
	}
	return t
}

// foreign reports whether ino is a namespace the host is known not to
// own; without the host's namespaces recorded nothing is.
func (t ties) foreign(ino uint64) bool { return ino != 0 && len(t.host) > 0 && !t.host[ino] }

// parsePin reads "net:[4026532282]".
func parsePin(s string) (nsKey, bool) {
	kind, rest, ok := strings.Cut(s, ":[")
	if !ok || !strings.HasSuffix(rest, "]") {
		return nsKey{}, false
	}
	ino, err := strconv.ParseUint(strings.TrimSuffix(rest, "]"), 10, 64)
	return nsKey{kind, ino}, err == nil
}

// heldReasons names the files p holds on a run filesystem, one reason for
// its open files and one for its mappings: a path can lie, a device and an
// inode cannot. A file held through a recorded mount also names the run
// the record is of. What is held through a mount of a run's own mount
// namespace is no reason: that makes p the mount's holder (holds).
func (t ties) heldReasons(p snapshots.Process) (out []string, run string) {
	var fd, mapped, dir string
	for _, h := range p.Held {
		var at string
		if rm, ok := t.recMnt[h.Mnt]; ok && h.Mnt != 0 && rm.ns != 0 {
			continue // a holder's, not the run's (holds)
		} else if ok && h.Mnt != 0 {
			at = "run " + rm.run + "'s recorded mount " + rm.at + " (mount id " + strconv.FormatUint(h.Mnt, 10) + ") ino " + strconv.FormatUint(h.Ino, 10)
			if run == "" {
				run = rm.run
			}
		} else if _, ok := t.devs[h.Dev]; ok {
			at = "run fs dev " + h.Dev + " ino " + strconv.FormatUint(h.Ino, 10)
		} else {
			continue
		}
		switch {
		case h.Map && mapped == "":
			mapped = "mapping on " + at
		case h.Dir != "" && dir == "":
			dir = h.Dir + " on " + at
		case !h.Map && h.Dir == "" && fd == "":
			fd = "open file on " + at
		}
	}
	for _, r := range []string{fd, mapped, dir} {
		if r != "" {
			out = append(out, r)
		}
	}
	return out, run
}

// ownedNS returns, for every foreign namespace of tieKinds whose oldest
// living member is owned, the reason its other members are: the run made
// it, or entered it before anything else now there. A namespace a run's
// process joined later (a service's) stays its creator's, so a sweep never
// kills a service one of the run's processes had entered.
func (t ties) ownedNS(s snapshots.Snapshot, why [][]string, skip func(snapshots.Process) bool) map[nsKey]string {
	oldest := map[nsKey]int{}
	for i, p := range s.Processes {
		for _, kind := range tieKinds {
			k := nsKey{kind, p.NS[kind]}
			if !t.foreign(k.ino) {
				continue
			}
			if j, seen := oldest[k]; !seen || older(p, s.Processes[j]) {
				oldest[k] = i
			}
		}
	}
	out := map[nsKey]string{}
	for k, i := range oldest {
		// An owned member as old as the oldest (same clock tick) counts:
		// pick the first such, so the reason is stable.
		for j, p := range s.Processes {
			if p.NS[k.kind] == k.ino && len(why[j]) > 0 && !skip(p) && !older(s.Processes[i], p) {
				out[k] = k.kind + " ns of pid " + strconv.Itoa(p.PID)
				break
			}
		}
	}
	return out
}

// nsReason is the first namespace tie of p: a pin of a run's nsfs mount,
// else a foreign namespace owned through its oldest member, else one a tie
// record names (by id: the inode alone may be a later namespace's), with
// the run of that record.
func (t ties) nsReason(p snapshots.Process, owned map[nsKey]string) (reason, run string) {
	for _, kind := range NSKinds {
		if mp, ok := t.pins[nsKey{kind, p.NS[kind]}]; ok && p.NS[kind] != 0 {
			return kind + " ns bound at " + mp, ""
		}
	}
	for _, kind := range tieKinds {
		if r, ok := owned[nsKey{kind, p.NS[kind]}]; ok {
			return r, ""
		}
	}
	for _, kind := range NSKinds {
		if rn, ok := t.recNS[nsKey{kind, p.NS[kind]}]; ok && p.NS[kind] != 0 && p.NSID[kind] == rn.id {
			return kind + " ns " + strconv.FormatUint(p.NS[kind], 10) + " (id " + strconv.FormatUint(rn.id, 10) + ") recorded for run " + rn.run, rn.run
		}
	}
	return "", ""
}

// older reports whether a started before b.
func older(a, b snapshots.Process) bool { return a.StartTime < b.StartTime }
