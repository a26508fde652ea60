package hostview

import (
	"slices"
	"testing"
)

// useFakeHost points hostview at testdata's proc and cgroup trees for one
// test: no root, nothing of the real host read.
func useFakeHost(t *testing.T) {
	t.Helper()
	oldProc, oldCg := ProcRoot, CgroupRoot
	ProcRoot, CgroupRoot = "testdata/proc", "testdata/cgroup"
	t.Cleanup(func() { ProcRoot, CgroupRoot = oldProc, oldCg })
}

// On a fake /proc: a workload is found by the variable its processes carry
// among the run's processes (another run's w1 is not this run's), its
// zombie is no live process of it, a comm with spaces and parentheses is
// read whole, and a workload whose processes are all frozen is frozen.
func TestWorkloadsOnAFakeProc(t *testing.T) {
	useFakeHost(t)
	ps, err := Procs()
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 5 {
		t.Fatalf("Procs read %d processes, want 5 (the non-pid entry skipped): %+v", len(ps), ps)
	}
	i := slices.IndexFunc(ps, func(p Proc) bool { return p.PID == 301 })
	if i < 0 || ps[i].Comm != "a) (b c" || ps[i].State != "R" || ps[i].PPID != 1 {
		t.Errorf("pid 301 read as %+v", ps)
	}
	for _, find := range []struct {
		name string
		f    Finder
	}{{"by env", ByEnv("FAULTWIN_SESSION", "r1")}, {"by cgroup", ByCgroup("/faultwin/r1")}} {
		hs, err := Workloads([]string{"w1", "w2", "w3"}, find.f)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(hs[0].PIDs, []int{101, 102}) || hs[0].Frozen {
			t.Errorf("%s: w1 = %+v, want pids 101 and 102 (not the zombie 103, not r2's 201), not frozen", find.name, hs[0])
		}
		if !slices.Equal(hs[1].PIDs, []int{301}) || !hs[1].Frozen {
			t.Errorf("%s: w2 = %+v, want pid 301, frozen", find.name, hs[1])
		}
		if len(hs[2].PIDs) != 0 || hs[2].Frozen {
			t.Errorf("%s: w3 = %+v, want no process", find.name, hs[2])
		}
	}
}
