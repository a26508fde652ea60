// Package snapshots holds the harness's plain-struct view of host state and
// the pure helpers that scope and compare it. Capturing lives in
// snapshots/host; this package imports the standard library only, so criteria
// and replay can use it without root.
package snapshots

import (
	"time"

	"faultwin/internal/model"
)

// Process is one host process that could belong to a faultwin run.
type Process struct {
	PID       int      `json:"pid"`
	StartTime uint64   `json:"start"` // field 22 of /proc/<pid>/stat
	PPID      int      `json:"ppid"`
	State     string   `json:"state"` // "R", "S", "D", "Z", ...
	Comm      string   `json:"comm"`
	Argv      []string `json:"argv,omitempty"`
	RunEnv    string   `json:"run_env,omitempty"` // value of FAULTWIN_RUN in its environment
	Cwd       string   `json:"cwd,omitempty"`
	Root      string   `json:"root,omitempty"`
	Files     []string `json:"files,omitempty"` // open file paths inside the snapshot's roots
	// NS maps a namespace kind to its inode: "pid", "mnt" and "net" always;
	// "ipc", "uts", "cgroup", "user" and "time" only when not the host's
	// (Snapshot.HostNS), which keeps a row small.
	NS    map[string]uint64 `json:"ns,omitempty"`
	NSpid []int             `json:"nspid,omitempty"` // pids from the host's pidns inward
	// Cgroups are the process's cgroup paths that lie in a faultwin cgroup
	// ("/faultwin/<run>/<session>"), one per hierarchy, as /proc/<pid>/cgroup
	// names them.
	Cgroups    []string `json:"cgroups,omitempty"`
	Decoy      bool     `json:"decoy,omitempty"` // started by the harness as a decoy
	Unreadable string   `json:"unreadable,omitempty"`
	// SetAside says why an Unreadable process, read again and still
	// unreadable, ties to no run by what could be read of it: its cgroups
	// (none named as a run's or CRIU's), its pid, mount and net namespaces (by their links or, refused those,
	// by /proc/<pid>/status, mountinfo and net), the other namespaces it
	// could be tied by, the run filesystems its descriptors could be on and
	// its parent ("host cgroup /, host pid, mnt and net namespaces, parent
	// pid 1 (init) not of a run"). The criteria note such a process rather
	// than count it as a gap: a host's init and what it forks (a copy of it
	// until it execs) are unreadable to root on some hosts. Rows recorded
	// before it have none: their unreadable processes are gaps, as judged.
	SetAside string `json:"set_aside,omitempty"`
	// Exiting is set for a task the kernel is tearing down (PF_EXITING): it
	// took its SIGKILL but waits, e.g. as a pid namespace's init for the
	// namespace's other tasks; its memory and namespaces are already gone.
	Exiting bool `json:"exiting,omitempty"`
	// Held are the files the process has open or mapped on a run's own
	// filesystem (a Mount with Dev), by device and inode: a path lies when
	// the file was renamed or deleted, or is reached through a bind or
	// from another mount namespace.
	Held []Held `json:"held,omitempty"`
	// NSID are the kernel's never-reused ids (NS_GET_ID) of the process's
	// namespaces whose inode a tie record names, read to tell the run's
	// namespace from a later one that reuses its inode.
	NSID map[string]uint64 `json:"ns_id,omitempty"`
}

// Held is one open file or memory mapping, by device ("major:minor" as
// mountinfo spells it) and inode.
type Held struct {
	Dev string `json:"dev"`
	Ino uint64 `json:"ino"`
	Map bool   `json:"map,omitempty"` // a mapping, not a file descriptor
	// Dir is "cwd" or "root" for the process's working or root directory
	// held through a recorded mount (no descriptor needed to pin it).
	Dir string `json:"dir,omitempty"`
	// Mnt is the never-reused id of the mount the file was opened through
	// (STATX_MNT_ID_UNIQUE) when it is a mount a tie record names: the
	// run's, though no mount table shows it any more.
	Mnt uint64 `json:"mnt,omitempty"`
}

// ID returns the reuse-proof identity of p.
func (p Process) ID() model.PID { return model.PID{PID: p.PID, StartTime: p.StartTime} }

// Zombie reports whether p has exited, or is exiting, and so is not a live
// survivor: it waits for its parent to reap it or for the kernel to finish.
func (p Process) Zombie() bool { return p.State == "Z" || p.State == "X" || p.Exiting }

// Mount is one mount under the snapshot's roots, in the host mount namespace
// (NS == host) or in a foreign one seen through a process living there.
type Mount struct {
	ID         int    `json:"id"`
	Parent     int    `json:"parent"`
	MountPoint string `json:"mountpoint"`
	FSType     string `json:"fstype"`
	Source     string `json:"source,omitempty"`
	NS         uint64 `json:"ns"`            // mount namespace inode
	Foreign    bool   `json:"foreign"`       // not the harness's own mount namespace
	SeenVia    int    `json:"via,omitempty"` // pid whose mountinfo showed it (foreign only)
	Decoy      bool   `json:"decoy,omitempty"`
	// Dev ("major:minor") is set for a tmpfs or overlay mounted whole in
	// scope that is its filesystem's first mount: files held there are
	// the run's whatever path reaches them. A host filesystem bound into
	// scope never gets it.
	Dev string `json:"dev,omitempty"`
	// Pins is set for an nsfs mount, the namespace it keeps alive as the
	// kernel names it ("net:[4026532282]").
	Pins string `json:"pins,omitempty"`
}

// Link is a network interface of the host network namespace.
type Link struct {
	Name  string `json:"name"`
	Index int    `json:"index"`
	Kind  string `json:"kind"`
	Up    bool   `json:"up"`
	// Master is the bridge the link is a port of, by name; rows from
	// before it have none.
	Master string `json:"master,omitempty"`
}

// Table is an nftables table of the host network namespace, or a faultwin
// or CRIU table of another one.
type Table struct {
	Family string `json:"family"`
	Name   string `json:"name"`
	// Netns is set for a table of another network namespace than the
	// harness's ("ns 4026532324 via pid 912", "ns ... at /run/netns/x").
	Netns string `json:"netns,omitempty"`
	// Chains are the table's chains that match Roots.Chains (host tables
	// only; empty when no chain globs are given).
	Chains []string `json:"chains,omitempty"`
	// Handle is the table's handle and ChainHandles its matching chains'
	// (by name): with the table's they name a chain the kernel never
	// gives to another while the table lives. Rows from before them have
	// none.
	Handle       uint64            `json:"handle,omitempty"`
	ChainHandles map[string]uint64 `json:"chain_handles,omitempty"`
}

// File is a path the criteria care about: an X11 socket or lock, a ledger, a
// CRIU leftover under /tmp.
type File struct {
	Path   string `json:"path"`
	Kind   string `json:"kind"`             // "socket", "symlink", "file", "dir"
	Target string `json:"target,omitempty"` // for symlinks
	// Inode is "dev:ino" of a state entry under a host-global name: a
	// claim names it by that, not by its path. Empty in rows from before.
	Inode string `json:"inode,omitempty"`
}

// Snapshot is one read of host state, scoped to what the criteria judge.
type Snapshot struct {
	Label     string            `json:"label"` // "preflight", "after_death", "after_sweep", "after_sweep2"
	TakenAt   time.Time         `json:"taken_at"`
	Processes []Process         `json:"processes"`
	Mounts    []Mount           `json:"mounts"`
	Links     []Link            `json:"links"`
	Tables    []Table           `json:"tables"`
	X11       []File            `json:"x11"`
	Ledgers   []File            `json:"ledgers"`
	CRIUTmp   []File            `json:"criu_tmp"` // /tmp/.criu.*
	Sysctls   map[string]string `json:"sysctls"`
	Cgroups   []string          `json:"cgroups"` // cgroup directories named for faultwin or criu
	Extra     []File            `json:"extra"`   // files under Roots.Extra (the decoys' own files)
	// Sockets are the unix sockets matching Roots.Sockets. Rows from before
	// it have none.
	Sockets []Socket `json:"sockets,omitempty"`
	// State are the entries matching Roots.State. Rows from before it
	// have none.
	State []File `json:"state,omitempty"`
	// HostNS are the inodes of the namespaces (every kind) of the capturing
	// harness and of pid 1: a namespace among them is never a run's. Rows
	// from before it have none, and their namespace ties stay pid and mnt.
	HostNS []uint64 `json:"host_ns,omitempty"`
	// Records are the tie records read (Roots.Records): what runs owned
	// that outlives their state dirs. Rows from before them have none.
	Records []TieRecord `json:"records,omitempty"`
	// Incomplete lists what could not be read; criteria refuse to judge an
	// incomplete snapshot rather than pass on missing evidence.
	Incomplete []string `json:"incomplete,omitempty"`
	// Notes are what the capture met that is not missing evidence, such as
	// a namespace whose processes all exited while it was being read.
	Notes []string `json:"notes,omitempty"`
}

// DecoyProcess is a process the harness started to look like another run's.
type DecoyProcess struct {
	model.PID
	Tag string `json:"tag"` // its argv tag, "faultwin:<other run>"
	Cwd string `json:"cwd"`
}

// Decoys are what the harness plants next to a run, each of which the
// supervisor's sweep must leave untouched (P5) and no criterion may count as
// the run's (the classic harness defect: its own decoy judged unledgered).
type Decoys struct {
	Run       string         `json:"run"` // the prefix-colliding sibling run id ("<run>0")
	Dir       string         `json:"dir"` // <StateRoot>/<sibling run>
	Processes []DecoyProcess `json:"processes"`
	Mounts    []string       `json:"mounts"` // tmpfs at unrecorded paths
	Files     []string       `json:"files"`
}

// Socket is a unix socket file under a host-global name a driver claims.
// One no process listens on is stale: what a killed server left behind.
type Socket struct {
	Path      string `json:"path"`
	Listening bool   `json:"listening"`
	Inode     string `json:"inode,omitempty"` // "dev:ino"; empty in rows from before it
}
