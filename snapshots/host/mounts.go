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
func captureMounts(root string, self selfNS, procs []snapshots.Process, roots snapshots.Roots, decoys snapshots.Decoys, inc *incomplete) []snapshots.Mount {
	decoy := map[string]bool{}
	for _, d := range decoys.Mounts {
		decoy[filepath.Clean(d)] = true
	}
	out := []snapshots.Mount{}
	host, err := readMounts(filepath.Join(root, "self", "mountinfo"), roots, decoy)
	if err != nil {
		inc.add("mounts: own namespace: %v", err)
	}
	for _, m := range host {
		m.NS = self.mnt
		out = append(out, m)
	}

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
		ms, err := readMounts(filepath.Join(root, strconv.Itoa(p.PID), "mountinfo"), roots, decoy)
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
// roots.Netns glob (it pins its namespace after the run is gone).
func readMounts(path string, roots snapshots.Roots, decoy map[string]bool) ([]snapshots.Mount, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	infos, err := mountinfo.GetMountsFromReader(f, func(i *mountinfo.Info) (skip, stop bool) {
		keep := roots.InScope(i.Mountpoint) || decoy[i.Mountpoint] ||
			strings.Contains(i.Mountpoint, model.CgyardMarker) ||
			strings.Contains(i.Source, model.CgyardMarker) ||
			matchAny(roots.Netns, i.Mountpoint)
		return !keep, false
	})
	if err != nil {
		return nil, err
	}
	out := make([]snapshots.Mount, 0, len(infos))
	for _, i := range infos {
		out = append(out, snapshots.Mount{
			ID: i.ID, Parent: i.Parent, MountPoint: i.Mountpoint, FSType: i.FSType,
			Source: i.Source, Decoy: decoy[i.Mountpoint],
		})
	}
	return out, nil
}
