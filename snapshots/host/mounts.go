package host

import (
	"cmp"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/moby/sys/mountinfo"
	"github.com/prometheus/procfs"

	"faultwin/internal/model"
	"faultwin/snapshots"
)

// captureMounts lists the mounts in scope: those of the harness's own mount
// namespace, then, once per foreign mount namespace, those seen through an
// in-scope process living there. Sorted host first, then by namespace,
// mount point and id.
// Equivalent to: findmnt -rn -o ID,PARENT,TARGET,FSTYPE,SOURCE [-N <pid>].
//
// Every table read adds to fs the run filesystems and pins it shows; a
// mount of a run filesystem gets its Dev.
func captureMounts(root string, self selfNS, procs []snapshots.Process, roots snapshots.Roots, decoys snapshots.Decoys, fs runFS, inc *incomplete) []snapshots.Mount {
	decoy := map[string]bool{}
	for _, d := range decoys.Mounts {
		decoy[filepath.Clean(d)] = true
	}
	out := []snapshots.Mount{}
	var devs []uint64 // out[i]'s device
	var host []snapshots.Mount
	var hostDevs []uint64
	var err error
	if fs.table != nil {
		host, hostDevs = keepMounts(*fs.table, roots, decoy) // read once, by the process scan
	} else if host, hostDevs, _, err = readMounts(filepath.Join(root, "self", "mountinfo"), roots, decoy); err != nil {
		inc.add("mounts: own namespace: %v", err)
	}
	for _, m := range host {
		m.NS = self.mnt
		out = append(out, m)
	}
	devs = append(devs, hostDevs...)

	// One process per foreign namespace is enough; if it exits before its
	// mountinfo is read, the next one in that namespace is tried.
	done := map[uint64]bool{}
	failed := map[uint64]error{}
	// exited counts, per namespace, the processes whose read failed because
	// they had exited since the process scan; read is every failed read.
	exited, read := map[uint64]int{}, map[uint64]int{}
	for _, p := range procs {
		ns := p.NS["mnt"]
		if ns == 0 || ns == self.mnt || done[ns] {
			continue
		}
		ms, msDevs, all, err := readMounts(filepath.Join(root, strconv.Itoa(p.PID), "mountinfo"), roots, decoy)
		if err != nil {
			failed[ns] = err
			read[ns]++
			if exitedSince(root, p) {
				exited[ns]++
			}
			continue
		}
		done[ns] = true
		delete(failed, ns)
		for _, m := range ms {
			m.NS, m.Foreign, m.SeenVia = ns, true, p.PID
			out = append(out, m)
		}
		devs = append(devs, msDevs...)
		procRoot := filepath.Join(root, strconv.Itoa(p.PID), "root")
		fs.add(all, roots, func(mp string) string { return procRoot + mp })
	}
	for i := range out {
		if fs.devs[devs[i]] {
			out[i].Dev = devString(devs[i])
		}
	}
	for _, ns := range slices.Sorted(maps.Keys(failed)) {
		if exited[ns] == read[ns] {
			// Every process seen there exited between the scan and this
			// read: the namespace is now as unreadable as one no process
			// of the scope lives in, and its mounts went with its last
			// process unless something else pins it.
			inc.note("mounts: mount namespace %d: every in-scope process there (%d) exited during the capture (%v)",
				ns, read[ns], failed[ns])
			continue
		}
		inc.add("mounts: mount namespace %d: %v", ns, failed[ns])
	}
	slices.SortFunc(out, func(a, b snapshots.Mount) int {
		if a.Foreign != b.Foreign {
			if a.Foreign {
				return 1
			}
			return -1
		}
		return cmp.Or(cmp.Compare(a.NS, b.NS), strings.Compare(a.MountPoint, b.MountPoint), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// exitedSince reports whether p, alive at the process scan, is gone,
// reaped and replaced, a zombie or exiting now: a mountinfo read then fails
// for that reason (EINVAL once the task has left its namespaces).
func exitedSince(root string, p snapshots.Process) bool {
	pr, err := procfs.NewFS(root)
	if err != nil {
		return false
	}
	proc, err := pr.Proc(p.PID)
	if err != nil {
		return gone(err)
	}
	st, err := proc.Stat()
	if err != nil {
		return gone(err)
	}
	return st.Starttime != p.StartTime || st.State == "Z" || st.State == "X" || st.Flags&pfExiting != 0
}

// readMounts parses one mountinfo file and keeps the mounts in scope: a
// mount point under the roots or a CRIU leftover, a cgroup yard by mount
// point or source, an exact decoy path, or a named netns matching a
// roots.Netns glob (it pins its namespace after the run is gone). It also
// returns each kept mount's device and the whole table, which tells a run
// filesystem from a host one bound into scope (runFS.add).
func readMounts(path string, roots snapshots.Roots, decoy map[string]bool) ([]snapshots.Mount, []uint64, []*mountinfo.Info, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, nil, err
	}
	defer f.Close()
	all, err := mountinfo.GetMountsFromReader(f, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	out, devs := keepMounts(all, roots, decoy)
	return out, devs, all, nil
}

// keepMounts keeps the mounts of a table that are in scope, with their
// devices.
func keepMounts(all []*mountinfo.Info, roots snapshots.Roots, decoy map[string]bool) ([]snapshots.Mount, []uint64) {
	var out []snapshots.Mount
	var devs []uint64
	for _, i := range all {
		keep := roots.InScope(i.Mountpoint) || decoy[i.Mountpoint] ||
			strings.Contains(i.Mountpoint, model.CgyardMarker) ||
			strings.Contains(i.Source, model.CgyardMarker) ||
			matchAny(roots.Netns, i.Mountpoint)
		if !keep {
			continue
		}
		m := snapshots.Mount{
			ID: i.ID, Parent: i.Parent, MountPoint: i.Mountpoint, FSType: i.FSType,
			Source: i.Source, Decoy: decoy[i.Mountpoint],
		}
		if i.FSType == "nsfs" {
			m.Pins = i.Root
		}
		out = append(out, m)
		devs = append(devs, mkdev(i))
	}
	return out, devs
}
