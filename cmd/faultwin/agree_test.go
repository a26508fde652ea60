package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"faultwin/drivers/reclaim"
	"faultwin/internal/hosttest"
	"faultwin/internal/model"
	"faultwin/snapshots"
	"faultwin/snapshots/host"
	"faultwin/windows/runner"
)

// These tests plant leftovers a runtime really leaves and check that the
// four judges of a clean host agree on them: hostcheck, a window's
// preflight, the last resort (with the judge after a window) and
// `faultwin sweep`'s final word.

// cgroupHier is a v1 hierarchy of this host (cgroup v1 and hybrid hosts
// mount one per controller), or the unified root.
func cgroupHier(t *testing.T, controller string) string {
	t.Helper()
	if fi, err := os.Stat("/sys/fs/cgroup/" + controller); err == nil && fi.IsDir() {
		return "/sys/fs/cgroup/" + controller
	}
	return "/sys/fs/cgroup"
}

// rmdirDeep removes dir and what is below it, deepest first, at cleanup.
func rmdirDeep(t *testing.T, top string) {
	t.Cleanup(func() {
		var dirs []string
		_ = filepath.WalkDir(top, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		slices.Reverse(dirs)
		for _, d := range dirs {
			_ = syscall.Rmdir(d)
		}
	})
}

// preflightSays runs a window's real preflight on the host (the window
// stops there when the host is unclean) and returns what it refused on.
func preflightSays(t *testing.T, root string) []string {
	t.Helper()
	ws, err := runner.LoadWindows("../../windows/refsup")
	if err != nil {
		t.Fatal(err)
	}
	o, err := runner.New(runner.Config{Bin: "/nonexistent/refsup", StateRoot: root, LogDir: t.TempDir()}).Run(context.Background(), ws[0])
	if err != nil {
		t.Fatal(err)
	}
	if o.Verdict.Status != model.StatusInvalid || o.HostLeftAt != "preflight" {
		t.Fatalf("preflight let %s run on a planted leftover: %s %s", ws[0].ID, o.Verdict.Status, o.Verdict.Reason)
	}
	return o.HostLeft
}

// TestJudgesAgreeOnNestedCgroup: a runtime's cgroup nested below a run's
// (containerd's shim puts a sandbox's inside the container's) in one
// hierarchy only, below the depth a capture used to walk. Every judge names
// it; the last resort removes it deepest first, where an rmdir of its
// parent alone failed with EBUSY and poisoned every later window.
func TestJudgesAgreeOnNestedCgroup(t *testing.T) {
	hosttest.Need(t, "makes cgroups and reads the whole host")
	root := t.TempDir()
	run := "ragrnest1"
	top := filepath.Join(cgroupHier(t, "cpuset"), model.CgroupDir, run)
	nested := filepath.Join(top, "fw2", "5f0c2a91e8d4")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	rmdirDeep(t, top)
	want := "cgroup " + nested + ": of run " + run
	hc := hostcheckLists(t, root, want)
	judged, err := reclaim.Judge(context.Background(), "test", runner.AllRoots(snapshots.DefaultRoots(root)))
	if err != nil {
		t.Fatal(err)
	}
	pre := preflightSays(t, root)
	for name, said := range map[string][]string{"the judge": judged.Left, "the preflight": pre} {
		if !slices.Contains(said, want) {
			t.Errorf("%s does not name %q: %q", name, want, said)
		}
	}
	for _, l := range judged.Left {
		if !strings.Contains(hc, l) {
			t.Errorf("hostcheck and the judge disagree: %q not in\n%s", l, hc)
		}
	}
	r := reclaim.Run(context.Background(), reclaim.Plan{Scope: model.NewScope(root, run), Roots: snapshots.DefaultRoots(root)})
	if len(r.Errors) > 0 {
		t.Fatalf("last resort: %q", r.Errors)
	}
	if !slices.Contains(r.CgroupsRemoved, nested) || !slices.Contains(r.CgroupsRemoved, top) {
		t.Errorf("last resort removed %q, want %s and its parents", r.CgroupsRemoved, nested)
	}
	after, err := reclaim.Judge(context.Background(), "test", runner.AllRoots(snapshots.DefaultRoots(root)))
	if err != nil || !after.Clean() {
		t.Fatalf("not clean after the last resort: %q %v", after.Left, err)
	}
	out, code, _ := runVerb(t, "sweep", "--state-root", root, "--refsup", "/nonexistent/refsup")
	if code != 0 || !strings.Contains(out, "sweep: host clean") {
		t.Errorf("sweep on the cleaned host: exit %d\n%s", code, out)
	}
}

// frozenBeside starts a sleep in the cgroup runCg of a run (in the pids
// hierarchy) and, in the v1 freezer, in a frozen cgroup it shares with a
// neighbour's sleep of no run. The last resort thaws a run's frozen
// cgroups but never one holding another's task, so the run's sleep keeps
// its SIGKILL pending: a process that cannot be removed, and its cgroup
// with it, as a runtime's frozen task beside someone else's.
func frozenBeside(t *testing.T, runCg string) (p, neighbour *exec.Cmd, shared string) {
	t.Helper()
	if fi, err := os.Stat("/sys/fs/cgroup/freezer"); err != nil || !fi.IsDir() {
		t.Fatal("this test needs the v1 freezer hierarchy (/sys/fs/cgroup/freezer), as the mutant specs do: the v2 freezer lets SIGKILL through, so nothing there stays unremovable")
	}
	start := func(arg string) *exec.Cmd {
		c := exec.Command("/bin/sleep", arg)
		c.Env = []string{}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _, _ = c.Process.Wait() })
		return c
	}
	p, neighbour = start("1006"), start("1007")
	shared = filepath.Join("/sys/fs/cgroup/freezer", fmt.Sprintf("fwagree-shared-%d", p.Process.Pid))
	hosttest.Cgroup(t, runCg)
	hosttest.Join(t, runCg, p.Process.Pid)
	hosttest.Cgroup(t, shared)
	hosttest.Join(t, shared, p.Process.Pid)
	hosttest.Join(t, shared, neighbour.Process.Pid)
	hosttest.Freeze(t, shared)
	return p, neighbour, shared
}

// TestJudgesAgreeOnUnremovable: a task in a run's cgroup, frozen in a
// cgroup a neighbour's task shares, outlives its SIGKILL. The sweep says
// what it could not remove and why (the frozen cgroup it left frozen, and
// why), and exits non-zero where it used to print the EBUSY and exit 0;
// hostcheck and the judge name the same leftovers.
func TestJudgesAgreeOnUnremovable(t *testing.T) {
	hosttest.Need(t, "makes and freezes cgroups and reads the whole host")
	root := t.TempDir()
	run := "ragrfrz1"
	top := filepath.Join("/sys/fs/cgroup/pids", model.CgroupDir, run)
	dir := filepath.Join(top, "fw2")
	rmdirDeep(t, top)
	p, neighbour, shared := frozenBeside(t, dir)
	out, code, serr := runVerb(t, "sweep", "--state-root", root, "--refsup", "/nonexistent/refsup")
	if code != exitFail || serr == nil {
		t.Errorf("sweep exit %d, want %d: a run's cgroup is still there\n%s", code, exitFail, out)
	}
	said := out
	if serr != nil {
		said += "\n" + serr.Error()
	}
	for _, want := range []string{
		fmt.Sprintf("pid %d (sleep) still there 5s after SIGKILL (state D): in frozen cgroup %s (FROZEN), not thawed: it holds pid %d, not of the run", p.Process.Pid, shared, neighbour.Process.Pid),
		"cgroup " + dir + ": device or resource busy (tasks still in it: " + fmt.Sprint(p.Process.Pid) + ")",
		"sweep: host NOT clean after the sweep",
		"cgroup " + dir + ": of run " + run,
		"sweep: 3 leftovers of a run are still on the host", // the process, fw2 and its parent
	} {
		if !strings.Contains(said, want) {
			t.Errorf("sweep does not say %q:\n%s", want, said)
		}
	}
	judged, err := reclaim.Judge(context.Background(), "test", runner.AllRoots(snapshots.DefaultRoots(root)))
	if err != nil {
		t.Fatal(err)
	}
	hc, hcode, _ := runVerb(t, "hostcheck", "--state-root", root)
	if hcode != exitFail || judged.Clean() {
		t.Errorf("hostcheck exit %d, judge clean %v: both must refuse the host", hcode, judged.Clean())
	}
	for _, l := range judged.Left {
		if !strings.Contains(hc, l) || !strings.Contains(out, l) {
			t.Errorf("the judge's %q is not in hostcheck's or the sweep's output", l)
		}
	}
	if !hosttest.IsFrozen(shared) {
		t.Errorf("the sweep thawed %s, which holds a neighbour's task", shared)
	}
	if err := os.WriteFile(filepath.Join(shared, "freezer.state"), []byte("THAWED"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := p.Process.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("the thawed sleep ended %v, want killed by the SIGKILL pending while it was frozen", st)
	}
	sweepCleans(t, root)
}

// TestRunStopsOnceOnPlantedLeftover: a containerd window after which a
// frozen task stays in a cgroup of its run (planted after the death, before
// the sweeps) stops the run once: the last resort says why it could not
// remove it, the message names the leftover and how to clean it, and the
// next window is NOT RUN instead of INVALID at its preflight.
func TestRunStopsOnceOnPlantedLeftover(t *testing.T) {
	hosttest.Need(t, "runs containerd windows and freezes a cgroup")
	root := "/var/lib/faultwin/stoptest"
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(root) })
	ws, err := runner.LoadWindows("../../windows/containerd")
	if err != nil {
		t.Fatal(err)
	}
	var picked []model.Window
	for _, id := range []string{"CK1_5", "CD1_20"} {
		i := slices.IndexFunc(ws, func(w model.Window) bool { return w.ID == id })
		if i < 0 {
			t.Fatalf("%s is not registered", id)
		}
		picked = append(picked, ws[i])
	}
	var planted, shared string
	cfg := runner.Config{StateRoot: root, LogDir: t.TempDir(),
		AfterDeath: func(ctx context.Context, sc model.Scope) error {
			top := filepath.Join("/sys/fs/cgroup/pids", model.CgroupDir, sc.Run)
			planted = filepath.Join(top, "planted")
			rmdirDeep(t, top)
			_, _, shared = frozenBeside(t, planted)
			return nil
		}}
	s, err := runner.Open(cfg, "../..", filepath.Join(t.TempDir(), "stop.jsonl"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	err = runAll(context.Background(), &out, &windowSession{windows: picked, runner: s.Runner, Session: s})
	_ = s.Close()
	got := out.String()
	var ec exitCoder
	if !errors.As(err, &ec) || ec.ExitCode() == 0 {
		t.Errorf("run exit %v, want non-zero", err)
	}
	for _, want := range []string{
		"host left unclean after window CK1_5",
		"cgroup " + planted + ": of run ",
		"the last resort could not remove them: ",
		"cgroup " + planted + ": device or resource busy (tasks still in it: ",
		"in frozen cgroup " + shared + " (FROZEN), not thawed: it holds pid ",
		"stopped: the 1 windows after it are NOT RUN",
		"sudo make sweep",
		"NOT RUN: CD1_20: the host was left unclean by CK1_5",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "CD1_20  INVALID") || strings.Count(got, "host left unclean after window") != 1 {
		t.Errorf("the run did not stop once:\n%s", got)
	}
	if err := os.WriteFile(filepath.Join(shared, "freezer.state"), []byte("THAWED"), 0o644); err != nil {
		t.Fatal(err)
	}
	sweepCleans(t, root)
}

// TestHostcheckFileOpenedThroughOverlay: a host process outside every
// namespace of a run holds a file of a session's root opened through the
// merged overlay path. The file's device and inode are its lower layer's
// (the host's own filesystem); the mount its descriptor was opened through
// (fdinfo's mnt_id) is the run's overlay, and ties it: hostcheck names it
// by that, not only by the path it was opened at.
func TestHostcheckFileOpenedThroughOverlay(t *testing.T) {
	hosttest.Need(t, "mounts an overlay and reads the whole host")
	// A session as refsup's: the upper layer on a tmpfs of the run's, the
	// lower on another filesystem, so a lower file keeps its own device
	// through the overlay (with every layer on one filesystem the overlay
	// would report its own, and the device alone would tie the holder).
	root := t.TempDir()
	r := &plantedRun{root: root, run: "ragrovl1", dir: model.StateDir(root, "ragrovl1")}
	merged := r.withSession(t)
	holder := exec.Command("/bin/sh", "-c", "exec 3< \"$0\"; exec /bin/sleep 1015", filepath.Join(merged, "lower"))
	holder.Env = []string{}
	adversary(t, holder)
	var st syscall.Stat_t
	if err := syscall.Stat(merged, &st); err != nil {
		t.Fatal(err)
	}
	dev := fmt.Sprintf("%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))
	out := hostcheckLists(t, root, pidLinePrefix(holder.Process.Pid), "open file on run fs dev "+dev)
	t.Log(out)
}

// TestJudgesAgreeOnAnotherSupervisorsSocket: a stale shim socket (bound by
// no process, as a SIGKILLed containerd shim leaves one) under the path
// containerd's description claims. hostcheck names it, and so does the
// preflight of a refsup window, whose own roots claim no socket: both judge
// with every supervisor's names. `faultwin sweep --reclaim-names` removes
// it, and only it.
func TestJudgesAgreeOnAnotherSupervisorsSocket(t *testing.T) {
	hosttest.Need(t, "binds a unix socket under /run/containerd/s and reads the whole host")
	root := t.TempDir()
	dir := "/run/containerd/s"
	if err := os.MkdirAll(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	stale := func(path string) {
		l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
		if err != nil {
			t.Fatal(err)
		}
		l.SetUnlinkOnClose(false)
		l.Close()
		t.Cleanup(func() { _ = os.Remove(path) })
	}
	// Another containerd's stale socket, there before the run: not
	// faultwin's, never a leftover, never removed.
	users := filepath.Join(dir, fmt.Sprintf("fwagreeuser%d", os.Getpid()))
	stale(users)
	roots := runner.AllRoots(snapshots.DefaultRoots(root))
	pre, err := host.Capture(context.Background(), "preflight", roots, snapshots.Decoys{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, fmt.Sprintf("fwagree%d", os.Getpid()))
	stale(path)
	after, err := host.Capture(context.Background(), "after_death", roots, snapshots.Decoys{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reclaim.Claim(roots, model.NewScope(root, "ragree1"), pre, after); err != nil {
		t.Fatal(err)
	}
	want := "socket " + path + ": no process listens on it"
	hostcheckLists(t, root, want)
	if hc, _, _ := runVerb(t, "hostcheck", "--state-root", root); strings.Contains(hc, "socket "+users+": no process") {
		t.Errorf("hostcheck counts a socket no run claims:\n%s", hc)
	}
	said := preflightSays(t, root)
	if !slices.ContainsFunc(said, func(l string) bool { return strings.HasPrefix(l, want) }) {
		t.Errorf("a refsup window's preflight does not name the stale socket hostcheck names: %q", said)
	}
	out, _, err := runVerb(t, "sweep", "--state-root", root, "--refsup", "/nonexistent/refsup", "--reclaim-names")
	if err != nil {
		t.Fatalf("sweep --reclaim-names: %v\n%s", err, out)
	}
	if _, err := os.Lstat(path); err == nil {
		t.Errorf("sweep --reclaim-names left %s:\n%s", path, out)
	}
	if hc, code, _ := runVerb(t, "hostcheck", "--state-root", root); code != 0 {
		t.Errorf("host not clean after the sweep:\n%s", hc)
	}
	if _, err := os.Lstat(users); err != nil {
		t.Errorf("sweep --reclaim-names removed a socket no run claims: %v", err)
	}
}
