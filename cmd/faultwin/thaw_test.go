package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"faultwin/drivers/reclaim"
	"faultwin/internal/hosttest"
	"faultwin/internal/model"
	"faultwin/snapshots"
	"faultwin/windows/runner"
)

// TestSweepThawsADeadRunsFrozenCgroup: a dead run (its state dir gone)
// left its process frozen in its freezer cgroup, as a supervisor that
// froze its payload to checkpoint it and died leaves it. `faultwin sweep`
// thaws the run's cgroup, kills the process, removes the cgroups and finds
// the host clean, and says what it thawed; a neighbour's frozen cgroup of
// no run stays frozen, its task alive.
func TestSweepThawsADeadRunsFrozenCgroup(t *testing.T) {
	hosttest.Need(t, "freezes real processes in the v1 freezer and sweeps the host")
	root, run := t.TempDir(), "rswthaw1"
	start := func(env ...string) *exec.Cmd {
		c := exec.Command("/bin/sleep", "1016")
		c.Env = env
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
		return c
	}
	p, neighbour := start(model.RunEnvKey+"="+run), start()
	runCg := filepath.Join("/sys/fs/cgroup/freezer", model.CgroupDir, run, "fw1")
	pidsCg := filepath.Join("/sys/fs/cgroup/pids", model.CgroupDir, run, "fw1")
	neighbourCg := filepath.Join("/sys/fs/cgroup/freezer", fmt.Sprintf("fwsweep-neighbour-%d", neighbour.Process.Pid))
	for _, c := range []struct {
		dir string
		pid int
	}{{runCg, p.Process.Pid}, {pidsCg, p.Process.Pid}, {neighbourCg, neighbour.Process.Pid}} {
		hosttest.Cgroup(t, c.dir)
		hosttest.Join(t, c.dir, c.pid)
	}
	hosttest.Freeze(t, runCg)
	hosttest.Freeze(t, neighbourCg)
	out, code, err := runVerb(t, "sweep", "--state-root", root, "--refsup", "/nonexistent/refsup")
	if code != 0 {
		t.Errorf("sweep exit %d (%v), want 0", code, err)
	}
	for _, want := range []string{
		"sweep: thawed frozen cgroup " + runCg + " (FROZEN) before the kill",
		fmt.Sprintf("sweep: killed pid %d (sleep) of run %s", p.Process.Pid, run),
		"sweep: removed cgroup " + runCg + " of run " + run,
		"sweep: host clean",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("sweep does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, neighbourCg) || !hosttest.IsFrozen(neighbourCg) {
		t.Errorf("the sweep touched the neighbour's frozen cgroup %s:\n%s", neighbourCg, out)
	}
	if err := neighbour.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the neighbour's task is gone: %v", err)
	}
	if code == 0 { // the sweep saw it gone: its wait returns
		endedByKill(t, p)
	}
	j, err := reclaim.Judge(context.Background(), "test", runner.AllRoots(snapshots.DefaultRoots(root)))
	if err != nil || !j.Clean() {
		t.Errorf("host not clean after the sweep: %q %v", j.Left, err)
	}
}

// endedByKill checks that p, which the sweep said it killed and saw gone,
// ended on a SIGKILL.
func endedByKill(t *testing.T, p *exec.Cmd) {
	t.Helper()
	_ = p.Wait()
	if ws, ok := p.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Errorf("pid %d ended with %v, not by SIGKILL", p.Process.Pid, p.ProcessState)
	}
}
