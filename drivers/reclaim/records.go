package reclaim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/internal/strictjson"
	"faultwin/snapshots"
	"faultwin/snapshots/host"
)

// Record adds to run's tie record (snapshots.TieRecord, in roots.Records)
// the namespaces of the run's live processes in s that are not the host's,
// and the mounts of its run filesystems in the harness's own table, each by
// the id the kernel never reuses, read now. A process that later enters one
// of those namespaces, or keeps a file open through one of those mounts,
// is the run's after its sweep removed everything else. A namespace or
// mount gone since s was taken, or whose id this kernel cannot give, is not
// recorded, and neither is a namespace a process not of the run shares.
func Record(roots snapshots.Roots, sc model.Scope, s snapshots.Snapshot) (added bool, err error) {
	if roots.Records == "" || sc.Run == "" {
		return false, nil
	}
	rec := snapshots.TieRecord{Run: sc.Run}
	hostNS := map[uint64]bool{}
	for _, ino := range s.HostNS {
		hostNS[ino] = true
	}
	owned := criteria.OfRun(s, sc, snapshots.Decoys{})
	ofRun := map[model.PID]bool{}
	for _, o := range owned {
		ofRun[o.Process.ID()] = true
	}
	// A namespace another member of which is not the run's (a service the
	// run's process entered, by the oldest-member rule) stays that
	// member's: recording it would claim the service once the run is gone.
	shared := map[snapshots.RecordedNS]bool{}
	for _, p := range s.Processes {
		if !ofRun[p.ID()] {
			for kind, ino := range p.NS {
				shared[snapshots.RecordedNS{Kind: kind, Ino: ino}] = true
			}
		}
	}
	for _, o := range owned {
		p := o.Process
		if p.Zombie() || len(s.HostNS) == 0 {
			continue
		}
		// The same process as s saw (a pid reused since is another's).
		if start, err := host.StartTime(p.PID); err != nil || start != p.StartTime {
			continue
		}
		for _, kind := range criteria.NSKinds {
			if shared[snapshots.RecordedNS{Kind: kind, Ino: p.NS[kind]}] {
				continue
			}
			if n, ok := liveNS(p, kind, hostNS); ok {
				rec.Merge(snapshots.TieRecord{NS: []snapshots.RecordedNS{n}})
			}
		}
	}
	for _, m := range s.Mounts {
		if m.Dev == "" || m.Foreign || m.Decoy || !model.Within(m.MountPoint, sc.StateDir) {
			continue
		}
		// The mount must still be there, as s saw it: statx of a path
		// whose mount is gone gives the mount beneath it (the host's root
		// filesystem, say), and recording that would tie every process of
		// the host to the run.
		if id, ok := host.MountRootID(m.MountPoint, m.Dev); ok {
			rec.Merge(snapshots.TieRecord{Mounts: []snapshots.RecordedMount{{ID: id, Dev: m.Dev, MountPoint: m.MountPoint}}})
		}
	}
	nsMounts(&rec, s, sc, ofRun, shared)
	if len(rec.NS) == 0 && len(rec.Mounts) == 0 {
		return false, nil
	}
	return writeRecord(roots.Records, rec)
}

// nsMounts adds to rec the run filesystems' mounts of the run's own mount
// namespaces (those of its live processes that no process but the run's
// shares): a session's root as its own namespace mounts it, which the
// harness's table never shows. A process outside the run holding a file
// through one (opened through /proc/<pid>/root) keeps it alive after the
// namespace is gone; the record names it as that mount's holder.
func nsMounts(rec *snapshots.TieRecord, s snapshots.Snapshot, sc model.Scope, ofRun map[model.PID]bool, shared map[snapshots.RecordedNS]bool) {
	if len(s.HostNS) == 0 {
		return
	}
	hostNS := map[uint64]bool{}
	for _, ino := range s.HostNS {
		hostNS[ino] = true
	}
	runDevs := map[string]bool{}
	for _, m := range s.Mounts {
		if m.Dev != "" && !m.Decoy && model.Within(m.MountPoint, sc.StateDir) {
			runDevs[m.Dev] = true
		}
	}
	done := map[uint64]bool{}
	for _, p := range s.Processes {
		ns := p.NS["mnt"]
		if !ofRun[p.ID()] || p.Zombie() || ns == 0 || hostNS[ns] || done[ns] || shared[snapshots.RecordedNS{Kind: "mnt", Ino: ns}] {
			continue
		}
		// The same process in the same namespace as s saw.
		if start, err := host.StartTime(p.PID); err != nil || start != p.StartTime {
			continue
		}
		if now, err := host.NSInode(strconv.Itoa(p.PID), "mnt"); err != nil || now != ns {
			continue
		}
		ms, err := host.NSMounts(p.PID, ns, runDevs)
		if err != nil {
			continue // exited meanwhile: the next process there is tried
		}
		done[ns] = true
		rec.Merge(snapshots.TieRecord{Mounts: ms})
	}
}

// liveNS reads p's namespace of kind now, when it is the one s recorded
// (the same inode) and not the host's.
func liveNS(p snapshots.Process, kind string, hostNS map[uint64]bool) (snapshots.RecordedNS, bool) {
	pid := strconv.Itoa(p.PID)
	ino := p.NS[kind]
	if ino == 0 || hostNS[ino] {
		return snapshots.RecordedNS{}, false
	}
	now, err := host.NSInode(pid, kind)
	if err != nil || now != ino {
		return snapshots.RecordedNS{}, false
	}
	id, err := host.NSID(pid, kind)
	if err != nil {
		return snapshots.RecordedNS{}, false
	}
	return snapshots.RecordedNS{Kind: kind, Ino: ino, ID: id}, true
}

// writeRecord merges rec into its run's file, written whole to a temporary
// file and renamed, so a reader never sees half a record. It reports
// whether the record grew.
func writeRecord(dir string, rec snapshots.TieRecord) (added bool, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, fmt.Errorf("tie record of run %s: %w", rec.Run, err)
	}
	path := filepath.Join(dir, rec.Run+".json")
	if b, err := os.ReadFile(path); err == nil {
		var old snapshots.TieRecord
		if err := strictjson.Decode(b, &old, path); err != nil {
			return false, fmt.Errorf("tie record of run %s: %w", rec.Run, err)
		}
		if !old.Merge(rec) {
			return false, nil
		}
		rec = old
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("tie record of run %s: %w", rec.Run, err)
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return false, fmt.Errorf("tie record of run %s: %w", rec.Run, err)
	}
	b = append(b, '\n')
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return false, fmt.Errorf("tie record of run %s: %w", rec.Run, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return false, fmt.Errorf("tie record of run %s: %w", rec.Run, err)
	}
	return true, nil
}

// DropRecords removes the tie records in dir: called once a judgement
// found the host clean, when nothing any record names is held any more.
// It removes only <run>.json files (and their temporaries) it wrote, then
// the directory if nothing else is in it.
func DropRecords(dir string) error {
	if dir == "" {
		return nil
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("tie records: %w", err)
	}
	var errs []error
	for _, e := range ents {
		n := e.Name()
		if !e.Type().IsRegular() || !(strings.HasSuffix(n, ".json") || strings.HasSuffix(n, ".json.tmp")) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	_ = os.Remove(dir) // once empty: a clean host keeps no records dir either
	return errors.Join(errs...)
}

// IsPlanted reports whether dir is a decoy dir the harness planted (its
// ledger.json is model.DecoyLedger: it looks like a ledger to a sweep that
// owns by file name), never a run's; one left means the harness was killed
// mid-window.
func IsPlanted(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "ledger.json"))
	return err == nil && string(b) == model.DecoyLedger
}

// RunDirs lists the runs under the state root (its directories, sorted)
// and, apart, the decoy dirs the harness planted there (full paths): the
// one reading of what runs a state root holds, for the judge and for
// `faultwin sweep`.
func RunDirs(root string) (runs, planted []string, err error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		if dir := filepath.Join(root, e.Name()); IsPlanted(dir) {
			planted = append(planted, dir)
		} else {
			runs = append(runs, e.Name())
		}
	}
	return runs, planted, nil
}
