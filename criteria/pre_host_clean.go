package criteria

import (
	"cmp"
	"strconv"
	"strings"

	"faultwin/internal/model"
	"faultwin/snapshots"
)

// Leftovers lists everything in s that belongs to any faultwin run, or that
// stops s from proving the host clean. A window must never start on a host
// holding such things: one criu restorer left by an earlier run
// made all 22 windows of run 2 fail with "File exists", measurements of the
// leftover rather than of the supervisor. An empty result means clean.
//
// Looked for: a process owned by any run under the rules of OfRun (an argv
// tag starting "faultwin:", a run id in its environment, a faultwin cgroup,
// cwd, root or an open file under the state root, membership of an owned
// pid or mount namespace, a zombie of an owned parent), each named with its
// state (live, stopped, frozen or in D, zombie with its parent, exiting);
// any criu process, any cgroup of a run, any mount under
// the state root or in /tmp/.criu.*, any link with the link prefix, any nft
// table with the table prefix or named CRIU-*, any X11 file in or pointing
// into the state root, any ledger file and any CRIU tmp entry. Unreadable
// processes, incomplete snapshots and unusable roots are reported too,
// except an unreadable process the capture set aside (tied to no run by
// what could be read of it), which SetAside lists instead.
//
// A driver's declared host-global names count as well: a link matching
// Roots.Links, a mount at a Roots.Netns named netns, a host table's chain
// matching Roots.Chains. A mount, link, table or chain matching
// Roots.Shared is the supervisor's by design, kept across its runs, and is
// left out; a run's cgroup never is (Roots.RunCgroupsLeft, in every row
// recorded since). A holder of a mount of a run's own mount namespace
// (holders.go) counts too, named as not the run's: the mount lives on
// until it lets go.
func Leftovers(s snapshots.Snapshot, r snapshots.Roots) []string {
	bad, gaps, _, _ := leftovers(s, r)
	return append(gaps, bad...)
}

// leftovers also returns, as keys, what Roots.Shared excused, and the
// unreadable processes set aside, as notes.
func leftovers(s snapshots.Snapshot, r snapshots.Roots) (bad, gaps, kept, notes []string) {
	for _, e := range s.Incomplete {
		gaps = append(gaps, "incomplete: "+e)
	}
	if !usableDir(cleanPath(r.StateRoot)) {
		gaps = append(gaps, "roots: unusable state root "+strconv.Quote(r.StateRoot))
	}
	if !usableDir(cleanPath(r.TmpDir)) {
		gaps = append(gaps, "roots: unusable tmp dir "+strconv.Quote(r.TmpDir))
	}
	if r.LinkPrefix == "" {
		gaps = append(gaps, "roots: no link prefix")
	}
	if r.TablePrefix == "" {
		gaps = append(gaps, "roots: no table prefix")
	}
	gaps = append(gaps, globGaps(r)...)
	// report counts line as a leftover unless its key is one the supervisor
	// keeps by design, which pre notes instead.
	report := func(key, line string) {
		if shared(r, key) {
			kept = append(kept, key)
			return
		}
		bad = append(bad, line)
	}
	owned := owners(s, func(p snapshots.Process) []string { return anyRunReasons(p, r) },
		func(m snapshots.Mount) bool {
			return beneath(m.MountPoint, r.StateRoot) || inCRIUTmp(m.MountPoint, r.TmpDir)
		},
		func(snapshots.Process) bool { return false }, s.Records)
	isOwned := map[model.PID]bool{}
	for _, o := range owned {
		isOwned[o.Process.ID()] = true
		bad = append(bad, procLine(o.Process)+": "+strings.Join(o.Why, ", ")+" ["+processState(o.Process, s)+"]")
	}
	bad = append(bad, holders(s, isOwned, "", func(snapshots.Process) bool { return false })...)
	g, notes := unreadable(s, isOwned, func(snapshots.Process) bool { return false })
	gaps = append(gaps, g...)
	claimed := anyRunClaim(s, r)
	seen := map[string]bool{}
	for _, m := range s.Mounts {
		mp := cleanPath(m.MountPoint)
		if seen[mp] {
			continue
		}
		switch {
		case beneath(mp, r.StateRoot):
			report("mount "+mp, mountLine(m)+": under state root")
		case inCRIUTmp(mp, r.TmpDir):
			report("mount "+mp, mountLine(m)+": criu tmp dir")
		case isNetnsMount(mp, r):
			why, ok := claimed("mount "+mp, snapshots.MountID(m))
			if !ok {
				continue
			}
			report("mount "+mp, withWhy(mountLine(m)+": named netns", why))
		default:
			continue
		}
		seen[mp] = true
	}
	for _, l := range s.Links {
		if r.LinkPrefix != "" && strings.HasPrefix(l.Name, r.LinkPrefix) {
			report("link "+l.Name, linkLine(l))
		}
	}
	for _, f := range describedLinks(s, r, r.LinkPrefix, claimed) {
		report(f.key, f.line)
	}
	for _, t := range s.Tables {
		if (r.TablePrefix != "" && strings.HasPrefix(t.Name, r.TablePrefix)) || strings.HasPrefix(t.Name, model.CRIUTablePrefix) {
			report(tableLine(t), tableLine(t))
		}
	}
	for _, f := range describedChains(s, r, claimed) {
		report(f.key, f.line)
	}
	for _, so := range s.Sockets {
		if !so.Listening && matchAny(r.Sockets, so.Path) {
			why, ok := claimed("socket "+so.Path, so.Inode)
			if !ok {
				continue
			}
			report("socket "+so.Path, "socket "+so.Path+": no process listens on it (a killed server's), "+cmp.Or(why, "declared by the driver"))
		}
	}
	for _, f := range s.State {
		why := ""
		if r.ByProvenance && !under(f.Path, r.StateRoot) {
			var ok bool
			if why, ok = claimed("state "+cleanPath(f.Path), f.Inode); !ok {
				continue
			}
		}
		report("state "+cleanPath(f.Path), fileLine("state entry", f)+": a supervisor's state of a workload, "+cmp.Or(why, "left by an earlier run"))
	}
	for _, f := range s.X11 {
		if under(f.Path, r.StateRoot) || under(f.Target, r.StateRoot) {
			bad = append(bad, fileLine("x11", f)+": into state root")
		}
	}
	// A run's cgroup is never kept by design between windows: whatever a
	// description says it keeps of a run's cgroups (P3 excuses it), it is
	// the dead run's, and a window must not start beside it. Excusing it
	// here by one description's keys made hostcheck call a host clean that
	// another supervisor's preflight refused.
	for _, cg := range s.Cgroups {
		run, ok := model.RunOfCgroup(cg)
		switch {
		case !ok:
		case r.RunCgroupsLeft:
			bad = append(bad, "cgroup "+cg+": of run "+run)
		default:
			report(cgroupKey(cg), "cgroup "+cg+": of run "+run)
		}
	}
	for _, f := range s.Ledgers {
		bad = append(bad, fileLine("ledger", f))
	}
	for _, f := range s.CRIUTmp {
		bad = append(bad, fileLine("criu tmp", f))
	}
	return bad, gaps, kept, notes
}

var _ = register(model.PRE, "the host was clean before the window (false: INVALID)", pre)

// pre holds when the preflight snapshot shows nothing of any faultwin run.
func pre(c *ctx) Result {
	j := &judge{id: model.PRE}
	s := c.in.Preflight
	s.Incomplete = nil // leftovers reports each incomplete entry itself
	j.gap(snapshotGaps(named{LabelPreflight, s})...)
	bad, gaps, kept, aside := leftovers(c.in.Preflight, c.in.Roots)
	j.gap(gaps...)
	j.note(aside...)
	j.fail(bad...)
	for _, l := range c.in.PreflightOthers {
		j.fail(l + " (seen with every supervisor's names, as hostcheck sees the host)")
	}
	for _, k := range kept {
		j.note("kept by design: " + k)
	}
	for _, l := range NotFaultwins(c.in.Preflight, c.in.Roots) {
		j.note("not faultwin's: left alone: " + l)
	}
	return j.result("host clean at preflight",
		func(n int) string { return plural(n, "leftover", "leftovers") + " of a faultwin run at preflight" })
}

// LeftoverProcesses returns the processes of s owned by any faultwin run,
// under the same rules as OfRun with "any run" for "the run".
func LeftoverProcesses(s snapshots.Snapshot, r snapshots.Roots) []Owned {
	return owners(s, func(p snapshots.Process) []string { return anyRunReasons(p, r) },
		func(m snapshots.Mount) bool {
			return beneath(m.MountPoint, r.StateRoot) || inCRIUTmp(m.MountPoint, r.TmpDir)
		},
		func(snapshots.Process) bool { return false }, s.Records)
}

// RunOf names the run a process belongs to by its own marks (argv tag,
// environment, cgroup), or "" when it carries none.
func RunOf(p snapshots.Process) string {
	for _, v := range tagValues(p.Argv) {
		if run, ok := strings.CutPrefix(v, model.TagPrefix); ok && run != "" {
			return run
		}
	}
	if p.RunEnv != "" {
		return p.RunEnv
	}
	for _, cg := range p.Cgroups {
		if run, ok := model.RunOfCgroup(cg); ok {
			return run
		}
	}
	return ""
}

// anyRunReasons is OfRun's direct reasons for a process of any run.
func anyRunReasons(p snapshots.Process, r snapshots.Roots) []string {
	var why []string
	for _, v := range tagValues(p.Argv) {
		if strings.HasPrefix(v, model.TagPrefix) {
			why = append(why, "argv tag "+v)
			break
		}
	}
	if p.RunEnv != "" {
		why = append(why, "env tag "+p.RunEnv)
	}
	if p.Comm == model.CRIUComm {
		why = append(why, whyCRIUComm)
	}
	if under(p.Cwd, r.StateRoot) {
		why = append(why, "cwd under state root")
	}
	if under(p.Root, r.StateRoot) {
		why = append(why, "root under state root")
	}
	for _, f := range p.Files {
		if under(f, r.StateRoot) {
			why = append(why, "open file under state root")
			break
		}
	}
	for _, cg := range p.Cgroups {
		if model.InRunCgroup(cg) {
			why = append(why, whyCgroup+cg)
			break
		}
	}
	return why
}

// processState names what a leftover process is doing, so a reader can
// tell a live survivor from one that is already dead.
func processState(p snapshots.Process, s snapshots.Snapshot) string {
	switch {
	case p.State == "Z" || p.State == "X":
		parent := "pid " + strconv.Itoa(p.PPID)
		for _, q := range s.Processes {
			if q.PID == p.PPID {
				parent += " " + q.Comm
			}
		}
		return "zombie, parent " + parent
	case p.Exiting:
		return "exiting"
	case p.State == "T" || p.State == "t":
		return "stopped"
	case p.State == "D":
		return "frozen or in uninterruptible sleep"
	case p.State == "":
		return "state unknown"
	}
	return "live"
}
