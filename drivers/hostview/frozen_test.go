package hostview

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"faultwin/internal/hosttest"
	"faultwin/internal/model"
)

// A workload whose processes sit in a frozen cgroup is paused on the host,
// and running again once thawed.
func TestFrozenWorkload(t *testing.T) {
	hosttest.Need(t, "makes a cgroup and freezes it")
	run := "rfz" + strconv.Itoa(os.Getpid())
	dir := filepath.Join(CgroupRoot, "freezer", "faultwin-test-"+run)
	state, frozen, thawed := "freezer.state", "FROZEN", "THAWED"
	if _, err := os.Stat(filepath.Join(CgroupRoot, "freezer")); err != nil {
		// a cgroup v2 host: the unified hierarchy freezes by cgroup.freeze
		dir, state, frozen, thawed = filepath.Join(CgroupRoot, "faultwin-test-"+run), "cgroup.freeze", "1", "0"
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sleep", "60")
	cmd.Env = append(os.Environ(), model.RunEnvKey+"="+run, "FAULTWIN_SESSION=w1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	write := func(f, v string) {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_ = os.WriteFile(filepath.Join(dir, state), []byte(thawed), 0o644)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		for i := 0; i < 50 && os.Remove(dir) != nil; i++ {
			time.Sleep(20 * time.Millisecond)
		}
	})
	write("cgroup.procs", strconv.Itoa(cmd.Process.Pid))
	find := ByEnv("FAULTWIN_SESSION", run)
	read := func() model.HostWorkload {
		hs, err := Workloads([]string{"w1"}, find)
		if err != nil {
			t.Fatal(err)
		}
		return hs[0]
	}
	if h := read(); h.State() != model.StateRunning {
		t.Fatalf("before the freeze: %+v is %s, want running", h, h.State())
	}
	write(state, frozen)
	deadline := time.Now().Add(5 * time.Second)
	for read().State() != model.StatePaused {
		if time.Now().After(deadline) {
			t.Fatalf("frozen: %+v is %s, want paused", read(), read().State())
		}
		time.Sleep(20 * time.Millisecond)
	}
	write(state, thawed)
	deadline = time.Now().Add(5 * time.Second)
	for read().State() != model.StateRunning {
		if time.Now().After(deadline) {
			t.Fatalf("thawed: %+v is %s, want running", read(), read().State())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
