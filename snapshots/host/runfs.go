package host

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"

	"faultwin/internal/model"
	"faultwin/snapshots"
)

// runFS is what a mount table says about a run's own filesystems: the
// devices of the tmpfs and overlay mounts made whole in scope, and the
// namespaces nsfs mounts in scope pin.
type runFS struct {
	devs map[uint64]bool   // unix.Mkdev of a run filesystem
	pins map[uint64]string // namespace inode an nsfs mount in scope pins -> kind
	// ids are the mount ids of the run filesystems' mounts in the harness's
	// table -> their device. A file opened through a run's overlay has the
	// lower or upper layer's device and inode, not the overlay's; the mount
	// its descriptor was opened through (fdinfo's mnt_id) is the overlay.
	ids map[int]uint64
	// at are the harness's own mount points of the run filesystems, in
	// scope or not: a descriptor of a process in the harness's mount
	// namespace whose path lies under none of them is on no run
	// filesystem, and is not stat'ed.
	at *[]string
	// table is the harness's own mount table as the scan read it, so the
	// mount capture does not parse it again; nil when unread.
	table *[]*mountinfo.Info
}

func newRunFS() runFS {
	return runFS{devs: map[uint64]bool{}, pins: map[uint64]string{}, ids: map[int]uint64{}, at: new([]string)}
}

// mayHold reports whether a descriptor whose path the harness reads as
// target can be on a run filesystem.
func (r runFS) mayHold(target string, ownMountNS bool) bool {
	if len(r.devs) == 0 {
		return false
	}
	return !ownMountNS || model.WithinAny(target, *r.at...)
}

// size counts what r knows, to tell whether a later table added anything.
func (r runFS) size() int { return len(r.devs) + len(r.pins) }

// add reads one mount namespace's whole table. A device counts when a
// tmpfs or overlay of it is mounted whole (root "/") in scope and, if the
// same table also mounts it outside scope, the mount in scope is the older
// one (by the kernel's never-reused mount id, read through at). So a
// host filesystem bound into a run's dir (the host's /run, say) never
// makes the host's own processes the run's, while the run's tmpfs bound
// elsewhere afterwards still ties whoever reaches it there. Without that
// id (kernel < 6.8) an ambiguous device does not count.
func (r runFS) add(infos []*mountinfo.Info, roots snapshots.Roots, at func(mountpoint string) string) {
	type seen struct{ in, out []string }
	byDev := map[uint64]*seen{}
	for _, i := range infos {
		if !roots.InScope(i.Mountpoint) {
			if d, ok := byDev[mkdev(i)]; ok {
				d.out = append(d.out, i.Mountpoint)
			} else {
				byDev[mkdev(i)] = &seen{out: []string{i.Mountpoint}}
			}
			continue
		}
		if i.FSType == "nsfs" {
			if kind, ino, ok := cutNSLink(i.Root); ok {
				r.pins[ino] = kind
			}
			continue
		}
		d := byDev[mkdev(i)]
		if d == nil {
			d = &seen{}
			byDev[mkdev(i)] = d
		}
		if (i.FSType == "tmpfs" || i.FSType == "overlay") && i.Root == "/" {
			d.in = append(d.in, i.Mountpoint)
		}
	}
	for dev, d := range byDev {
		if len(d.in) == 0 || r.devs[dev] {
			continue
		}
		if len(d.out) == 0 || firstMounted(d.in, d.out, at) {
			r.devs[dev] = true
		}
	}
}

// firstMounted reports whether one of in was mounted before every one of
// out, by the unique mount id statx gives (STATX_MNT_ID_UNIQUE).
func firstMounted(in, out []string, at func(string) string) bool {
	oldest := func(mps []string) (uint64, bool) {
		var min uint64
		for _, mp := range mps {
			id, err := uniqueMountID(at(mp))
			if err != nil {
				return 0, false
			}
			if min == 0 || id < min {
				min = id
			}
		}
		return min, min != 0
	}
	a, okIn := oldest(in)
	b, okOut := oldest(out)
	return okIn && okOut && a < b
}

func uniqueMountID(path string) (uint64, error) {
	var st unix.Statx_t
	err := unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW|unix.AT_NO_AUTOMOUNT, unix.STATX_MNT_ID_UNIQUE, &st)
	if err != nil {
		return 0, fmt.Errorf("statx %s: %w", path, err)
	}
	if st.Mask&unix.STATX_MNT_ID_UNIQUE == 0 {
		return 0, fmt.Errorf("statx %s: no unique mount id", path)
	}
	return st.Mnt_id, nil
}

func mkdev(i *mountinfo.Info) uint64 { return unix.Mkdev(uint32(i.Major), uint32(i.Minor)) }

// devString spells a device as mountinfo does ("0:42").
func devString(dev uint64) string {
	return strconv.FormatUint(uint64(unix.Major(dev)), 10) + ":" + strconv.FormatUint(uint64(unix.Minor(dev)), 10)
}

// cutNSLink splits a namespace as a link or an nsfs mount's root names it
// ("net:[4026532282]").
func cutNSLink(s string) (string, uint64, bool) {
	kind, rest, ok := strings.Cut(s, ":[")
	if !ok || !strings.HasSuffix(rest, "]") {
		return "", 0, false
	}
	n, err := strconv.ParseUint(strings.TrimSuffix(rest, "]"), 10, 64)
	return kind, n, err == nil
}

// readRunFS reads the harness's own mount table for the run filesystems
// the process scan must look for before any mount is captured.
func readRunFS(root string, roots snapshots.Roots) (runFS, error) {
	r := newRunFS()
	f, err := os.Open(root + "/self/mountinfo")
	if err != nil {
		return r, err
	}
	defer f.Close()
	infos, err := mountinfo.GetMountsFromReader(f, nil)
	if err != nil {
		return r, fmt.Errorf("parsing own mountinfo: %w", err)
	}
	r.table = &infos
	r.add(infos, roots, func(mp string) string { return mp })
	for _, i := range infos {
		if r.devs[mkdev(i)] {
			*r.at = append(*r.at, i.Mountpoint)
			r.ids[i.ID] = mkdev(i)
		}
	}
	return r, nil
}
