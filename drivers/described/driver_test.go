package described

import (
	"context"
	"faultwin/internal/hosttest"
	"strings"
	"testing"
	"time"

	"faultwin/internal/model"
)

// A supervisor call that hangs is bounded: the harness kills it at the
// description's timeout, records it, and the window goes on with that
// evidence instead of hanging the suite.
func TestStuckOperationIsBoundedAndRecorded(t *testing.T) {
	// Its commands carry the run's tag: a window's preflight running at the
	// same moment would find them, so it runs with the host tests.
	hosttest.Need(t, "starts processes tagged with a run")
	desc := strings.NewReplacer("timeout_ms: 1000", "timeout_ms: 300",
		`run: ["{base}", stop, s1]`, `run: [/bin/sleep, "30"]`,
		`base: [demo, --root, "{state}"]`, `base: [/bin/true]`,
		`cold: ["{base}", start, "s{n}"]`, `cold: [/bin/true]`,
		`  - ["{base}", clean]`, `  - [/bin/sleep, "30"]`,
		"kill: [operation]\n", "kill: [operation]\n    timed: true\n").Replace(minimal)
	d, err := Parse("stuck.yaml", []byte(desc))
	if err != nil {
		t.Fatal(err)
	}
	drv := New(d, t.TempDir(), "")
	ctx := context.Background()
	if _, err := drv.Prepare(ctx, "rstuck", model.Precondition{Cold: 1}); err != nil {
		t.Fatal(err)
	}
	if err := drv.Arm(ctx, model.Fault{Point: "stop.helper", DelayMS: 5000}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	if err := drv.Trigger(ctx, "stop"); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(t0); el > 3*time.Second {
		t.Fatalf("a stuck operation held the window for %v with a 300 ms bound", el)
	}
	death, err := drv.Reap(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(death.Note, "killed by the harness") || !strings.Contains(death.Note, "trigger did not fire") {
		t.Errorf("death note %q does not say the harness killed it and the fault never fired", death.Note)
	}
	last := drv.calls[len(drv.calls)-1]
	if !last.TimedOut || last.Signal != "SIGKILL" {
		t.Errorf("operation call recorded as %+v", last)
	}
	rep, err := drv.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0], "killed by the harness") {
		t.Errorf("a stuck sweep command is not an error of the sweep: %v", rep.Errors)
	}
	if tr, err := drv.Trace(); err != nil || len(tr) == 0 || tr[len(tr)-1].Fired {
		t.Errorf("trace %+v, %v: want the point, not fired", tr, err)
	}
}
