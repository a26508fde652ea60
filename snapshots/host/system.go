package host

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"faultwin/internal/model"
	"faultwin/snapshots"
)

// cgroupPrefixes start the names of the cgroup directories a capture lists.
var cgroupPrefixes = []string{"faultwin", "criu"}

// cgroupDepth bounds the walk below each hierarchy of the cgroup root;
// runCgroupDepth bounds it inside a run's own cgroup, where a runtime may
// nest as deep as it likes.
const (
	cgroupDepth    = 3
	runCgroupDepth = 32
)

// captureSysctls reads each of names (slash or dotted form) from
// <proc>/sys, keyed by snapshots.SysctlKey (dotted, "net.ipv4.ip_forward"),
// the value with surrounding white space trimmed.
// Equivalent to: sysctl -n net.ipv4.ip_forward.
func captureSysctls(procRoot string, names []string, inc *incomplete) map[string]string {
	out := make(map[string]string, len(names))
	for _, name := range names {
		rel := snapshots.SysctlPath(name)
		b, err := os.ReadFile(filepath.Join(procRoot, "sys", rel))
		if err != nil {
			inc.add("sysctl %s: %v", snapshots.SysctlKey(rel), err)
			continue
		}
		out[snapshots.SysctlKey(rel)] = strings.TrimSpace(string(b))
	}
	return out
}

// captureCgroups lists the cgroup directories named for faultwin or CRIU
// up to cgroupDepth below each hierarchy mounted under root (cgroup v1: one
// per controller; v2: root itself holds the top-level cgroups), and every
// directory inside a run's cgroup at any depth up to runCgroupDepth, sorted.
// A runtime nests its own cgroups inside the one it is given (containerd's
// shim puts a sandbox's below a container's), and a nested one left in a
// single hierarchy keeps its parent from being removed: it must be seen
// to be named. Symbolic links between co-mounted controllers are not
// followed, so a hierarchy is walked once.
// Equivalent to: find /sys/fs/cgroup/*/ -maxdepth 3 -type d \( -name 'faultwin*' -o -name 'criu*' \), plus find on each run's cgroup.
func captureCgroups(root string, inc *incomplete) []string {
	out := []string{}
	hier, err := readDir(root)
	if err != nil {
		inc.add("cgroups: %v", err)
	}
	var visit func(dir string, depth int)
	visit = func(dir string, depth int) {
		ents, err := readDir(dir)
		if err != nil {
			inc.add("cgroups: %v", err)
		}
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			path := filepath.Join(dir, e.Name())
			name := e.Name()
			named := slices.ContainsFunc(cgroupPrefixes, func(p string) bool { return strings.HasPrefix(name, p) })
			inRun := model.InRunCgroup(strings.TrimPrefix(path, root))
			if named || inRun {
				out = append(out, path)
			}
			switch {
			case inRun && depth < runCgroupDepth:
				visit(path, depth+1)
			case depth < cgroupDepth:
				visit(path, depth+1)
			}
		}
	}
	for _, h := range hier {
		if !h.IsDir() {
			continue
		}
		path := filepath.Join(root, h.Name())
		if name := h.Name(); slices.ContainsFunc(cgroupPrefixes, func(p string) bool { return strings.HasPrefix(name, p) }) {
			out = append(out, path) // cgroup v2: a top-level cgroup of ours
		}
		visit(path, 1)
	}
	slices.Sort(out)
	return out
}

// Cgroups lists, as a capture does, the cgroup directories of any faultwin
// run or named for CRIU under the real cgroup root, read now. The last
// resort rereads it after each removal pass, since a runtime killed late
// may leave a nested cgroup the first read did not show.
func Cgroups() ([]string, []string) {
	return Host{}.Cgroups()
}
