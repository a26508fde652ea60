package criteria

import (
	"strconv"
	"strings"

	"faultwin/internal/model"
	"faultwin/snapshots"
)

var _ = register(model.P2, "no mount of the run is left", p2)

// p2 holds when, after both sweeps, nothing is mounted under the run's state
// dir, under any other non-decoy path of the state root, in CRIU's
// /tmp/.criu.* staging dirs or at a named netns the driver declares
// (Roots.Netns), and no such staging dir is left, and no process outside
// the run holds a mount of the run's own mount namespace (holders.go). Mounts seen only inside a
// foreign mount namespace count: a session that outlived the sweep can pin
// them where the host cannot see. A named netns mount pins its namespace,
// and with it the namespace's links and tables, after the run is gone.
// Findings the supervisor keeps by design (Roots.Shared) are noted only.
func p2(c *ctx) Result {
	j := &judge{id: model.P2}
	j.gap(snapshotGaps(c.afterSweeps()...)...)
	j.gap(scopeGaps(c.in.Scope, needStateDir)...)
	j.gap(c.rootGaps()...)
	found, gaps := collect(c.afterSweeps(), c.runMounts)
	j.gap(gaps...)
	own, kept := splitShared(c.in.Roots, found)
	for _, f := range own {
		j.fail(f.lineIn())
	}
	for _, f := range kept {
		j.note(keptNote(f))
	}
	return j.result("nothing mounted under the state root or /tmp/.criu.* after the sweeps",
		func(n int) string {
			return plural(n, "mount or criu tmp dir", "mounts or criu tmp dirs") + " left after the sweeps"
		})
}

// rootGaps reports the roots P2 needs and cannot use.
func (c *ctx) rootGaps() []string {
	var gaps []string
	if !usableDir(cleanPath(c.sc.StateRoot)) {
		gaps = append(gaps, "no usable state root: "+strconv.Quote(c.sc.StateRoot))
	}
	if !usableDir(cleanPath(c.in.Roots.TmpDir)) {
		gaps = append(gaps, "no usable tmp dir: "+strconv.Quote(c.in.Roots.TmpDir))
	}
	return append(gaps, globGaps(c.in.Roots, "netns", "shared")...)
}

// runMounts finds non-decoy mounts under the state dir or state root, in
// CRIU's tmp dirs or at a declared named netns (one finding per mount point,
// host or foreign) and CRIU's leftover tmp entries.
func (c *ctx) runMounts(s snapshots.Snapshot) ([]finding, []string) {
	var found []finding
	seen := map[string]bool{}
	claim := c.runClaim(s)
	for _, m := range s.Mounts {
		if c.isDecoyMount(m) {
			continue
		}
		why := c.mountWhy(m, claim)
		mp := cleanPath(m.MountPoint)
		if why == "" || seen[mp] {
			continue
		}
		seen[mp] = true
		found = append(found, finding{key: "mount " + mp, line: mountLine(m) + ": " + why})
	}
	for _, f := range s.CRIUTmp {
		found = append(found, finding{key: "criu tmp " + cleanPath(f.Path), line: fileLine("criu tmp", f)})
	}
	// A mount of the run's own mount namespace that a process outside the
	// run holds lives on detached: left by the sweeps, whoever holds it.
	owned := map[model.PID]bool{}
	for _, o := range OfRun(s, c.sc, c.in.Decoys) {
		owned[o.Process.ID()] = true
	}
	skip := func(p snapshots.Process) bool { return isDecoyProcess(p, c.decoyProcs) }
	for _, l := range holders(s, owned, c.sc.Run, skip) {
		key, _, _ := strings.Cut(l, " holds ")
		found = append(found, finding{key: "held by " + key, line: l})
	}
	return found, nil
}

// mountWhy says why a mount point is the run's to remove, or "".
func (c *ctx) mountWhy(m snapshots.Mount, claim claimRule) string {
	mp := m.MountPoint
	switch {
	case under(mp, c.sc.StateDir):
		return "under state dir"
	case beneath(mp, c.sc.StateRoot):
		return "under state root"
	case inCRIUTmp(mp, c.in.Roots.TmpDir):
		return "criu tmp dir"
	case isNetnsMount(mp, c.in.Roots):
		why, ok := claim("mount "+cleanPath(mp), snapshots.MountID(m))
		if !ok {
			return ""
		}
		return withWhy("named netns", why)
	}
	return ""
}
