package described

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"faultwin/drivers/hostview"
	"faultwin/internal/hosttest"
	"faultwin/internal/model"
)

// A precondition command or an operation that exits while a child it
// started keeps its stdout and stderr (a restore tool that daemonises its
// monitor) is over at its exit: the precondition is built, the operation's
// call records its real time and the holder, and neither reads as failed
// or hung.
func TestCallThatDaemonisesIsOverAtItsExit(t *testing.T) {
	hosttest.Need(t, "starts processes tagged with a run")
	daemonise := `[/bin/sh, -c, "sleep 30 & echo started"]`
	desc := strings.NewReplacer(
		`cold: ["{base}", --cgroup-parent, "/faultwin/{run}", start, "s{n}", --env, "DEMO_SESSION=s{n}"]`, `cold: [/bin/sh, -c, "DEMO_SESSION=s{n} sleep 30 & echo cold {n} /faultwin/{run}"]`,
		`run: ["{base}", stop, s1]`, "run: "+daemonise,
		`  - ["{base}", clean]`, `  - [/bin/true]`,
		// the operation is now a shell: its point kills the role, not the shell
		"    kill: [operation]", "    kill: [helper]").Replace(minimal)
	d, err := Parse("held.yaml", []byte(desc))
	if err != nil {
		t.Fatal(err)
	}
	drv := New(d, t.TempDir(), "")
	ctx := context.Background()
	t.Cleanup(func() { killRun(drv.run) })
	if _, err := drv.Prepare(ctx, "rheld", model.Precondition{Cold: 1}); err != nil {
		t.Fatalf("precondition of a command that daemonises: %v", err)
	}
	cold := drv.calls[len(drv.calls)-1]
	if cold.Exit != 0 || cold.TimedOut || cold.MS > 500 || len(cold.HeldOpen) != 1 || cold.HeldOpen[0].Comm != "sleep" {
		t.Errorf("cold call recorded as %+v", cold)
	}
	if err := drv.Arm(ctx, model.Fault{Point: "stop.helper", Disarmed: true}); err != nil {
		t.Fatal(err)
	}
	if err := drv.Trigger(ctx, "stop"); err != nil {
		t.Fatal(err)
	}
	death, err := drv.Reap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	op := drv.opCall
	if death.OpErr != "" || op.TimedOut || op.MS > 500 || len(op.HeldOpen) != 1 || !strings.Contains(op.Output, "started") {
		t.Errorf("operation recorded as %+v, death %+v", op, death)
	}
}

// killRun kills what a test's commands left (they carry the run's tag).
func killRun(run string) {
	for _, p := range procsOfRun(run) {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
}

func procsOfRun(run string) []int {
	ps, _ := hostview.Procs()
	var out []int
	for _, p := range ps {
		env, _ := os.ReadFile("/proc/" + strconv.Itoa(p.PID) + "/environ")
		if strings.Contains("\x00"+string(env), "\x00"+model.RunEnvKey+"="+run+"\x00") {
			out = append(out, p.PID)
		}
	}
	return out
}
