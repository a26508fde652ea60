package main

import (
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"faultwin/internal/hosttest"
	"faultwin/internal/model"
)

// A process that entered, by nsenter, only one namespace of a dead run's
// process (net, ipc, uts or cgroup; the host's pid and mount namespaces
// stay its own) carries no tag: the namespace ties it, hostcheck names the
// tie, and the sweep kills it with the run's process.
func TestHostcheckSingleNamespaceJoiner(t *testing.T) {
	for _, k := range []struct {
		kind, flag string
		clone      uintptr
	}{
		{"net", "-n", syscall.CLONE_NEWNET},
		{"ipc", "-i", syscall.CLONE_NEWIPC},
		{"uts", "-u", syscall.CLONE_NEWUTS},
		{"cgroup", "-C", syscall.CLONE_NEWCGROUP},
	} {
		t.Run(k.kind, func(t *testing.T) {
			hosttest.Need(t, "starts processes in new namespaces and reads the whole host")
			root := t.TempDir()
			run := exec.Command("/bin/sleep", "1010")
			run.Env = []string{model.RunEnvKey + "=radvns" + k.kind}
			run.SysProcAttr = &syscall.SysProcAttr{Cloneflags: k.clone}
			adversary(t, run)
			time.Sleep(100 * time.Millisecond)
			joiner := exec.Command("/usr/bin/nsenter", k.flag, "-t", strconv.Itoa(run.Process.Pid), "/bin/sleep", "1011")
			joiner.Env = []string{}
			adversary(t, joiner)
			out := hostcheckLists(t, root, pidLinePrefix(joiner.Process.Pid),
				k.kind+" ns of pid "+strconv.Itoa(run.Process.Pid)+" [live]")
			t.Log(out)
			sweepCleans(t, root)
			for _, p := range []*exec.Cmd{run, joiner} {
				if _, err := p.Process.Wait(); err != nil {
					t.Errorf("pid %d: %v", p.Process.Pid, err)
				}
			}
		})
	}
}

// A process of no run that a run's process joined first is not the run's:
// its namespace's oldest member is its own, so the sweep leaves it.
func TestSweepLeavesNamespaceARunEntered(t *testing.T) {
	hosttest.Need(t, "starts processes in new namespaces and reads the whole host")
	root := t.TempDir()
	service := exec.Command("/bin/sleep", "1012")
	service.Env = []string{}
	service.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	adversary(t, service)
	time.Sleep(1100 * time.Millisecond) // a later start time, in clock ticks
	entered := exec.Command("/usr/bin/nsenter", "-n", "-t", strconv.Itoa(service.Process.Pid), "/bin/sleep", "1013")
	entered.Env = []string{model.RunEnvKey + "=radvnsin"}
	adversary(t, entered)
	hostcheckLists(t, root, pidLinePrefix(entered.Process.Pid))
	sweepCleans(t, root)
	if err := service.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("sweep killed a process whose namespace a run had entered: %v", err)
	}
}
