package pidkill

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"faultwin/internal/model"
	"faultwin/internal/procstat"
)

// procStat reads pid's stat through the harness's one parser.
func procStat(pid int) (Stat, error) {
	st, err := procstat.Read("", pid)
	return Stat{Start: st.StartTime, State: st.State, Comm: st.Comm}, err
}

// child starts a sleep this test owns and returns its identity.
func child(t *testing.T) (*exec.Cmd, model.PID) {
	t.Helper()
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	st, err := procStat(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	return cmd, model.PID{PID: cmd.Process.Pid, StartTime: st.Start}
}

func TestKillsTheRecordedProcess(t *testing.T) {
	_, id := child(t)
	r := Kill(id, procStat, 2*time.Second)
	if r.Err != nil || !r.Gone || r.KilledAt.IsZero() || r.Comm != "sleep" {
		t.Fatalf("kill: %+v", r)
	}
}

// A pid whose start time is not the recorded one is another process now:
// it is not signalled.
func TestRefusesAReusedPid(t *testing.T) {
	_, id := child(t)
	id.StartTime++
	r := Kill(id, procStat, time.Second)
	if !errors.Is(r.Err, ErrReused) || !NotThere(r.Err) || !r.KilledAt.IsZero() || r.Gone {
		t.Fatalf("kill of a reused pid: %+v", r)
	}
	if !strings.HasSuffix(r.Err.Error(), ": not signalled") {
		t.Errorf("message %q", r.Err)
	}
	if st, err := procStat(id.PID); err != nil || st.State == 'Z' {
		t.Fatalf("the process was hit: %+v %v", st, err)
	}
}

// A zombie has exited already: it is recorded as gone, not signalled.
func TestZombieIsExited(t *testing.T) {
	cmd, id := child(t)
	if err := cmd.Process.Signal(os.Kill); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if st, err := procStat(id.PID); err == nil && st.State == 'Z' {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no zombie")
		}
	}
	r := Kill(id, procStat, time.Second)
	if !errors.Is(r.Err, ErrExited) || !r.Gone || !r.KilledAt.IsZero() {
		t.Fatalf("kill of a zombie: %+v", r)
	}
}

func TestGone(t *testing.T) {
	cmd, id := child(t)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	r := Kill(id, procStat, time.Second)
	// (the pid may name a newer process by now: then it is refused as reused)
	if !(errors.Is(r.Err, ErrGone) || errors.Is(r.Err, ErrReused)) || !r.KilledAt.IsZero() || r.Gone {
		t.Fatalf("kill of a reaped pid: %+v", r)
	}
}
