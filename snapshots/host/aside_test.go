package host

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/procfs"

	"faultwin/snapshots"
)

// fakeTree is a fake /proc built for one test: pid 100 is the harness
// ("self"), pid 1 the host's init, refused as this host refuses it.
type fakeTree struct {
	t    *testing.T
	root string
}

const (
	hostPidNS = 4026531836
	hostMntNS = 4026531841
	hostNetNS = 4026531840
	hostIpcNS = 4026531839
)

func newFakeTree(t *testing.T) *fakeTree {
	t.Helper()
	f := &fakeTree{t: t, root: t.TempDir()}
	f.readable(100, 1, "faultwin", "/", "faultwin", "run")
	f.write("100/mountinfo", "1 0 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n")
	f.write("100/net/dev", "Inter-|   Receive\n")
	f.link("self", "100")
	f.proc(1, 0, "init", "/", "/sbin/init")
	f.refuse(1)
	return f
}

func (f *fakeTree) write(rel, data string) {
	f.t.Helper()
	p := filepath.Join(f.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	_ = os.RemoveAll(p) // a refused entry stands as a directory
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fakeTree) link(rel, target string) {
	f.t.Helper()
	p := filepath.Join(f.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	_ = os.RemoveAll(p)
	if err := os.Symlink(target, p); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fakeTree) mkdir(rel string) {
	f.t.Helper()
	p := filepath.Join(f.root, rel)
	_ = os.RemoveAll(p)
	if err := os.MkdirAll(p, 0o755); err != nil {
		f.t.Fatal(err)
	}
}

// proc writes what the host shows of any process it lists, even one it
// refuses: stat, status, cmdline, cgroup, mountinfo and net (the
// harness's cgroup and namespaces).
func (f *fakeTree) proc(pid, ppid int, comm, cgroup string, argv ...string) {
	p := strconv.Itoa(pid)
	st := statLine(pid, "S", 0, uint64(pid*10))
	st = strings.Replace(st, "(init) S 1", "("+comm+") S "+strconv.Itoa(ppid), 1)
	f.write(p+"/stat", st)
	f.write(p+"/status", "Name:\t"+comm+"\nState:\tS (sleeping)\nPid:\t"+p+"\nPPid:\t"+strconv.Itoa(ppid)+"\nNSpid:\t"+p+"\n")
	f.write(p+"/cmdline", strings.Join(argv, "\x00")+"\x00")
	f.write(p+"/cgroup", "2:cpu:"+cgroup+"\n1:name=systemd:"+cgroup+"\n")
	f.write(p+"/mountinfo", "1 0 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n")
	if pid != 100 {
		f.link(p+"/net", "../100/net")
	}
}

// readable adds a process that can be read whole, in the host's
// namespaces.
func (f *fakeTree) readable(pid, ppid int, comm, cgroup string, argv ...string) {
	f.proc(pid, ppid, comm, cgroup, argv...)
	p := strconv.Itoa(pid)
	f.write(p+"/environ", "PATH=/bin\x00")
	f.link(p+"/cwd", "/")
	f.link(p+"/root", "/")
	f.mkdir(p + "/fd")
	f.link(p+"/ns/pid", "pid:["+strconv.Itoa(hostPidNS)+"]")
	f.link(p+"/ns/mnt", "mnt:["+strconv.Itoa(hostMntNS)+"]")
	f.link(p+"/ns/net", "net:["+strconv.Itoa(hostNetNS)+"]")
	f.link(p+"/ns/ipc", "ipc:["+strconv.Itoa(hostIpcNS)+"]")
}

// refuse makes pid's environ, cwd, root, descriptors and namespace links
// fail as the host's "permission denied" does: with an error that is not
// "no such process" (a fake tree read as root cannot say EACCES).
func (f *fakeTree) refuse(pid int) {
	p := strconv.Itoa(pid)
	for _, e := range []string{"environ", "cwd", "root", "ns/pid", "ns/mnt", "ns/net", "ns/ipc"} {
		f.mkdir(p + "/" + e)
	}
	_ = os.RemoveAll(filepath.Join(f.root, p, "fd"))
	f.write(p+"/fd", "")
}

// scan captures the fake tree's processes; between two reads it calls
// between with the number of pauses so far (from 1).
func (f *fakeTree) scan(between func(n int)) ([]snapshots.Process, int) {
	f.t.Helper()
	ps := newProcScan(f.root, fakeRoots, snapshots.Decoys{})
	n := 0
	ps.sleep = func(time.Duration) {
		n++
		if between != nil {
			between(n)
		}
	}
	procs, err := ps.scan(context.Background(), &incomplete{})
	if err != nil {
		f.t.Fatal(err)
	}
	return procs, n
}

func byPID(procs []snapshots.Process) map[int]snapshots.Process {
	m := map[int]snapshots.Process{}
	for _, p := range procs {
		m[p.PID] = p
	}
	return m
}

// A process the host's init forked, still a copy of it, is refused
// through every re-read; what can be read of it (its cgroup, its status,
// mount table and net entries, its parent) ties it to no run: it is
// recorded set aside, with why.
func TestRefusedNeighbourIsSetAside(t *testing.T) {
	f := newFakeTree(t)
	f.proc(300, 1, "process_api", "/", "/process_api", "--firecracker-init")
	f.refuse(300)
	procs, pauses := f.scan(nil)
	p, ok := byPID(procs)[300]
	if !ok {
		t.Fatalf("the refused process is not recorded: %+v", procs)
	}
	if !strings.Contains(p.Unreadable, "environ") || !strings.Contains(p.Unreadable, "cwd") {
		t.Errorf("Unreadable = %q", p.Unreadable)
	}
	const want = "host cgroup /, host pid, mnt and net namespaces, parent pid 1 (init) not of a run"
	if p.SetAside != want {
		t.Errorf("SetAside = %q, want %q", p.SetAside, want)
	}
	if pauses != len(rereadSteps) {
		t.Errorf("read again after %d pauses, want %d (one per step)", pauses, len(rereadSteps))
	}
	if _, ok := byPID(procs)[1]; ok {
		t.Errorf("the host's init is recorded: %+v", procs)
	}
}

// The host's init alone refused costs a capture nothing: it is never read
// again.
func TestRefusedInitIsNotReadAgain(t *testing.T) {
	procs, pauses := newFakeTree(t).scan(nil)
	if pauses != 0 || len(procs) != 0 {
		t.Errorf("pauses %d, processes %+v; want none", pauses, procs)
	}
}

// A refused process that evidence read of it ties or may tie to a run
// stays a gap: recorded unreadable, not set aside.
func TestRefusedProcessTiedToARunIsNotSetAside(t *testing.T) {
	f := newFakeTree(t)
	f.readable(400, 1, "refsup", "/", "refsup", "--tag", "faultwin:r1") // a run's process
	f.proc(401, 1, "sh", "/faultwin/r1/s1")                             // in a run's cgroup
	f.proc(402, 1, "sh", "/criu-yard/x")                                // in a cgroup named as CRIU's
	f.proc(403, 1, "sh", "/")                                           // in another pid namespace
	f.write("403/status", "Name:\tsh\nPid:\t403\nPPid:\t1\nNSpid:\t403\t1\n")
	f.proc(404, 1, "sh", "/") // in another net namespace
	f.mkdir("404/net")
	f.write("404/net/dev", "Inter-|\n")
	f.proc(405, 1, "sh", "/") // in another mount namespace
	f.write("405/mountinfo", "77 0 8:1 / / rw - ext4 /dev/sda1 rw\n")
	f.proc(406, 400, "sh", "/")  // a child of the run's process
	f.proc(408, 9999, "sh", "/") // a parent not seen
	f.proc(409, 1, "sh", "/")    // in the host's pid, mnt and net, and tied by nothing: the control
	// in the cgroup the host's init gives what it spawns: tied by nothing
	f.proc(410, 1, "sh", "/process_api/67ff")
	pids := []int{401, 402, 403, 404, 405, 406, 408}
	for _, pid := range append(pids, 409, 410) {
		f.refuse(pid)
	}
	procs, _ := f.scan(nil)
	expectGaps(t, byPID(procs), pids...)
	if cg := byPID(procs)[401].Cgroups; len(cg) == 0 {
		t.Errorf("401's run cgroup is not recorded: %+v", byPID(procs)[401])
	}
	if p := byPID(procs)[409]; p.SetAside == "" {
		t.Errorf("409 = %+v; want set aside", p)
	}
	if p := byPID(procs)[410]; !strings.HasPrefix(p.SetAside, "cgroup /process_api/67ff not a run's, host pid") {
		t.Errorf("410 SetAside = %q; want set aside, its cgroup named", p.SetAside)
	}
}

// While a run's process has an ipc namespace of its own, a refused process
// whose ipc namespace could not be read may be in it: a gap.
func TestRefusedProcessMayShareARunsNamespace(t *testing.T) {
	f := newFakeTree(t)
	f.readable(400, 1, "refsup", "/", "refsup", "--tag", "faultwin:r1")
	f.link("400/ns/ipc", "ipc:[4026532901]")
	f.proc(407, 1, "sh", "/")
	f.refuse(407)
	procs, _ := f.scan(nil)
	expectGaps(t, byPID(procs), 407)
}

// expectGaps checks that each of pids is recorded unreadable and not set
// aside.
func expectGaps(t *testing.T, got map[int]snapshots.Process, pids ...int) {
	t.Helper()
	for _, pid := range pids {
		p, ok := got[pid]
		if !ok {
			t.Errorf("pid %d is not recorded", pid)
			continue
		}
		if p.Unreadable == "" || p.SetAside != "" {
			t.Errorf("pid %d: Unreadable %q SetAside %q; want unreadable, not set aside", pid, p.Unreadable, p.SetAside)
		}
	}
}

// A process refused once and readable on a re-read (it exec'd) is read
// normally; one gone on a re-read is not recorded.
func TestRefusedThenReadableIsReadNormally(t *testing.T) {
	f := newFakeTree(t)
	f.proc(500, 1, "process_api", "/", "/process_api")
	f.refuse(500)
	f.proc(501, 1, "process_api", "/", "/process_api")
	f.refuse(501)
	f.proc(502, 1, "process_api", "/", "/process_api")
	f.refuse(502)
	procs, pauses := f.scan(func(n int) {
		if n != 2 {
			return
		}
		// 500 exec'd an untagged command, 501 a tagged one; 502 exited.
		f.readable(500, 1, "sleep", "/", "sleep", "1")
		f.readable(501, 1, "sleep", "/", "sleep", "--tag", "faultwin:r2")
		if err := os.RemoveAll(filepath.Join(f.root, "502")); err != nil {
			t.Fatal(err)
		}
	})
	got := byPID(procs)
	if p, ok := got[500]; ok {
		t.Errorf("500, readable and of no run, is recorded: %+v", p)
	}
	if p := got[501]; p.Unreadable != "" || p.SetAside != "" || p.Comm != "sleep" {
		t.Errorf("501 = %+v; want read whole as it is now", p)
	}
	if _, ok := got[502]; ok {
		t.Errorf("502, gone, is recorded")
	}
	if pauses != 2 {
		t.Errorf("%d pauses; want 2 (reading stops once none is refused)", pauses)
	}
}

// A refused neighbour that begins to exit after its last re-read has
// released the namespaces its readable parts are read through (the
// kernel answers its mount table with EINVAL, its net entries with
// nothing): it is gone or exiting, never a gap. Before, a short-lived
// neighbour caught so stopped a judge ("cannot rule out").
func TestRefusedNeighbourExitingWhileReadAside(t *testing.T) {
	for _, end := range []string{"gone", "exiting", "zombie", "alive"} {
		t.Run(end, func(t *testing.T) {
			f := newFakeTree(t)
			f.proc(300, 1, "link", "/", "/usr/local/go/pkg/tool/linux_amd64/link")
			f.refuse(300)
			ps := newProcScan(f.root, fakeRoots, snapshots.Decoys{})
			ps.sleep = func(time.Duration) {}
			pfs, err := procfs.NewFS(f.root)
			if err != nil {
				t.Fatal(err)
			}
			ps.fs = pfs
			ps.readSelf(&incomplete{})
			ps.readHostNS()
			pr, err := pfs.Proc(300)
			if err != nil {
				t.Fatal(err)
			}
			c := ps.read(pr)
			if c == nil || !c.refused {
				t.Fatalf("read %+v: want a refused process", c)
			}
			// what exit_task_namespaces leaves readable of it
			_ = os.RemoveAll(filepath.Join(f.root, "300", "mountinfo"))
			_ = os.RemoveAll(filepath.Join(f.root, "300", "net"))
			switch end {
			case "gone":
				_ = os.RemoveAll(filepath.Join(f.root, "300"))
			case "exiting":
				f.write("300/stat", statLine(300, "D", pfExiting, 3000))
			case "zombie":
				f.write("300/stat", statLine(300, "Z", 0, 3000))
			}
			alive := ps.readAside(c)
			switch end {
			case "gone":
				if alive {
					t.Error("a process gone while read aside is kept")
				}
			case "exiting", "zombie":
				if !alive || !c.p.Zombie() {
					t.Errorf("alive %v, zombie %v: want kept as exiting, never a gap", alive, c.p.Zombie())
				}
			case "alive":
				// Not exiting and its namespaces unreadable: what it is
				// cannot be told, so it stays a gap, as before.
				if !alive || c.p.Zombie() || c.asideWhy != "" {
					t.Errorf("alive %v, zombie %v, aside %q: want a gap", alive, c.p.Zombie(), c.asideWhy)
				}
			}
		})
	}
}
