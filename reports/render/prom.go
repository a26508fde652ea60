package render

import (
	"bufio"
	"io"
	"math"
	"strconv"
	"strings"

	"faultwin/reports/review"
	"faultwin/reports/rows"
)

// Prom is what `soak --summary --prom` and `merge --prom` export in the
// Prometheus text format (version 0.0.4), for node-exporter's textfile
// collector: per window the numbers of its summary (review.Summarize, the
// same numbers the printed summary shows), per rows file its chain and
// seals, and for a merge the count of its problems. Every metric is a
// gauge named faultwin_*.
type Prom struct {
	Windows []PromWindows
	Files   []PromFile
	// Merge is set for a merge: its problems and provenance differences.
	Merge *PromMerge
	// AB is, per rows file (File as in Windows), each window's failures
	// against its control's: only windows that ran controls.
	AB []PromAB
}

// PromAB is one rows file's (or a merge's, File "") A/B comparisons.
type PromAB struct {
	File    string
	Windows []review.WindowAB
}

// PromWindows is the summary of one rows file's windows (soak --summary
// summarises each file apart), or of a merged soak's windows (File "":
// they are the whole soak's, over every shard's file, and carry no file
// label).
type PromWindows struct {
	File string
	Sums []review.WindowSummary
}

// PromFile is one rows file's checks.
type PromFile struct {
	Path string
	Rows int
	// ChainOK: the file read to its end and its chain, open and seal
	// markers included, verifies.
	ChainOK bool
	Seal    rows.Sealing
}

// PromMerge is a merge's checks: Problems are those that make the merge
// not the soak it claims to be (files, coverage, plan), Mixed its
// provenance differences (accepted or not with --allow-mixed).
type PromMerge struct {
	Problems, Mixed int
}

// promWindowMetric is one per-window gauge.
type promWindowMetric struct {
	name, help string
	value      func(review.WindowSummary) float64
}

// promWindowMetrics are the per-window gauges, in the order written. Their
// HELP lines are the same for soak --summary and merge, so one textfile
// directory can hold both outputs.
var promWindowMetrics = []promWindowMetric{
	{"faultwin_window_rows", "Rows of the window, every status.",
		func(s review.WindowSummary) float64 { return float64(s.Rows) }},
	{"faultwin_window_pass_rows", "Rows of the window whose status is PASS (k of k/N).",
		func(s review.WindowSummary) float64 { return float64(s.Pass) }},
	{"faultwin_window_fail_rows", "Rows of the window whose status is FAIL: a criterion was false.",
		func(s review.WindowSummary) float64 { return float64(s.Fail) }},
	{"faultwin_window_invalid_rows", "Rows of the window whose status is INVALID: not a measurement of the supervisor.",
		func(s review.WindowSummary) float64 { return float64(s.Invalid) }},
	{"faultwin_window_error_rows", "Rows of the window whose status is ERROR: the harness broke.",
		func(s review.WindowSummary) float64 { return float64(s.Error) }},
	{"faultwin_window_measured_rows", "Rows of the window that measured the supervisor, PASS + FAIL (N of k/N).",
		func(s review.WindowSummary) float64 { return float64(s.Measured()) }},
	{"faultwin_window_pass_ratio", "Pass rate k/N = PASS / (PASS + FAIL); NaN with no measurement. INVALID and ERROR rows are excluded.",
		func(s review.WindowSummary) float64 { return s.Rate() }},
	{"faultwin_window_pass_ratio_wilson_lower", "Lower bound of the 95% Wilson score interval of the pass rate (0 with no measurement).",
		func(s review.WindowSummary) float64 { return s.Lo }},
	{"faultwin_window_pass_ratio_wilson_upper", "Upper bound of the 95% Wilson score interval of the pass rate (1 with no measurement).",
		func(s review.WindowSummary) float64 { return s.Hi }},
	{"faultwin_window_duration_min_seconds", "Shortest wall time of one row of the window, started to finished.",
		func(s review.WindowSummary) float64 { return spreadValue(s.Seconds, s.Seconds.Min) }},
	{"faultwin_window_duration_median_seconds", "Median wall time of one row of the window, started to finished.",
		func(s review.WindowSummary) float64 { return spreadValue(s.Seconds, s.Seconds.Median) }},
	{"faultwin_window_duration_max_seconds", "Longest wall time of one row of the window, started to finished.",
		func(s review.WindowSummary) float64 { return spreadValue(s.Seconds, s.Seconds.Max) }},
}

// spreadValue is v, or NaN for an empty sample.
func spreadValue(s review.Spread, v float64) float64 {
	if s.N == 0 {
		return math.NaN()
	}
	return v
}

// Prometheus writes p in the Prometheus text format: for each metric its
// HELP and TYPE lines, then every sample of it; a metric with no sample
// (no window, no file) is left out.
func Prometheus(w io.Writer, p Prom) error {
	bw := bufio.NewWriter(w)
	n := 0
	for _, ws := range p.Windows {
		n += len(ws.Sums)
	}
	for _, m := range promWindowMetrics {
		if n == 0 {
			break // no window: no metric without a sample
		}
		promHeader(bw, m.name, m.help)
		for _, ws := range p.Windows {
			for _, s := range ws.Sums {
				// A control's rows are its window's "control" arm.
				window, arm := s.Window, "fault"
				if w, ok := strings.CutSuffix(s.Window, review.ControlSuffix); ok {
					window, arm = w, "control"
				}
				labels := []string{"window", window, "arm", arm, "family", s.Family, "driver", s.Driver}
				if ws.File != "" {
					labels = append(labels, "file", ws.File)
				}
				promSample(bw, m.name, labels, m.value(s))
			}
		}
	}
	if len(p.Files) > 0 {
		promHeader(bw, "faultwin_file_rows", "Rows read from the rows file (open and seal markers are not rows).")
		for _, f := range p.Files {
			promSample(bw, "faultwin_file_rows", []string{"file", f.Path}, float64(f.Rows))
		}
		promHeader(bw, "faultwin_file_chain_ok", "1 when the rows file reads to its end and its hash chain, markers included, verifies; else 0.")
		for _, f := range p.Files {
			promSample(bw, "faultwin_file_chain_ok", []string{"file", f.Path}, promBool(f.ChainOK))
		}
		promHeader(bw, "faultwin_file_seal", "1 for the seal state the rows file is in, 0 for the others: sealed, unfinished (a session sealed afterwards as unfinished), unsealed (a session without its seal), legacy (written before sealing).")
		for _, f := range p.Files {
			state := review.SealState(f.Seal)
			for _, s := range review.SealStates {
				promSample(bw, "faultwin_file_seal", []string{"file", f.Path, "state", s}, promBool(s == state))
			}
		}
	}
	promAB(bw, p.AB)
	if p.Merge != nil {
		promHeader(bw, "faultwin_merge_problems", "Problems that make the merge not the soak it claims to be: unreadable, broken or unsealed files, rows that do not re-judge, shards of another plan, missing or duplicate pairs.")
		promSample(bw, "faultwin_merge_problems", nil, float64(p.Merge.Problems))
		promHeader(bw, "faultwin_merge_mixed_provenance", "Provenance differences of the merged rows: more than one commit, a dirty tree, more than one definition of a window.")
		promSample(bw, "faultwin_merge_mixed_provenance", nil, float64(p.Merge.Mixed))
	}
	return bw.Flush()
}

// promABMetrics are the per-failure gauges of an A/B soak: one series per
// window, criterion and evidence class (findings' classes: a kind of
// leftover or message, with ids and numbers taken out).
var promABMetrics = []struct {
	name, help string
	value      func(review.Attribution) float64
}{
	{"faultwin_ab_fault_failed_rows", "Faulted rows of the window that failed the criterion with this class of evidence (k of the faulted k/N).",
		func(a review.Attribution) float64 { return float64(a.FaultK) }},
	{"faultwin_ab_fault_measured_rows", "Faulted rows of the window that measured, PASS + FAIL (N of the faulted k/N).",
		func(a review.Attribution) float64 { return float64(a.FaultN) }},
	{"faultwin_ab_control_failed_rows", "Control rows of the window (the window disarmed) that failed the criterion with this class of evidence.",
		func(a review.Attribution) float64 { return float64(a.ControlK) }},
	{"faultwin_ab_control_measured_rows", "Control rows of the window that measured, PASS + FAIL.",
		func(a review.Attribution) float64 { return float64(a.ControlN) }},
	{"faultwin_ab_difference", "Faulted failure rate minus control failure rate.",
		func(a review.Attribution) float64 { return a.Diff }},
	{"faultwin_ab_difference_lower", "Lower bound of the difference's 95% interval (Newcombe's hybrid score method).",
		func(a review.Attribution) float64 { return a.Lo }},
	{"faultwin_ab_difference_upper", "Upper bound of the difference's 95% interval (Newcombe's hybrid score method).",
		func(a review.Attribution) float64 { return a.Hi }},
	{"faultwin_ab_caused", "1 when the failure is caused by the kill (the difference's interval lies above zero), else 0.",
		func(a review.Attribution) float64 { return promBool(a.Verdict == review.Caused) }},
	{"faultwin_ab_more_runs", "For a failure not separable yet: about how many more runs of each arm would decide it, at the rates seen (0: never at these rates, or decided).",
		func(a review.Attribution) float64 { return float64(a.More) }},
}

func promAB(bw *bufio.Writer, abs []PromAB) {
	n := 0
	for _, ab := range abs {
		for _, w := range ab.Windows {
			n += len(w.Attributions)
		}
	}
	if n == 0 {
		return
	}
	for _, m := range promABMetrics {
		promHeader(bw, m.name, m.help)
		for _, ab := range abs {
			for _, w := range ab.Windows {
				for _, a := range w.Attributions {
					labels := []string{"window", a.Window, "criterion", a.Criterion, "class", a.Class}
					if ab.File != "" {
						labels = append(labels, "file", ab.File)
					}
					promSample(bw, m.name, labels, m.value(a))
				}
			}
		}
	}
}

func promHeader(w *bufio.Writer, name, help string) {
	w.WriteString("# HELP " + name + " " + promEscape(help, false) + "\n")
	w.WriteString("# TYPE " + name + " gauge\n")
}

// promSample writes one sample; labels are name, value pairs.
func promSample(w *bufio.Writer, name string, labels []string, v float64) {
	w.WriteString(name)
	if len(labels) > 0 {
		w.WriteByte('{')
		for i := 0; i < len(labels); i += 2 {
			if i > 0 {
				w.WriteByte(',')
			}
			w.WriteString(labels[i] + `="` + promEscape(labels[i+1], true) + `"`)
		}
		w.WriteByte('}')
	}
	w.WriteString(" " + promFloat(v) + "\n")
}

// promEscape escapes a HELP text (backslash and newline) or a label value
// (double quote too), as the text format requires.
func promEscape(s string, quote bool) string {
	r := []string{`\`, `\\`, "\n", `\n`}
	if quote {
		r = append(r, `"`, `\"`)
	}
	return strings.NewReplacer(r...).Replace(s)
}

// promFloat renders a value as the text format reads it: NaN, +Inf, -Inf
// or Go's shortest decimal.
func promFloat(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func promBool(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
