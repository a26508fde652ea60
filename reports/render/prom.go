package render

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"faultwin/reports/decoded"
	"faultwin/reports/review"
	"faultwin/reports/rows"
)

// Prom is what `soak --summary --prom` and `merge --prom` export in the
// Prometheus text format (version 0.0.4), for node-exporter's textfile
// collector: per window the numbers of its summary (review.Summarize, the
// same numbers the printed summary shows), per rows file its chain and
// seals, per driver the finish time of its newest row, and for a merge the
// count of its problems. Every metric is a gauge named faultwin_*.
//
// No series carries a file's path: a path changes with every run directory
// (a soak Job's generated name, a runner's checkout), and each new value
// would start new series. The faultwin_file_* series name a file by its
// base name (results-shard-3.jsonl); the series of a file summarised apart
// (soak --summary) carry shard="K/N" when a `soak --shard` wrote the file,
// and nothing more; a merge's are the whole soak's and carry neither.
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
// summarises each file apart; File is its path, that of one of Prom.Files,
// and no label), or of a merged soak's windows (File "": they are the whole
// soak's, over every shard's file).
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
	// Last is, per driver, the finish time of the newest row read from the
	// file (LastFinished). It is stated per driver in
	// faultwin_last_row_timestamp_seconds: with the file's shard when the
	// file is summarised apart (a PromWindows names it), else as the whole
	// soak's, the newest over every such file.
	Last map[string]time.Time
}

// LastFinished is, per driver, the latest Run.Finished of rs; rows with no
// finish time are left out. A row's driver is the one the window series
// name (review.Summarize's): the row's, else its window's, else refsup.
func LastFinished(rs []decoded.Record) map[string]time.Time {
	out := map[string]time.Time{}
	for _, r := range rs {
		d := r.Supervisor()
		if t := r.Run.Finished; !t.IsZero() && t.After(out[d]) {
			out[d] = t
		}
	}
	return out
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
// (no window, no file) is left out. It writes nothing and returns an error
// when two series would be the same: two files summarised apart that are
// not two shards of a soak (their series differ by nothing once the path
// is left out), or two files of one base name.
func Prometheus(w io.Writer, p Prom) error {
	// scopes: the labels of the series of each file summarised apart, by
	// its path ("": the whole soak's, no label).
	files := map[string]PromFile{}
	for _, f := range p.Files {
		files[f.Path] = f
	}
	scopes := map[string][]string{}
	byScope := map[string]string{} // scope key: the file that has it
	addScope := func(file string) error {
		if _, ok := scopes[file]; ok {
			return nil
		}
		var labels []string
		if file != "" {
			if k := shardOf(files[file].Seal); k != "" {
				labels = []string{"shard", k}
			}
		}
		key := strings.Join(labels, "=")
		if other, ok := byScope[key]; ok {
			return fmt.Errorf("%s and %s would state the same series (no path label tells them apart, only a shard): export them one at a time, or merge them (faultwin merge --prom)",
				promWhat(other), promWhat(file))
		}
		byScope[key] = file
		scopes[file] = labels
		return nil
	}
	for _, ws := range p.Windows {
		if err := addScope(ws.File); err != nil {
			return err
		}
	}
	for _, ab := range p.AB {
		if err := addScope(ab.File); err != nil {
			return err
		}
	}
	bases := map[string]string{}
	for _, f := range p.Files {
		base := filepath.Base(f.Path)
		if other, ok := bases[base]; ok && other != f.Path {
			return fmt.Errorf("%s and %s have one name, %s, which their faultwin_file_* series are told apart by: export them one at a time", other, f.Path, base)
		}
		bases[base] = f.Path
	}

	var buf bytes.Buffer
	pw := &promWriter{Writer: bufio.NewWriter(&buf), seen: map[string]bool{}}
	n := 0
	for _, ws := range p.Windows {
		n += len(ws.Sums)
	}
	for _, m := range promWindowMetrics {
		if n == 0 {
			break // no window: no metric without a sample
		}
		pw.header(m.name, m.help)
		for _, ws := range p.Windows {
			for _, s := range ws.Sums {
				// A control's rows are its window's "control" arm.
				window, arm := s.Window, "fault"
				if w, ok := strings.CutSuffix(s.Window, review.ControlSuffix); ok {
					window, arm = w, "control"
				}
				labels := []string{"window", window, "arm", arm, "family", s.Family, "driver", s.Driver}
				pw.sample(m.name, append(labels, scopes[ws.File]...), m.value(s))
			}
		}
	}
	promLast(pw, p.Files, scopes)
	if len(p.Files) > 0 {
		pw.header("faultwin_file_rows", "Rows read from the rows file (open and seal markers are not rows); file is its base name.")
		for _, f := range p.Files {
			pw.sample("faultwin_file_rows", []string{"file", filepath.Base(f.Path)}, float64(f.Rows))
		}
		pw.header("faultwin_file_chain_ok", "1 when the rows file reads to its end and its hash chain, markers included, verifies; else 0.")
		for _, f := range p.Files {
			pw.sample("faultwin_file_chain_ok", []string{"file", filepath.Base(f.Path)}, promBool(f.ChainOK))
		}
		pw.header("faultwin_file_seal", "1 for the seal state the rows file is in, 0 for the others: sealed, unfinished (a session sealed afterwards as unfinished), unsealed (a session without its seal), legacy (written before sealing).")
		for _, f := range p.Files {
			state := review.SealState(f.Seal)
			for _, s := range review.SealStates {
				pw.sample("faultwin_file_seal", []string{"file", filepath.Base(f.Path), "state", s}, promBool(s == state))
			}
		}
	}
	promAB(pw, p.AB, scopes)
	if p.Merge != nil {
		pw.header("faultwin_merge_problems", "Problems that make the merge not the soak it claims to be: unreadable, broken or unsealed files, rows that do not re-judge, shards of another plan, missing or duplicate pairs.")
		pw.sample("faultwin_merge_problems", nil, float64(p.Merge.Problems))
		pw.header("faultwin_merge_mixed_provenance", "Provenance differences of the merged rows: more than one commit, a dirty tree, more than one definition of a window.")
		pw.sample("faultwin_merge_mixed_provenance", nil, float64(p.Merge.Mixed))
	}
	if err := pw.Flush(); err != nil {
		return err
	}
	if pw.err != nil {
		return pw.err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// promWhat names a file summarised apart, or the whole soak ("").
func promWhat(file string) string {
	if file == "" {
		return "the whole soak"
	}
	return file
}

// shardOf is "K/N" when every session of the file that holds rows is
// shard K of N of one soak (its open marker says so), else "".
func shardOf(s rows.Sealing) string {
	if s.LegacyRows > 0 {
		return ""
	}
	k := ""
	for _, x := range s.Sessions {
		var sm *rows.ShardMark
		if x.Open != nil && x.Open.Open != nil {
			sm = x.Open.Open.Shard
		}
		if sm == nil {
			if x.Rows > 0 {
				return ""
			}
			continue
		}
		if xk := strconv.Itoa(sm.K) + "/" + strconv.Itoa(sm.N); k == "" {
			k = xk
		} else if xk != k {
			return ""
		}
	}
	return k
}

// promLast writes, per driver, the finish time of its newest row: per file
// summarised apart (with its scope's labels) and, over every other file,
// the whole soak's.
func promLast(pw *promWriter, files []PromFile, scopes map[string][]string) {
	type key struct{ scope, driver string }
	last := map[key]time.Time{}
	var keys []key
	for _, f := range files {
		scope := ""
		if _, apart := scopes[f.Path]; apart && f.Path != "" {
			scope = f.Path
		}
		for d, t := range f.Last {
			k := key{scope, d}
			if cur, ok := last[k]; !ok {
				keys = append(keys, k)
				last[k] = t
			} else if t.After(cur) {
				last[k] = t
			}
		}
	}
	if len(keys) == 0 {
		return
	}
	sort.SliceStable(keys, func(i, j int) bool {
		if keys[i].scope != keys[j].scope {
			return keys[i].scope < keys[j].scope
		}
		return keys[i].driver < keys[j].driver
	})
	const name = "faultwin_last_row_timestamp_seconds"
	pw.header(name, "Finish time, in Unix seconds, of the newest row of the driver read: time() minus it is how long the soak has written no row.")
	for _, k := range keys {
		pw.sample(name, append([]string{"driver", k.driver}, scopes[k.scope]...), float64(last[k].UnixMilli())/1e3)
	}
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

func promAB(pw *promWriter, abs []PromAB, scopes map[string][]string) {
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
		pw.header(m.name, m.help)
		for _, ab := range abs {
			for _, w := range ab.Windows {
				for _, a := range w.Attributions {
					labels := []string{"window", a.Window, "criterion", a.Criterion, "class", a.Class}
					pw.sample(m.name, append(labels, scopes[ab.File]...), m.value(a))
				}
			}
		}
	}
}

// promWriter writes the text format and remembers every series written:
// the first one written twice is its error.
type promWriter struct {
	*bufio.Writer
	seen map[string]bool
	err  error
}

func (w *promWriter) header(name, help string) {
	w.WriteString("# HELP " + name + " " + promEscape(help, false) + "\n")
	w.WriteString("# TYPE " + name + " gauge\n")
}

// sample writes one sample; labels are name, value pairs.
func (w *promWriter) sample(name string, labels []string, v float64) {
	var b strings.Builder
	b.WriteString(name)
	if len(labels) > 0 {
		b.WriteByte('{')
		for i := 0; i < len(labels); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(labels[i] + `="` + promEscape(labels[i+1], true) + `"`)
		}
		b.WriteByte('}')
	}
	series := b.String()
	if w.seen[series] && w.err == nil {
		w.err = fmt.Errorf("series %s twice", series)
	}
	w.seen[series] = true
	w.WriteString(series + " " + promFloat(v) + "\n")
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
