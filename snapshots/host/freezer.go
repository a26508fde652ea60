package host

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/prometheus/procfs"
)

// Freezer is one cgroup's freezer as its files say: cgroup v1's freezer
// controller (freezer.state THAWED, FREEZING or FROZEN) or cgroup v2's
// core files (cgroup.freeze, the cgroup's own setting, and cgroup.events'
// "frozen", what is in effect once an ancestor's setting is counted).
// A supervisor that pauses a task to checkpoint it and dies leaves it so.
type Freezer struct {
	Dir string // the cgroup's directory
	V2  bool
	// State is v1's freezer.state; v2's is "FROZEN" or "THAWED" as
	// cgroup.events says, or "FREEZING" while cgroup.freeze is 1 and
	// cgroup.events says "frozen 0".
	State string
	// Self says the cgroup is frozen by its own setting (v1
	// freezer.self_freezing 1, v2 cgroup.freeze 1): writing to it thaws
	// it. Frozen without it, an ancestor froze it.
	Self bool
}

// Frozen reports whether the cgroup's tasks are, or are being, frozen.
func (f Freezer) Frozen() bool { return f.State != "" && f.State != "THAWED" }

// String names the cgroup with what froze it: "<dir> (FROZEN)" for v1,
// "<dir> (cgroup.freeze 1)" for v2 frozen by its own setting.
func (f Freezer) String() string {
	switch {
	case !f.Frozen():
		return f.Dir + " (THAWED)"
	case f.V2 && f.Self:
		return f.Dir + " (cgroup.freeze 1)"
	case f.V2:
		return f.Dir + " (frozen 1 through an ancestor)"
	case f.Self:
		return f.Dir + " (" + f.State + ")"
	}
	return f.Dir + " (" + f.State + " through an ancestor)"
}

// ReadFreezer reads dir's freezer; ok is false when dir has none (a v1
// hierarchy without the freezer controller, or a cgroup gone).
// Equivalent to: cat freezer.state freezer.self_freezing, or cat
// cgroup.freeze cgroup.events.
func ReadFreezer(dir string) (f Freezer, ok bool, err error) {
	f.Dir = dir
	if st, err := os.ReadFile(filepath.Join(dir, "freezer.state")); err == nil {
		f.State = strings.TrimSpace(string(st))
		self, err := os.ReadFile(filepath.Join(dir, "freezer.self_freezing"))
		// The hierarchy's root has no self_freezing: it cannot be frozen.
		f.Self = err == nil && strings.TrimSpace(string(self)) == "1"
		return f, true, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return f, false, fmt.Errorf("reading %s: %w", filepath.Join(dir, "freezer.state"), err)
	}
	set, err := os.ReadFile(filepath.Join(dir, "cgroup.freeze"))
	if errors.Is(err, fs.ErrNotExist) {
		return f, false, nil
	}
	if err != nil {
		return f, false, fmt.Errorf("reading %s: %w", filepath.Join(dir, "cgroup.freeze"), err)
	}
	f.V2, f.Self = true, strings.TrimSpace(string(set)) == "1"
	ev, err := os.ReadFile(filepath.Join(dir, "cgroup.events"))
	if err != nil {
		return f, false, fmt.Errorf("reading %s: %w", filepath.Join(dir, "cgroup.events"), err)
	}
	f.State = "THAWED"
	for _, line := range strings.Split(string(ev), "\n") {
		if strings.TrimSpace(line) == "frozen 1" {
			f.State = "FROZEN"
		}
	}
	if f.Self && f.State == "THAWED" {
		f.State = "FREEZING" // asked to freeze, not all of its tasks are yet
	}
	return f, true, nil
}

// ProcFreezers returns the freezers of the cgroups pid is in, read from
// <proc>/<pid>/cgroup: the v1 hierarchy holding the freezer controller
// (mounted at <cgroup>/<its controllers>, or <cgroup>/freezer when
// co-mounted under a link) and the v2 hierarchy (<cgroup> on a v2 host,
// <cgroup>/unified on a hybrid one), each where its directory has a
// freezer. A line "0::/faultwin/r1/fw1" names v2's cgroup.
// Equivalent to: cat /proc/<pid>/cgroup, then ReadFreezer of each.
func (h Host) ProcFreezers(pid int) ([]Freezer, error) {
	pfs, err := procfs.NewFS(h.procRoot())
	if err != nil {
		return nil, err
	}
	pr, err := pfs.Proc(pid)
	if err != nil {
		return nil, err
	}
	cgs, err := pr.Cgroups()
	if err != nil {
		return nil, err
	}
	root := h.cgroupRoot()
	var out []Freezer
	var errs []error
	for _, cg := range cgs {
		var dirs []string
		switch {
		case cg.HierarchyID == 0 && len(cg.Controllers) == 0:
			dirs = []string{filepath.Join(root, "unified", cg.Path), filepath.Join(root, cg.Path)}
		case slices.Contains(cg.Controllers, "freezer"):
			dirs = []string{filepath.Join(root, strings.Join(cg.Controllers, ","), cg.Path), filepath.Join(root, "freezer", cg.Path)}
		default:
			continue
		}
		for _, d := range dirs {
			if d == root {
				continue // the root cgroup cannot be frozen
			}
			f, ok, err := ReadFreezer(d)
			if err != nil {
				errs = append(errs, err)
			}
			if ok {
				out = append(out, f)
				break
			}
		}
	}
	return out, errors.Join(errs...)
}

// CgroupRoot is where h reads the cgroup hierarchies.
func (h Host) CgroupRoot() string { return h.cgroupRoot() }

// FrozenAncestor returns the nearest ancestor of f below the cgroup root
// frozen by its own setting: what froze f when f is frozen only through
// one.
func (h Host) FrozenAncestor(f Freezer) (Freezer, bool) {
	root := h.cgroupRoot()
	for dir := filepath.Dir(f.Dir); dir != root && len(dir) > len(root) && dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		a, ok, err := ReadFreezer(dir)
		if err != nil || !ok {
			return Freezer{}, false
		}
		if a.Self && a.Frozen() {
			return a, true
		}
	}
	return Freezer{}, false
}

// Cgroups lists, as a capture does, the cgroup directories of any faultwin
// run or named for CRIU under h's cgroup root, read now, and what could
// not be read.
func (h Host) Cgroups() ([]string, []string) {
	inc := &incomplete{}
	out := captureCgroups(h.cgroupRoot(), inc)
	return out, inc.list()
}
