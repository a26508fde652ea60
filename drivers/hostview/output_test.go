package hostview

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A call whose process exits while a child it left behind holds its
// stdout and stderr (a restore tool that daemonises a monitor) returns at
// the exit, with what it wrote, and names the holder; it is not a call
// that hung.
func TestCallReturnsAtExitWhileAChildHoldsItsOutput(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "sleep 30 & echo $! ; echo parent done")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	t0 := time.Now()
	uc := Call(context.Background(), cmd, "r1", 5*time.Second)
	took := time.Since(t0)
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	if uc.TimedOut || uc.Exit != 0 || took > time.Second {
		t.Fatalf("call took %v, timed out %v, exit %d: it should return when sh exits", took, uc.TimedOut, uc.Exit)
	}
	if !strings.Contains(uc.Output, "parent done") {
		t.Errorf("output %q lacks what sh wrote", uc.Output)
	}
	child := strings.Fields(uc.Output)[0]
	if len(uc.HeldOpen) != 1 || uc.HeldOpen[0].Comm != "sleep" || child != itoa(uc.HeldOpen[0].PID) {
		t.Fatalf("held open by %+v, want the sleep child %s", uc.HeldOpen, child)
	}
	// A call whose output closes with it names no holder.
	if q := Call(context.Background(), exec.Command("/bin/true"), "r1", 5*time.Second); q.HeldOpen != nil {
		t.Errorf("/bin/true held open by %+v", q.HeldOpen)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
