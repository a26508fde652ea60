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
	// Cgroup is the cgroup root the run's cgroups are thawed and removed
	// under, "/sys/fs/cgroup" when empty.
	Cgroup string
}

// killRounds bounds how often the last resort reads the host again for
// processes of the run: a supervisor's helper killed late (a shim) may have
// started a child the first read did not show.
const killRounds = 3

// killWait bounds how long each round waits for what it killed to be gone.
const killWait = 5 * time.Second

// Run reclaims the run's leftovers. Errors are recorded, never fatal: the
// judge of a clean host (Judge) decides afterwards what is still there.
func Run(ctx context.Context, p Plan) model.Reclaim {
	var r model.Reclaim
	fail := func(format string, a ...any) { r.Errors = append(r.Errors, fmt.Sprintf(format, a...)) }
	if err := killRun(ctx, p, &r, fail); err != nil {
		fail("reading host state: %v", err)
		return r
	}
	var own owned
	if p.Names {
		var err error
		if own, err = ownedNow(ctx, p.Roots, p.Scope.Run); err != nil {
			fail("reading host state: %v", err)
		}
		// CRIU killed mid-call leaves ".criu.*" dirs (some mounted) in the
		// tmp dir, which name no run; between windows the preflight
		// proved there were none, so these are the window's.
		removeCRIUTmp(p.Roots.TmpDir, &r, fail)
	}
	hostNames(p.Scope.StateDir, own, p.EmptyTables, &r, fail)
	removeCgroups(host.Host{Cgroup: p.Cgroup}, p.Scope.Run, cgroupWait, &r, fail)
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

// owned is what a capture shows under the host-global names that a run's
// record claims (snapshots.Claim), each as the capture saw it.
type owned struct {
	netns   []string // named netns mount points
	links   []snapshots.Link
	sockets []snapshots.Socket
	state   []snapshots.File
	nft     map[string]string // claimed chains and tables: key -> identity
}

// ownedNow reads the host and keeps what run's record claims (any run's
// when run is ""). Nothing is the run's by its name alone.
func ownedNow(ctx context.Context, roots snapshots.Roots, run string) (owned, error) {
	var o owned
	s, err := host.Capture(ctx, "reclaim", roots, snapshots.Decoys{})
	if err != nil {
		return o, err
	}
	claimed := func(key, id string) bool {
		if run == "" {
			_, _, ok := snapshots.ClaimOf(s.Records, key, id)
			return ok
		}
		return snapshots.ClaimedBy(s.Records, run, key, id)
	}
	for _, m := range s.Mounts {
		mp := strings.TrimSuffix(m.MountPoint, "/")
		if !m.Foreign && matchAny(roots.Netns, mp) && claimed("mount "+mp, snapshots.MountID(m)) && !slices.Contains(o.netns, mp) {
			o.netns = append(o.netns, mp)
		}
	}
	for _, l := range s.Links {
		if claimed("link "+l.Name, snapshots.LinkID(l)) {
			o.links = append(o.links, l)
		}
	}
	for _, so := range s.Sockets {
		if claimed("socket "+so.Path, so.Inode) {
			o.sockets = append(o.sockets, so)
		}
	}
	for _, f := range s.State {
		if claimed("state "+strings.TrimSuffix(f.Path, "/"), f.Inode) {
			o.state = append(o.state, f)
		}
	}
	o.nft = map[string]string{}
	for _, rec := range s.Records {
		if run != "" && rec.Run != run {
			continue
		}
		for _, c := range rec.Claims {
			if strings.HasPrefix(c.Key, "chain ") || strings.HasPrefix(c.Key, "table ") {
				o.nft[c.Key] = c.ID
			}
		}
	}
	return o, nil
}

// hostNames unmounts under the run's state dir and the claimed netns, then
// removes the netns files, the claimed links, stale sockets, state entries,
// chains and emptied tables.
func hostNames(stateDir string, own owned, emptyTables []string, r *model.Reclaim, fail func(string, ...any)) {
	unmount(stateDir, own.netns, r, fail)
	for _, f := range own.netns {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			fail("netns %s: %v", f, err)
			continue
		}
		r.FilesRemoved = append(r.FilesRemoved, f)
	}
	deleteLinks(own.links, r, fail)
	removeStaleSockets(own.sockets, r, fail)
	removeStateEntries(own.state, r, fail)
	deleteChains(own.nft, emptyTables, r, fail)
}

// Names removes only what a run's record claims under the host-global
// names, for `faultwin sweep --reclaim-names` when no run is left to tie
// them to (a harness killed between a window's sweep and its last resort).
// What no record claims is someone else's and is never touched.
func Names(roots snapshots.Roots, emptyTables []string) model.Reclaim {
	var r model.Reclaim
	fail := func(format string, a ...any) { r.Errors = append(r.Errors, fmt.Sprintf(format, a...)) }
	own, err := ownedNow(context.Background(), roots, "")
	if err != nil {
		fail("reading host state: %v", err)
		return r
	}
	hostNames("", own, emptyTables, &r, fail)
	return r
}

// unmount detaches every mount under the run's state dir and every claimed
// named netns mount, deepest first, in the harness's own mount namespace
// (others went with the run's killed processes).
func unmount(stateDir string, netns []string, r *model.Reclaim, fail func(string, ...any)) {
	var targets []string
	for _, mp := range mountPoints() {
		if (stateDir != "" && model.Within(mp, stateDir)) || slices.Contains(netns, mp) {
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

// killRun kills every live process the ownership rules tie to the run and
// waits until each is gone, reading the host again until a read finds none
// (or killRounds reads were made). Before each round's kill it thaws the
// run's frozen cgroups (Thaw), whose tasks would take no SIGKILL. A
// process that outlives its SIGKILL (uninterruptible sleep, a frozen
// cgroup) is recorded with its state and its frozen cgroups.
func killRun(ctx context.Context, p Plan, r *model.Reclaim, fail func(string, ...any)) error {
	for round := 0; round < killRounds; round++ {
		s, err := host.Capture(ctx, "reclaim", p.Roots, snapshots.Decoys{})
		if err != nil {
			return err
		}
		owned := criteria.OfRun(s, p.Scope, snapshots.Decoys{})
		procs := make([]snapshots.Process, len(owned))
		for i, o := range owned {
			procs[i] = o.Process
		}
		th := Thaw(host.Host{Cgroup: p.Cgroup}, []string{p.Scope.Run}, procs, ThawWait)
		for _, t := range th.Thawed {
			if !slices.Contains(r.Thawed, t) {
				r.Thawed = append(r.Thawed, t)
			}
		}
		for _, e := range th.Errors {
			fail("%s", e)
		}
		var killed []snapshots.Process
		for _, o := range owned {
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
		if len(killed) == 0 {
			return nil
		}
		if alive := WaitGone(killed, killWait); len(alive) > 0 {
			for _, a := range alive {
				fail("%s", th.StillThere(a, killWait))
			}
			return nil
		}
	}
	return nil
}

// cgroupWait bounds how long the last resort keeps removing the run's
// cgroups: an rmdir fails with EBUSY while a task not yet reaped is in it.
const cgroupWait = 3 * time.Second

// removeStaleSockets removes the claimed sockets that no process listens
// on, each only while its inode is the one claimed: a server killed
// without unlinking its socket (a shim) left them, and no one can connect
// to them again. A socket a process listens on is never touched.
func removeStaleSockets(socks []snapshots.Socket, r *model.Reclaim, fail func(string, ...any)) {
	for _, s := range socks {
		if s.Listening || !sameInode(s.Path, s.Inode) {
			continue
		}
		if err := os.Remove(s.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
			fail("socket %s: %v", s.Path, err)
			continue
		}
		r.FilesRemoved = append(r.FilesRemoved, s.Path)
	}
}

// removeStateEntries removes the claimed state entries outside the state
// root (a killed shim's fifos), each only while its inode is the one
// claimed; the run's own go with its state dir. A socket is
// removeStaleSockets's, which never touches one a process listens on.
func removeStateEntries(files []snapshots.File, r *model.Reclaim, fail func(string, ...any)) {
	for _, f := range files {
		if f.Kind == "socket" || !sameInode(f.Path, f.Inode) {
			continue
		}
		if err := os.RemoveAll(f.Path); err != nil {
			fail("state entry %s: %v", f.Path, err)
			continue
		}
		r.FilesRemoved = append(r.FilesRemoved, f.Path)
	}
}

// sameInode reports whether path is still the file with identity inode.
func sameInode(path, inode string) bool {
	fi, err := os.Lstat(path)
	return err == nil && inode != "" && host.InodeOf(fi) == inode
}

// removeCgroups removes the run's cgroup directories in every hierarchy,
// deepest first, reading the hierarchies again after each pass until none
// of the run's is left or wait has passed; what is left then is recorded
// with why (the rmdir's error and the tasks still in it).
func removeCgroups(h host.Host, run string, wait time.Duration, r *model.Reclaim, fail func(string, ...any)) {
	if run == "" {
		return
	}
	deadline := time.Now().Add(wait)
	for {
		all, gaps := h.Cgroups()
		cgs := slices.DeleteFunc(all, func(cg string) bool { got, ok := model.RunOfCgroup(cg); return !ok || got != run })
		if len(cgs) == 0 {
			return
		}
		sort.SliceStable(cgs, func(i, j int) bool { return strings.Count(cgs[i], "/") > strings.Count(cgs[j], "/") })
		left := map[string]error{}
		for _, cg := range cgs {
			if err := unix.Rmdir(cg); err != nil && !errors.Is(err, os.ErrNotExist) {
				left[cg] = err
				continue
			}
			r.CgroupsRemoved = append(r.CgroupsRemoved, cg)
		}
		if len(left) == 0 && len(gaps) == 0 {
			continue // read again: a pass may uncover nothing new, or what a late task made
		}
		if time.Now().After(deadline) {
			for _, g := range gaps {
				fail("cgroups not fully read: %s", g)
			}
			for _, cg := range slices.Sorted(maps.Keys(left)) {
				fail("cgroup %s: %v%s", cg, left[cg], cgroupTasks(cg))
			}
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Cgroups removes run's cgroups alone, as Run does, for `faultwin sweep`
// on a run whose state dir is gone.
func Cgroups(run string) model.Reclaim {
	var r model.Reclaim
	removeCgroups(host.Host{}, run, cgroupWait, &r, func(format string, a ...any) { r.Errors = append(r.Errors, fmt.Sprintf(format, a...)) })
	return r
}

// cgroupTasks names the tasks still in cg, for the error that says why it
// could not be removed.
func cgroupTasks(cg string) string {
	b, err := os.ReadFile(filepath.Join(cg, "cgroup.procs"))
	if err != nil {
		return ""
	}
	pids := strings.Fields(string(b))
	if len(pids) == 0 {
		ents, _ := os.ReadDir(cg)
		for _, e := range ents {
			if e.IsDir() {
				return " (no task in it; its child cgroup " + e.Name() + " is still there)"
			}
		}
		return " (no task in it: a task being torn down holds it)"
	}
	return " (tasks still in it: " + strings.Join(pids, " ") + ")"
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

// WaitGone waits, up to limit, until none of ps is alive, and returns the
// ones still alive then. Each is watched through a pidfd, which turns
// readable when its process exits; a zombie is dead already, its parent or
// init reaps it.
func WaitGone(ps []snapshots.Process, limit time.Duration) []snapshots.Process {
	ids := make([]model.PID, len(ps))
	for i, p := range ps {
		ids[i] = p.ID()
	}
	alive := pidkill.WaitAll(ids, hostStat, limit)
	var out []snapshots.Process
	for _, p := range ps {
		if slices.Contains(alive, p.ID()) {
			out = append(out, p)
		}
	}
	return out
}
