package host

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"

	"faultwin/internal/model"
)

// A process the host refuses to show (permission denied on its environ,
// cwd, root, descriptors or namespace links) is most often not a run's: on
// some hosts root cannot read the host's init (pid 1), and every command
// that init spawns is, between its fork and its exec, a copy of it and just
// as unreadable; a moment later it is readable or gone. Counting such a
// process as a gap ("cannot rule out") let any neighbour's short-lived
// process stop a suite. So a refused process is read again a few times,
// and one still refused is set aside, recorded with why, when what can be
// read of it ties it to no run; otherwise it is kept, unconfirmed, as
// before.

// rereadSteps are the pauses before each new read of the processes a
// capture was refused, all of them together: at most 135 ms per capture,
// and nothing on a host where every process could be read.
var rereadSteps = []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond,
	40 * time.Millisecond, 60 * time.Millisecond}

// unread is what of a refused process could not be read, beyond what
// readAside reads itself: what a run could tie through it.
type unread struct {
	fd    bool     // its descriptors: a file on a run filesystem
	dirs  bool     // its cwd or root: one under a recorded mount
	kinds []string // its namespaces of these tie kinds
}

// rereadable reports whether c was refused and is worth reading again: the
// harness's own init is never counted, so it is not read again (on a host
// whose init is unreadable that would cost every capture the pauses).
func (ps *procScan) rereadable(c *candidate) bool { return c.refused && !ps.ownInit(c) }

// reread reads the refused processes of cands again, after each of
// rereadSteps, until every one is readable, gone or refused through them
// all, and returns cands with each re-read process as read last (gone ones
// dropped).
func (ps *procScan) reread(cands []*candidate) []*candidate {
	for _, step := range rereadSteps {
		if !slices.ContainsFunc(cands, ps.rereadable) {
			break
		}
		ps.sleep(step)
		out := cands[:0]
		for _, c := range cands {
			if ps.rereadable(c) {
				if c = ps.read(c.pr); c == nil {
					continue
				}
			}
			out = append(out, c)
		}
		cands = out
	}
	return cands
}

// ownFacts are the harness's own cgroups and namespaces as the readable
// parts of another process show them.
type ownFacts struct {
	cgroups map[string]string // hierarchy -> path
	depth   int               // pid namespaces from the proc mount's inward
	mountID string            // the first mount of its mount table
	netIno  uint64            // inode of its net/dev: one per net namespace
}

func (ps *procScan) ownFacts() *ownFacts {
	if ps.own != nil {
		return ps.own
	}
	ps.own = &ownFacts{cgroups: map[string]string{}}
	self, err := ps.fs.Self()
	if err == nil {
		if cgs, err := self.Cgroups(); err == nil {
			for _, cg := range cgs {
				ps.own.cgroups[hierarchy(cg)] = cg.Path
			}
		}
		if st, err := self.NewStatus(); err == nil {
			ps.own.depth = len(st.NSpids)
		}
	}
	ps.own.mountID = firstMountID(filepath.Join(ps.root, "self", "mountinfo"))
	ps.own.netIno = netIno(filepath.Join(ps.root, "self", "net", "dev"))
	return ps.own
}

func hierarchy(cg procfs.Cgroup) string {
	return strconv.Itoa(cg.HierarchyID) + ":" + strings.Join(cg.Controllers, ",")
}

// firstMountID returns the id of the first mount of a mount table, "" when
// unreadable. Mount ids are never shared between mount namespaces, so two
// tables that start with the same id are one namespace's. Equivalent to:
// head -1 /proc/<pid>/mountinfo | cut -d' ' -f1.
func firstMountID(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	id, _, _ := strings.Cut(line, " ")
	return id
}

// netIno returns the inode of a /proc/<pid>/net entry, 0 when unreadable:
// each network namespace has its own, and /proc/<pid>/net is readable when
// /proc/<pid>/ns/net is refused. Equivalent to: stat -L -c %i.
func netIno(path string) uint64 {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return 0
	}
	return st.Ino
}

// readAside reads what the host still shows of a refused process (its
// cgroup, status, mount table and net entries stay readable where its
// environ, cwd and namespace links are refused) and sets c.asideWhy when
// that places it in no cgroup named as a run's or CRIU's and in the
// harness's pid, mount and net namespaces, with no other namespace of
// another than the host's it could be read in. It records what it could not read for
// setAside. It returns false when the process ended while it was read: a
// neighbour's short-lived process that begins to exit here has already
// released the namespaces and cgroups these reads go through, and is
// neither set aside nor a gap but gone (or, not yet reaped, a zombie).
func (ps *procScan) readAside(c *candidate) bool {
	own := ps.ownFacts()
	cgs, err := c.pr.Cgroups()
	if err != nil || len(cgs) == 0 {
		return !ps.ended(c)
	}
	why := []string{"host cgroup /"}
	var other []string
	for _, cg := range cgs {
		switch {
		case cg.Path == "/":
		case runLike(cg.Path):
			return true // a run's, or named as one (a run's direct mark is read apart)
		case own.cgroups[hierarchy(cg)] == cg.Path:
			why[0] = "the harness's cgroups"
		case !slices.Contains(other, cg.Path):
			// The host puts what its init spawns in cgroups of its own
			// (memory:/process_api/<id>): a run's have "faultwin" in them.
			other = append(other, cg.Path)
		}
	}
	if len(other) > 0 {
		why[0] = "cgroup " + strings.Join(other, ", ") + " not a run's"
	}
	if !ps.hostPidNS(c, own) || !ps.hostMntNS(c, own) || !ps.hostNetNS(c, own) {
		return !ps.ended(c)
	}
	why = append(why, "host pid, mnt and net namespaces")
	c.unread.kinds = nil
	for _, kind := range tieKinds[1:] {
		ino, err := readNS(ps.root, strconv.Itoa(c.p.PID), kind)
		switch {
		case err == nil && ps.foreignNS(ino):
			return true // a run's maybe: setAside does not read it again
		case err == nil, gone(err):
			// the host's, or a kind this kernel lacks
		default:
			c.unread.kinds = append(c.unread.kinds, kind)
		}
	}
	c.asideWhy = strings.Join(why, ", ")
	return true
}

// ended reports whether c, whose readable parts could not be read, ended
// while it was read: gone, or its pid taken by another. One that is
// exiting or a zombie by now is marked so (Zombie: what it held is being
// released, as for every exiting process read) and kept.
func (ps *procScan) ended(c *candidate) bool {
	now, err := c.pr.Stat()
	switch {
	case err != nil:
		return gone(err)
	case now.Starttime != c.p.StartTime:
		return true
	case now.State == "Z" || now.State == "X":
		c.p.State, c.zombie = now.State, true
	case now.Flags&pfExiting != 0:
		c.p.Exiting = true
	}
	return false
}

// runLike reports whether a cgroup path has a component named as a run's
// cgroups or CRIU's are ("faultwin*", "criu*"), as the cgroup capture
// looks for them.
func runLike(path string) bool {
	for _, comp := range strings.Split(path, "/") {
		if strings.HasPrefix(comp, model.CgroupDir) || strings.HasPrefix(comp, "criu") {
			return true
		}
	}
	return false
}

// hostPidNS reports whether c lives in the harness's pid namespace: by its
// link, or, refused that, by as many pids in its status as the harness
// has (one more for each pid namespace below the proc mount's).
func (ps *procScan) hostPidNS(c *candidate, own *ownFacts) bool {
	if c.pidns != 0 {
		return c.pidns == ps.self.pid
	}
	ps.readNSpid(c)
	return own.depth > 0 && len(c.p.NSpid) == own.depth
}

// hostMntNS reports whether c lives in the harness's mount namespace: by
// its link, or by the first mount of its table.
func (ps *procScan) hostMntNS(c *candidate, own *ownFacts) bool {
	if c.mntns != 0 {
		return c.mntns == ps.self.mnt
	}
	id := firstMountID(filepath.Join(ps.root, strconv.Itoa(c.p.PID), "mountinfo"))
	return id != "" && id == own.mountID
}

// hostNetNS reports whether c lives in the harness's net namespace: by its
// link, or by the inode of its net/dev.
func (ps *procScan) hostNetNS(c *candidate, own *ownFacts) bool {
	if ino := c.ns["net"]; ino != 0 {
		return ino == ps.self.net
	}
	ino := netIno(filepath.Join(ps.root, strconv.Itoa(c.p.PID), "net", "dev"))
	return ino != 0 && ino == own.netIno
}

// setAside decides, once the rest of the scan is decided, each refused
// process whose readable parts tie it to no run (refused): it is set aside,
// recorded with why, unless a run could still tie it through what could not
// be read (its descriptors or directories while a run filesystem is
// mounted or a mount is recorded, a namespace of a kind some process in
// scope, pin or record has another than the host's of) or through its
// parent (in scope, or not seen). Otherwise it is kept, as every unreadable
// process was before, and what it ties is decided again.
func (ps *procScan) setAside(cands, refused []*candidate, byPID map[int]*candidate, inits map[uint64]*candidate) {
	for changed := true; changed; {
		changed = false
		_, kinds := ps.tieTargets(cands)
		for _, c := range refused {
			if c.include {
				continue
			}
			parent, ok := ps.parentNotOfRun(c, byPID)
			if !ok || ps.mayTie(c, kinds) {
				c.include, c.aside, c.p.SetAside, changed = true, false, "", true
				continue
			}
			c.aside, c.p.SetAside = true, c.asideWhy+", "+parent
		}
		if changed {
			ps.close(cands, byPID, inits)
		}
	}
}

// mayTie reports whether a run could tie c through what could not be read
// of it.
func (ps *procScan) mayTie(c *candidate, kinds map[string]bool) bool {
	files := len(ps.runFS.devs) > 0 || len(ps.recs.mnts) > 0 || len(ps.recs.detached) > 0
	if (c.unread.fd || c.unread.dirs) && files {
		return true
	}
	return slices.ContainsFunc(c.unread.kinds, func(k string) bool { return kinds[k] })
}

// parentNotOfRun names c's parent when it is seen and not in scope (or is
// the harness's own init): "parent pid 1 (init) not of a run".
func (ps *procScan) parentNotOfRun(c *candidate, byPID map[int]*candidate) (string, bool) {
	p := byPID[c.p.PPID]
	if p == nil || p.include {
		return "", false
	}
	return "parent pid " + strconv.Itoa(p.p.PID) + " (" + p.p.Comm + ") not of a run", true
}
