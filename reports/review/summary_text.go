package review

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"faultwin/internal/model"
)

// RateRule is the header every printed summary carries, so no reader takes
// the rate for PASS over all rows.
const RateRule = "pass rate = PASS / (PASS + FAIL); INVALID and ERROR rows measured nothing about the supervisor: excluded from the rate and counted apart"

// WriteSummary prints one line per window,
//
//	W3_30  19/20 pass  (95% Wilson [0.76, 0.99])  FAIL 1  INVALID 0  ERROR 0  load 0.31/0.52/1.20  4.1s
//
// (load: min/median/max of the 1-minute load average before the window;
// the last column is the median wall time), then every row that did not
// pass, with its pass number and why, then the totals.
func WriteSummary(w io.Writer, sums []WindowSummary) error {
	ew := &errWriter{w: w}
	ew.printf("%s\n", RateRule)
	tw := tabwriter.NewWriter(ew, 2, 8, 2, ' ', 0)
	var tot WindowSummary
	for _, s := range sums {
		rate := "(no measurement)"
		if s.Measured() > 0 {
			rate = fmt.Sprintf("(95%% Wilson [%.2f, %.2f])", s.Lo, s.Hi)
		}
		fmt.Fprintf(tw, "%s\t%d/%d pass\t%s\tFAIL %d\tINVALID %d\tERROR %d\tload %s\t%.1fs%s\n", s.Window, s.Pass, s.Measured(), rate,
			s.Fail, s.Invalid, s.Error, loadSpread(s.Load), s.Seconds.Median, unknownNote(s.Unknown))
		tot.Pass += s.Pass
		tot.Fail += s.Fail
		tot.Invalid += s.Invalid
		tot.Error += s.Error
		tot.Unknown += s.Unknown
		tot.Rows += s.Rows
	}
	tw.Flush()
	header := false
	for _, s := range sums {
		for _, m := range s.NotPass {
			if !header {
				ew.printf("not PASS:\n")
				header = true
			}
			ew.printf("  %s pass %d: %s (%s)\n", s.Window, m.Pass, m.Status, missWhy(m))
		}
	}
	ew.printf("%d windows, %d rows: PASS %d, FAIL %d, INVALID %d, ERROR %d%s\n", len(sums), tot.Rows, tot.Pass, tot.Fail,
		tot.Invalid, tot.Error, unknownNote(tot.Unknown))
	return ew.err
}

// missWhy says why a row did not pass: the false criteria of a FAIL, the
// reason of anything else.
func missWhy(m Miss) string {
	if m.Status == model.StatusFail && len(m.Failed) > 0 {
		return strings.Join(m.Failed, ", ") + " false"
	}
	return Cut(m.Reason, 100)
}

func loadSpread(s Spread) string {
	if s.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f/%.2f/%.2f", s.Min, s.Median, s.Max)
}

func unknownNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", UNKNOWN STATUS %d", n)
}

// Cut shortens s to at most n runes, marking the cut with an ellipsis.
func Cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:max(n-1, 0)]) + "…"
}
