package main

import (
	"faultwin/internal/hosttest"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"faultwin/internal/model"
)

// These tests leave on the host what a dead run can leave without a tag of
// its own, and check that hostcheck names it (with its state) and that
// `faultwin sweep` cleans it, by the ownership rules and nothing else. They
// need root (namespaces, cgroups), as the windows do.

// adversary starts cmd and registers a kill of it (and a wait) at cleanup,
// whatever the test's outcome.
func adversary(t *testing.T, cmd *exec.Cmd) *exec.Cmd {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %v: %v", cmd.Args, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
	})
	return cmd
}

// hostcheckLists runs hostcheck until its output contains every want (a
// process may take a moment to exec), and fails with the output if not.
func hostcheckLists(t *testing.T, root string, want ...string) string {
	t.Helper()
	var out string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var code int
		out, code, _ = runVerb(t, "hostcheck", "--state-root", root)
		missing := ""
		for _, w := range want {
			if !strings.Contains(out, w) {
				missing = w
			}
		}
		if missing == "" && code != 0 {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("hostcheck (exit %d) does not list %q:\n%s", code, missing, out)
		}
	}
}

// sweepCleans runs `faultwin sweep` and then hostcheck, which must be clean.
func sweepCleans(t *testing.T, root string) string {
	t.Helper()
	out, _, err := runVerb(t, "sweep", "--state-root", root, "--refsup", "/nonexistent/refsup")
	if err != nil {
		t.Fatalf("sweep: %v\n%s", err, out)
	}
	if hc, code, _ := runVerb(t, "hostcheck", "--state-root", root); code != 0 {
		t.Fatalf("host not clean after sweep:\n%s\nsweep said:\n%s", hc, out)
	}
	return out
}

func pidLinePrefix(pid int) string { return "pid " + strconv.Itoa(pid) + " " }

// An untagged process in a dead run's pid namespace (the payload re-exec'd
// with an empty environment) is that run's.
func TestHostcheckUntaggedPidNamespaceMember(t *testing.T) {
	hosttest.Need(t, "starts processes in new namespaces and reads the whole host")
	root := t.TempDir()
	run := "radvpid1"
	init := exec.Command("/bin/sh", "-c", "env -i /bin/sleep 1000 & exec /bin/sleep 1001")
	init.Env = []string{model.RunEnvKey + "=" + run, "PATH=/bin:/usr/bin"}
	init.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
	adversary(t, init)
	out := hostcheckLists(t, root, pidLinePrefix(init.Process.Pid), "pid ns of pid "+strconv.Itoa(init.Process.Pid)+" [live]")
	t.Log(out)
	sweepCleans(t, root)
}

// A host process that entered a session's mount namespace (nsenter) carries
// no tag, lives in the host's pid namespace, and is still the run's.
func TestHostcheckMountNamespaceOnly(t *testing.T) {
	hosttest.Need(t, "starts processes in new namespaces and reads the whole host")
	root := t.TempDir()
	run := "radvmnt1"
	init := exec.Command("/bin/sleep", "1002")
	init.Env = []string{model.RunEnvKey + "=" + run}
	init.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID | syscall.CLONE_NEWNS}
	adversary(t, init)
	time.Sleep(100 * time.Millisecond)
	entered := exec.Command("/usr/bin/nsenter", "-m", "-t", strconv.Itoa(init.Process.Pid), "/bin/sleep", "1003")
	entered.Env = []string{}
	adversary(t, entered)
	out := hostcheckLists(t, root, pidLinePrefix(entered.Process.Pid), "mount ns of pid "+strconv.Itoa(init.Process.Pid))
	t.Log(out)
	sweepCleans(t, root)
}

// A zombie of a run is listed as a zombie, with its parent, never dropped
// and never called live.
func TestHostcheckTaggedZombie(t *testing.T) {
	hosttest.Need(t, "starts processes in new namespaces and reads the whole host")
	root := t.TempDir()
	parent := exec.Command("/bin/sh", "-c", "/bin/true & exec /bin/sleep 1004")
	parent.Env = []string{model.RunEnvKey + "=radvzom1"}
	adversary(t, parent)
	out := hostcheckLists(t, root, "[zombie, parent pid "+strconv.Itoa(parent.Process.Pid)+" sleep]",
		pidLinePrefix(parent.Process.Pid))
	t.Log(out)
	sweepCleans(t, root)
}

// A cgroup a run leaked, with a process still in it, is listed and swept.
func TestHostcheckLeakedCgroup(t *testing.T) {
	hosttest.Need(t, "starts processes in new namespaces and reads the whole host")
	root := t.TempDir()
	dir := "/sys/fs/cgroup/pids/faultwin/radvcg1/s1"
	if fi, err := os.Stat("/sys/fs/cgroup/pids"); err != nil || !fi.IsDir() {
		dir = "/sys/fs/cgroup/faultwin/radvcg1/s1" // unified hierarchy
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Rmdir(dir)
		_ = syscall.Rmdir(filepath.Dir(dir))
	})
	p := adversary(t, exec.Command("/bin/sleep", "1005"))
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(fmt.Sprint(p.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := hostcheckLists(t, root, "cgroup "+dir+": of run radvcg1", pidLinePrefix(p.Process.Pid), "in cgroup /faultwin/radvcg1/s1 [live]")
	t.Log(out)
	said := sweepCleans(t, root)
	if !strings.Contains(said, "removed cgroup "+dir) {
		t.Errorf("sweep did not say it removed %s:\n%s", dir, said)
	}
}

// A process of no run is never touched by the sweep.
func TestSweepLeavesForeignProcess(t *testing.T) {
	hosttest.Need(t, "starts processes in new namespaces and reads the whole host")
	root := t.TempDir()
	p := adversary(t, exec.Command("/bin/sh", "-c", "while :; do sleep 1; done", "sh", "--tag", "notfaultwin:x"))
	sweepCleans(t, root)
	if err := p.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("sweep killed a process of no run: %v", err)
	}
}
