package criteria_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"faultwin/criteria"
	"faultwin/internal/model"
)

// w3xAftermath is the aftermath of a refsup W3X restore as rows record it,
// the user's retry restoring s4 out of the checkpoint of s1 and its
// counter read not moving; the expert step refsup-unlock then restored s5,
// which counted. progress is s4's recorded wait ("" for a row recorded
// before the wait was).
func w3xAftermath(t *testing.T, progress string) *model.Aftermath {
	t.Helper()
	s4 := `{"name": "s4", "pids": [5101, 5102], "marker": "m1", "boot": "b1", "counter": 3, "counter2": 3, "taken": "2026-12-05T10:00:02Z"` + progress + `}`
	row := `{
	  "supervisor": "refsup", "operation": "restore", "target": "s4", "origin": "s1", "expect": "continue", "bound_ms": 5000, "version": 4,
	  "before": [{"name": "s1", "pids": [4001], "marker": "m1", "boot": "b1", "counter": 3, "counter2": 0, "taken": "2026-12-05T10:00:00Z"}],
	  "calls": [
	    {"step": "look", "what": "refsup serve --recover", "exit": 0, "ms": 120, "output": ""},
	    {"step": "look", "what": "list (after_death)", "exit": 0, "ms": 20, "output": "{}"},
	    {"step": "retry", "what": "retry restore c1", "exit": 0, "ms": 400, "output": "{\"session\":\"s4\"}"},
	    {"step": "look", "what": "list (after_retry)", "exit": 0, "ms": 20, "output": "{}"},
	    {"step": "expert", "what": "refsup-unlock: unlock c1", "exit": 0, "ms": 15, "output": ""},
	    {"step": "expert", "what": "retry restore c1", "exit": 0, "ms": 380, "output": "{\"session\":\"s5\"}"}
	  ],
	  "looks": [
	    {"when": "after_death", "call": 1, "reported": [], "host_pre": [{"name": "s1", "pids": []}], "host_post": [{"name": "s1", "pids": []}]},
	    {"when": "after_retry", "call": 3, "reported": [{"name": "s4", "state": "running", "raw": "running"}],
	     "host_pre": [{"name": "s4", "pids": [5101, 5102]}], "host_post": [{"name": "s4", "pids": [5101, 5102]}]}
	  ],
	  "after": [` + s4 + `],
	  "rescues": [{"step": "refsup-unlock", "calls": [4, 5], "target": "s5",
	    "after": {"name": "s5", "pids": [5201], "marker": "m1", "boot": "b1", "counter": 3, "counter2": 5, "taken": "2026-12-05T10:00:04Z"}}]
	}`
	var a model.Aftermath
	dec := json.NewDecoder(bytes.NewReader([]byte(row)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		t.Fatalf("the recorded aftermath: %v", err)
	}
	return &a
}

// u1Of judges U1 on a, and the status it alone gives a window: INVALID
// when not judged, FAIL when false, PASS when it holds.
func u1Of(a *model.Aftermath) (string, criteria.Result) {
	r := judged(a, model.U1)
	switch {
	case !r.Judged:
		return model.StatusInvalid, r
	case !r.Pass:
		return model.StatusFail, r
	}
	return model.StatusPass, r
}

// TestU1StarvedIsNotStuck: a counter that did not move while the workload
// got no CPU, waiting for one, is no evidence that it does not run on: U1
// is not judged and the window is INVALID, saying why, neither FAIL nor
// PASS. One that got CPU, or was asleep with nothing to wait for, or
// stopped, and did not move is stuck as before; a row recorded before the
// wait is judged exactly as it was.
func TestU1StarvedIsNotStuck(t *testing.T) {
	const stuck = "stuck: s4 does not run on: boot b1, counter 3 then 3"
	for _, tc := range []struct {
		name, progress string
		status         string
		summary        string // U1's summary starts so
		evidence       string // and some line of its evidence holds this
	}{
		{"recorded before the wait: judged as it was", "", model.StatusFail,
			"stuck: s4 does not run on: boot b1, counter 3 then 3; only the expert step refsup-unlock brought it back", "s4 after: boot b1, counter 3 then 3"},
		{"starved: no CPU, runnable all the wait", `, "progress": {"bound_ms": 2000, "waited_ms": 2004, "polls": 180, "cpu_ms": 0, "queued_ms": 1950, "load": "2.10 1.20 0.70 5/140", "runnable": 5}`,
			model.StatusInvalid, "not judged: starved: s4 got 0 ms of CPU in the 2.0 s wait for its counter (1950 ms runnable, waiting for a CPU); load 2.10, 5 runnable",
			"s4 after: boot b1, counter 3 then 3 (waited 2004 of 2000 ms, 0 ms of CPU, 1950 ms waiting for a CPU; load 2.10 1.20 0.70 5/140, 5 runnable)"},
		{"starved, the kernel not saying how long it queued", `, "progress": {"bound_ms": 2000, "waited_ms": 2001, "polls": 180, "cpu_ms": 0, "load": "3.00 1.00 0.50 6/140", "runnable": 6, "err": "schedstat: no such file"}`,
			model.StatusInvalid, "not judged: starved: s4 got 0 ms of CPU in the 2.0 s wait for its counter; load 3.00, 6 runnable", ""},
		{"got CPU and did not move: stuck", `, "progress": {"bound_ms": 2000, "waited_ms": 2003, "polls": 180, "cpu_ms": 40, "queued_ms": 900, "load": "2.10 1.20 0.70 5/140", "runnable": 5}`,
			model.StatusFail, stuck, "40 ms of CPU"},
		{"asleep, nothing to wait for: stuck", `, "progress": {"bound_ms": 2000, "waited_ms": 2002, "polls": 180, "cpu_ms": 0, "queued_ms": 0.2, "load": "0.10 0.10 0.10 1/140", "runnable": 1}`,
			model.StatusFail, stuck, "0 ms waiting for a CPU"},
		{"stopped: stuck", `, "progress": {"bound_ms": 2000, "waited_ms": 230, "polls": 22, "cpu_ms": 0, "queued_ms": 0, "load": "2.10 1.20 0.70 5/140", "runnable": 5, "stopped": [5101, 5102]}`,
			model.StatusFail, stuck, "stopped: pids [5101 5102]"},
		{"frozen: stuck", `, "progress": {"bound_ms": 2000, "waited_ms": 220, "polls": 21, "cpu_ms": 0, "queued_ms": 1500, "load": "2.10 1.20 0.70 5/140", "runnable": 5, "frozen": [5101, 5102]}`,
			model.StatusFail, stuck, "frozen: pids [5101 5102]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, r := u1Of(w3xAftermath(t, tc.progress))
			if status != tc.status || !strings.HasPrefix(r.Summary, tc.summary) || !strings.Contains(evidence(r), tc.evidence) {
				t.Errorf("%s, U1: %s\nwant %s, U1 starting %q, evidence holding %q", status, evidence(r), tc.status, tc.summary, tc.evidence)
			}
		})
	}
}

// TestU1StarvedButCertainLoss: starvation leaves unknown only whether the
// workload runs on; a boot nonce that changed is a loss whatever its CPU.
func TestU1StarvedButCertainLoss(t *testing.T) {
	a := w3xAftermath(t, `, "progress": {"bound_ms": 2000, "waited_ms": 2004, "polls": 180, "cpu_ms": 0, "queued_ms": 1950, "load": "2.10 1.20 0.70 5/140", "runnable": 5}`)
	a.After[0].Boot = "b2"
	a.Rescues = nil
	status, r := u1Of(a)
	if status != model.StatusFail || !strings.HasPrefix(r.Summary, "lost: s4 booted afresh") {
		t.Errorf("%s, U1: %s; want FAIL, lost: s4 booted afresh", status, evidence(r))
	}
}

// TestU1StarvedRescue: the expert step's target starved during its wait
// cannot say whether the step brought the workload back.
func TestU1StarvedRescue(t *testing.T) {
	a := w3xAftermath(t, `, "progress": {"bound_ms": 2000, "waited_ms": 2003, "polls": 180, "cpu_ms": 40, "queued_ms": 900, "load": "2.10 1.20 0.70 5/140", "runnable": 5}`)
	a.Rescues[0].After.Counter2 = a.Rescues[0].After.Counter
	a.Rescues[0].After.Progress = &model.Progress{BoundMS: 2000, WaitedMS: 2001, CPUMS: 0, QueuedMS: new(1990.0), Load: "4.00 2.00 1.00 7/140", Runnable: 7}
	status, r := u1Of(a)
	if status != model.StatusInvalid || !strings.HasPrefix(r.Summary, "not judged: after expert step refsup-unlock: starved: s5 got 0 ms of CPU") {
		t.Errorf("%s, U1: %s; want INVALID, the rescue starved", status, evidence(r))
	}
}
