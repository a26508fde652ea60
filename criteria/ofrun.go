package criteria

import (
	"strconv"

	"faultwin/model"
	"faultwin/snapshots"
)

// Owned is a process judged to be of a run, with every reason found.
type Owned struct {
	Process snapshots.Process `json:"process"`
	Why     []string          `json:"why"`
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
)

// OfRun returns the processes of s that belong to the run described by sc,
// in snapshot order. Ownership is decided by identity, never by name:
//   - the exact argv tag (an element equal to sc.Tag right after "--tag", or
//     "--tag=<tag>"); faultwin:r1 never matches faultwin:r10;
//   - the environment tag (RunEnv == sc.Run), which CRIU's forked tasks
//     inherit although their argv names nothing;
//   - cwd, root or an open file under sc.StateDir by path components;
//   - living in a pid namespace whose init is of the run (a session's
//     children carry no tag of their own).
//
// Decoys, by (pid, start) in d or by their Decoy flag, are never of the run:
// counting the harness's own decoys is the classic harness defect.
func OfRun(s snapshots.Snapshot, sc model.Scope, d snapshots.Decoys) []Owned {
	decoy := decoyPIDs(d)
	why := make([][]string, len(s.Processes))
	for i, p := range s.Processes {
		if isDecoyProcess(p, decoy) {
			continue
		}
		why[i] = directReasons(p, sc)
	}
	// A pid namespace is the run's when its init is; init is the member whose
	// innermost pid is 1 (a host-namespace process has a single NSpid entry).
	inits := map[uint64]int{}
	for i, p := range s.Processes {
		ns, ok := p.NS["pid"]
		if ok && ns != 0 && len(why[i]) > 0 && len(p.NSpid) > 1 && p.NSpid[len(p.NSpid)-1] == 1 {
			if _, seen := inits[ns]; !seen {
				inits[ns] = p.PID
			}
		}
	}
	var out []Owned
	for i, p := range s.Processes {
		if isDecoyProcess(p, decoy) {
			continue
		}
		w := why[i]
		if ns, ok := p.NS["pid"]; ok && ns != 0 {
			if init, ok := inits[ns]; ok && init != p.PID {
				w = append(w, whyPidNS+strconv.Itoa(init))
			}
		}
		if len(w) > 0 {
			out = append(out, Owned{Process: p, Why: w})
		}
	}
	return out
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
