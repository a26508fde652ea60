package review_test

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/reports/decoded"
	"faultwin/reports/replaytest"
	"faultwin/reports/review"
	"faultwin/reports/rows"
)

func TestWilson(t *testing.T) {
	cases := []struct {
		k, n   int
		lo, hi float64
	}{
		{19, 20, 0.7639, 0.9911},
		{0, 20, 0, 0.1611},
		{20, 20, 0.8389, 1},
		{18, 20, 0.6990, 0.9721},
		{1, 1, 0.2065, 1},
		{0, 0, 0, 1}, // no measurement: nothing known
		{5, 0, 0, 1},
	}
	for _, c := range cases {
		lo, hi := review.Wilson(c.k, c.n, review.Z95)
		if math.Abs(lo-c.lo) > 5e-4 || math.Abs(hi-c.hi) > 5e-4 {
			t.Errorf("Wilson(%d, %d) = [%.4f, %.4f], want [%.4f, %.4f]", c.k, c.n, lo, hi, c.lo, c.hi)
		}
		if lo < 0 || hi > 1 || lo > hi {
			t.Errorf("Wilson(%d, %d) = [%v, %v] outside [0, 1]", c.k, c.n, lo, hi)
		}
	}
}

func TestSpreadOf(t *testing.T) {
	if s := review.SpreadOf([]float64{3, 1, 2}); s != (review.Spread{N: 3, Min: 1, Median: 2, Max: 3}) {
		t.Errorf("odd: %+v", s)
	}
	if s := review.SpreadOf([]float64{4, 1, 2, 3}); s.Median != 2.5 {
		t.Errorf("even: %+v", s)
	}
	if s := review.SpreadOf(nil); s.N != 0 {
		t.Errorf("empty: %+v", s)
	}
}

// soakRows is a three-pass soak of W3_30 and W4_30: W4_30 fails in pass 1
// (the restorer survivor), W3_30's fault does not fire in pass 2 (INVALID)
// and the harness breaks on W4_30 in pass 3 (ERROR).
func soakRows() []rows.Row {
	pass := replaytest.Input(replaytest.W4Pass)
	plan := [][2]criteria.Input{
		{replaytest.As(pass, "W3_30"), replaytest.Input(replaytest.W4Survivor)},
		{replaytest.As(replaytest.Input(replaytest.W3NotFired), "W3_30"), pass},
		{replaytest.As(pass, "W3_30"), replaytest.Errored(pass, "snapshot after_sweep: reading /proc: EMFILE")},
	}
	var rs []rows.Row
	start := time.Date(2026, 10, 24, 10, 0, 0, 0, time.UTC)
	for i, p := range plan {
		for j, in := range p {
			rs = append(rs, replaytest.Row(in, replaytest.Prov{
				Commit: "cc3a560", Started: start.Add(time.Duration(2*i+j) * 5 * time.Second), Load: 0.5 + float64(2*i+j)/10,
			}))
		}
	}
	return rs
}

func TestPasses(t *testing.T) {
	rs := soakRows()
	if got := review.Passes(decoded.Of(rs...)); !equalInts(got, []int{1, 1, 2, 2, 3, 3}) {
		t.Errorf("soak passes %v", got)
	}
	// A new commit starts a new pass even without a repeated window.
	rs[1].Run.Commit = "8b3bfd2"
	if got := review.Passes(decoded.Of(rs[:3]...)); !equalInts(got, []int{1, 2, 3}) {
		t.Errorf("commit change: %v", got)
	}
	if got := review.Passes(nil); len(got) != 0 {
		t.Errorf("no rows: %v", got)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSummarize(t *testing.T) {
	sums := review.Summarize(decoded.Of(soakRows()...))
	if len(sums) != 2 || sums[0].Window != "W3_30" || sums[1].Window != "W4_30" {
		t.Fatalf("summaries %+v", sums)
	}
	w3, w4 := sums[0], sums[1]
	if w3.Pass != 2 || w3.Fail != 0 || w3.Invalid != 1 || w3.Error != 0 || w3.Measured() != 2 || w3.Rate() != 1 {
		t.Errorf("W3_30: %+v", w3)
	}
	if w4.Pass != 1 || w4.Fail != 1 || w4.Invalid != 0 || w4.Error != 1 || w4.Rate() != 0.5 {
		t.Errorf("W4_30: %+v", w4)
	}
	if w4.Failed[model.P1] != 1 || len(w4.NotPass) != 2 || w4.NotPass[0].Pass != 1 || w4.NotPass[1].Status != model.StatusError {
		t.Errorf("W4_30 misses: %+v %+v", w4.Failed, w4.NotPass)
	}
	if w3.Load != (review.Spread{N: 3, Min: 0.5, Median: 0.7, Max: 0.9}) {
		t.Errorf("W3_30 load %+v", w3.Load)
	}
	if w3.Seconds.Median != 4.1 {
		t.Errorf("W3_30 seconds %+v", w3.Seconds)
	}
	lo, hi := review.Wilson(1, 2, review.Z95)
	if w4.Lo != lo || w4.Hi != hi {
		t.Errorf("W4_30 interval [%v, %v]", w4.Lo, w4.Hi)
	}

	// A window with no measurement has no rate, only its counts.
	only := review.Summarize(decoded.Of(soakRows()[2:3]...))
	if only[0].Measured() != 0 || !math.IsNaN(only[0].Rate()) || only[0].Lo != 0 || only[0].Hi != 1 {
		t.Errorf("all-INVALID window: %+v", only[0])
	}
	if got := review.Summarize(nil); len(got) != 0 {
		t.Errorf("no rows: %+v", got)
	}
}

func TestSummarizeUnknownStatus(t *testing.T) {
	rs := soakRows()[:1]
	rs[0].Status = "MAYBE"
	s := review.Summarize(decoded.Of(rs...))[0]
	if s.Unknown != 1 || s.Pass != 0 || s.Measured() != 0 {
		t.Errorf("%+v", s)
	}
	var out bytes.Buffer
	review.WriteSummary(&out, []review.WindowSummary{s})
	if !strings.Contains(out.String(), "UNKNOWN STATUS 1") {
		t.Errorf("unknown status not shown:\n%s", out.String())
	}
}

func TestWriteSummary(t *testing.T) {
	var out bytes.Buffer
	if err := review.WriteSummary(&out, review.Summarize(decoded.Of(soakRows()...))); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		review.RateRule,
		"W3_30  2/2 pass  (95% Wilson [0.34, 1.00])  FAIL 0  INVALID 1  ERROR 0  load 0.50/0.70/0.90  4.1s",
		"W4_30  1/2 pass  (95% Wilson [0.09, 0.91])  FAIL 1  INVALID 0  ERROR 1  load 0.60/0.80/1.00  4.1s",
		"  W3_30 pass 2: INVALID (F1: fault did not land as armed at restore.during_criu)",
		"  W4_30 pass 1: FAIL (P1 false)",
		"  W4_30 pass 3: ERROR (harness error: snapshot after_sweep: reading /proc: EMFILE)",
		"2 windows, 6 rows: PASS 3, FAIL 1, INVALID 1, ERROR 1",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no line %q in:\n%s", want, got)
		}
	}
}
