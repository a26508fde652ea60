package snapshots

import (
	"path"
	"slices"
	"strings"
)

// TieRecord is what one run owned that can outlive its state dir: its
// namespaces and the mounts of its filesystems, each by the kernel's
// never-reused id. A process that entered one of those namespaces, or
// holds a file opened through one of those mounts, keeps it alive after the
// run's sweep removed the state dir and unmounted it; with no mark of its
// own and nothing left under the state root, the record is what ties it to
// the run. The harness writes a run's record while the run lives and drops
// the records once a judgement finds the host clean.
type TieRecord struct {
	Run    string          `json:"run"`
	NS     []RecordedNS    `json:"ns,omitempty"`
	Mounts []RecordedMount `json:"mounts,omitempty"`
	// Claims are the host objects under host-global names that the run
	// made, by evidence (Claim). Records from before them have none.
	Claims []Claim `json:"claims,omitempty"`
}

// RecordedNS is one namespace of a run: its kind, its inode and its id
// (NS_GET_ID). The inode is reused once the namespace is gone, the id never;
// a namespace whose id could not be read is not recorded.
type RecordedNS struct {
	Kind string `json:"kind"`
	Ino  uint64 `json:"ino"`
	ID   uint64 `json:"id"`
}

// RecordedMount is one mount of a run filesystem as the harness's table
// showed it: its never-reused id (STATX_MNT_ID_UNIQUE), its device as
// mountinfo spells it and where it was mounted.
//
// NS is set for a mount of one of the run's own mount namespaces (a
// session's root, as that namespace mounts it), by the namespace's inode:
// the harness's table never shows it, and a process outside every
// namespace of the run reaches it only through a process of the run
// (/proc/<pid>/root). Such a process holding a file there is named as
// its holder, not as the run's: it is left alone, and the host is not
// clean until it lets go. Records from before it have none.
type RecordedMount struct {
	ID         uint64 `json:"id"`
	Dev        string `json:"dev"`
	MountPoint string `json:"mount_point"`
	NS         uint64 `json:"ns,omitempty"`
}

// RecordsDir is where the tie records of the runs under stateRoot are
// kept: beside the state root, never in it, so a run's sweep removing its
// state dir leaves its record.
func RecordsDir(stateRoot string) string {
	return path.Clean(strings.TrimSuffix(stateRoot, "/")) + ".ties"
}

// Merge adds to r what o records that r does not, in o's order.
func (r *TieRecord) Merge(o TieRecord) (added bool) {
	for _, n := range o.NS {
		if !containsNS(r.NS, n) {
			r.NS, added = append(r.NS, n), true
		}
	}
	for _, m := range o.Mounts {
		if !containsMount(r.Mounts, m.ID) {
			r.Mounts, added = append(r.Mounts, m), true
		}
	}
	for _, c := range o.Claims {
		if !slices.ContainsFunc(r.Claims, c.Same) {
			r.Claims, added = append(r.Claims, c), true
		}
	}
	return added
}

func containsNS(ns []RecordedNS, n RecordedNS) bool {
	for _, x := range ns {
		if x.ID == n.ID && x.Kind == n.Kind {
			return true
		}
	}
	return false
}

func containsMount(ms []RecordedMount, id uint64) bool {
	for _, x := range ms {
		if x.ID == id {
			return true
		}
	}
	return false
}
