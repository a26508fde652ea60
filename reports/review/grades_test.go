package review_test

import (
	"encoding/json"
	"testing"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/reports/decoded"
	"faultwin/reports/review"
	"faultwin/reports/rows"
)

// TestGradesOf: U1's grades are tallied per window, a control apart, the
// expert step of each stuck row counted, and rows without a graded U1
// counted as ungraded.
func TestGradesOf(t *testing.T) {
	row := func(id string, control bool, status, u1 string) rows.Row {
		var rs []criteria.Result
		if u1 != "" {
			rs = append(rs, criteria.Result{ID: model.U1, Judged: true, Pass: status == model.StatusPass, Summary: u1})
		}
		b, _ := json.Marshal(rs)
		return rows.Row{Window: model.Window{ID: id, Fault: model.Fault{Disarmed: control}}, Status: status, Criteria: b}
	}
	gs := review.GradesOf(decoded.Of([]rows.Row{
		row("PR4", false, "FAIL", "stuck: fw1 does not run on; only the expert step delete-runc-state brought it back"),
		row("PR4", false, "FAIL", "lost: fw1 does not run on; no expert step brought it back (tried delete-runc-state)"),
		row("PR4", false, "PASS", "recovered: fw1 is where its user can go on (continue)"),
		row("PR4", false, "INVALID", "lost: not counted"),
		row("PR4", true, "PASS", "kept: fw1 is where its user can go on (continue)"),
		row("PR10", false, "PASS", ""),
	}...))
	got := map[string]string{}
	for _, g := range gs {
		got[g.Window] = g.Cell()
	}
	for w, cell := range map[string]string{
		"PR10":                       "kept 0 / recovered 0 / stuck 0 / lost 0 / ungraded 1",
		"PR4":                        "kept 0 / recovered 1 / stuck 1 (delete-runc-state 1) / lost 1",
		"PR4" + review.ControlSuffix: "kept 1 / recovered 0 / stuck 0 / lost 0",
	} {
		if got[w] != cell {
			t.Errorf("%s: %q, want %q", w, got[w], cell)
		}
	}
	if len(gs) != 3 {
		t.Errorf("got %d windows, want 3: %+v", len(gs), gs)
	}
}
