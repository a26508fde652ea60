package hostview

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"faultwin/internal/hosttest"
	"faultwin/internal/model"
)

// A workload is found by the variable its processes carry, its identity is
// read through its own root, a zombie is not a live process of it, and a
// call that hangs is named with its own tree.
func TestWorkloadOnTheHost(t *testing.T) {
	hosttest.Need(t, "starts processes tagged with a run")
	run := "rhv" + strings.ReplaceAll(time.Now().Format("150405.000"), ".", "")
	dir := t.TempDir()
	file := filepath.Join(dir, "counter")
	script := `i=0; while :; do i=$((i+1)); echo "$i m1 boot1" > ` + file + `.new && mv -f ` + file + `.new ` + file + `; sleep 0.05; done`
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Env = append(os.Environ(), model.RunEnvKey+"="+run, "FAULTWIN_SESSION=w1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killAll := func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	t.Cleanup(func() { killAll(); _ = cmd.Wait() })
	find := ByEnv("FAULTWIN_SESSION", run)

	hs, err := Workloads([]string{"w1", "w2"}, find)
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 2 || hs[0].State() != model.StateRunning || hs[1].State() != model.StateStopped {
		t.Fatalf("workloads %+v", hs)
	}
	if !containsInt(hs[0].PIDs, cmd.Process.Pid) {
		t.Errorf("w1's pids %v lack the shell %d", hs[0].PIDs, cmd.Process.Pid)
	}
	// another run's process with the same name is not this run's
	if other := ByEnv("FAULTWIN_SESSION", run+"x")(cmd.Process.Pid); other != "" {
		t.Errorf("a process of run %s was found for run %sx", run, run)
	}

	loc := func() (string, []int, error) { return file, []int{cmd.Process.Pid}, nil }
	time.Sleep(200 * time.Millisecond)
	w := Identity("w1", loc)
	if !w.Running() || w.Marker != "m1" || w.Boot != "boot1" {
		t.Errorf("identity %+v: want a counter that moves, marker m1, boot boot1", w)
	}
	if once := Once("w1", loc); once.Counter2 != 0 || once.Boot != "boot1" {
		t.Errorf("a single read %+v", once)
	}
	gone := Identity("w9", InRoot("w9", "counter", find))
	if gone.Err == "" || !strings.Contains(gone.Err, "no live process of w9") {
		t.Errorf("a workload with no process: %+v", gone)
	}

	stuck := Stuck(cmd.Process.Pid, run)
	var own bool
	for _, p := range stuck {
		if p.PID == cmd.Process.Pid && p.Own && p.Comm == "sh" {
			own = true
		}
	}
	if !own {
		t.Errorf("Stuck does not name the call's own shell: %+v", stuck)
	}

	// killed and not yet reaped: a zombie runs nothing
	killAll()
	deadline := time.Now().Add(5 * time.Second)
	for {
		hs, _ = Workloads([]string{"w1"}, find)
		p, err := Read(cmd.Process.Pid)
		if err == nil && p.Zombie() && hs[0].State() == model.StateStopped {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the killed shell is a zombie %v, w1 still counted with pids %v", err == nil && p.Zombie(), hs[0].PIDs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// Identity reads one workload's identity twice, Gap apart (Identities for
// one name), as the tests ask it.
func Identity(name string, loc Locate) model.Workload {
	return Identities([]string{name}, func(string) Locate { return loc }, nil)[0]
}
