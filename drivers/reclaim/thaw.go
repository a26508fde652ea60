package reclaim

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"faultwin/internal/model"
	"faultwin/snapshots"
	"faultwin/snapshots/host"
)

// ThawWait bounds how long the last resort waits for the cgroups it thawed
// to read THAWED. A v1 freezer thaws as its state is written; v2 reports
// "frozen 0" once every task has left the freezer.
const ThawWait = 2 * time.Second

// Thawing is what one thaw of runs' cgroups did: what it thawed, what it
// could not, and, for every frozen cgroup it met, what it did or why not,
// for the message of a process that outlives its SIGKILL.
type Thawing struct {
	Thawed []string // "<dir> (FROZEN)", "<dir> (cgroup.freeze 1)"
	Errors []string
	h      host.Host
	why    map[string]string // cgroup dir -> "thawed", or why it was not
}

// Thaw thaws the frozen cgroups of runs before their processes are killed:
// a process in a v1 freezer cgroup that is FROZEN takes no SIGKILL (it
// stays in state D until thawed), so a supervisor that froze its payload to
// checkpoint it and died would keep it forever. It thaws every cgroup of a
// run (<hierarchy>/faultwin/<run>/..., v1 freezer.state, v2 cgroup.freeze)
// frozen by its own setting, shallowest first, and every frozen cgroup one
// of procs is in (its /proc/<pid>/cgroup) when each task in it is one of
// procs. A cgroup holding any other task (a neighbour's paused container),
// or frozen through an ancestor that is not a run's, is not a run's: it
// is named and left frozen. Then it waits, up to wait, until each thawed
// cgroup reads THAWED.
func Thaw(h host.Host, runs []string, procs []snapshots.Process, wait time.Duration) Thawing {
	t := Thawing{h: h, why: map[string]string{}}
	ours := map[int]bool{}
	for _, p := range procs {
		ours[p.PID] = true
	}
	isRuns := func(dir string) bool {
		rel := strings.TrimPrefix(dir, filepath.Clean(h.CgroupRoot()))
		run, ok := model.RunOfCgroup(rel)
		return ok && slices.Contains(runs, run)
	}
	cands := map[string]host.Freezer{}
	all, gaps := h.Cgroups()
	for _, g := range gaps {
		t.Errors = append(t.Errors, "cgroups not fully read for the thaw: "+g)
	}
	for _, dir := range all {
		if !isRuns(dir) {
			continue
		}
		if f, ok, err := host.ReadFreezer(dir); err != nil {
			t.Errors = append(t.Errors, err.Error())
		} else if ok && f.Frozen() {
			cands[dir] = f
		}
	}
	for _, p := range procs {
		fs, _ := h.ProcFreezers(p.PID) // a process gone meanwhile needs no thaw
		for _, f := range fs {
			if !f.Frozen() || cands[f.Dir].Dir != "" {
				continue
			}
			if isRuns(f.Dir) {
				cands[f.Dir] = f
				continue
			}
			if !f.Self {
				if a, ok := h.FrozenAncestor(f); ok && isRuns(a.Dir) {
					cands[a.Dir] = a
					continue
				}
				t.why[f.Dir] = "not thawed: frozen through " + ancestorOf(h, f) + ", not a run's cgroup"
				continue
			}
			if other := foreignTask(f.Dir, ours); other != "" {
				t.why[f.Dir] = "not thawed: it holds pid " + other + ", not of the run (a neighbour's frozen cgroup stays frozen)"
				continue
			}
			cands[f.Dir] = f // it holds the run's processes alone
		}
	}
	dirs := slices.Collect(maps.Keys(cands))
	sort.Slice(dirs, func(i, j int) bool {
		if a, b := strings.Count(dirs[i], "/"), strings.Count(dirs[j], "/"); a != b {
			return a < b
		}
		return dirs[i] < dirs[j]
	})
	for _, dir := range dirs {
		f := cands[dir]
		if !f.Self {
			continue // an ancestor froze it: the ancestor's thaw, or none, decides
		}
		file, val := "freezer.state", "THAWED"
		if f.V2 {
			file, val = "cgroup.freeze", "0"
		}
		if err := os.WriteFile(filepath.Join(dir, file), []byte(val), 0o644); err != nil {
			t.why[dir] = "not thawed: " + err.Error()
			t.Errors = append(t.Errors, fmt.Sprintf("thawing cgroup %s: %v", f, err))
			continue
		}
		t.Thawed = append(t.Thawed, f.String())
	}
	t.wait(dirs, wait, isRuns)
	return t
}

// wait reads dirs until none is frozen or wait has passed, and records
// what each came to.
func (t *Thawing) wait(dirs []string, wait time.Duration, isRuns func(string) bool) {
	deadline := time.Now().Add(wait)
	for {
		var left []host.Freezer
		for _, dir := range dirs {
			if f, ok, err := host.ReadFreezer(dir); err == nil && ok && f.Frozen() {
				left = append(left, f)
			} else if _, said := t.why[dir]; !said {
				t.why[dir] = "thawed"
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, f := range left {
				if _, said := t.why[f.Dir]; said {
					continue // its write failed, said already
				}
				why := fmt.Sprintf("thawed, still %s %v later", f.State, wait)
				if a, ok := t.h.FrozenAncestor(f); ok && isRuns(a.Dir) {
					why = "not thawed: frozen through its ancestor " + a.String() + ", which the thaw could not thaw"
				} else if ok {
					why = "not thawed: frozen through its ancestor " + a.String() + ", not a run's cgroup"
				}
				t.why[f.Dir] = why
				t.Errors = append(t.Errors, fmt.Sprintf("cgroup %s %s", f.Dir, why))
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ancestorOf names the ancestor that froze f, or says none was found.
func ancestorOf(h host.Host, f host.Freezer) string {
	if a, ok := h.FrozenAncestor(f); ok {
		return "its ancestor " + a.String()
	}
	return "an ancestor"
}

// foreignTask returns a task in cgroup dir that is not one of ours, or ""
// when every task there is ours. Its tasks are read from cgroup.procs.
func foreignTask(dir string, ours map[int]bool) string {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return "(unknown: " + err.Error() + ")"
	}
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err != nil || !ours[pid] {
			return f
		}
	}
	return ""
}

// StillThere says why a process killed with SIGKILL is still there after
// wait: what the last resort and `faultwin sweep` record for it. A process
// in a frozen cgroup is named with the cgroup, and whether the thaw before
// the kill thawed it or why not.
func (t Thawing) StillThere(p snapshots.Process, wait time.Duration) string {
	_, state, _ := host.StartState(p.PID)
	head := fmt.Sprintf("pid %d (%s) still there %v after SIGKILL (state %s)", p.PID, p.Comm, wait, state)
	fs, _ := t.h.ProcFreezers(p.PID)
	var frozen []string
	for _, f := range fs {
		if !f.Frozen() {
			continue
		}
		why, ok := t.why[f.Dir]
		if !ok {
			why = "not thawed: the thaw did not meet it"
		}
		frozen = append(frozen, fmt.Sprintf("in frozen cgroup %s, %s", f, why))
	}
	if len(frozen) == 0 {
		return head + ": in uninterruptible sleep, in no frozen cgroup; wait, then `faultwin sweep`"
	}
	return head + ": " + strings.Join(frozen, "; ") + "; thaw it if it is yours (v1: echo THAWED > <cgroup>/freezer.state; v2: echo 0 > <cgroup>/cgroup.freeze), then `faultwin sweep`"
}
