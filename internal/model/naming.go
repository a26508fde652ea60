package model

import (
	"path"
	"strings"
)

// The naming rules of a run. Every resource a run makes carries its run id in
// one of these forms, so a snapshot can tell whose it is without guessing.
const (
	// TagPrefix starts the argv element that names a process's run:
	// "--tag faultwin:<run>" puts "faultwin:<run>" in argv.
	TagPrefix = "faultwin:"
	// RunEnvKey is the environment variable every process of a run carries,
	// inherited by forks that carry no tag in argv (CRIU's, in RPC mode).
	RunEnvKey = "FAULTWIN_RUN"
	// LinkPrefix starts the name of every veth a run makes ("dvh3").
	LinkPrefix = "dvh"
	// TablePrefix starts the name of every nft table a run makes
	// ("faultwin_<run>").
	TablePrefix = "faultwin"
	// CRIUTablePrefix starts the nft tables CRIU makes for its network lock
	// ("CRIU-<pid>").
	CRIUTablePrefix = "CRIU-"
	// CRIUComm is the comm of every CRIU task, including restorer forks
	// that carry neither a tag nor a path in argv.
	CRIUComm = "criu"
	// CommLen is TASK_COMM_LEN less its NUL: the kernel truncates every
	// comm to it, so a comm to match by is truncated (or refused) alike.
	CommLen = 15
	// CRIUTmpPrefix starts the names CRIU gives its leftovers in the
	// temporary directory (".criu.mntns.*").
	CRIUTmpPrefix = ".criu."
	// CgyardMarker is part of every cgroup yard CRIU mounts for a restore
	// ("<image dir>/.criu.cgyard.*/<controller>").
	CgyardMarker = ".criu.cgyard."
	// DefaultStateRoot is where runs keep their state unless told otherwise.
	DefaultStateRoot = "/var/lib/faultwin/state"
	// DecoyLedger is the content of a decoy dir's ledger.json: it looks
	// like a ledger to a sweep that owns by file name, and tells the
	// harness the dir is its own decoy, not a run's.
	DecoyLedger = `{"decoy":"planted by faultwin; not a ledger of any run"}` + "\n"
	// IPForward is the host-global sysctl a supervisor turns on for NAT.
	IPForward = "net/ipv4/ip_forward"
)

// Tag returns the argv tag of run.
func Tag(run string) string { return TagPrefix + run }

// TableName returns the nft table name of run.
func TableName(run string) string { return TablePrefix + "_" + run }

// StateDir returns run's state directory under root.
func StateDir(root, run string) string { return path.Join(root, run) }

// Scope is what a supervisor run owns, as the driver reports it. Criteria
// judge "of the run" from it; never from names or substrings.
type Scope struct {
	Run         string `json:"run"`         // "r3f9a0c1d"
	Tag         string `json:"tag"`         // exact argv tag value: "faultwin:<run>"
	EnvKey      string `json:"env_key"`     // RunEnvKey: set on every process it starts
	StateRoot   string `json:"state_root"`  // parent of every run's state dir
	StateDir    string `json:"state_dir"`   // <StateRoot>/<Run>
	LinkPrefix  string `json:"link_prefix"` // LinkPrefix
	Table       string `json:"table"`       // nft table of the run, TableName(run)
	TableFamily string `json:"table_family"`
	Displays    []int  `json:"displays,omitempty"` // X11 displays the run made
	Ledger      string `json:"ledger"`             // the ledger file's path
}

// NewScope returns the scope the naming rules give run under root; a driver
// fills in what only it knows (the table family, displays, the ledger).
func NewScope(root, run string) Scope {
	return Scope{
		Run: run, Tag: Tag(run), EnvKey: RunEnvKey,
		StateRoot: root, StateDir: StateDir(root, run),
		LinkPrefix: LinkPrefix, Table: TableName(run),
	}
}

// CgroupDir is the component under which supervisors make their runs'
// cgroups: <hierarchy>/faultwin/<run>/<session>.
const CgroupDir = TablePrefix

// InRunCgroup reports whether a cgroup path (as /proc/<pid>/cgroup or a
// hierarchy-relative directory spells it) lies below a faultwin component,
// in some run's cgroup.
func InRunCgroup(p string) bool {
	_, ok := RunOfCgroup(p)
	return ok
}

// RunOfCgroup returns the run whose cgroup p is or lies in: the component
// after the last "faultwin" component.
func RunOfCgroup(p string) (string, bool) {
	// The criteria ask this of every cgroup of every snapshot, most of
	// them the host's own: a path without the component's name is
	// answered without splitting it.
	if !strings.Contains(p, CgroupDir) {
		return "", false
	}
	// The components from the last, each with the one after it.
	rest, next, first := strings.Trim(p, "/"), "", true
	for {
		i := strings.LastIndexByte(rest, '/')
		comp := rest[i+1:]
		if !first && comp == CgroupDir && next != "" {
			return next, true
		}
		if i < 0 {
			return "", false
		}
		next, first, rest = comp, false, rest[:i]
	}
}
