package reclaim

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"faultwin/internal/hosttest"
	"faultwin/internal/model"
	"faultwin/snapshots"
	"faultwin/snapshots/host"
)

// A supervisor that froze its payload (runc pause, a checkpoint) and died
// leaves the run's processes in a FROZEN cgroup v1 freezer, where a SIGKILL
// stays pending: the last resort must thaw the run's frozen cgroups before
// it kills, and only the run's.

const v1Freezer = "/sys/fs/cgroup/freezer"

// sleeper starts a sleep with env as its whole environment and kills it at
// cleanup.
func sleeper(t *testing.T, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("/bin/sleep", "1000")
	cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, env...)
	must(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

// frozenRun plants run's process in <freezer>/faultwin/<run>/x (and the
// pids hierarchy's same cgroup) frozen, a second process of the run alone
// in a frozen freezer cgroup outside faultwin/ (as a harness that freezes
// one process does), and a neighbour's process, of no run, in a frozen
// cgroup of its own.
type frozenRun struct {
	run, root                   string
	proc, alone, neighbour      *exec.Cmd
	runCg, aloneCg, neighbourCg string
}

func plantFrozenRun(t *testing.T, run string, withStateDir bool) frozenRun {
	t.Helper()
	hosttest.Need(t, "freezes real processes in the cgroup v1 freezer")
	if _, err := os.Stat(v1Freezer); err != nil {
		t.Fatalf("no cgroup v1 freezer hierarchy at %s (this test needs a v1 or hybrid host): %v", v1Freezer, err)
	}
	f := frozenRun{run: run, root: t.TempDir()}
	if withStateDir {
		must(t, os.MkdirAll(model.StateDir(f.root, run), 0o755))
	}
	f.proc = sleeper(t, model.RunEnvKey+"="+run)
	f.alone = sleeper(t, model.RunEnvKey+"="+run)
	f.neighbour = sleeper(t)
	f.runCg = filepath.Join(v1Freezer, model.CgroupDir, run, "x")
	pidsCg := filepath.Join("/sys/fs/cgroup/pids", model.CgroupDir, run, "x")
	f.aloneCg = filepath.Join(v1Freezer, "fwthaw-alone-"+run)
	f.neighbourCg = filepath.Join(v1Freezer, "fwthaw-neighbour-"+run)
	for _, c := range []struct {
		dir string
		pid int
	}{{f.runCg, f.proc.Process.Pid}, {pidsCg, f.proc.Process.Pid}, {f.aloneCg, f.alone.Process.Pid}, {f.neighbourCg, f.neighbour.Process.Pid}} {
		hosttest.Cgroup(t, c.dir)
		hosttest.Join(t, c.dir, c.pid)
	}
	for _, dir := range []string{f.runCg, f.aloneCg, f.neighbourCg} {
		hosttest.Freeze(t, dir)
	}
	return f
}

// endedByKill checks that cmd ended on a SIGKILL. A process still frozen
// would never end: it is given 10 s, then named (the cleanup thaws and
// kills it).
func endedByKill(t *testing.T, what string, cmd *exec.Cmd) {
	t.Helper()
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_, state, _ := host.StartState(cmd.Process.Pid)
		t.Errorf("%s (pid %d) still there (state %s) 10s after the last resort", what, cmd.Process.Pid, state)
		return
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Errorf("%s (pid %d) ended with %v, not by SIGKILL", what, cmd.Process.Pid, cmd.ProcessState)
	}
}

// neighbourLeftFrozen checks that the neighbour's cgroup is still frozen
// and its process still there.
func (f frozenRun) neighbourLeftFrozen(t *testing.T) {
	t.Helper()
	if !hosttest.IsFrozen(f.neighbourCg) {
		t.Errorf("the neighbour's cgroup %s, of no run, was thawed", f.neighbourCg)
	}
	if err := f.neighbour.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the neighbour's process %d is gone: %v", f.neighbour.Process.Pid, err)
	}
}

func TestLastResortThawsTheRunsFrozenCgroups(t *testing.T) {
	f := plantFrozenRun(t, "rfwthaw", true)
	roots := snapshots.DefaultRoots(f.root)
	r := Run(context.Background(), Plan{Scope: model.NewScope(f.root, f.run), Roots: roots, RemoveStateDir: true})
	if len(r.Errors) > 0 {
		t.Errorf("errors: %q", r.Errors)
	}
	for _, want := range []string{f.runCg + " (FROZEN)", f.aloneCg + " (FROZEN)"} {
		if !slices.Contains(r.Thawed, want) {
			t.Errorf("thawed %q, want %q among them", r.Thawed, want)
		}
	}
	if slices.ContainsFunc(r.Thawed, func(s string) bool { return strings.Contains(s, "neighbour") }) {
		t.Errorf("a neighbour's cgroup was thawed: %q", r.Thawed)
	}
	for _, p := range []*exec.Cmd{f.proc, f.alone} {
		if !slices.ContainsFunc(r.Killed, func(k model.Killed) bool { return k.PID.PID == p.Process.Pid }) {
			t.Errorf("pid %d not killed: %+v", p.Process.Pid, r.Killed)
		}
	}
	endedByKill(t, "the run's process", f.proc)
	endedByKill(t, "the run's process alone in a freezer cgroup", f.alone)
	if !slices.Contains(r.CgroupsRemoved, f.runCg) {
		t.Errorf("cgroups removed %q, want %s", r.CgroupsRemoved, f.runCg)
	}
	f.neighbourLeftFrozen(t)
	j, err := Judge(context.Background(), "test", roots)
	must(t, err)
	if !j.Clean() {
		t.Errorf("host not clean after the last resort: %q", j.Left)
	}
}

// A process of the run in a frozen cgroup that also holds a neighbour's
// task cannot be thawed without thawing the neighbour: it is left, and
// the error names the cgroup and why it was not thawed.
func TestLastResortSaysWhyAFrozenCgroupWasNotThawed(t *testing.T) {
	f := plantFrozenRun(t, "rfwthawno", true)
	hosttest.Join(t, f.neighbourCg, f.alone.Process.Pid) // frozen there too
	r := Run(context.Background(), Plan{Scope: model.NewScope(f.root, f.run), Roots: snapshots.DefaultRoots(f.root)})
	pid := strconv.Itoa(f.alone.Process.Pid)
	var said string
	for _, e := range r.Errors {
		if strings.HasPrefix(e, "pid "+pid+" ") {
			said = e
		}
	}
	for _, want := range []string{"(state D)", "in frozen cgroup " + f.neighbourCg + " (FROZEN), not thawed: it holds pid " + strconv.Itoa(f.neighbour.Process.Pid) + ", not of the run"} {
		if !strings.Contains(said, want) {
			t.Errorf("the error for pid %s is %q, want it to say %q (errors %q)", pid, said, want, r.Errors)
		}
	}
	if !slices.Contains(r.Thawed, f.runCg+" (FROZEN)") {
		t.Errorf("thawed %q, want the run's own cgroup", r.Thawed)
	}
	endedByKill(t, "the run's process", f.proc)
	f.neighbourLeftFrozen(t)
	if _, state, _ := host.StartState(f.alone.Process.Pid); state != "D" {
		t.Errorf("the run's process in the neighbour's cgroup is in state %q, want D (still frozen)", state)
	}
}

// The run's cgroup in the unified (v2) hierarchy, frozen with
// cgroup.freeze: thawed and recorded; a neighbour's v2 cgroup stays
// frozen. A v2-frozen task takes its SIGKILL; the thaw is recorded all
// the same.
func TestLastResortThawsTheRunsV2Cgroup(t *testing.T) {
	hosttest.Need(t, "freezes a real process in the unified hierarchy")
	uni := "/sys/fs/cgroup/unified"
	if _, err := os.Stat(filepath.Join(uni, "cgroup.procs")); err != nil {
		uni = "/sys/fs/cgroup"
	}
	run, root := "rfwthawv2", t.TempDir()
	must(t, os.MkdirAll(model.StateDir(root, run), 0o755))
	proc := sleeper(t, model.RunEnvKey+"="+run)
	neighbour := sleeper(t)
	runCg := filepath.Join(uni, model.CgroupDir, run, "x")
	neighbourCg := filepath.Join(uni, "fwthaw-neighbour-"+run)
	hosttest.Cgroup(t, runCg)
	hosttest.Join(t, runCg, proc.Process.Pid)
	hosttest.Cgroup(t, neighbourCg)
	hosttest.Join(t, neighbourCg, neighbour.Process.Pid)
	hosttest.Freeze(t, runCg)
	hosttest.Freeze(t, neighbourCg)
	r := Run(context.Background(), Plan{Scope: model.NewScope(root, run), Roots: snapshots.DefaultRoots(root), RemoveStateDir: true})
	if !slices.Contains(r.Thawed, runCg+" (cgroup.freeze 1)") || len(r.Thawed) != 1 || len(r.Errors) > 0 {
		t.Errorf("thawed %q (errors %q), want only %s (cgroup.freeze 1)", r.Thawed, r.Errors, runCg)
	}
	endedByKill(t, "the run's process", proc)
	if !hosttest.IsFrozen(neighbourCg) {
		t.Errorf("the neighbour's cgroup %s, of no run, was thawed", neighbourCg)
	}
}
