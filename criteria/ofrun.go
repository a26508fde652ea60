package criteria

import (
	"slices"
	"strconv"
	"strings"

	"faultwin/internal/model"
	"faultwin/snapshots"
)

// Owned is a process judged to be of a run, with every reason found.
type Owned struct {
	Process snapshots.Process `json:"process"`
	Why     []string          `json:"why"`
	// Via names what a process with no mark of its own was tied through:
	// a pid (a namespace mate, its pid namespace's init, its parent) or a
	// mount point (a run filesystem, a pinned namespace, a mount namespace
	// holding a run's mount). The sweep uses it to name the run.
	Via      int    `json:"-"`
	ViaMount string `json:"-"`
	// ViaRun is the run a tie record named for it.
	ViaRun string `json:"-"`
}

// Reasons a process is of the run, in the order they are reported.
const (
	whyArgvTag  = "argv tag"
	whyEnvTag   = "env tag"
	whyCwd      = "cwd under state dir"
	whyRoot     = "root under state dir"
	whyFile     = "open file under state dir"
	whyPidNS    = "pid ns of pid "
	whyCRIUComm = "comm criu"
	whyMntNS    = "mount ns of pid "
	whyZombieOf = "zombie of pid "
	whyCgroup   = "in cgroup "
)

// OfRun returns the processes of s that belong to the run described by sc,
// in snapshot order. Ownership is decided by identity, never by name:
//   - the exact argv tag (an element equal to sc.Tag right after "--tag", or
//     "--tag=<tag>"); faultwin:r1 never matches faultwin:r10;
//   - the environment tag (RunEnv == sc.Run), which CRIU's forked tasks
//     inherit although their argv names nothing;
//   - cwd, root or an open file under sc.StateDir by path components;
//   - a cgroup of the run (".../faultwin/<run>/...");
//   - and then, through owners: membership of an owned pid namespace or
//     mount namespace or of a namespace of another kind the run made or
//     pinned, a file open or mapped on a run filesystem, and zombies of
//     owned parents.
//
// Decoys, by (pid, start) in d or by their Decoy flag, are never of the run:
// counting the harness's own decoys is the classic harness defect.
func OfRun(s snapshots.Snapshot, sc model.Scope, d snapshots.Decoys) []Owned {
	decoy := decoyPIDs(d)
	return owners(s, func(p snapshots.Process) []string {
		if isDecoyProcess(p, decoy) {
			return nil
		}
		return directReasons(p, sc)
	}, func(m snapshots.Mount) bool { return !m.Decoy && under(m.MountPoint, sc.StateDir) },
		func(p snapshots.Process) bool { return isDecoyProcess(p, decoy) }, recordsOf(s.Records, sc.Run))
}

// recordsOf returns the tie records of run.
func recordsOf(rs []snapshots.TieRecord, run string) []snapshots.TieRecord {
	var out []snapshots.TieRecord
	for _, r := range rs {
		if r.Run == run && run != "" {
			out = append(out, r)
		}
	}
	return out
}

// owners is the one ownership closure the criteria, the preflight and
// hostcheck share. direct gives a process's own reasons; then, until
// nothing changes, a process is owned too when it
//   - lives in a pid namespace whose init (innermost pid 1) is owned;
//   - lives in a mount namespace other than the host's that an owned
//     process of another pid namespace lives in, or that holds a mount
//     ownedMount accepts (a host process that entered a session's mount
//     namespace carries no tag of its own);
//   - is a zombie whose parent is owned (a zombie has no argv, environment
//     or files left to match);
//   - holds a file open or mapped on a run filesystem (a tmpfs or overlay
//     of its own mounted where ownedMount accepts), by device and inode;
//   - lives in a namespace (any kind) that an nsfs mount ownedMount
//     accepts pins, or in a net, ipc, uts, cgroup, user or time namespace
//     other than the host's whose oldest member is owned (ties.go);
//   - lives in a namespace, or holds a file through a mount, that one of
//     records names (the run's sweep may have removed everything else).
//
// The last three need what rows record since they were added (HostNS, Dev,
// Pins, Held, Records); older rows judge as before. skip excludes processes
// (decoys) from every rule.
func owners(s snapshots.Snapshot, direct func(snapshots.Process) []string,
	ownedMount func(snapshots.Mount) bool, skip func(snapshots.Process) bool, records []snapshots.TieRecord) []Owned {
	why := make([][]string, len(s.Processes))
	via := make([]int, len(s.Processes))
	viaMount := make([]string, len(s.Processes))
	viaRun := make([]string, len(s.Processes))
	byPID := map[int]int{}
	t := newTies(s, ownedMount, records)
	for i, p := range s.Processes {
		byPID[p.PID] = i
		why[i] = direct(p)
		if !skip(p) {
			held, run := t.heldReasons(p)
			why[i] = append(why[i], held...)
			viaRun[i] = run
		}
	}
	mntns := map[uint64]string{}
	mntAt := map[uint64]string{}
	for _, m := range s.Mounts {
		if m.Foreign && m.NS != 0 && ownedMount(m) {
			if _, seen := mntns[m.NS]; !seen {
				mntns[m.NS] = "mount ns holds " + cleanPath(m.MountPoint)
				mntAt[m.NS] = cleanPath(m.MountPoint)
			}
		}
	}
	// tie records the first tie of a process with no mark of its own.
	tie := func(i, pid int, mp string) {
		if via[i] == 0 && viaMount[i] == "" {
			via[i], viaMount[i] = pid, mp
		}
	}
	for changed := true; changed; {
		changed = false
		inits := map[uint64]int{}
		for i, p := range s.Processes {
			ns := p.NS["pid"]
			if ns != 0 && len(why[i]) > 0 && isNSInit(p) {
				if _, seen := inits[ns]; !seen {
					inits[ns] = p.PID
				}
			}
			if mnt := p.NS["mnt"]; mnt != 0 && len(why[i]) > 0 && len(p.NSpid) > 1 {
				if _, seen := mntns[mnt]; !seen {
					mntns[mnt] = whyMntNS + strconv.Itoa(p.PID)
					changed = true
				}
			}
		}
		nsOwned := t.ownedNS(s, why, skip)
		for i, p := range s.Processes {
			if skip(p) {
				continue
			}
			add := func(reason string) {
				if !slices.Contains(why[i], reason) {
					why[i] = append(why[i], reason)
					changed = true
				}
			}
			if init, ok := inits[p.NS["pid"]]; ok && init != p.PID {
				add(whyPidNS + strconv.Itoa(init))
				tie(i, init, "")
			}
			if r, ok := mntns[p.NS["mnt"]]; ok && p.NS["mnt"] != 0 && len(why[i]) == 0 {
				add(r)
				tie(i, pidIn(r, whyMntNS), mntAt[p.NS["mnt"]])
			}
			if j, ok := byPID[p.PPID]; ok && p.Zombie() && len(why[i]) == 0 && len(why[j]) > 0 {
				add(whyZombieOf + strconv.Itoa(p.PPID))
				tie(i, p.PPID, "")
			}
			if len(why[i]) == 0 {
				if r, run := t.nsReason(p, nsOwned); r != "" {
					add(r)
					_, mp, _ := strings.Cut(r, " bound at ")
					tie(i, pidIn(r, " of pid "), mp)
					viaRun[i] = run
				}
			}
		}
	}
	var out []Owned
	for i, p := range s.Processes {
		if len(why[i]) > 0 && !skip(p) {
			out = append(out, Owned{Process: p, Why: why[i], Via: via[i], ViaMount: viaMount[i], ViaRun: viaRun[i]})
		}
	}
	return out
}

// pidIn reads the pid after marker in a reason ("net ns of pid 12"), or 0.
func pidIn(reason, marker string) int {
	_, rest, ok := strings.Cut(reason, marker)
	if !ok {
		return 0
	}
	n, _ := strconv.Atoi(rest)
	return n
}

// isNSInit reports whether p is the init of a pid namespace other than the
// host's: its innermost pid is 1.
func isNSInit(p snapshots.Process) bool {
	return len(p.NSpid) > 1 && p.NSpid[len(p.NSpid)-1] == 1
}

func directReasons(p snapshots.Process, sc model.Scope) []string {
	var w []string
	if hasTag(p.Argv, sc.Tag) {
		w = append(w, whyArgvTag)
	}
	if sc.Run != "" && p.RunEnv == sc.Run {
		w = append(w, whyEnvTag)
	}
	if under(p.Cwd, sc.StateDir) {
		w = append(w, whyCwd)
	}
	if under(p.Root, sc.StateDir) {
		w = append(w, whyRoot)
	}
	for _, f := range p.Files {
		if under(f, sc.StateDir) {
			w = append(w, whyFile)
			break
		}
	}
	for _, cg := range p.Cgroups {
		if run, ok := model.RunOfCgroup(cg); ok && run == sc.Run {
			w = append(w, whyCgroup+cg)
			break
		}
	}
	return w
}

// hasTag reports whether argv carries exactly tag as the value of --tag.
func hasTag(argv []string, tag string) bool {
	if tag == "" {
		return false
	}
	for _, v := range tagValues(argv) {
		if v == tag {
			return true
		}
	}
	return false
}

// tagValues returns every value given to --tag in argv, in order.
func tagValues(argv []string) []string {
	var out []string
	for i, a := range argv {
		switch {
		case a == "--tag" && i+1 < len(argv):
			out = append(out, argv[i+1])
		case len(a) > len("--tag=") && a[:len("--tag=")] == "--tag=":
			out = append(out, a[len("--tag="):])
		}
	}
	return out
}

func decoyPIDs(d snapshots.Decoys) map[model.PID]bool {
	m := make(map[model.PID]bool, len(d.Processes))
	for _, p := range d.Processes {
		m[p.PID] = true
	}
	return m
}

func isDecoyProcess(p snapshots.Process, decoy map[model.PID]bool) bool {
	return p.Decoy || decoy[p.ID()]
}
