package host

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/prometheus/procfs"

	"faultwin/snapshots"
)

// Host says where a capture reads the machine from. The zero value reads the
// real host; tests point it at a fake tree under testdata.
type Host struct {
	Proc   string // proc mount, "/proc" when empty
	Cgroup string // cgroup hierarchy root, "/sys/fs/cgroup" when empty
}

func (h Host) procRoot() string {
	if h.Proc == "" {
		return procfs.DefaultMountPoint
	}
	return h.Proc
}

func (h Host) cgroupRoot() string {
	if h.Cgroup == "" {
		return "/sys/fs/cgroup"
	}
	return h.Cgroup
}

// Capture reads a snapshot of the real host scoped to roots, marking what
// decoys planted. See Host.Capture.
func Capture(ctx context.Context, label string, roots snapshots.Roots, decoys snapshots.Decoys) (snapshots.Snapshot, error) {
	return Host{}.Capture(ctx, label, roots, decoys)
}

// Capture reads a snapshot scoped to roots (the rules are in the package
// doc). It fails only when the process table cannot be read at all or ctx
// ends; any other unreadable part is recorded in Snapshot.Incomplete with
// the reason.
// Equivalent to: ps, findmnt, ip link show, nft list tables, ls, find and
// sysctl, each filtered to the roots.
func (h Host) Capture(ctx context.Context, label string, roots snapshots.Roots, decoys snapshots.Decoys) (snapshots.Snapshot, error) {
	s := snapshots.Snapshot{
		Label:     label,
		TakenAt:   time.Now().UTC(),
		Processes: []snapshots.Process{},
		Mounts:    []snapshots.Mount{},
		Links:     []snapshots.Link{},
		Tables:    []snapshots.Table{},
		X11:       []snapshots.File{},
		Ledgers:   []snapshots.File{},
		CRIUTmp:   []snapshots.File{},
		Sysctls:   map[string]string{},
		Cgroups:   []string{},
		Extra:     []snapshots.File{},
	}
	inc := &incomplete{}

	ps := newProcScan(h.procRoot(), roots, decoys)
	procs, err := ps.scan(ctx, inc)
	if err != nil {
		return s, fmt.Errorf("capturing processes: %w", err)
	}
	s.Processes = procs
	s.HostNS = ps.hostNS()
	s.Records = ps.recs.list

	steps := []func(){
		func() {
			known, first := ps.runFS.size(), &incomplete{}
			s.Mounts = captureMounts(h.procRoot(), ps.self, procs, roots, decoys, ps.runFS, first)
			if ps.runFS.size() == known {
				inc.merge(first)
				return
			}
			// A foreign table named a run filesystem or pin the scan did
			// not know: look for its holders, then read the mounts again.
			s.Processes = ps.rescan()
			s.Mounts = captureMounts(h.procRoot(), ps.self, s.Processes, roots, decoys, ps.runFS, inc)
		},
		func() { s.Links = captureLinks(roots, inc) },
		func() {
			s.Tables = append(captureHostTables(roots, inc), captureNetnsTables(h.procRoot(), ps.self.net, ps.netns, roots, inc)...)
		},
		func() { s.X11, s.CRIUTmp = captureTmp(roots, inc) },
		func() { s.Ledgers = captureLedgers(roots.StateRoot, inc) },
		func() { s.Extra = captureExtra(roots.Extra, decoys.Files, inc) },
		func() { s.Sockets = captureSockets(h.procRoot(), roots.Sockets, inc) },
		func() { s.State = captureState(roots, inc) },
		func() { s.Sysctls = captureSysctls(h.procRoot(), roots.Sysctls, inc) },
		func() { s.Cgroups = captureCgroups(h.cgroupRoot(), inc) },
	}
	for _, step := range steps {
		if err := ctx.Err(); err != nil {
			return s, fmt.Errorf("capturing host: %w", err)
		}
		step()
	}
	s.Incomplete = inc.list()
	s.Notes = inc.notes
	return s, nil
}

// incomplete collects what a capture could not read.
type incomplete struct{ reasons, notes []string }

func (i *incomplete) add(format string, args ...any) {
	i.reasons = append(i.reasons, fmt.Sprintf(format, args...))
}

// note records what a capture met that is not missing evidence: the
// criteria judge a snapshot with notes.
func (i *incomplete) note(format string, args ...any) {
	i.notes = append(i.notes, fmt.Sprintf(format, args...))
}

// merge adds what o collected.
func (i *incomplete) merge(o *incomplete) {
	i.reasons = append(i.reasons, o.reasons...)
	i.notes = append(i.notes, o.notes...)
}

func (i *incomplete) list() []string {
	if len(i.reasons) == 0 {
		return nil
	}
	slices.Sort(i.reasons)
	return i.reasons
}
