package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"faultwin/fixtures/refsup/mounts"
	"faultwin/fixtures/refsup/network"
)

// Each known-bug switch must reintroduce a defect the harness can see. These
// tests turn each one on and check the defect shows on the host.

func TestBugCRIUByName(t *testing.T) {
	e := newEnv(t)
	e.serve()
	s := e.create()
	ck := e.checkpoint(s.Session)
	// at setup-namespaces the restorer is forked into the new pid namespace
	// and waits for CRIU; killing swrk strands it with no paths in argv
	e.must(nil, "arm", "--fault", "restore.criu_setup_namespaces!criu")
	_ = e.cli(nil, "restore", "--checkpoint", ck.Checkpoint)
	e.waitDaemonDeath()
	var own struct{ Links []string }
	e.must(&own, "owned")
	for _, l := range own.Links {
		e.links[l] = true
	}
	time.Sleep(50 * time.Millisecond)
	t.Logf("buggy sweep: %+v", e.sweep("REFSUP_BUGS=criu-by-name"))
	left := e.leftovers()
	found := false
	for _, p := range left.Procs {
		if strings.Contains(p, " criu ") {
			found = true
		}
	}
	if !found {
		t.Fatalf("with criu-by-name a forked restorer should survive the sweep; left: %+v", left)
	}
	e.sweep()
	if l := e.leftovers(); !l.empty() {
		t.Fatalf("the correct sweep did not finish the job: %+v", l)
	}
}

// freeze puts pid in a v1 freezer cgroup and freezes it: SIGKILL then
// cannot take effect, which makes a real survivor.
func freeze(t *testing.T, pid int) (thaw func()) {
	t.Helper()
	dir := filepath.Join("/sys/fs/cgroup/freezer", "faultwin-test-"+randID(4))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatalf("no v1 freezer (the host tier needs /sys/fs/cgroup/freezer; see docs/host-setup.md): %v", err)
	}
	write := func(f, v string) {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(v), 0o644); err != nil {
			t.Fatalf("writing %s: %v", f, err)
		}
	}
	write("cgroup.procs", fmt.Sprint(pid))
	write("freezer.state", "FROZEN")
	thawed := false
	thaw = func() {
		if thawed {
			return
		}
		thawed = true
		write("freezer.state", "THAWED")
		for i := 0; i < 200; i++ {
			if os.Remove(dir) == nil {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	t.Cleanup(thaw)
	return thaw
}

func testSurvivor(t *testing.T, bug bool) {
	e := newEnv(t)
	e.serve()
	s := e.create()
	e.killDaemon()
	var sleeper int
	for _, p := range s.Procs {
		if len(p.Argv) > 1 && p.Argv[1] == "3600" {
			sleeper = p.PID
		}
	}
	thaw := freeze(t, sleeper)
	var envv []string
	if bug {
		envv = append(envv, "REFSUP_BUGS=drop-ledger-survivor")
	}
	rep := e.sweep(envv...)
	// the frozen sleep survives, and so does its pid namespace's init, which
	// cannot finish dying while a member of its namespace lives
	got := map[int]bool{}
	for _, k := range rep.Survivors {
		got[k.PID.PID] = true
	}
	if !got[sleeper] || !got[s.InitPID] || len(got) != 2 {
		t.Fatalf("survivors %+v, want the frozen %d and init %d", rep.Survivors, sleeper, s.InitPID)
	}
	_, err := os.Stat(e.lay.Ledger())
	if bug != os.IsNotExist(err) {
		t.Fatalf("bug=%v: ledger present=%v; a survivor must keep the ledger unless the bug is on", bug, err == nil)
	}
	thaw()
	time.Sleep(50 * time.Millisecond)
	rep = e.sweep()
	if l := e.leftovers(); !l.empty() {
		t.Fatalf("after thaw and sweep: %+v (report %+v)", l, rep)
	}
}

func TestSurvivorKeepsLedger(t *testing.T)   { testSurvivor(t, false) }
func TestBugDropLedgerSurvivor(t *testing.T) { testSurvivor(t, true) }

func TestBugSubstringPaths(t *testing.T) {
	e := newEnv(t)
	if err := os.MkdirAll(e.lay.Dir(), 0o755); err != nil {
		t.Fatal(err)
	}
	sibling := e.lay.Dir() + "0"
	if err := os.MkdirAll(sibling, 0o755); err != nil {
		t.Fatal(err)
	}
	d := e.decoyProc(sibling)
	e.sweep()
	if !alive(t, d.Process.Pid) {
		t.Fatal("the correct sweep killed the prefix-colliding sibling's process")
	}
	e.sweep("REFSUP_BUGS=substring-paths")
	time.Sleep(20 * time.Millisecond)
	if alive(t, d.Process.Pid) {
		t.Fatal("with substring-paths the sibling's process should have been killed")
	}
}

func TestBugUnledgeredMount(t *testing.T) {
	e := newEnv(t)
	e.serve("--bug", "unledgered-mount")
	s := e.create()
	var own struct{ Mounts []string }
	e.must(&own, "owned")
	stage := e.lay.Stage(s.Session)
	for _, m := range own.Mounts {
		if m == stage {
			t.Fatal("stage recorded despite the bug")
		}
	}
	e.killDaemon()
	e.sweep()
	if !mounts.Mounted(stage) {
		t.Fatal("with unledgered-mount the stage tmpfs should outlive the sweep")
	}
	e.decoyMnt = append(e.decoyMnt, stage) // so cleanup unmounts it
}

func TestBugLeaveTableAndIPForward(t *testing.T) {
	e := newEnv(t)
	if e.fwd != "0" {
		// The defect shows only as a flip from 0: start from 0; the end of
		// the test writes the host's own value (e.fwd) back.
		if err := network.WriteSysctl(network.IPForward, "0"); err != nil {
			t.Fatal(err)
		}
	}
	e.serve()
	e.create()
	e.killDaemon()
	e.sweep("REFSUP_BUGS=leave-table,leave-ip-forward")
	ok, _ := network.TableExists(e.lay.Table())
	fwd, _ := network.ReadSysctl(network.IPForward)
	_, _ = network.DeleteTable(e.lay.Table())
	_ = network.WriteSysctl(network.IPForward, e.fwd)
	if !ok || fwd != "1" {
		t.Fatalf("table left=%v ip_forward=%s: both defects should show", ok, fwd)
	}
}

func TestBugLeaveLedger(t *testing.T) {
	e := newEnv(t)
	e.serve()
	e.create()
	e.killDaemon()
	e.sweep("REFSUP_BUGS=leave-ledger")
	if _, err := os.Stat(e.lay.Ledger()); err != nil {
		t.Fatalf("with leave-ledger the ledger file should outlive the sweep: %v", err)
	}
	e.sweep()
	if _, err := os.Stat(e.lay.Ledger()); !os.IsNotExist(err) {
		t.Fatalf("the correct sweep left the ledger: %v", err)
	}
}

func TestBugNonIdempotentSweep(t *testing.T) {
	e := newEnv(t)
	e.serve()
	e.create()
	e.killDaemon()
	e.sweep("REFSUP_BUGS=non-idempotent-sweep")
	if rep := e.sweep("REFSUP_BUGS=non-idempotent-sweep"); rep.Empty() {
		t.Fatal("with non-idempotent-sweep the second sweep should report work again")
	}
	if rep := e.sweep(); !rep.Empty() {
		t.Fatalf("the correct second sweep is not empty: %+v", rep)
	}
}

func TestBugDeadPoint(t *testing.T) {
	e := newEnv(t)
	e.serve("--bug", "dead-point")
	e.must(nil, "arm", "--fault", "idle.kill")
	if err := e.cli(nil, "idle"); err != nil {
		t.Fatalf("with dead-point the armed point must not fire: %v", err)
	}
	tp := e.trace()
	if fired(tp) != nil || len(tp) == 0 || tp[len(tp)-1].Point != "idle.kill" {
		t.Fatalf("trace %+v: the point must be passed but not fired", tp)
	}
}

func TestBugLeakCgroup(t *testing.T) {
	e := newEnv(t)
	e.serve("--bug", "leak-cgroup")
	s1 := e.create()
	s2 := e.create()
	hs := hierarchies(t)
	e.must(nil, "destroy", "--session", s1.Session)
	var own struct{ Cgroups []string }
	e.must(&own, "owned")
	for _, h := range hs {
		d := h.SessionDir(e.run, s1.Session)
		if !exists(d) {
			t.Errorf("with leak-cgroup destroy should leave %s", d)
		}
		if slices.Contains(own.Cgroups, d) {
			t.Errorf("with leak-cgroup destroy should drop the record of %s as if removed", d)
		}
	}
	e.killDaemon()
	rep := e.sweep("REFSUP_BUGS=leak-cgroup")
	if len(rep.CgroupsRemoved) != 0 || !rep.LedgerRemoved {
		t.Errorf("buggy sweep: cgroups removed %v, ledger removed %v", rep.CgroupsRemoved, rep.LedgerRemoved)
	}
	for _, h := range hs {
		for _, d := range []string{h.SessionDir(e.run, s1.Session), h.SessionDir(e.run, s2.Session), h.RunDir(e.run)} {
			if !exists(d) {
				t.Errorf("with leak-cgroup the sweep should leave %s", d)
			}
		}
	}
	if l := e.leftovers(); len(l.Cgroups) == 0 || l.Ledger {
		t.Errorf("the defect should show as cgroups left on the host and no ledger: %+v", l)
	}
	// the correct sweep still finds them: their names carry the run
	rep = e.sweep()
	if len(rep.CgroupsRemoved) != 3*len(hs) {
		t.Errorf("the correct sweep removed %v", rep.CgroupsRemoved)
	}
	if l := e.leftovers(); !l.empty() {
		t.Fatalf("the correct sweep did not finish the job: %+v", l)
	}
}
