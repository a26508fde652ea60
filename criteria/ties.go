package criteria

import (
	"strconv"
	"strings"

	"faultwin/snapshots"
)

// tieKinds are the namespace kinds whose sharing ties a process to a run
// beyond the pid and mount rules of owners, in the order they are tried.
var tieKinds = []string{"net", "ipc", "uts", "cgroup", "user", "time"}

// pinKinds are the kinds an nsfs mount of a run can pin: any of them.
var pinKinds = append([]string{"pid", "mnt"}, tieKinds...)

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
}

// newTies reads the run filesystems and pinned namespaces off the mounts
// ownedMount accepts. A pin of a host namespace is ignored: it would claim
// the whole host.
func newTies(s snapshots.Snapshot, ownedMount func(snapshots.Mount) bool) ties {
	t := ties{host: map[uint64]bool{}, devs: map[string]string{}, pins: map[nsKey]string{}}
	for _, ino := range s.HostNS {
		t.host[ino] = true
	}
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
// inode cannot.
func (t ties) heldReasons(p snapshots.Process) []string {
	var fd, mapped string
	for _, h := range p.Held {
		if _, ok := t.devs[h.Dev]; !ok {
			continue
		}
		at := "run fs dev " + h.Dev + " ino " + strconv.FormatUint(h.Ino, 10)
		switch {
		case h.Map && mapped == "":
			mapped = "mapping on " + at
		case !h.Map && fd == "":
			fd = "open file on " + at
		}
	}
	var out []string
	for _, r := range []string{fd, mapped} {
		if r != "" {
			out = append(out, r)
		}
	}
	return out
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
// else a foreign namespace owned through its oldest member.
func (t ties) nsReason(p snapshots.Process, owned map[nsKey]string) string {
	for _, kind := range pinKinds {
		if mp, ok := t.pins[nsKey{kind, p.NS[kind]}]; ok && p.NS[kind] != 0 {
			return kind + " ns bound at " + mp
		}
	}
	for _, kind := range tieKinds {
		if r, ok := owned[nsKey{kind, p.NS[kind]}]; ok {
			return r
		}
	}
	return ""
}

// older reports whether a started before b.
func older(a, b snapshots.Process) bool { return a.StartTime < b.StartTime }
