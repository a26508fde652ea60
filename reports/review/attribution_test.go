package review_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/reports/decoded"
	"faultwin/reports/findings"
	"faultwin/reports/review"
	"faultwin/reports/rows"
)

func TestNewcombe(t *testing.T) {
	cases := []struct {
		name           string
		k1, n1, k2, n2 int
		d, lo, hi      float64
	}{
		// Newcombe (1998), Table II, example (a), method 10.
		{"Newcombe Table II (a)", 56, 70, 48, 80, 0.2000, 0.0524, 0.3339},
		{"arms swapped", 48, 80, 56, 70, -0.2000, -0.3339, -0.0524},
		{"equal rates", 5, 10, 5, 10, 0, -0.3725, 0.3725},
		{"all against none", 10, 10, 0, 10, 1, 0.6075, 1},
		// An arm of no rows could be any rate: the Wilson bounds' widest gap.
		{"no control", 3, 10, 0, 0, 0, 0.1078 - 1, 0.6032},
	}
	for _, c := range cases {
		d, lo, hi := review.Newcombe(c.k1, c.n1, c.k2, c.n2, review.Z95)
		if math.Abs(d-c.d) > 5e-5 || math.Abs(lo-c.lo) > 5e-5 || math.Abs(hi-c.hi) > 5e-5 {
			t.Errorf("%s: Newcombe(%d/%d, %d/%d) = %.4f [%.4f, %.4f], want %.4f [%.4f, %.4f]",
				c.name, c.k1, c.n1, c.k2, c.n2, d, lo, hi, c.d, c.lo, c.hi)
		}
		if lo < -1 || hi > 1 || lo > hi {
			t.Errorf("%s: [%v, %v] outside [-1, 1]", c.name, lo, hi)
		}
	}
}

func TestVerdictPhrase(t *testing.T) {
	for v, want := range map[review.Verdict]string{
		review.Caused:      "caused by the kill",
		review.Baseline:    "fails without the kill too",
		review.Unseparated: "not separable yet",
	} {
		if got := v.Phrase(); got != want {
			t.Errorf("%s.Phrase() = %q, want %q", v, got, want)
		}
	}
}

// leak is a P3 leftover, its ids differing from run to run as a real
// soak's do, so that only classing makes the rows one failure.
func leak(i int) criteria.Result {
	return criteria.Result{ID: "P3", Judged: true, Summary: "leftovers", Evidence: []string{
		fmt.Sprintf("cgroup /sys/fs/cgroup/blkio/faultwin/r%08x/libpod-%064x of the run (in after_sweep)", 0xb8ec52a5+i, i+1),
	}}
}

const leakClass = "cgroup /sys/fs/cgroup/*/faultwin/<run>/libpod-<id> of the run"

func abRow(t *testing.T, window, status string, control bool, results ...criteria.Result) rows.Row {
	t.Helper()
	if len(results) == 0 {
		results = []criteria.Result{{ID: "P3", Judged: true, Pass: true, Summary: "no leftovers"}}
	}
	raw, err := json.Marshal(results)
	if err != nil {
		t.Fatal(err)
	}
	return rows.Row{Window: model.Window{ID: window, Fault: model.Fault{Disarmed: control}}, Status: status, Criteria: raw}
}

// arm is n measured rows of window, k of them FAILing with a leak.
func arm(t *testing.T, window string, control bool, k, n int) []rows.Row {
	var rs []rows.Row
	for i := range n {
		if i < k {
			rs = append(rs, abRow(t, window, model.StatusFail, control, leak(i)))
		} else {
			rs = append(rs, abRow(t, window, model.StatusPass, control))
		}
	}
	return rs
}

func TestABVerdicts(t *testing.T) {
	cases := []struct {
		name         string
		fk, fn       int
		ck, cn       int
		verdict      review.Verdict
		inCausedOnly bool
		morePositive bool
	}{
		{"the supervisor leaks with no fault", 5, 10, 5, 10, review.Baseline, false, false},
		{"the controls leak more", 2, 10, 7, 10, review.Baseline, false, false},
		{"the kill leaks", 10, 10, 0, 10, review.Caused, true, false},
		{"the kill leaks, the controls once", 9, 10, 1, 10, review.Caused, true, false},
		{"no controls", 10, 10, 0, 0, review.Unseparated, false, false},
		{"too few to tell", 2, 10, 0, 10, review.Unseparated, false, true},
	}
	for _, c := range cases {
		rs := append(arm(t, "W3_30", false, c.fk, c.fn), arm(t, "W3_30", true, c.ck, c.cn)...)
		ws := review.AB(decoded.Of(rs...), findings.Class)
		if len(ws) != 1 || len(ws[0].Attributions) != 1 {
			t.Fatalf("%s: %+v, want one window with one attribution", c.name, ws)
		}
		a := ws[0].Attributions[0]
		if a.Window != "W3_30" || a.Criterion != "P3" || a.Class != leakClass || !strings.HasPrefix(a.Example, "cgroup /sys/fs/cgroup/blkio/") {
			t.Errorf("%s: attributed to %s %s %q (example %q)", c.name, a.Window, a.Criterion, a.Class, a.Example)
		}
		if a.FaultK != c.fk || a.FaultN != c.fn || a.ControlK != c.ck || a.ControlN != c.cn {
			t.Errorf("%s: fault %d/%d control %d/%d, want %d/%d %d/%d", c.name, a.FaultK, a.FaultN, a.ControlK, a.ControlN, c.fk, c.fn, c.ck, c.cn)
		}
		if a.Verdict != c.verdict {
			t.Errorf("%s: %s (diff %+.4f [%+.4f, %+.4f]), want %s", c.name, a.Verdict, a.Diff, a.Lo, a.Hi, c.verdict)
		}
		if got := len(review.CausedOnly(ws)) == 1; got != c.inCausedOnly {
			t.Errorf("%s: in CausedOnly %v, want %v", c.name, got, c.inCausedOnly)
		}
		if (a.More > 0) != c.morePositive {
			t.Errorf("%s: More %d", c.name, a.More)
		}
	}
}

// More is the rows per arm that would separate the arms at the rates seen:
// the wider the gap, the fewer; a gap the cap cannot separate is 0.
func TestABMoreShrinksAsGapWidens(t *testing.T) {
	prev := math.MaxInt
	for _, c := range []struct{ k, more int }{{1, 34}, {2, 11}, {3, 3}} {
		rs := append(arm(t, "W3_30", false, c.k, 10), arm(t, "W3_30", true, 0, 10)...)
		a := review.AB(decoded.Of(rs...), findings.Class)[0].Attributions[0]
		if a.Verdict != review.Unseparated || a.More != c.more || a.More >= prev {
			t.Errorf("fault %d/10 against 0/10: %s, More %d, want %d (the narrower gap's was %d)", c.k, a.Verdict, a.More, c.more, prev)
		}
		prev = a.More
	}
	// One leak in 500 against none in 500 would need more than MoreCap.
	rs := append(arm(t, "W3_30", false, 1, 500), arm(t, "W3_30", true, 0, 500)...)
	ws := review.AB(decoded.Of(rs...), findings.Class)
	if a := ws[0].Attributions[0]; a.Verdict != review.Unseparated || a.More != 0 {
		t.Errorf("1/500 against 0/500: %s, More %d, want unseparated, 0", a.Verdict, a.More)
	}
	var out bytes.Buffer
	if err := review.WriteAB(&out, ws); err != nil || !strings.Contains(out.String(), "(never at these rates)") {
		t.Errorf("WriteAB: %v\n%s", err, out.String())
	}
}

// INVALID and ERROR rows measured nothing: they are counted in their arm
// and in no N. A failure is counted once per row and class, and a control
// that FAILs counts.
func TestABCounts(t *testing.T) {
	said := criteria.Result{ID: "U1", Judged: true, Evidence: []string{"fw1 does not run on: boot 1; the supervisor said: container restore fw1 failed (exit 125)"}}
	rs := []rows.Row{
		{Status: model.StatusPass}, // a seal: no window
		abRow(t, "W10", model.StatusFail, false, leak(1), leak(2), said),
		abRow(t, "W10", model.StatusFail, false, leak(3)),
		abRow(t, "W10", model.StatusPass, false),
		abRow(t, "W10", model.StatusInvalid, false, leak(4)),
		abRow(t, "W10", model.StatusError, false),
		abRow(t, "W10", model.StatusFail, true, leak(5)),
		abRow(t, "W10", model.StatusPass, true),
		abRow(t, "W10", model.StatusInvalid, true),
		abRow(t, "W2_30", model.StatusPass, false),
		abRow(t, "W2", model.StatusPass, true),
	}
	ws := review.AB(decoded.Of(rs...), findings.Class)
	var ids []string
	for _, w := range ws {
		ids = append(ids, w.Window)
	}
	if got := strings.Join(ids, " "); got != "W2 W2_30 W10" {
		t.Fatalf("windows %s, want W2 W2_30 W10", got)
	}
	w := ws[2]
	if (w.Fault != review.Arm{Pass: 1, Fail: 2, Invalid: 1, Error: 1}) || (w.Control != review.Arm{Pass: 1, Fail: 1, Invalid: 1}) {
		t.Errorf("arms fault %+v control %+v", w.Fault, w.Control)
	}
	if len(w.Attributions) != 2 {
		t.Fatalf("attributions %+v, want P3's leak and U1's message", w.Attributions)
	}
	p3, u1 := w.Attributions[0], w.Attributions[1]
	if p3.Criterion != "P3" || p3.FaultK != 2 || p3.FaultN != 3 || p3.ControlK != 1 || p3.ControlN != 2 || p3.Verdict != review.Baseline {
		t.Errorf("P3: %+v, want fault 2/3 control 1/2 baseline", p3)
	}
	if u1.Criterion != "U1" || u1.Class != "said: container restore fw1 failed (exit N)" || u1.FaultK != 1 || u1.ControlK != 0 {
		t.Errorf("U1: %+v", u1)
	}
	// A class function of the caller's decides what is one failure.
	byID := func(r criteria.Result) string { return r.ID }
	if got := review.AB(decoded.Of(rs...), byID)[2].Attributions[0].Class; got != "P3" {
		t.Errorf("class by id: %q", got)
	}
}

func TestWriteAB(t *testing.T) {
	var rs []rows.Row
	rs = append(rs, arm(t, "W3_30", false, 5, 10)...)
	rs = append(rs, arm(t, "W3_30", true, 5, 10)...)
	rs = append(rs, arm(t, "W4_30", false, 2, 10)...)
	rs = append(rs, arm(t, "W4_30", true, 0, 10)...)
	rs = append(rs, arm(t, "W5_30", false, 3, 10)...)
	ws := review.AB(decoded.Of(rs...), findings.Class)
	var out bytes.Buffer
	if err := review.WriteAB(&out, ws); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	more := ws[1].Attributions[0].More
	for _, want := range []string{
		"W3_30  fault PASS 5 FAIL 5 INVALID 0 ERROR 0  control PASS 5 FAIL 5 INVALID 0 ERROR 0\n",
		"W3_30  P3  " + leakClass + "  fault 5/10  control 5/10  diff +0.00 [-0.37, +0.37]  baseline\n",
		"W4_30  P3  " + leakClass + "  fault 2/10  control 0/10  diff +0.20 [-0.11, +0.51]  unseparated" +
			fmt.Sprintf("  (about %d more runs of each would decide)\n", more),
		"W5_30  P3  " + leakClass + "  fault 3/10  control 0/0  diff n/a  unseparated\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("WriteAB lacks %q:\n%s", want, text)
		}
	}
	if n := strings.Count(text, "no control rows"); n != 1 {
		t.Errorf("no-control note %d times, want once (W5_30):\n%s", n, text)
	}
}
