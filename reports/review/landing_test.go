package review_test

import (
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/reports/decoded"
	"faultwin/reports/review"
	"faultwin/reports/rows"
)

// landingRow is a recorded row of window id whose trigger fired with the
// note given ("" for a supervisor-armed kill with no victims), judged
// status with the criteria in failed false.
func landingRow(t *testing.T, id, point, note string, victims bool, status string, failed ...string) rows.Row {
	t.Helper()
	in := map[string]any{"trace": []model.TracePoint{{Point: point, Fired: note != "" && note[:4] != "not ", Note: note}}}
	if victims {
		in["death"] = model.Death{Victims: []model.Victim{{Role: "operation", Comm: "podman", Gone: true}}}
	}
	input, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var rs []criteria.Result
	for _, c := range []string{model.F1, model.P1, model.P2, model.P3} {
		r := criteria.Result{ID: c, Judged: true, Pass: true}
		for _, f := range failed {
			if f == c {
				r.Pass = false
			}
		}
		rs = append(rs, r)
	}
	crit, err := json.Marshal(rs)
	if err != nil {
		t.Fatal(err)
	}
	return rows.Row{Window: model.Window{ID: id, Fault: model.Fault{Point: point}}, Input: input, Criteria: crit, Status: status}
}

func TestLandings(t *testing.T) {
	g := NewWithT(t)
	netavark := "fired restore.op (pid 7): operation pid 7 (podman) killed, gone; present: conmon 5, podman 7, netavark 9, iptables 10"
	early := "fired restore.op (pid 8): operation pid 8 (podman) killed, gone; present: podman 8"
	rs := []rows.Row{
		landingRow(t, "PR1_250", "restore.op", netavark, true, model.StatusFail, model.P2, model.P3),
		landingRow(t, "PR1_250", "restore.op", early, true, model.StatusPass),
		landingRow(t, "PR1_250", "restore.op", netavark, true, model.StatusFail, model.P2, model.P3),
		landingRow(t, "PS2_30", "stop.cleanup", "not fired: stopped before the trigger fired", false, model.StatusInvalid, model.F1, model.P3),
		landingRow(t, "W3_30", "restore.during_criu", "", false, model.StatusPass),
	}
	ls, errs := review.Landings(decoded.Of(rs...))
	g.Expect(errs).To(BeEmpty())
	g.Expect(ls).To(HaveLen(2), "the armed refsup window is not an external landing")
	g.Expect(ls[0].Window).To(Equal("PR1_250"))
	g.Expect(ls[0].Rows).To(Equal(3))
	g.Expect(ls[0].States).To(Equal([]review.LandingState{
		{Present: "conmon, iptables, netavark, podman", Rows: 2, Outcomes: map[string]int{"FAIL P2 P3": 2}},
		{Present: "podman", Rows: 1, Outcomes: map[string]int{"PASS": 1}},
	}))
	g.Expect(ls[1].Window).To(Equal("PS2_30"))
	g.Expect(ls[1].States).To(Equal([]review.LandingState{
		{Present: review.NoPresent, Rows: 1, Outcomes: map[string]int{"INVALID F1": 1}},
	}), "an INVALID outcome names F1, not the leftovers it did not measure")

	bad := rs[0]
	bad.Input = json.RawMessage(`{"trace": 3}`)
	_, errs = review.Landings(decoded.Of(bad))
	g.Expect(errs).To(HaveLen(1))
	g.Expect(errs[0].Error()).To(ContainSubstring("row 1 (PR1_250): decoding input"))
}

func TestLandingCountsRepeatedComms(t *testing.T) {
	note := "fired restore.conmon_at_criu (pid 3): conmon pid 3 (conmon) killed, gone; present: conmon 2, podman 4, conmon 3, runc 5, criu 6"
	ls, _ := review.Landings(decoded.Of(landingRow(t, "PR5", "restore.conmon_at_criu", note, true, model.StatusPass)))
	if got := ls[0].States[0].Present; got != "conmon ×2, criu, podman, runc" {
		t.Errorf("present %q", got)
	}
}

func TestOutcomeOfAVerdict(t *testing.T) {
	res := func(id string, holds bool) criteria.Result {
		return criteria.Result{ID: id, Judged: true, Pass: holds}
	}
	for _, tc := range []struct {
		v    criteria.Verdict
		want string
	}{
		{criteria.Verdict{Status: "PASS", Results: []criteria.Result{res("F1", true), res("P1", true)}}, "PASS"},
		{criteria.Verdict{Status: "FAIL", Results: []criteria.Result{res("F1", true), res("P1", false), res("P3", false)}}, "FAIL P1 P3"},
		// An INVALID window measured nothing: only why it is INVALID.
		{criteria.Verdict{Status: "INVALID", Results: []criteria.Result{res("F1", false), res("P1", false)}}, "INVALID F1"},
		{criteria.Verdict{Status: "FAIL", Results: []criteria.Result{{ID: "P2", Judged: false}}}, "FAIL P2"},
	} {
		if got := tc.v.Outcome().String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.v, got, tc.want)
		}
	}
}
