// Package reclaim is the harness's last resort after a window of a
// supervisor described as data: whatever the supervisor's own sweep left of
// the run is removed so the next window finds a clean host. It acts only on
// what the ownership rules tie to the run (the run's processes, mounts under
// its state dir, the host-global names its description claims, its
// cgroups), after every judged snapshot was taken; what it did is kept in
// the row and never counted as the supervisor's sweep.
package reclaim

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/internal/pidkill"
	"faultwin/snapshots"
	"faultwin/snapshots/host"
)

// Plan says what one reclaim may act on.
type Plan struct {
	Scope model.Scope
	Roots snapshots.Roots
	// EmptyTables ("ip nat") are deleted once no rule is left in them.
	EmptyTables []string
	// Sysctls are the values read at the window's preflight, restored when
	// they differ now (netavark turns ip_forward on and never back off).
	Sysctls map[string]string
	// RemoveStateDir removes the run's state dir once nothing is mounted
	// under it.
	RemoveStateDir bool
	// Names allows acting on the host-global names the roots claim (named
	// netns, links, chains, tables). Between windows the preflight proved
	// none existed before, so every match is the window's; outside a
	// window a match may be another user's, so it is only named.
	Names bool
}

// Run reclaims the run's leftovers. Errors are recorded, never fatal: the
// next window's preflight judges what is still there.
func Run(ctx context.Context, p Plan) model.Reclaim {
	var r model.Reclaim
	fail := func(format string, a ...any) { r.Errors = append(r.Errors, fmt.Sprintf(format, a...)) }
	s, err := host.Capture(ctx, "reclaim", p.Roots, snapshots.Decoys{})
	if err != nil {
		fail("reading host state: %v", err)
		return r
	}
	var killed []snapshots.Process
	for _, o := range criteria.OfRun(s, p.Scope, snapshots.Decoys{}) {
		if o.Process.Zombie() {
			continue
		}
		if err := KillExact(o.Process.ID()); err != nil {
			fail("pid %d (%s): %v", o.Process.PID, o.Process.Comm, err)
			continue
		}
		killed = append(killed, o.Process)
		r.Killed = append(r.Killed, model.Killed{PID: o.Process.ID(), Comm: o.Process.Comm, Why: strings.Join(o.Why, ", ")})
	}
	WaitGone(killed, 5*time.Second)
	if !p.Names {
		p.Roots.Netns, p.Roots.Links, p.Roots.Chains, p.EmptyTables = nil, nil, nil, nil
	}
	// CRIU killed mid-call leaves ".criu.*" dirs (some mounted) in the tmp
	// dir, which name no run; between windows the preflight proved there
	// were none, so these are the window's.
	hostNames(p, &r, fail)
	removeCgroups(s.Cgroups, p.Scope.Run, &r, fail)
	restoreSysctls(p.Sysctls, &r, fail)
	if p.RemoveStateDir && p.Scope.StateDir != "" && model.Within(p.Scope.StateDir, p.Scope.StateRoot) && p.Scope.StateDir != p.Scope.StateRoot {
		if left := mountedBelow(p.Scope.StateDir); len(left) > 0 {
			fail("state dir %s kept: still mounted below it: %s", p.Scope.StateDir, strings.Join(left, ", "))
		} else if err := os.RemoveAll(p.Scope.StateDir); err != nil {
			fail("state dir %s: %v", p.Scope.StateDir, err)
		} else {
			r.FilesRemoved = append(r.FilesRemoved, p.Scope.StateDir)
		}
	}
	return r
}

// hostNames unmounts under the run's state dir and the claimed netns, then
// removes the netns files, CRIU's tmp leftovers, the claimed bridges with
// their ports and the claimed chains (each only when p.Names).
func hostNames(p Plan, r *model.Reclaim, fail func(string, ...any)) {
	unmount(p, r, fail)
	for _, g := range p.Roots.Netns {
		files, _ := filepath.Glob(g)
		for _, f := range files {
			if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
				fail("netns %s: %v", f, err)
				continue
			}
			r.FilesRemoved = append(r.FilesRemoved, f)
		}
	}
	if p.Names {
		removeCRIUTmp(p.Roots.TmpDir, r, fail)
	}
	deleteLinks(p.Roots.Links, r, fail)
	deleteChains(p.Roots.Chains, p.EmptyTables, r, fail)
}

// Names removes only the host-global names roots claim, for `faultwin sweep
// --reclaim-names` when no run is left to tie them to (a harness killed
// between a window's sweep and its last resort).
func Names(roots snapshots.Roots, emptyTables []string) model.Reclaim {
	var r model.Reclaim
	fail := func(format string, a ...any) { r.Errors = append(r.Errors, fmt.Sprintf(format, a...)) }
	roots.TmpDir = "" // a CRIU tmp dir outside a window may be anyone's
	hostNames(Plan{Roots: roots, EmptyTables: emptyTables, Names: true}, &r, fail)
	return r
}

// unmount detaches every mount under the run's state dir and every named
// netns mount the description claims, deepest first, in the harness's own
// mount namespace (others went with the run's killed processes).
func unmount(p Plan, r *model.Reclaim, fail func(string, ...any)) {
	var targets []string
	for _, mp := range mountPoints() {
		if (p.Scope.StateDir != "" && model.Within(mp, p.Scope.StateDir)) || matchAny(p.Roots.Netns, mp) {
			targets = append(targets, mp)
		}
	}
	sort.Slice(targets, func(i, j int) bool { return len(targets[i]) > len(targets[j]) })
	for _, mp := range targets {
		if err := unix.Unmount(mp, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			fail("unmount %s: %v", mp, err)
			continue
		}
		r.Unmounted = append(r.Unmounted, mp)
	}
}

// mountPoints lists the mount points of the harness's mount namespace,
// repeated ones once per mount (stacked mounts need one unmount each).
func mountPoints() []string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 {
			out = append(out, unescape(f[4]))
		}
	}
	return out
}

func mountedBelow(dir string) []string {
	var out []string
	for _, mp := range mountPoints() {
		if model.Within(mp, dir) {
			out = append(out, mp)
		}
	}
	return out
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func matchAny(globs []string, name string) bool {
	return slices.ContainsFunc(globs, func(g string) bool { ok, _ := path.Match(g, name); return ok })
}

// removeCRIUTmp unmounts and removes CRIU's ".criu.*" leftovers of tmp.
func removeCRIUTmp(tmp string, r *model.Reclaim, fail func(string, ...any)) {
	if tmp == "" {
		return
	}
	entries, err := os.ReadDir(tmp)
	if err != nil {
		fail("tmp dir %s: %v", tmp, err)
		return
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), model.CRIUTmpPrefix) {
			continue
		}
		dir := filepath.Join(tmp, e.Name())
		below := mountedBelow(dir)
		sort.Slice(below, func(i, j int) bool { return len(below[i]) > len(below[j]) })
		for _, mp := range below {
			if err := unix.Unmount(mp, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
				fail("unmount %s: %v", mp, err)
				continue
			}
			r.Unmounted = append(r.Unmounted, mp)
		}
		if err := os.RemoveAll(dir); err != nil {
			fail("criu tmp %s: %v", dir, err)
			continue
		}
		r.FilesRemoved = append(r.FilesRemoved, dir)
	}
}

// removeCgroups removes the run's cgroup directories, deepest first.
func removeCgroups(cgs []string, run string, r *model.Reclaim, fail func(string, ...any)) {
	cgs = slices.Clone(cgs)
	sort.Slice(cgs, func(i, j int) bool { return len(cgs[i]) > len(cgs[j]) })
	for _, cg := range cgs {
		if got, ok := model.RunOfCgroup(cg); !ok || got != run {
			continue
		}
		if err := unix.Rmdir(cg); err != nil && !errors.Is(err, os.ErrNotExist) {
			fail("cgroup %s: %v", cg, err)
			continue
		}
		r.CgroupsRemoved = append(r.CgroupsRemoved, cg)
	}
}

func restoreSysctls(want map[string]string, r *model.Reclaim, fail func(string, ...any)) {
	for _, k := range slices.Sorted(maps.Keys(want)) {
		p := filepath.Join("/proc/sys", snapshots.SysctlPath(k))
		b, err := os.ReadFile(p)
		if err != nil {
			fail("sysctl %s: %v", k, err)
			continue
		}
		now := strings.TrimSpace(string(b))
		if now == want[k] {
			continue
		}
		if err := os.WriteFile(p, []byte(want[k]), 0o644); err != nil {
			fail("sysctl %s: %v", k, err)
			continue
		}
		r.SysctlsRestored = append(r.SysctlsRestored, k+" "+now+" -> "+want[k])
	}
}

// KillExact sends SIGKILL to id through a pidfd, after checking the pid
// still has id's start time, so a reused pid is never hit. A process that
// is gone already, or whose pid now names another, is not an error.
func KillExact(id model.PID) error {
	if err := pidkill.Kill(id, hostStat, 0).Err; err != nil && !pidkill.NotThere(err) {
		return err
	}
	return nil
}

// hostStat is host.StartState in pidkill's terms.
func hostStat(pid int) (pidkill.Stat, error) {
	start, state, err := host.StartState(pid)
	if err != nil {
		return pidkill.Stat{}, err
	}
	st := pidkill.Stat{Start: start}
	if state != "" {
		st.State = state[0]
	}
	return st, nil
}

// WaitGone waits, up to limit, until none of ps is alive; a zombie is dead
// already, its parent or init reaps it.
func WaitGone(ps []snapshots.Process, limit time.Duration) {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		alive := false
		for _, p := range ps {
			if st, state, err := host.StartState(p.PID); err == nil && st == p.StartTime && state != "Z" && state != "X" {
				alive = true
			}
		}
		if !alive {
			return
		}
	}
}
