package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"faultwin/internal/hosttest"
	"faultwin/internal/model"
)

// The ties that outlive a run's state dir. Each case plants a run (a
// tagged process, or a session's tmpfs and overlay under its state dir)
// and an adversary that carries no mark: a process that entered one
// namespace of the run's alone, or holds a file, a mapping or its working
// directory through the session's overlay. hostcheck must name the
// adversary before the run's sweep and after it, when the sweep killed
// what the run marked, lazily unmounted its filesystems and removed its
// state dir but left the adversary (the blind spot: nothing of the run was
// left to tie it to); `faultwin sweep` must then kill it, by the run's tie
// record alone.

func TestMain(m *testing.M) { hosttest.Main(m) }

// plantedRun is a run's state dir under a private state root, and what
// its sweep removes.
type plantedRun struct {
	root, run, dir string
	marked         []*exec.Cmd // the run's own processes: its sweep kills them
	markedPIDs     []int       // and their children
	mounts         []string    // deepest first: its sweep unmounts them lazily
}

// sweptByItsSupervisor does what a run's sweep that forgets the adversary
// does: kills the run's marked processes, lazily unmounts its
// filesystems, removes its state dir.
func (r *plantedRun) sweptByItsSupervisor(t *testing.T) {
	t.Helper()
	for _, pid := range r.markedPIDs {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	for _, p := range r.marked {
		_ = p.Process.Kill()
		_, _ = p.Process.Wait()
	}
	for _, m := range r.mounts {
		if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil {
			t.Fatalf("unmount %s: %v", m, err)
		}
	}
	if err := os.RemoveAll(r.dir); err != nil {
		t.Fatal(err)
	}
}

// withSession mounts a session as refsup's are: a tmpfs of the run's for
// the upper layer, the lower on the host's filesystem, the overlay at
// sessions/s1/root; it writes "lower" in the lower layer and "upper" in
// the upper, and returns the merged root.
func (r *plantedRun) withSession(t *testing.T) string {
	t.Helper()
	sess := filepath.Join(r.dir, "sessions", "s1")
	lower, upperfs, merged := t.TempDir(), filepath.Join(sess, "upperfs"), filepath.Join(sess, "root")
	upper, work := filepath.Join(upperfs, "upper"), filepath.Join(upperfs, "work")
	for _, d := range []string{lower, upperfs, merged} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mount("tmpfs", upperfs, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatalf("mount tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(upperfs, syscall.MNT_DETACH) })
	for _, d := range []string{upper, work, filepath.Join(lower, "dir")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for path, text := range map[string]string{filepath.Join(lower, "lower"): "lower layer\n", filepath.Join(upper, "upper"): strings.Repeat("u", 4096)} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opts := "lowerdir=" + lower + ",upperdir=" + upper + ",workdir=" + work
	if err := syscall.Mount("overlay", merged, "overlay", 0, opts); err != nil {
		t.Fatalf("mount overlay: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(merged, syscall.MNT_DETACH) })
	r.mounts = append(r.mounts, merged, upperfs)
	return merged
}

// startMarked starts one of the run's own processes (it carries the run's
// variable) in new namespaces of the given clone flags and returns the pid
// that lives in them.
func (r *plantedRun) startMarked(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	cmd.Env = append(cmd.Env, model.RunEnvKey+"="+r.run)
	adversary(t, cmd)
	r.marked = append(r.marked, cmd)
}

// childOf waits for pid's first child and returns it.
func childOf(t *testing.T, pid int) int {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		if f := strings.Fields(string(b)); len(f) > 0 {
			n, _ := strconv.Atoi(f[0])
			return n
		}
	}
	t.Fatalf("pid %d started no child", pid)
	return 0
}

func TestTiesOutliveTheStateDir(t *testing.T) {
	type plant func(t *testing.T, r *plantedRun) (adv *exec.Cmd, tie string)
	joiner := func(kind, flag string, clone uintptr) plant {
		return func(t *testing.T, r *plantedRun) (*exec.Cmd, string) {
			var inNS int
			if kind == "time" {
				// A new time namespace is its creator's children's.
				cmd := exec.Command("/usr/bin/unshare", "--fork", "--time", "/bin/sleep", "1020")
				r.startMarked(t, cmd)
				inNS = childOf(t, cmd.Process.Pid)
				r.markedPIDs = append(r.markedPIDs, inNS)
			} else {
				cmd := exec.Command("/bin/sleep", "1020")
				cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: clone}
				if kind == "user" {
					cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}}
					cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}}
				}
				r.startMarked(t, cmd)
				inNS = cmd.Process.Pid
			}
			time.Sleep(100 * time.Millisecond)
			adv := exec.Command("/usr/bin/nsenter", flag, "-t", strconv.Itoa(inNS), "/bin/sleep", "1021")
			adv.Env = []string{}
			return adversary(t, adv), kind + " ns "
		}
	}
	holder := func(what string) plant {
		return func(t *testing.T, r *plantedRun) (*exec.Cmd, string) {
			merged := r.withSession(t)
			var adv *exec.Cmd
			switch what {
			case "fd":
				adv = exec.Command("/bin/sh", "-c", "exec 3< \"$0\"; exec /bin/sleep 1022", filepath.Join(merged, "lower"))
			case "mapping":
				adv = hosttest.Mapper(filepath.Join(merged, "upper"))
			case "cwd":
				adv = exec.Command("/bin/sleep", "1023")
				adv.Dir = filepath.Join(merged, "dir")
			}
			if adv.Env == nil {
				adv.Env = []string{}
			}
			return adversary(t, adv), map[string]string{"fd": "open file on ", "mapping": "mapping on ", "cwd": "cwd"}[what]
		}
	}
	for _, c := range []struct {
		name  string
		plant plant
	}{
		{"net", joiner("net", "-n", syscall.CLONE_NEWNET)},
		{"ipc", joiner("ipc", "-i", syscall.CLONE_NEWIPC)},
		{"uts", joiner("uts", "-u", syscall.CLONE_NEWUTS)},
		{"cgroup", joiner("cgroup", "-C", syscall.CLONE_NEWCGROUP)},
		{"user", joiner("user", "-U", syscall.CLONE_NEWUSER)},
		{"time", joiner("time", "-T", 0)},
		{"fd through the overlay", holder("fd")},
		{"mapping through the overlay", holder("mapping")},
		{"cwd in the session root", holder("cwd")},
	} {
		t.Run(c.name, func(t *testing.T) {
			hosttest.Need(t, "starts processes in new namespaces, mounts an overlay and reads the whole host")
			root := t.TempDir()
			r := &plantedRun{root: root, run: "rtie" + strconv.Itoa(int(time.Now().UnixNano()%1e6))}
			r.dir = model.StateDir(root, r.run)
			if err := os.MkdirAll(r.dir, 0o755); err != nil {
				t.Fatal(err)
			}
			adv, tie := c.plant(t, r)
			before := hostcheckLists(t, root, pidLinePrefix(adv.Process.Pid))
			r.sweptByItsSupervisor(t)
			after := hostcheckLists(t, root, pidLinePrefix(adv.Process.Pid), "recorded", tie)
			t.Logf("before the run's sweep:\n%s\nafter it:\n%s", before, after)
			out := sweepCleans(t, root)
			if !strings.Contains(out, "killed pid "+strconv.Itoa(adv.Process.Pid)+" ") || !strings.Contains(out, "of run "+r.run) {
				t.Errorf("faultwin sweep did not kill pid %d as run %s's:\n%s", adv.Process.Pid, r.run, out)
			}
			if _, err := adv.Process.Wait(); err != nil {
				t.Errorf("pid %d: %v", adv.Process.Pid, err)
			}
		})
	}
}
