package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/reports/decoded"
	"faultwin/reports/rows"
)

// abRows are n rows of window, k of them FAILing P3 on one leftover, the
// control's arm when control is set.
func abRows(t *testing.T, window string, control bool, k, n int) []rows.Row {
	t.Helper()
	var out []rows.Row
	for i := 0; i < n; i++ {
		res, status := criteria.Result{ID: model.P3, Judged: true, Pass: true, Summary: "no leftovers"}, model.StatusPass
		if i < k {
			res = criteria.Result{ID: model.P3, Judged: true, Summary: "1 cgroup left after the sweeps",
				Evidence: []string{"cgroup /sys/fs/cgroup/faultwin/r1/libpod-1 of the run (in after_sweep)"}}
			status = model.StatusFail
		}
		raw, err := json.Marshal([]criteria.Result{res})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rows.Row{Window: model.Window{ID: window, Fault: model.Fault{Disarmed: control}}, Status: status, Criteria: raw})
	}
	return out
}

// TestCausedOnly: with --caused-only, a failure its control shows as often
// (baseline) does not make the exit status 1, and one only the faulted
// window shows does.
func TestCausedOnly(t *testing.T) {
	baseline := append(abRows(t, "PC1", false, 5, 10), abRows(t, "PC1", true, 5, 10)...)
	var out bytes.Buffer
	if err := causedExit(&out, decoded.Of(baseline...)); err != nil {
		t.Fatalf("a baseline-only failure was counted: %v", err)
	}
	if !strings.Contains(out.String(), "none caused by the kill") {
		t.Errorf("the baseline failures were not named: %q", out.String())
	}
	if err := exitFor(tallyRows(decoded.Of(baseline...))); err == nil {
		t.Fatal("without --caused-only the FAIL rows must count")
	}
	caused := append(baseline, append(abRows(t, "PC2", false, 10, 10), abRows(t, "PC2", true, 0, 10)...)...)
	err := causedExit(&bytes.Buffer{}, decoded.Of(caused...))
	var se statusExit
	if !errors.As(err, &se) || se.code != exitFail || !strings.Contains(se.msg, "PC2 P3") || strings.Contains(se.msg, "PC1") {
		t.Fatalf("a kill-caused failure must count, alone: %v", err)
	}
}
