package host

import (
	"cmp"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/procfs"

	"faultwin/internal/model"
	"faultwin/snapshots"
)

// pfKthread is PF_KTHREAD in the flags field of /proc/<pid>/stat: kernel
// threads cannot belong to a run and are skipped unread.
const pfKthread = 0x00200000

// pfExiting is PF_EXITING: the task is being torn down.
const pfExiting = 0x00000004

// procScan reads the process table once and keeps what the roots scope in.
type procScan struct {
	root   string // proc mount
	fs     procfs.FS
	roots  snapshots.Roots
	decoys map[int][]uint64 // decoy pid -> start times (0: any)
	self   selfNS
	// netns holds, for every network namespace a process of the scan lives
	// in, the first pid seen there: the tables of other namespaces are read
	// through it without walking /proc again.
	netns map[uint64]int
	host  map[uint64]bool // the namespaces of the harness and of pid 1
	runFS runFS           // the run filesystems and pinned namespaces known so far
	recs  records         // what the tie records name
	cands []*candidate    // the last scan's, for rescan
	// sleep pauses between two reads of a process (time.Sleep; a test
	// changes its fake /proc there).
	sleep func(time.Duration)
	own   *ownFacts // the harness's cgroups and namespaces, read once when needed
}

// selfNS holds the harness's own namespaces, the "host" of a capture.
type selfNS struct {
	pid, mnt, net uint64
}

// candidate is one process while the scan decides whether it is in scope.
type candidate struct {
	p       snapshots.Process
	pidns   uint64
	mntns   uint64
	zombie  bool
	include bool
	nspid   bool              // NSpid already read
	ns      map[string]uint64 // namespaces read so far, by kind (nsOf)
	pr      procfs.Proc       // to read it again
	// refused is set when a read failed for another cause than the
	// process being gone (permission denied): it is read again (reread).
	refused bool
	unread  unread // what of it could not be read, for setAside
	// asideWhy is what could be read of a refused process that ties it to
	// no run ("host cgroup /, host pid, mnt and net namespaces"), or ""
	// when something read may tie it (readAside).
	asideWhy string
	aside    bool // recorded, set aside: no evidence ties it to a run
}

func newProcScan(root string, roots snapshots.Roots, decoys snapshots.Decoys) *procScan {
	ps := &procScan{root: root, roots: roots, decoys: map[int][]uint64{}, netns: map[uint64]int{}, sleep: time.Sleep}
	for _, d := range decoys.Processes {
		ps.decoys[d.PID.PID] = append(ps.decoys[d.PID.PID], d.StartTime)
	}
	return ps
}

// scan lists the processes in scope, sorted by (pid, start time). It fails
// only when the process table itself cannot be listed.
// Equivalent to: ps -eo pid,lstart,ppid,stat,comm,args plus /proc/<pid>/{environ,cwd,root,fd,ns}.
func (ps *procScan) scan(ctx context.Context, inc *incomplete) ([]snapshots.Process, error) {
	pfs, err := procfs.NewFS(ps.root)
	if err != nil {
		return nil, err
	}
	ps.fs = pfs
	ps.readSelf(inc)
	ps.readHostNS()
	if ps.runFS, err = readRunFS(ps.root, ps.roots); err != nil {
		inc.add("processes: own mount table: %v", err)
	}
	ps.recs = readRecords(ps.roots.Records, ps.roots, ps.runFS.table, inc)
	all, err := pfs.AllProcs()
	if err != nil {
		return nil, err
	}
	cands := make([]*candidate, 0, len(all))
	for _, pr := range all {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if c := ps.read(pr); c != nil {
			cands = append(cands, c)
		}
	}
	cands = ps.reread(cands)
	kept := cands[:0]
	for _, c := range cands {
		if ps.rereadable(c) && !c.zombie && !ps.readAside(c) {
			continue // it ended while it was read
		}
		kept = append(kept, c)
	}
	cands = kept
	ps.decide(cands)
	ps.cands = cands
	return ps.emit(), nil
}

// rescan looks again, after a foreign mount table named run filesystems
// or pinned namespaces the first pass did not know, for the processes
// that hold or live in them, and returns the processes in scope now.
func (ps *procScan) rescan() []snapshots.Process {
	for _, c := range ps.cands {
		if c.include || c.zombie || c.p.StartTime == 0 {
			continue
		}
		if _, fds, err := ps.files(c.p.PID); err == nil {
			c.p.Held = ps.held(c.p.PID, fds, c.mntns == ps.self.mnt)
		}
	}
	ps.decide(ps.cands)
	return ps.emit()
}

// emit completes and lists the processes in scope, sorted by (pid, start
// time).
func (ps *procScan) emit() []snapshots.Process {
	out := []snapshots.Process{}
	for _, c := range ps.cands {
		// One holding a file through a mount of a run's own mount
		// namespace and tied to no run is kept to be named as its holder.
		if (c.include || c.aside || len(c.p.Held) > 0) && ps.complete(c) {
			out = append(out, c.p)
		}
	}
	slices.SortFunc(out, func(a, b snapshots.Process) int {
		if a.PID != b.PID {
			return a.PID - b.PID
		}
		return cmp.Compare(a.StartTime, b.StartTime)
	})
	return out
}

func (ps *procScan) readSelf(inc *incomplete) {
	var err error
	for _, ns := range []struct {
		name string
		dst  *uint64
	}{{"pid", &ps.self.pid}, {"mnt", &ps.self.mnt}, {"net", &ps.self.net}} {
		if *ns.dst, err = readNS(ps.root, "self", ns.name); err != nil {
			inc.add("processes: own %s namespace: %v", ns.name, err)
		}
	}
}

// read gathers what the scoping rules need from one process; nil means it
// is gone or a kernel thread.
func (ps *procScan) read(pr procfs.Proc) *candidate {
	st, err := pr.Stat()
	if err != nil {
		if gone(err) {
			return nil
		}
		return &candidate{p: snapshots.Process{PID: pr.PID, Unreadable: "stat: " + err.Error()}, include: true}
	}
	if st.Flags&pfKthread != 0 {
		return nil
	}
	c, bad := ps.readOnce(pr, st)
	if len(bad.order) > 0 {
		// A process exiting between two reads looks unreadable: read its
		// stat again and judge by what it is now. One that is mid-exit (its
		// memory and namespaces already released, not yet a zombie) fails
		// every read with "no such process": give it a moment to finish.
		// One refused for another cause is read again with the others
		// (reread).
		for wait := 0; ; wait++ {
			now, err := pr.Stat()
			switch {
			case err != nil && gone(err):
				return nil
			case err == nil && now.Starttime != st.Starttime:
				return nil // the pid was reused under us
			case err == nil && (now.State == "Z" || now.State == "X"):
				c.p.State, c.zombie = now.State, true
				return c
			}
			if bad.notGone || wait >= exitWaitTries {
				c.p.Unreadable, c.refused = bad.String(), bad.notGone
				return c
			}
			ps.sleep(exitWaitStep)
		}
	}
	return c
}

// readOnce reads one process whose stat is st, and says what of it could
// not be read.
func (ps *procScan) readOnce(pr procfs.Proc, st procfs.ProcStat) (*candidate, reasons) {
	c := &candidate{pr: pr, p: snapshots.Process{
		PID: pr.PID, StartTime: st.Starttime, PPID: st.PPID, State: st.State, Comm: st.Comm,
	}}
	c.p.Exiting = st.Flags&pfExiting != 0
	c.zombie = c.p.Zombie()
	var bad reasons
	note := bad.note

	argv, err := pr.CmdLine()
	note("cmdline", err)
	if len(argv) > 0 {
		c.p.Argv = argv
	}
	if !c.zombie {
		env, err := pr.Environ()
		note("environ", err)
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, model.RunEnvKey+"="); ok {
				c.p.RunEnv = v
			}
		}
		c.p.Cwd, err = pr.Cwd()
		note("cwd", err)
		c.unread.dirs = err != nil
		c.p.Root, err = pr.RootDir()
		note("root", err)
		c.unread.dirs = c.unread.dirs || err != nil
		var fds []fdRef
		c.p.Files, fds, err = ps.files(pr.PID)
		note("fd", err)
		c.unread.fd = err != nil
		c.mntns, _ = readNS(ps.root, strconv.Itoa(pr.PID), "mnt")
		c.p.Held = ps.held(pr.PID, fds, c.mntns == ps.self.mnt)
		c.p.Cgroups = runCgroups(pr)
		net, err := readNS(ps.root, strconv.Itoa(pr.PID), "net")
		if err == nil {
			if _, seen := ps.netns[net]; !seen {
				ps.netns[net] = pr.PID
			}
		}
		c.ns = map[string]uint64{"mnt": c.mntns, "net": net}
	}
	c.pidns, err = readNS(ps.root, strconv.Itoa(pr.PID), "pid")
	note("ns/pid", err)
	return c, bad
}

// runCgroups returns the cgroup paths of pr that lie below a "faultwin"
// component (where supervisors put their runs' sessions), sorted.
// Equivalent to: grep /faultwin/ /proc/<pid>/cgroup.
func runCgroups(pr procfs.Proc) []string {
	cgs, err := pr.Cgroups()
	if err != nil {
		return nil
	}
	var out []string
	for _, cg := range cgs {
		if model.InRunCgroup(cg.Path) && !slices.Contains(out, cg.Path) {
			out = append(out, cg.Path)
		}
	}
	slices.Sort(out)
	return out
}

// fdRef is one descriptor that is a file: its number and its path as the
// harness reads it.
type fdRef struct{ fd, target string }

// files returns the open file paths of pid that lie in scope, and the fds
// that are files at all (a run filesystem's may be anywhere by path).
// Equivalent to: ls -l /proc/<pid>/fd.
func (ps *procScan) files(pid int) (inScope []string, fds []fdRef, err error) {
	dir := filepath.Join(ps.root, strconv.Itoa(pid), "fd")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil || !strings.HasPrefix(target, "/") {
			continue // closed meanwhile, or a socket, pipe or anon inode
		}
		fds = append(fds, fdRef{e.Name(), target})
		if ps.roots.InScope(target) && !slices.Contains(inScope, target) {
			inScope = append(inScope, target)
		}
	}
	slices.Sort(inScope)
	return inScope, fds, nil
}

// decide applies the scoping rules: first those a process meets on its own,
// then, until nothing changes, membership of a pid namespace whose init is
// in scope and zombies whose parent is in scope.
func (ps *procScan) decide(cands []*candidate) {
	byPID := make(map[int]*candidate, len(cands))
	inits := map[uint64]*candidate{}
	var refused []*candidate
	for _, c := range cands {
		byPID[c.p.PID] = c
		c.p.Decoy = ps.isDecoy(c.p)
		c.aside, c.p.SetAside = false, ""
		// A process that could not be read fully cannot be ruled out, so it is
		// kept (unconfirmed, not clean), except the init of the harness's own
		// pid namespace, which predates every run, and one what could be read
		// of which ties it to no run (setAside, once the rest is decided).
		unsure := c.p.Unreadable != "" && !ps.ownInit(c)
		switch {
		case c.p.Decoy || ps.direct(c.p):
			c.include = true
		case unsure && c.asideWhy != "" && !c.include:
			refused = append(refused, c)
		case unsure:
			c.include = true
		}
		if ps.foreign(c) {
			ps.readNSpid(c)
			if n := len(c.p.NSpid); n > 1 && c.p.NSpid[n-1] == 1 {
				inits[c.pidns] = c
			}
		}
	}
	ps.close(cands, byPID, inits)
	ps.setAside(cands, refused, byPID, inits)
}

// close applies the rules one process meets through another until nothing
// changes: a pid namespace whose init is in scope, a foreign mount
// namespace a process in scope lives in, a zombie's parent in scope, and a
// foreign namespace of another kind shared or pinned (tieNS).
func (ps *procScan) close(cands []*candidate, byPID map[int]*candidate, inits map[uint64]*candidate) {
	// A mount namespace other than the harness's own is a run's when a
	// process in scope lives in it: a host process that entered a
	// session's mount namespace carries no tag of its own.
	mntns := map[uint64]bool{}
	for changed := true; changed; {
		changed = false
		for _, c := range cands {
			if c.include && c.mntns != 0 && c.mntns != ps.self.mnt && !mntns[c.mntns] {
				mntns[c.mntns], changed = true, true
			}
		}
		for _, c := range cands {
			if c.include {
				continue
			}
			if init := inits[c.pidns]; ps.foreign(c) && init != nil && init.include {
				c.include, changed = true, true
			}
			if c.mntns != 0 && mntns[c.mntns] {
				c.include, changed = true, true
			}
			if parent := byPID[c.p.PPID]; c.zombie && parent != nil && parent.include {
				c.include, changed = true, true
			}
		}
		if !changed {
			changed = ps.tieNS(cands)
		}
	}
}

// direct reports whether p is in scope by its own facts: a run tag in argv,
// the run variable in its environment, CRIU's name, a faultwin cgroup, a
// cwd, root or open file in scope, or a file held on a run filesystem
// other than through a mount of a run's own mount namespace.
func (ps *procScan) direct(p snapshots.Process) bool {
	if p.Comm == model.CRIUComm || p.RunEnv != "" || len(p.Files) > 0 || len(p.Cgroups) > 0 || ps.recs.owns(p.Held) {
		return true
	}
	if ps.roots.InScope(p.Cwd) || ps.roots.InScope(p.Root) {
		return true
	}
	return slices.ContainsFunc(p.Argv, func(a string) bool { return strings.HasPrefix(a, model.TagPrefix) })
}

// ownInit reports whether c is the init of the harness's own pid namespace
// (pid 1, not known to be of another).
func (ps *procScan) ownInit(c *candidate) bool { return c.p.PID == 1 && !ps.foreign(c) }

func (ps *procScan) foreign(c *candidate) bool {
	return c.pidns != 0 && ps.self.pid != 0 && c.pidns != ps.self.pid
}

func (ps *procScan) isDecoy(p snapshots.Process) bool {
	return slices.ContainsFunc(ps.decoys[p.PID], func(start uint64) bool {
		return start == 0 || start == p.StartTime
	})
}

func (ps *procScan) readNSpid(c *candidate) {
	if c.nspid {
		return
	}
	c.nspid = true
	pr, err := ps.fs.Proc(c.p.PID)
	if err != nil {
		return
	}
	st, err := pr.NewStatus()
	if err != nil {
		return
	}
	c.p.NSpid = nil
	for _, n := range st.NSpids {
		c.p.NSpid = append(c.p.NSpid, int(n))
	}
}

// complete adds what is recorded only for processes in scope: NSpid and the
// namespace inodes. It reports false when the process vanished meanwhile.
func (ps *procScan) complete(c *candidate) bool {
	ps.readNSpid(c)
	if c.p.StartTime == 0 && c.p.Unreadable != "" {
		return true // stat itself was unreadable: nothing more to add
	}
	c.p.NS = map[string]uint64{}
	if c.pidns != 0 {
		c.p.NS["pid"] = c.pidns
	}
	var bad reasons
	for _, name := range []string{"mnt", "net"} {
		ino, err := readNS(ps.root, strconv.Itoa(c.p.PID), name)
		switch {
		case err == nil:
			c.p.NS[name] = ino
		case c.zombie:
			// an exited task has no mount or network namespace left
		case gone(err):
			if _, serr := os.Stat(filepath.Join(ps.root, strconv.Itoa(c.p.PID))); serr != nil {
				return false
			}
			bad.note("ns/"+name, err)
		default:
			bad.note("ns/"+name, err)
		}
	}
	if len(bad.order) > 0 {
		c.p.Unreadable = strings.TrimPrefix(c.p.Unreadable+"; "+bad.String(), "; ")
	}
	ps.recordNS(c)
	return true
}

// readNS returns the inode of namespace name of the process dir pid ("self"
// or a number). Equivalent to: readlink /proc/<pid>/ns/<name>.
func readNS(root, pid, name string) (uint64, error) {
	target, err := os.Readlink(filepath.Join(root, pid, "ns", name))
	if err != nil {
		return 0, err
	}
	_, rest, ok := strings.Cut(target, ":[")
	if !ok || !strings.HasSuffix(rest, "]") {
		return 0, errors.New("unexpected namespace link " + strconv.Quote(target))
	}
	return strconv.ParseUint(strings.TrimSuffix(rest, "]"), 10, 64)
}

// A mid-exit process is re-read up to exitWaitTries times, exitWaitStep
// apart, before it is reported unreadable.
const (
	exitWaitTries = 40
	exitWaitStep  = 5 * time.Millisecond
)

// gone reports whether err says the process no longer exists.
func gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
}

// reasons collects why parts of a process could not be read, grouped by
// cause: "environ, cwd: permission denied".
type reasons struct {
	order   []string            // causes in first-seen order
	what    map[string][]string // cause -> what failed with it
	notGone bool                // some failure was not "no such process/file"
}

func (r *reasons) note(what string, err error) {
	if err == nil {
		return
	}
	if !gone(err) {
		r.notGone = true
	}
	cause := err.Error()
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		cause = pe.Err.Error()
	}
	if r.what == nil {
		r.what = map[string][]string{}
	}
	if _, ok := r.what[cause]; !ok {
		r.order = append(r.order, cause)
	}
	r.what[cause] = append(r.what[cause], what)
}

func (r reasons) String() string {
	parts := make([]string, 0, len(r.order))
	for _, cause := range r.order {
		parts = append(parts, strings.Join(r.what[cause], ", ")+": "+cause)
	}
	return strings.Join(parts, "; ")
}

// StartTime returns pid's start time (field 22 of /proc/<pid>/stat), the
// second half of its reuse-proof identity.
func StartTime(pid int) (uint64, error) {
	st, _, err := StartState(pid)
	return st, err
}

// StartState returns pid's start time and its state letter ("S", "Z", ...).
func StartState(pid int) (uint64, string, error) {
	proc, err := procfs.NewProc(pid)
	if err != nil {
		return 0, "", err
	}
	st, err := proc.Stat()
	if err != nil {
		return 0, "", err
	}
	return st.Starttime, st.State, nil
}
