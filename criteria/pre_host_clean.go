package criteria

import (
	"strconv"
	"strings"

	"faultwin/model"
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
// processes, incomplete snapshots and unusable roots are reported too.
func Leftovers(s snapshots.Snapshot, r snapshots.Roots) []string {
	bad, gaps := leftovers(s, r)
	return append(gaps, bad...)
}

func leftovers(s snapshots.Snapshot, r snapshots.Roots) (bad, gaps []string) {
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
	owned := owners(s, func(p snapshots.Process) []string { return anyRunReasons(p, r) },
		func(m snapshots.Mount) bool {
			return beneath(m.MountPoint, r.StateRoot) || inCRIUTmp(m.MountPoint, r.TmpDir)
		},
		func(snapshots.Process) bool { return false })
	isOwned := map[model.PID]bool{}
	for _, o := range owned {
		isOwned[o.Process.ID()] = true
		bad = append(bad, procLine(o.Process)+": "+strings.Join(o.Why, ", ")+" ["+processState(o.Process, s)+"]")
	}
	for _, p := range s.Processes {
		if !isOwned[p.ID()] && p.Unreadable != "" && !p.Zombie() {
			gaps = append(gaps, procLine(p)+" unreadable ("+p.Unreadable+"): cannot rule out")
		}
	}
	seen := map[string]bool{}
	for _, m := range s.Mounts {
		mp := cleanPath(m.MountPoint)
		if seen[mp] {
			continue
		}
		switch {
		case beneath(mp, r.StateRoot):
			bad = append(bad, mountLine(m)+": under state root")
		case inCRIUTmp(mp, r.TmpDir):
			bad = append(bad, mountLine(m)+": criu tmp dir")
		default:
			continue
		}
		seen[mp] = true
	}
	for _, l := range s.Links {
		if r.LinkPrefix != "" && strings.HasPrefix(l.Name, r.LinkPrefix) {
			bad = append(bad, linkLine(l))
		}
	}
	for _, t := range s.Tables {
		if (r.TablePrefix != "" && strings.HasPrefix(t.Name, r.TablePrefix)) || strings.HasPrefix(t.Name, model.CRIUTablePrefix) {
			bad = append(bad, tableLine(t))
		}
	}
	for _, f := range s.X11 {
		if under(f.Path, r.StateRoot) || under(f.Target, r.StateRoot) {
			bad = append(bad, fileLine("x11", f)+": into state root")
		}
	}
	for _, cg := range s.Cgroups {
		if run, ok := model.RunOfCgroup(cg); ok {
			bad = append(bad, "cgroup "+cg+": of run "+run)
		}
	}
	for _, f := range s.Ledgers {
		bad = append(bad, fileLine("ledger", f))
	}
	for _, f := range s.CRIUTmp {
		bad = append(bad, fileLine("criu tmp", f))
	}
	return bad, gaps
}

// pre holds when the preflight snapshot shows nothing of any faultwin run.
func pre(c *ctx) Result {
	j := &judge{id: model.PRE}
	s := c.in.Preflight
	s.Incomplete = nil // leftovers reports each incomplete entry itself
	j.gap(snapshotGaps(named{labelPreflight, s})...)
	bad, gaps := leftovers(c.in.Preflight, c.in.Roots)
	j.gap(gaps...)
	j.fail(bad...)
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
		func(snapshots.Process) bool { return false })
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
