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

// cgroupDepth bounds the walk below each hierarchy of the cgroup root.
const cgroupDepth = 3

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
// per controller; v2: root itself holds the top-level cgroups), sorted.
// Symbolic links between co-mounted controllers are not followed, so a
// hierarchy is walked once.
// Equivalent to: find /sys/fs/cgroup/*/ -maxdepth 3 -type d \( -name 'faultwin*' -o -name 'criu*' \).
func captureCgroups(root string, inc *incomplete) []string {
	out := []string{}
	hier, err := readDir(root)
	if err != nil {
		inc.add("cgroups: %v", err)
	}
	keep := func(path string, t os.FileMode) {
		name := filepath.Base(path)
		named := slices.ContainsFunc(cgroupPrefixes, func(p string) bool { return strings.HasPrefix(name, p) })
		if t.IsDir() && (named || model.InRunCgroup(strings.TrimPrefix(path, root))) {
			out = append(out, path)
		}
	}
	for _, h := range hier {
		if !h.IsDir() {
			continue
		}
		path := filepath.Join(root, h.Name())
		keep(path, h.Type())
		walk(path, cgroupDepth, inc, "cgroups", keep)
	}
	slices.Sort(out)
	return out
}
