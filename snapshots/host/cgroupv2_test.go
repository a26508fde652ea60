package host

import (
	"slices"
	"testing"
)

// This host is cgroup v1 hybrid and cannot become a pure v2 host, so a v2
// host is read from a fake tree: testdata/cgroup2 is /sys/fs/cgroup of a
// v2 host (cgroup.procs, cgroup.freeze, cgroup.events in every cgroup),
// where run r1's cgroup is frozen by its own cgroup.freeze and its
// children through it, run r2's fw1 is frozen, and outside faultwin/ a
// neighbour's paused container (system.slice/neighbour-abc.scope, holding
// neighbour pid 220 and r1's pid 221), another paused neighbour
// (other.scope) and a frozen cgroup holding r1's pid 222 alone
// (user.slice/paused.scope). testdata/proc's pids 218 to 222 carry the
// matching /proc/<pid>/cgroup lines; testdata/cgroup is a hybrid host's,
// with r2's fw3 FROZEN in the v1 freezer and thawed in the unified one.

var (
	fakeV2     = Host{Proc: "testdata/proc", Cgroup: "testdata/cgroup2"}
	fakeHybrid = Host{Proc: "testdata/proc", Cgroup: "testdata/cgroup"}
)

func TestFakeV2CgroupsListed(t *testing.T) {
	got, gaps := fakeV2.Cgroups()
	want := []string{
		"testdata/cgroup2/faultwin",
		"testdata/cgroup2/faultwin/r1",
		"testdata/cgroup2/faultwin/r1/fw1",
		"testdata/cgroup2/faultwin/r1/fw2",
		"testdata/cgroup2/faultwin/r1/fw2/5f0c",
		"testdata/cgroup2/faultwin/r1/fw2/5f0c/inner", // below depth 3: inside a run's cgroup
		"testdata/cgroup2/faultwin/r2",
		"testdata/cgroup2/faultwin/r2/fw1",
	}
	if !slices.Equal(got, want) || len(gaps) != 0 {
		t.Errorf("v2 cgroups = %q (gaps %q), want %q", got, gaps, want)
	}
}

// A process's cgroups of a run are read from its v2 line alone
// ("0::/faultwin/r1/fw1"), and once from v1 and v2 lines naming one path.
func TestFakeV2ProcCgroupLines(t *testing.T) {
	procs, _, _ := fakeProcs(t)
	byPID := map[int][]string{}
	for _, p := range procs {
		byPID[p.PID] = p.Cgroups
	}
	for pid, want := range map[int][]string{
		218: {"/faultwin/r1/fw1"},
		219: {"/faultwin/r2/fw3"},
		221: nil, // a neighbour's cgroup is no run's
		222: nil,
	} {
		if got, ok := byPID[pid]; !ok || !slices.Equal(got, want) {
			t.Errorf("pid %d: in scope %v, cgroups %q, want %q", pid, ok, got, want)
		}
	}
}

func TestFakeV2Freezers(t *testing.T) {
	read := func(dir string) Freezer {
		t.Helper()
		f, ok, err := ReadFreezer(dir)
		if err != nil || !ok {
			t.Fatalf("ReadFreezer(%s): ok %v, %v", dir, ok, err)
		}
		return f
	}
	for dir, want := range map[string]string{
		"testdata/cgroup2/faultwin/r1":                      "testdata/cgroup2/faultwin/r1 (cgroup.freeze 1)",
		"testdata/cgroup2/faultwin/r1/fw1":                  "testdata/cgroup2/faultwin/r1/fw1 (frozen 1 through an ancestor)",
		"testdata/cgroup2/system.slice/neighbour-abc.scope": "testdata/cgroup2/system.slice/neighbour-abc.scope (cgroup.freeze 1)",
		"testdata/cgroup/freezer/faultwin/r2/fw3":           "testdata/cgroup/freezer/faultwin/r2/fw3 (FROZEN)",
	} {
		if f := read(dir); !f.Frozen() || f.String() != want {
			t.Errorf("%s: frozen %v, %q, want %q", dir, f.Frozen(), f, want)
		}
	}
	for _, dir := range []string{"testdata/cgroup2/faultwin", "testdata/cgroup2/faultwin/r2", "testdata/cgroup/unified/faultwin/r2/fw3", "testdata/cgroup/freezer/faultwin/r2"} {
		if f := read(dir); f.Frozen() {
			t.Errorf("%s read frozen: %+v", dir, f)
		}
	}
	if _, ok, err := ReadFreezer("testdata/cgroup/cpuset/faultwin/r1"); ok || err != nil {
		t.Errorf("a v1 hierarchy without the freezer read as a freezer (%v)", err)
	}
	if a, ok := fakeV2.FrozenAncestor(read("testdata/cgroup2/faultwin/r1/fw2/5f0c/inner")); !ok || a.Dir != "testdata/cgroup2/faultwin/r1" {
		t.Errorf("the ancestor that froze inner: %+v %v, want faultwin/r1", a, ok)
	}

	dirs := func(h Host, pid int) []string {
		t.Helper()
		fs, err := h.ProcFreezers(pid)
		if err != nil {
			t.Fatalf("ProcFreezers(%d): %v", pid, err)
		}
		var out []string
		for _, f := range fs {
			out = append(out, f.String())
		}
		return out
	}
	for _, c := range []struct {
		h    Host
		pid  int
		want []string
	}{
		{fakeV2, 218, []string{"testdata/cgroup2/faultwin/r1/fw1 (frozen 1 through an ancestor)"}},
		{fakeV2, 221, []string{"testdata/cgroup2/system.slice/neighbour-abc.scope (cgroup.freeze 1)"}},
		// hybrid: the v1 freezer's line and the unified hierarchy's
		{fakeHybrid, 219, []string{"testdata/cgroup/freezer/faultwin/r2/fw3 (FROZEN)", "testdata/cgroup/unified/faultwin/r2/fw3 (THAWED)"}},
		{fakeHybrid, 220, nil}, // memory has no freezer; its v2 cgroup is not in this tree
	} {
		if got := dirs(c.h, c.pid); !slices.Equal(got, c.want) {
			t.Errorf("%s: pid %d's freezers %q, want %q", c.h.Cgroup, c.pid, got, c.want)
		}
	}
}
