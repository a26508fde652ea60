package hostview

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// CgroupRoot is where the cgroup hierarchies are mounted.
var CgroupRoot = "/sys/fs/cgroup"

// Frozen reports whether pid's cgroup is frozen: the v1 freezer's
// freezer.state says FROZEN, or the v2 cgroup.events says "frozen 1". A
// frozen workload has its processes and runs none of them: a supervisor
// that pauses a task for a checkpoint and dies leaves it so, and a list
// that says "running" then lies where a process count cannot tell.
func Frozen(pid int) bool {
	b, err := os.ReadFile(filepath.Join(ProcRoot, strconv.Itoa(pid), "cgroup"))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[1] == "" && parts[0] == "0":
			for _, root := range []string{filepath.Join(CgroupRoot, "unified"), CgroupRoot} {
				if ev, err := os.ReadFile(filepath.Join(root, parts[2], "cgroup.events")); err == nil {
					if strings.Contains(string(ev), "frozen 1") {
						return true
					}
					break
				}
			}
		case hasController(parts[1], "freezer"):
			st, err := os.ReadFile(filepath.Join(CgroupRoot, "freezer", parts[2], "freezer.state"))
			if err == nil && strings.TrimSpace(string(st)) == "FROZEN" {
				return true
			}
		}
	}
	return false
}

func hasController(list, c string) bool {
	for _, x := range strings.Split(list, ",") {
		if x == c {
			return true
		}
	}
	return false
}
