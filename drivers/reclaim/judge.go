package reclaim

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/snapshots"
	"faultwin/snapshots/host"
)

// ZombieWait bounds how long the judge waits for zombies alone to be
// reaped. Zombies of a killed supervisor's children are reaped by init,
// and some inits (this VM's among them) reap on a timer: a killed orphan
// was seen to stay a zombie for 7 to 10 s.
const ZombieWait = 15 * time.Second

// Judgement is what the judge of a clean host saw: the snapshot it judged,
// every leftover of any faultwin run in it (criteria.Leftovers), the
// unreadable processes it set aside as tied to no run
// (criteria.SetAside), and how long it waited for zombies to be reaped
// first.
type Judgement struct {
	Snapshot snapshots.Snapshot
	Left     []string
	SetAside []string
	Waited   time.Duration
}

// Clean reports whether nothing of any run was left.
func (j Judgement) Clean() bool { return len(j.Left) == 0 }

// Judge is the one test of a clean host: hostcheck, a window's preflight,
// the check after each window's last resort and `faultwin sweep`'s final
// check all call it, with the same reading and the same ownership rule,
// so they cannot disagree. A host whose leftovers are zombies alone is
// read again until they are reaped or ZombieWait passes.
func Judge(ctx context.Context, label string, roots snapshots.Roots) (Judgement, error) {
	return JudgeWith(func() (snapshots.Snapshot, error) {
		return host.Capture(ctx, label, roots, snapshots.Decoys{})
	}, roots)
}

// JudgeWith is Judge with the caller's capture (a preflight times its own
// and marks the window's decoys).
func JudgeWith(capture func() (snapshots.Snapshot, error), roots snapshots.Roots) (Judgement, error) {
	var j Judgement
	s, err := capture()
	if err != nil {
		return j, err
	}
	for t0 := time.Now(); OnlyZombies(s, roots) && time.Since(t0) < ZombieWait; j.Waited = time.Since(t0) {
		time.Sleep(50 * time.Millisecond)
		if s, err = capture(); err != nil {
			return j, err
		}
	}
	j.Snapshot, j.Left = s, criteria.Leftovers(s, roots) // unreadable parts count as leftovers there
	j.SetAside = criteria.SetAside(s, roots)             // unless set aside, tied to no run
	grew, err := keepRecords(j, roots)
	if !grew || err != nil {
		return j, err
	}
	// A record written now ties what this reading could not: a holder of
	// a mount of a run's own mount namespace is named from the record, so
	// read once more and judge that.
	if s, err = capture(); err != nil {
		return j, err
	}
	j.Snapshot, j.Left = s, criteria.Leftovers(s, roots)
	j.SetAside = criteria.SetAside(s, roots)
	_, err = keepRecords(j, roots)
	return j, err
}

// keepRecords keeps the tie records in step with a judgement: a clean host
// holds nothing any record names, so they are dropped; otherwise each run
// whose marked processes are left gets their namespaces and its mounts
// recorded, so that what its sweep leaves in them is still named after
// the sweep removed its state dir. It reports whether a record grew.
func keepRecords(j Judgement, roots snapshots.Roots) (grew bool, err error) {
	if j.Clean() {
		return false, DropRecords(roots.Records)
	}
	runs := map[string]bool{}
	dirs, _, _ := RunDirs(roots.StateRoot) // none when it cannot be read
	for _, run := range dirs {
		runs[run] = true // its mounts
	}
	for _, o := range criteria.LeftoverProcesses(j.Snapshot, roots) {
		if run := criteria.RunOf(o.Process); run != "" {
			runs[run] = true
		}
	}
	var errs []error
	for _, run := range slices.Sorted(maps.Keys(runs)) {
		added, err := Record(roots, model.NewScope(roots.StateRoot, run), j.Snapshot)
		grew = grew || added
		errs = append(errs, err)
	}
	return grew, errors.Join(errs...)
}

// OnlyZombies reports whether s has leftovers and every one of them is a
// zombie process: without its zombies the snapshot would be clean.
func OnlyZombies(s snapshots.Snapshot, roots snapshots.Roots) bool {
	if len(criteria.Leftovers(s, roots)) == 0 {
		return false
	}
	live := s
	live.Processes = nil
	for _, p := range s.Processes {
		if !p.Zombie() {
			live.Processes = append(live.Processes, p)
		}
	}
	return len(live.Processes) < len(s.Processes) && len(criteria.Leftovers(live, roots)) == 0
}
