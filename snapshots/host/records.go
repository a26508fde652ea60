package host

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"

	"faultwin/internal/strictjson"
	"faultwin/snapshots"
)

// nsGetID is NS_GET_ID, _IOR(0xb7, 0xd, __u64): a namespace's id, unique
// for the boot and never reused (Linux 6.18; older kernels say ENOTTY).
const nsGetID = 0x8008b70d

// NSID reads the id of pid's namespace of kind (pid a number or "self").
// Equivalent to: ioctl(open("/proc/<pid>/ns/<kind>"), NS_GET_ID).
func NSID(pid, kind string) (uint64, error) { return nsID("/proc", pid, kind) }

func nsID(root, pid, kind string) (uint64, error) {
	fd, err := unix.Open(filepath.Join(root, pid, "ns", kind), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	var id uint64
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), nsGetID, uintptr(unsafe.Pointer(&id))); errno != 0 {
		return 0, errno
	}
	return id, nil
}

// NSInode reads the inode of pid's namespace of kind.
// Equivalent to: readlink /proc/<pid>/ns/<kind>.
func NSInode(pid, kind string) (uint64, error) { return readNS("/proc", pid, kind) }

// MountRootID reads the never-reused id of the mount whose root path is,
// when it is one (STATX_ATTR_MOUNT_ROOT) and its device is dev ("0:42"):
// false for a path whose mount is gone, which statx would answer with the
// mount beneath it.
func MountRootID(path, dev string) (uint64, bool) {
	var st unix.Statx_t
	err := unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW|unix.AT_NO_AUTOMOUNT, unix.STATX_MNT_ID_UNIQUE, &st)
	if err != nil || st.Mask&unix.STATX_MNT_ID_UNIQUE == 0 ||
		st.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT == 0 || st.Attributes&unix.STATX_ATTR_MOUNT_ROOT == 0 {
		return 0, false
	}
	return st.Mnt_id, devString(unix.Mkdev(st.Dev_major, st.Dev_minor)) == dev
}

// recKey is a recorded namespace by kind and inode.
type recKey struct {
	kind string
	ino  uint64
}

// records is what the tie records say, indexed for the scan: recorded
// namespaces by kind and inode -> id, recorded mounts by id -> device, and
// the recorded devices no mount of the harness's table shows any more
// (a detached run filesystem, held only by what has files open on it).
type records struct {
	list     []snapshots.TieRecord
	ns       map[recKey]uint64
	mnts     map[uint64]uint64
	detached map[uint64]uint64 // device -> the recorded mount id it was mounted as
	devs     map[uint64]bool   // detached's devices, as the maps reader takes them
	// inNS are the recorded mounts of a run's own mount namespaces
	// (RecordedMount.NS): what is held through them names a holder, not a
	// process of the run.
	inNS map[uint64]bool
}

// owns reports whether held ties its process to a run: something held
// other than through a mount of a run's own mount namespace.
func (r records) owns(held []snapshots.Held) bool {
	return slices.ContainsFunc(held, func(h snapshots.Held) bool { return h.Mnt == 0 || !r.inNS[h.Mnt] })
}

// readRecords reads every <run>.json in dir. A record that cannot be read
// leaves the capture incomplete: what it would tie cannot be ruled out.
func readRecords(dir string, roots snapshots.Roots, table *[]*mountinfo.Info, inc *incomplete) records {
	r := records{ns: map[recKey]uint64{}, mnts: map[uint64]uint64{}, detached: map[uint64]uint64{}, devs: map[uint64]bool{}, inNS: map[uint64]bool{}}
	if dir == "" {
		return r
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			inc.add("tie records %s: %v", dir, err)
		}
		return r
	}
	// What the table shows is read once, and only when a record names a
	// mount: a statx per table mount is the dearest part of a capture.
	var attached map[uint64]string
	var shown map[uint64]bool
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(path)
		var rec snapshots.TieRecord
		if err == nil {
			err = strictjson.Decode(b, &rec, path)
		}
		if err == nil && rec.Run+".json" != e.Name() {
			err = errors.New("its run " + strconv.Quote(rec.Run) + " is not its name's")
		}
		if err != nil {
			inc.add("tie record %s unreadable (%v): what it ties cannot be ruled out; remove it once nothing of its run is left", path, err)
			continue
		}
		r.list = append(r.list, rec)
		for _, n := range rec.NS {
			if n.ID != 0 {
				r.ns[recKey{n.Kind, n.Ino}] = n.ID
			}
		}
		for _, m := range rec.Mounts {
			dev, ok := parseDev(m.Dev)
			if m.ID == 0 || !ok {
				continue
			}
			if attached == nil {
				attached, shown = attachedOutside(roots, table), tableDevs(table)
			}
			if at, ok := attached[m.ID]; ok {
				// Never a run's: the harness's table mounts it outside
				// the state root. A record naming it is wrong, and would
				// tie every process that uses that filesystem.
				inc.note("tie record %s names mount id %d, which is mounted at %s outside the state root: not used", path, m.ID, at)
				continue
			}
			r.mnts[m.ID] = dev
			if m.NS != 0 {
				r.inNS[m.ID] = true
			}
			// A mapping names no mount: it is through the harness's
			// mount of its device when a record names one, as before
			// mounts of a run's own namespaces were recorded.
			if at, seen := r.detached[dev]; !shown[dev] && (!seen || (r.inNS[at] && m.NS == 0)) {
				r.detached[dev] = m.ID
				r.devs[dev] = true
			}
		}
	}
	return r
}

// held lists the files pid has open through a recorded mount (by the
// descriptor's own mount id, whatever its path says), its working or root
// directory there, and the mappings on a
// recorded device no mount shows any more. It reads nothing when no
// record names a mount.
// Equivalent to: statx(/proc/<pid>/{fd/<n>,cwd,root}, STATX_MNT_ID_UNIQUE).
func (r records) held(root string, pid int, fds []fdRef) []snapshots.Held {
	if len(r.mnts) == 0 {
		return nil
	}
	var out []snapshots.Held
	proc := filepath.Join(root, strconv.Itoa(pid))
	through := func(link, dir string) {
		var st unix.Statx_t
		if unix.Statx(unix.AT_FDCWD, filepath.Join(proc, link), 0, unix.STATX_INO|unix.STATX_MNT_ID_UNIQUE, &st) != nil ||
			st.Mask&unix.STATX_MNT_ID_UNIQUE == 0 {
			return
		}
		if _, ok := r.mnts[st.Mnt_id]; ok {
			h := snapshots.Held{Dev: devString(unix.Mkdev(st.Dev_major, st.Dev_minor)), Ino: st.Ino, Mnt: st.Mnt_id, Dir: dir}
			if !slices.Contains(out, h) {
				out = append(out, h)
			}
		}
	}
	for _, fd := range fds {
		through(filepath.Join("fd", fd.fd), "")
	}
	// A working or root directory pins its mount as a descriptor does.
	through("cwd", "cwd")
	through("root", "root")
	if len(r.devs) > 0 {
		for _, h := range mapped(root, pid, r.devs) {
			if dev, ok := parseDev(h.Dev); ok {
				h.Mnt = r.detached[dev]
			}
			if !slices.Contains(out, h) {
				out = append(out, h)
			}
		}
	}
	return out
}

// parseDev reads a device as mountinfo spells it ("0:42").
func parseDev(s string) (uint64, bool) {
	maj, min, ok := strings.Cut(s, ":")
	a, err1 := strconv.ParseUint(maj, 10, 32)
	b, err2 := strconv.ParseUint(min, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		return 0, false
	}
	return unix.Mkdev(uint32(a), uint32(b)), true
}

// attachedOutside gives the never-reused ids of the harness's mounts
// outside the state root, with where each is mounted. It reads nothing
// without a table.
func attachedOutside(roots snapshots.Roots, table *[]*mountinfo.Info) map[uint64]string {
	out := map[uint64]string{}
	if table == nil {
		return out
	}
	for _, i := range *table {
		if roots.InScope(i.Mountpoint) {
			continue
		}
		if id, err := uniqueMountID(i.Mountpoint); err == nil {
			if _, seen := out[id]; !seen {
				out[id] = i.Mountpoint
			}
		}
	}
	return out
}

// tableDevs gives the devices a mount table shows.
func tableDevs(table *[]*mountinfo.Info) map[uint64]bool {
	out := map[uint64]bool{}
	if table == nil {
		return out
	}
	for _, i := range *table {
		out[mkdev(i)] = true
	}
	return out
}

// NSMembers lists the pids of every process in the namespace of kind with
// inode ino (those whose namespace cannot be read are left out): who else
// is in a namespace before anything claims it.
// Equivalent to: lsns -t <kind> -p.
func NSMembers(kind string, ino uint64) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil || ino == 0 {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if got, err := readNS("/proc", e.Name(), kind); err == nil && got == ino {
			out = append(out, pid)
		}
	}
	return out
}

// NSMounts lists the mounts of pid's mount namespace (ns, its inode) that
// are a run's filesystem: a tmpfs or an overlay whose device is one of
// runDevs ("0:42") or that the harness's own table does not show (made in
// that namespace alone), each by the never-reused id statx gives through
// pid's root. A mount covered by another at its mount point is not seen
// there and not listed.
// Equivalent to: findmnt -N <pid> -t tmpfs,overlay, then
// statx(/proc/<pid>/root/<mount point>, STATX_MNT_ID_UNIQUE).
func NSMounts(pid int, ns uint64, runDevs map[string]bool) ([]snapshots.RecordedMount, error) {
	own, err := mountinfo.GetMounts(nil)
	if err != nil {
		return nil, err
	}
	shown := tableDevs(&own)
	proc := filepath.Join("/proc", strconv.Itoa(pid))
	f, err := os.Open(filepath.Join(proc, "mountinfo"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	infos, err := mountinfo.GetMountsFromReader(f, nil)
	if err != nil {
		return nil, err
	}
	var out []snapshots.RecordedMount
	for _, i := range infos {
		dev := devString(mkdev(i))
		if (i.FSType != "tmpfs" && i.FSType != "overlay") || (!runDevs[dev] && shown[mkdev(i)]) {
			continue
		}
		if id, ok := MountRootID(filepath.Join(proc, "root")+"/"+strings.TrimPrefix(i.Mountpoint, "/"), dev); ok {
			out = append(out, snapshots.RecordedMount{ID: id, Dev: dev, MountPoint: i.Mountpoint, NS: ns})
		}
	}
	return out, nil
}
