package host

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"faultwin/snapshots"
)

// nsKinds are every namespace kind /proc/<pid>/ns shows; tieKinds those
// beyond pid and mnt whose sharing can tie a process to a run.
var (
	nsKinds  = []string{"pid", "mnt", "net", "ipc", "uts", "cgroup", "user", "time"}
	tieKinds = []string{"net", "ipc", "uts", "cgroup", "user", "time"}
)

// readHostNS records the namespaces of the harness and of pid 1 (every
// kind): none of them is ever a run's. A kind the kernel lacks is skipped.
func (ps *procScan) readHostNS() {
	ps.host = map[uint64]bool{}
	for _, pid := range []string{"self", "1"} {
		for _, kind := range nsKinds {
			if ino, err := readNS(ps.root, pid, kind); err == nil {
				ps.host[ino] = true
			}
		}
	}
}

// hostNS lists ps.host sorted, for Snapshot.HostNS.
func (ps *procScan) hostNS() []uint64 {
	out := make([]uint64, 0, len(ps.host))
	for ino := range ps.host {
		out = append(out, ino)
	}
	slices.Sort(out)
	return out
}

// foreignNS reports whether ino is a namespace neither the harness nor pid
// 1 lives in; without the host's namespaces read, none is.
func (ps *procScan) foreignNS(ino uint64) bool {
	return ino != 0 && len(ps.host) > 0 && !ps.host[ino]
}

// nsOf returns c's namespace of kind, read once (0 when unreadable).
func (ps *procScan) nsOf(c *candidate, kind string) uint64 {
	if ino, ok := c.ns[kind]; ok {
		return ino
	}
	if c.ns == nil {
		c.ns = map[string]uint64{}
	}
	var ino uint64
	if !c.zombie {
		ino, _ = readNS(ps.root, strconv.Itoa(c.p.PID), kind)
	}
	c.ns[kind] = ino
	return ino
}

// tieNS includes every process living in a foreign namespace of tieKinds
// that an included process lives in, or in a namespace a run's nsfs mount
// pins. It reads a kind of the other processes only when some included
// process has a foreign one of that kind, so a host with no run pays
// nothing. It reports whether it included any.
func (ps *procScan) tieNS(cands []*candidate) bool {
	targets, kinds := ps.tieTargets(cands)
	if len(targets) == 0 && len(ps.recs.ns) == 0 {
		return false
	}
	added := false
	for _, c := range cands {
		if c.include || c.zombie {
			continue
		}
		for _, kind := range nsKinds {
			if !kinds[kind] {
				continue
			}
			ino := ps.nsOf(c, kind)
			if targets[ino] || ps.recordedNS(c, kind, ino) {
				c.include, added = true, true
				break
			}
		}
	}
	return added
}

// tieTargets returns the foreign namespaces of tieKinds an included
// process lives in or a run's nsfs mount pins, and the kinds of those and
// of the namespaces the tie records name: what tieNS ties a process by.
func (ps *procScan) tieTargets(cands []*candidate) (targets map[uint64]bool, kinds map[string]bool) {
	targets, kinds = map[uint64]bool{}, map[string]bool{}
	for _, c := range cands {
		if !c.include || c.zombie || c.p.StartTime == 0 {
			continue
		}
		for _, kind := range tieKinds {
			if ino := ps.nsOf(c, kind); ps.foreignNS(ino) {
				targets[ino], kinds[kind] = true, true
			}
		}
	}
	for ino, kind := range ps.runFS.pins {
		if ps.foreignNS(ino) {
			targets[ino], kinds[kind] = true, true
		}
	}
	for k := range ps.recs.ns {
		if ps.foreignNS(k.ino) {
			kinds[k.kind] = true
		}
	}
	return targets, kinds
}

// recordedNS reports whether c's namespace of kind, inode ino, is one a tie
// record names: the same inode and the same id, read now (an inode alone
// may be a later namespace's). It notes the id in c for the criteria.
func (ps *procScan) recordedNS(c *candidate, kind string, ino uint64) bool {
	id, ok := ps.recs.ns[recKey{kind, ino}]
	if !ok || !ps.foreignNS(ino) {
		return false
	}
	now, err := nsID(ps.root, strconv.Itoa(c.p.PID), kind)
	if err != nil || now != id {
		return false
	}
	if c.p.NSID == nil {
		c.p.NSID = map[string]uint64{}
	}
	c.p.NSID[kind] = id
	return true
}

// recordNS adds to c's recorded namespaces the kinds beyond pid, mnt and
// net that are not the host's.
func (ps *procScan) recordNS(c *candidate) {
	for _, kind := range tieKinds[1:] {
		if ino := ps.nsOf(c, kind); ps.foreignNS(ino) {
			c.p.NS[kind] = ino
		}
	}
}

// held lists what pid has open (fds) or mapped on a run filesystem, by
// device and inode. It reads nothing when no run filesystem is mounted.
// Equivalent to: stat -L /proc/<pid>/fd/*; the dev and inode of
// /proc/<pid>/maps.
func (ps *procScan) held(pid int, fds []fdRef, ownMountNS bool) (out []snapshots.Held) {
	add := func(h snapshots.Held) {
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	// What a record ties comes last: while the run's filesystems are
	// mounted, a holder is named by them, as it was before the record.
	defer func() {
		for _, h := range ps.recs.held(ps.root, pid, fds) {
			add(h)
		}
	}()
	if len(ps.runFS.devs) == 0 {
		return out
	}
	dir := filepath.Join(ps.root, strconv.Itoa(pid), "fd")
	for _, fd := range fds {
		if !ps.runFS.mayHold(fd.target, ownMountNS) {
			continue
		}
		var st unix.Stat_t
		if unix.Stat(filepath.Join(dir, fd.fd), &st) != nil {
			continue
		}
		if ps.runFS.devs[st.Dev] {
			add(snapshots.Held{Dev: devString(st.Dev), Ino: st.Ino})
		} else if ownMountNS {
			// Opened through a run's overlay: a layer's device and inode,
			// the overlay's mount. Only in the harness's mount namespace do
			// a descriptor's mount ids name the table's mounts (another
			// namespace has copies under ids of their own), so nothing is
			// read for the rest.
			if dev, ok := ps.runFS.ids[fdMountID(ps.root, pid, fd.fd)]; ok {
				add(snapshots.Held{Dev: devString(dev), Ino: st.Ino})
			}
		}
	}
	for _, h := range mapped(ps.root, pid, ps.runFS.devs) {
		add(h)
	}
	return out
}

// fdMountID reads the id of the mount a descriptor was opened through, or
// -1. Equivalent to: grep mnt_id /proc/<pid>/fdinfo/<fd>.
func fdMountID(root string, pid int, fd string) int {
	b, err := os.ReadFile(filepath.Join(root, strconv.Itoa(pid), "fdinfo", fd))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "mnt_id:"); ok {
			if id, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
				return id
			}
		}
	}
	return -1
}

// mapped reads the mappings of pid on a run filesystem: by PROCMAP_QUERY
// where the kernel has it (6.11), which skips the text of every mapping
// (a third of the cost measured here), else from the text.
func mapped(root string, pid int, devs map[uint64]bool) []snapshots.Held {
	path := filepath.Join(root, strconv.Itoa(pid), "maps")
	if out, ok := queryMaps(path, devs); ok {
		return out
	}
	return mapsText(path, devs)
}

// mapsText reads the mappings of pid from /proc/<pid>/maps, which spells a
// device in hex ("00:2a"), the inode in decimal.
func mapsText(path string, devs map[uint64]bool) []snapshots.Held {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []snapshots.Held
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 || f[4] == "0" {
			continue // anonymous
		}
		maj, min, ok := strings.Cut(f[3], ":")
		if !ok {
			continue
		}
		ma, err1 := strconv.ParseUint(maj, 16, 32)
		mi, err2 := strconv.ParseUint(min, 16, 32)
		ino, err3 := strconv.ParseUint(f[4], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		dev := unix.Mkdev(uint32(ma), uint32(mi))
		if devs[dev] {
			h := snapshots.Held{Dev: devString(dev), Ino: ino, Map: true}
			if !slices.Contains(out, h) {
				out = append(out, h)
			}
		}
	}
	return out
}
