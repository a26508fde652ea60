package triggers

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"faultwin/internal/model"
	"faultwin/internal/procstat"
)

// recentWindow is how long after a pid is first seen its comm is still
// re-read: a fresh fork shows its parent's comm until it execs, and the exec
// follows the fork within this bound in every supervisor we drive.
const recentWindow = 100 * time.Millisecond

// pfKthread is PF_KTHREAD in the flags field of /proc/<pid>/stat: kernel
// threads cannot belong to a run and are never read again.
const pfKthread = 0x00200000

// maxFile bounds one procfs read, and so what one tick may cost: a larger
// environment is only read in part.
const maxFile = 4 << 20

// proc is what the watcher knows of one pid since it was first listed.
type proc struct {
	id       model.PID
	ppid     int
	comm     string
	state    byte
	seen     time.Time // first listed
	kthread  bool
	member   bool
	why      string // how it is of the run: "operation", "descent", "env", "cgroup"
	decided  bool
	deciding bool
	// retag is set when its marks could not be read yet: an exec between
	// taking the new comm and laying out the new environment shows an
	// empty environ. Its marks are read again while it is hot.
	retag bool
	// roles is the set of roles it has (bit i: roles[i]): a role is a
	// predicate, and the CRIU that restores is both "every CRIU runc runs"
	// and "the CRIU that holds the checkpoint directory".
	roles uint64
	// pending: a member whose comm some role with Holds has, and which has
	// not that role yet, or whose argv read empty; it is classified again
	// every tick.
	pending bool
	initial bool   // listed by the first tick: there before the watch began
	commFd  int    // held open while hot, so a re-read is one pread; -1: none
	listed  uint64 // the tick that last listed it
}

// scanner keeps the process table between ticks so that a tick reads only
// what changed: new pids, and the comm of pids that may still exec.
type scanner struct {
	dirfd  int // the proc mount, listed with getdents and used for openat
	run    string
	op     model.PID
	roles  []Role
	byComm map[string][]int // roles by comm
	envKey []byte           // "\x00FAULTWIN_RUN=<run>\x00"

	procs map[int]*proc
	hot   []*proc // members and recent non-members: their comm is re-read
	fresh []*proc
	tick  uint64

	appeared []Appearance
	roleSeen []bool
	// freshRole is each role's first process that was not there when the
	// watch began: what enters an "appeared" phase.
	freshRole []*Appearance
	ph        phaseState
	// detail: an observing watch keeps each role's first new process
	// with its argv and cgroup (freshSeen), in order.
	detail    bool
	freshSeen []Appearance

	dents []byte
	buf   []byte
}

func newScanner(root string, run string, op model.PID, roles []Role, phases []Phase) (*scanner, error) {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("triggers: open %s: %w", root, err)
	}
	s := &scanner{
		dirfd: fd, run: run, op: op, roles: roles,
		byComm:    map[string][]int{},
		procs:     map[int]*proc{},
		roleSeen:  make([]bool, len(roles)),
		freshRole: make([]*Appearance, len(roles)),
		ph:        newPhaseState(phases, roles),
		dents:     make([]byte, 64<<10),
		buf:       make([]byte, 8<<10),
	}
	if run != "" {
		s.envKey = []byte("\x00" + model.RunEnvKey + "=" + run + "\x00")
	}
	for i, r := range roles {
		for _, c := range r.Comms {
			s.byComm[c] = append(s.byComm[c], i)
		}
	}
	return s, nil
}

func (s *scanner) close() {
	for _, p := range s.hot {
		p.cool()
	}
	s.hot = nil
	unix.Close(s.dirfd)
}

// cool releases what p held while hot.
func (p *proc) cool() {
	if p.commFd >= 0 {
		unix.Close(p.commFd)
		p.commFd = -1
	}
}

// scan is one tick: list the proc mount once, read stat of new pids and
// decide whether they are of the run, re-read the comm of hot pids. Whether
// a pid is of the run is decided when it is first seen, not only for role
// matches: descent needs the parent it has then, and Present must be ready
// at the kill without reading every environment while the kill waits. A
// steady tick therefore reads nothing but the listing and the hot comms.
func (s *scanner) scan(now time.Time) error {
	s.tick++
	first := s.tick == 1
	before := len(s.procs)
	s.fresh = s.fresh[:0]
	listed, err := s.list()
	if err != nil {
		return err
	}
	if listed-len(s.fresh) < before {
		for pid, p := range s.procs {
			if p.listed != s.tick {
				delete(s.procs, pid)
			}
		}
	}
	// Stat every new pid before deciding any: a parent and its child can be
	// new in the same tick, in either pid order.
	n := 0
	for _, p := range s.fresh {
		if s.stat(p) {
			s.fresh[n] = p
			n++
		} else {
			delete(s.procs, p.id.PID)
		}
	}
	s.fresh = s.fresh[:n]
	for _, p := range s.fresh {
		s.decide(p)
	}

	// Re-read comm of what may still exec, then add this tick's new pids to
	// that set. Processes already running when the watch began are not
	// fresh forks: only those of the run are followed.
	keep := s.hot[:0]
	for _, p := range s.hot {
		if p.listed != s.tick || (!p.member && now.Sub(p.seen) >= recentWindow) {
			p.cool()
			continue
		}
		keep = append(keep, p)
		s.recomm(p, now)
		if p.pending {
			s.classify(p, now)
		}
	}
	s.hot = keep
	for _, p := range s.fresh {
		if !p.kthread && (p.member || p.retag || !first) {
			s.hot = append(s.hot, p)
		}
		s.classify(p, now)
	}
	return nil
}

// list reads the proc mount's directory and registers new pids; it returns
// how many pids it listed.
func (s *scanner) list() (int, error) {
	if _, err := unix.Seek(s.dirfd, 0, 0); err != nil {
		return 0, fmt.Errorf("triggers: rewind proc: %w", err)
	}
	listed := 0
	for {
		n, err := unix.Getdents(s.dirfd, s.dents)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("triggers: list proc: %w", err)
		}
		if n == 0 {
			return listed, nil
		}
		for off := 0; off+19 < n; {
			reclen := int(binary.NativeEndian.Uint16(s.dents[off+16:]))
			if reclen == 0 {
				break
			}
			pid := 0
			for _, c := range s.dents[off+19 : off+reclen] {
				if c < '0' || c > '9' {
					if c != 0 {
						pid = 0
					}
					break
				}
				pid = pid*10 + int(c-'0')
			}
			off += reclen
			if pid <= 0 {
				continue
			}
			listed++
			// A pid that exited and was reused between two ticks keeps its
			// old entry; kill's start-time check refuses it rather than
			// hitting the newcomer.
			p := s.procs[pid]
			if p == nil {
				p = &proc{id: model.PID{PID: pid}, commFd: -1, initial: s.tick == 1}
				s.procs[pid] = p
				s.fresh = append(s.fresh, p)
			}
			p.listed = s.tick
		}
	}
}

// stat fills identity, parent, comm and state; false means the pid is gone
// or unreadable, and it is looked at again if still listed next tick. One
// read gives all of them: descent needs the parent as it is when the child
// is first seen, and identity needs the start time.
func (s *scanner) stat(p *proc) bool {
	st, err := s.readStat(p.id.PID)
	if err != nil {
		return false
	}
	p.id.StartTime, p.ppid, p.comm, p.state = st.StartTime, st.PPID, st.Comm, st.State
	p.kthread = st.Flags&pfKthread != 0
	p.seen = time.Now()
	return true
}

// decide sets whether p is of the run: the operation itself, a descendant
// of it (through parents seen), or tagged by environment or cgroup.
func (s *scanner) decide(p *proc) {
	if p.decided || p.deciding {
		return
	}
	p.deciding = true
	defer func() { p.deciding, p.decided = false, true }()
	if p.kthread {
		return
	}
	if s.op.PID != 0 && p.id == s.op {
		p.member, p.why = true, "operation"
		return
	}
	if parent := s.procs[p.ppid]; parent != nil && parent.listed == s.tick {
		s.decide(parent)
		if parent.member && (parent.why == "operation" || parent.why == "descent") {
			p.member, p.why = true, "descent"
			return
		}
	}
	s.tagged(p)
}

// tagged reads environment and cgroup, the two marks a process carries
// whatever its ancestry.
func (s *scanner) tagged(p *proc) {
	if s.run == "" {
		return
	}
	env, sure := s.hasEnv(p.id.PID)
	p.retag = false
	if env {
		p.member, p.why = true, "env"
		return
	}
	if s.inCgroup(p.id.PID) {
		p.member, p.why = true, "cgroup"
		return
	}
	p.retag = !sure
}

// recomm re-reads the comm of a hot pid; an exec may have turned it into a
// role, and may have given it the run's environment. The comm file stays
// open between ticks: a pread costs one syscall where open, read and close
// cost three, and the open file keeps naming this process, not a later
// holder of its pid.
func (s *scanner) recomm(p *proc, now time.Time) {
	if p.commFd < 0 {
		fd, err := unix.Openat(s.dirfd, strconv.Itoa(p.id.PID)+"/comm", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return // gone: dropped when no longer listed
		}
		p.commFd = fd
	}
	var buf [64]byte
	n, err := unix.Pread(p.commFd, buf[:], 0)
	if err != nil || n == 0 {
		return
	}
	b := bytes.TrimSuffix(buf[:n], []byte("\n"))
	if string(b) == p.comm && (p.member || !p.retag) {
		return
	}
	comm := string(b)
	p.comm = comm
	if !p.member {
		if _, ok := s.byComm[comm]; !ok {
			return
		}
		s.tagged(p)
	}
	s.classify(p, now)
}

// classify gives a member its roles from its comm (and argv, parent and
// what it holds) and records each role's first appearance.
func (s *scanner) classify(p *proc, now time.Time) {
	if !p.member {
		return
	}
	roles, unsure := s.rolesOf(p)
	p.roles = roles
	p.pending = unsure || slices.ContainsFunc(s.byComm[p.comm], func(i int) bool { return len(s.roles[i].Holds) > 0 && !p.has(i) })
	for r := range s.roles {
		if !p.has(r) {
			continue
		}
		if !p.initial && s.freshRole[r] == nil {
			s.freshRole[r] = &Appearance{Role: s.roles[r].Name, PID: p.id, Comm: p.comm, At: now}
			if s.detail {
				a := *s.freshRole[r]
				a.Argv, a.Cgroup = readArgv(p.id.PID), s.cgroupOf(p.id.PID)
				s.freshSeen = append(s.freshSeen, a)
			}
		}
		if !s.roleSeen[r] {
			s.roleSeen[r] = true
			s.appeared = append(s.appeared, Appearance{Role: s.roles[r].Name, PID: p.id, Comm: p.comm, At: now})
		}
	}
}

func (p *proc) has(r int) bool { return p.roles&(1<<r) != 0 }

// rolesOf returns the roles p's comm (and, for roles that name argv words,
// parents or what they hold, its argv, its parent's comm and its open
// files) gives it. Two roles may share a comm ("podman" the operation and
// "podman container cleanup"): the argv tells them apart. unsure is set
// when an argv was needed and read empty: a process caught mid-exec shows
// its new comm before its new argv is laid out, so it is read again.
func (s *scanner) rolesOf(p *proc) (roles uint64, unsure bool) {
	var argv []string
	read := false
	for _, r := range s.byComm[p.comm] {
		role := s.roles[r]
		if len(role.Parent) > 0 {
			parent := s.procs[p.ppid]
			if parent == nil || !slices.Contains(role.Parent, parent.comm) {
				continue
			}
		}
		if len(role.Holds) > 0 && !s.holds(p.id.PID, role.Holds) {
			continue
		}
		if len(role.Argv) > 0 {
			if !read {
				argv, read = readArgv(p.id.PID), true
				unsure = len(argv) == 0 || argv[0] == ""
			}
			if !containsAll(argv, role.Argv) {
				continue
			}
		}
		roles |= 1 << r
	}
	return roles, unsure
}

func readArgv(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}

func containsAll(argv, words []string) bool {
	for _, w := range words {
		if !slices.Contains(argv, w) {
			return false
		}
	}
	return true
}

// targets returns the live processes of the run that have role r at this
// tick, oldest first; for a Top role only those whose parent has another
// role (CRIU's top process, not its restorer forks).
func (s *scanner) targets(r int) []*proc {
	var out []*proc
	for _, p := range s.procs {
		if p.member && p.has(r) && p.state != 'Z' && p.state != 'X' {
			out = append(out, p)
		}
	}
	if s.roles[r].Top && len(out) > 1 {
		tops := out[:0:0]
		for _, p := range out {
			if parent := s.procs[p.ppid]; parent == nil || !parent.has(r) {
				tops = append(tops, p)
			}
		}
		if len(tops) > 0 {
			out = tops
		}
	}
	slices.SortFunc(out, func(a, b *proc) int {
		if a.id.StartTime != b.id.StartTime {
			if a.id.StartTime < b.id.StartTime {
				return -1
			}
			return 1
		}
		return a.id.PID - b.id.PID
	})
	return out
}

// present lists the run's processes as "comm pid", by pid.
func (s *scanner) present() []string {
	var ps []*proc
	for _, p := range s.procs {
		if p.member {
			ps = append(ps, p)
		}
	}
	slices.SortFunc(ps, func(a, b *proc) int { return a.id.PID - b.id.PID })
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.comm+" "+strconv.Itoa(p.id.PID))
	}
	return out
}

// hasEnv reports whether pid's environment holds the run's key; sure is
// false when there was none to read: an empty environ is what a process
// shows in the middle of an exec, and a gone one is dropped anyway.
func (s *scanner) hasEnv(pid int) (has, sure bool) {
	b, err := s.readAt(pid, "environ")
	if err != nil || len(b) == 0 {
		return false, false
	}
	key := s.envKey
	if bytes.HasPrefix(b, key[1:]) || bytes.Contains(b, key) {
		return true, true
	}
	// the last entry may lack its NUL
	return bytes.HasSuffix(b, key[:len(key)-1]) || bytes.Equal(b, key[1:len(key)-1]), true
}

func (s *scanner) inCgroup(pid int) bool {
	b, err := s.readAt(pid, "cgroup")
	if err != nil {
		return false
	}
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		// "hierarchy-id:controllers:path"; the path may itself hold colons
		_, rest, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		if _, path, ok := bytes.Cut(rest, []byte(":")); ok {
			if run, ok := model.RunOfCgroup(string(path)); ok && run == s.run {
				return true
			}
		}
	}
	return false
}

// cgroupOf is pid's cgroup: the first path of /proc/<pid>/cgroup other
// than the root ("/" when every line is the root, "" unreadable).
func (s *scanner) cgroupOf(pid int) string {
	b, err := s.readAt(pid, "cgroup")
	if err != nil {
		return ""
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if _, rest, ok := bytes.Cut(line, []byte(":")); ok {
			if _, path, ok := bytes.Cut(rest, []byte(":")); ok && string(path) != "/" {
				return string(path)
			}
		}
	}
	return "/"
}

func (s *scanner) readStat(pid int) (procstat.Stat, error) {
	b, err := s.readAt(pid, "stat")
	if err != nil {
		return procstat.Stat{}, err
	}
	return procstat.Parse(b)
}

// readAt reads <proc>/<pid>/<name> into the scanner's buffer; the result is
// valid until the next read.
func (s *scanner) readAt(pid int, name string) ([]byte, error) {
	return readInto(s.dirfd, strconv.Itoa(pid)+"/"+name, &s.buf)
}

func readInto(dirfd int, path string, buf *[]byte) ([]byte, error) {
	fd, err := unix.Openat(dirfd, path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	b := *buf
	n := 0
	for {
		if n == len(b) {
			if len(b) >= maxFile {
				break
			}
			b = append(b, make([]byte, len(b))...)
			*buf = b
		}
		m, err := unix.Read(fd, b[n:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	return b[:n], nil
}
