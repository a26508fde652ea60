package reclaim

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/snapshots"
	"faultwin/snapshots/host"
)

// This host is cgroup v1 hybrid and cannot become a pure v2 host: the
// thaw on a v2 host runs against the fake v2 tree of snapshots/host
// (testdata/cgroup2, described in its cgroupv2_test.go) and the fake
// /proc beside it, copied so the thaw can write. fakeKernel plays the
// kernel's part: cgroup.events says "frozen 1" while the cgroup or an
// ancestor has cgroup.freeze 1.

const fakeProc = "../../snapshots/host/testdata/proc"

// fakeV2Tree copies the fake v2 cgroup tree to a temporary dir and runs
// fakeKernel on it until the test ends.
func fakeV2Tree(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "cgroup")
	must(t, os.CopyFS(dst, os.DirFS("../../snapshots/host/testdata/cgroup2")))
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			fakeKernel(dst)
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
	return dst
}

// fakeKernel sets every cgroup.events below root from the cgroup.freeze
// files, as the kernel does: frozen while the cgroup or an ancestor asks.
// Each is replaced whole, so a reader never sees half a file.
func fakeKernel(root string) {
	_ = filepath.WalkDir(root, func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if _, err := os.Stat(filepath.Join(dir, "cgroup.freeze")); err != nil {
			return nil
		}
		frozen := "0"
		for a := dir; len(a) >= len(root); a = filepath.Dir(a) {
			if b, _ := os.ReadFile(filepath.Join(a, "cgroup.freeze")); strings.TrimSpace(string(b)) == "1" {
				frozen = "1"
			}
		}
		procs, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		populated := "0"
		if len(strings.Fields(string(procs))) > 0 {
			populated = "1"
		}
		tmp := filepath.Join(dir, ".events")
		if os.WriteFile(tmp, []byte("populated "+populated+"\nfrozen "+frozen+"\n"), 0o644) == nil {
			_ = os.Rename(tmp, filepath.Join(dir, "cgroup.events"))
		}
		return nil
	})
}

func freezeSetting(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.freeze"))
	must(t, err)
	return strings.TrimSpace(string(b))
}

// r1's processes in the fake /proc: 218 in its cgroup faultwin/r1/fw1
// (frozen through r1), 221 in a neighbour's paused container beside the
// neighbour's 220, 222 alone in a frozen cgroup outside faultwin/.
var r1Procs = []snapshots.Process{{PID: 218}, {PID: 221}, {PID: 222}}

func TestThawV2FakeTree(t *testing.T) {
	cg := fakeV2Tree(t)
	th := Thaw(host.Host{Proc: fakeProc, Cgroup: cg}, []string{"r1"}, r1Procs, 5*time.Second)
	want := []string{
		filepath.Join(cg, "faultwin/r1") + " (cgroup.freeze 1)",
		filepath.Join(cg, "user.slice/paused.scope") + " (cgroup.freeze 1)",
	}
	if !slices.Equal(th.Thawed, want) || len(th.Errors) > 0 {
		t.Errorf("thawed %q (errors %q), want %q", th.Thawed, th.Errors, want)
	}
	for rel, want := range map[string]string{
		"faultwin/r1":                      "0",
		"faultwin/r1/fw1":                  "0",
		"user.slice/paused.scope":          "0",
		"faultwin/r2/fw1":                  "1", // another run's
		"system.slice/neighbour-abc.scope": "1", // a neighbour's, though r1's 221 is in it
		"system.slice/other.scope":         "1", // a neighbour's
	} {
		if got := freezeSetting(t, filepath.Join(cg, rel)); got != want {
			t.Errorf("%s: cgroup.freeze %s, want %s", rel, got, want)
		}
	}
	for rel, want := range map[string]string{
		"faultwin/r1/fw1":                  "thawed",
		"faultwin/r1/fw2/5f0c/inner":       "thawed",
		"system.slice/neighbour-abc.scope": "not thawed: it holds pid 220, not of the run (a neighbour's frozen cgroup stays frozen)",
	} {
		if got := th.why[filepath.Join(cg, rel)]; got != want {
			t.Errorf("%s: %q, want %q", rel, got, want)
		}
	}
	if f, _, _ := host.ReadFreezer(filepath.Join(cg, "faultwin/r1/fw1")); f.Frozen() {
		t.Errorf("fw1 still frozen after the thaw's wait: %s", f)
	}
}

// A run's cgroup frozen through an ancestor that is no run's (faultwin/
// itself) is not thawed by its own write: the error names the ancestor.
func TestThawV2FrozenThroughAnAncestorOfNoRun(t *testing.T) {
	cg := fakeV2Tree(t)
	must(t, os.WriteFile(filepath.Join(cg, "faultwin", "cgroup.freeze"), []byte("1\n"), 0o644))
	fakeKernel(cg)
	th := Thaw(host.Host{Proc: fakeProc, Cgroup: cg}, []string{"r1"}, r1Procs[:1], 100*time.Millisecond)
	want := "cgroup " + filepath.Join(cg, "faultwin/r1") + " not thawed: frozen through its ancestor " + filepath.Join(cg, "faultwin") + " (cgroup.freeze 1), not a run's cgroup"
	if !slices.Contains(th.Errors, want) {
		t.Errorf("errors %q, want %q among them", th.Errors, want)
	}
	if got := freezeSetting(t, filepath.Join(cg, "faultwin")); got != "1" {
		t.Errorf("faultwin/, of no run, thawed: cgroup.freeze %s", got)
	}
}

// The ties that use cgroups, on a v2 host: a process whose only mark is
// its v2 line 0::/faultwin/r1/fw1 is r1's, and the run's cgroups the v2
// tree lists are leftovers of r1 and r2.
func TestV2CgroupTies(t *testing.T) {
	cg := fakeV2Tree(t)
	all, gaps := host.Host{Cgroup: cg}.Cgroups()
	if len(gaps) > 0 {
		t.Fatal(gaps)
	}
	// pid 218 as snapshots/host reads it from the fake /proc (its
	// TestFakeV2ProcCgroupLines checks the reading).
	s := snapshots.Snapshot{Processes: []snapshots.Process{{PID: 218, StartTime: 2180, State: "S", Comm: "sleep", Cgroups: []string{"/faultwin/r1/fw1"}}}, Cgroups: all}
	owned := criteria.OfRun(s, model.NewScope(t.TempDir(), "r1"), snapshots.Decoys{})
	if len(owned) != 1 || owned[0].Process.PID != 218 || !slices.Contains(owned[0].Why, "in cgroup /faultwin/r1/fw1") {
		t.Errorf("r1's processes: %+v", owned)
	}
	if other := criteria.OfRun(s, model.NewScope(t.TempDir(), "r2"), snapshots.Decoys{}); len(other) != 0 {
		t.Errorf("r2 owns %+v", other)
	}
	left := criteria.Leftovers(s, snapshots.DefaultRoots(t.TempDir()))
	for _, want := range []string{
		"cgroup " + filepath.Join(cg, "faultwin/r1/fw2/5f0c/inner") + ": of run r1",
		"cgroup " + filepath.Join(cg, "faultwin/r2/fw1") + ": of run r2",
	} {
		if !slices.Contains(left, want) {
			t.Errorf("leftovers do not name %q: %q", want, left)
		}
	}
	if slices.ContainsFunc(left, func(l string) bool { return strings.Contains(l, "slice") }) {
		t.Errorf("a neighbour's cgroup named a leftover: %q", left)
	}
}
