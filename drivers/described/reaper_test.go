package described

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"faultwin/internal/hosttest"
	"faultwin/internal/reexec"
)

// TestMain lets this test binary be a daemon's reaper (reexec).
func TestMain(m *testing.M) { hosttest.Main(m) }

// reaper runs this test binary as a daemon's reaper (its TestMain calls
// reexec.Init), with the daemon's argv after it.
func reaper(t *testing.T, argv ...string) *exec.Cmd {
	t.Helper()
	cmd, err := reexec.Command(reaperHelper, os.Environ(), argv...)
	if err != nil {
		t.Fatal(err)
	}
	return cmd
}

// The daemon's orphans are the reaper's to reap: a child the daemon
// leaves running finds the reaper its parent once the daemon is gone
// (not init), and is not left a zombie. The daemon's exit code is the
// reaper's; the marker variable does not reach the daemon.
func TestReaperReapsTheDaemonsOrphans(t *testing.T) {
	// the orphan says its parent once the daemon exited, then exits itself
	cmd := reaper(t, "/bin/sh", "-c", `sh -c 'sleep 0.02; read -r a b c d rest < /proc/$$/stat; echo "orphan=$$ parent=$d"' & echo "env=${`+reexec.Env+`:-unset}"; exit 7`)
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 7 {
		t.Fatalf("reaper of a daemon exiting 7: %v, output %q", err, out.String())
	}
	got := strings.Fields(out.String())
	want := []string{"env=unset", "orphan=", "parent=" + strconv.Itoa(cmd.Process.Pid)}
	if len(got) != 3 || got[0] != want[0] || !strings.HasPrefix(got[1], want[1]) || got[2] != want[2] {
		t.Fatalf("output %q: want %q, the orphan's pid, %q (the reaper)", out.String(), want[0], want[2])
	}
	if st, err := os.ReadFile("/proc/" + strings.TrimPrefix(got[1], "orphan=") + "/stat"); err == nil {
		t.Errorf("the daemon's orphan is still there after the reaper: %s", st)
	}
}

// SIGTERM to the reaper is the stop of the daemon: it reaches the daemon,
// and a daemon dead of signal N makes the reaper exit 128+N.
func TestReaperPassesSIGTERMOn(t *testing.T) {
	cmd := reaper(t, "/bin/sh", "-c", "trap 'exit 3' TERM; while :; do sleep 0.01; done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
		t.Fatalf("daemon trapping TERM with exit 3: reaper ended %v", err)
	}
	cmd = reaper(t, "/bin/sh", "-c", "kill -9 $$")
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 128+9 {
		t.Fatalf("daemon killed by SIGKILL: reaper ended %v, want exit 137", err)
	}
}
