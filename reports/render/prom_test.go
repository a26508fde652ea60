package render_test

import (
	"bytes"
	"math"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"faultwin/reports/findings"
	"faultwin/reports/render"
	"faultwin/reports/replaytest"
	"faultwin/reports/review"
	"faultwin/reports/rows"
)

// parseProm parses Prometheus text with the Prometheus text parser and
// returns every sample by "name{label=value,...}" (labels sorted), failing
// on a duplicate series, a metric that is not a gauge or has no HELP.
func parseProm(t *testing.T, text []byte) map[string]float64 {
	t.Helper()
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("the Prometheus text parser refuses the output: %v\n%s", err, text)
	}
	out := map[string]float64{}
	for name, f := range fams {
		if !strings.HasPrefix(name, "faultwin_") || f.GetType() != dto.MetricType_GAUGE || f.GetHelp() == "" {
			t.Errorf("%s: type %v, help %q: want a faultwin_ gauge with HELP", name, f.GetType(), f.GetHelp())
		}
		for _, m := range f.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			sort.Strings(ls)
			key := name + "{" + strings.Join(ls, ",") + "}"
			if _, dup := out[key]; dup {
				t.Errorf("duplicate series %s", key)
			}
			out[key] = m.GetGauge().GetValue()
		}
	}
	return out
}

func checkSample(t *testing.T, got map[string]float64, key string, want float64) {
	t.Helper()
	v, ok := got[key]
	switch {
	case !ok:
		t.Errorf("no sample %s", key)
	case math.IsNaN(want) && !math.IsNaN(v), !math.IsNaN(want) && math.Abs(v-want) > 1e-9:
		t.Errorf("%s = %v, want %v", key, v, want)
	}
}

// The Prometheus text of a summary parses, and states the summary's own
// numbers: counts, k/N, the Wilson bounds, the wall times, per window; the
// chain and seal state per file; label values with quotes, backslashes and
// newlines round-trip.
func TestPrometheus(t *testing.T) {
	pass := replaytest.Input(replaytest.W4Pass)
	rs := rowsOf("d25cf84aa", t0, 0.4,
		pass, pass, replaytest.Input(replaytest.W4Survivor), // W4_30: 2/3, FAIL P1
		replaytest.Input(replaytest.W3NotFired),                          // W3_250: INVALID
		replaytest.Errored(replaytest.As(pass, "W3_30"), "runner: boom"), // W3_30: ERROR
	)
	sums := review.Summarize(rs)
	file := "out/we\"ird\\name\n.jsonl"
	unfinished := rows.Sealing{State: rows.Sealed, Sessions: []rows.Session{
		{Seal: &rows.Marker{Seal: &rows.SealMark{End: rows.EndClosed}}},
		{Seal: &rows.Marker{Seal: &rows.SealMark{End: rows.EndUnfinished}}},
	}}
	var b bytes.Buffer
	err := render.Prometheus(&b, render.Prom{
		Windows: []render.PromWindows{{File: file, Sums: sums}},
		Files: []render.PromFile{
			{Path: file, Rows: len(rs), ChainOK: true, Seal: rows.Sealing{State: rows.Sealed, Sessions: []rows.Session{{Seal: &rows.Marker{Seal: &rows.SealMark{End: rows.EndClosed}}}}}},
			{Path: "legacy.jsonl", Rows: 23, ChainOK: true, Seal: rows.Sealing{State: rows.Legacy, LegacyRows: 23}},
			{Path: "cut.jsonl", Rows: 4, ChainOK: false, Seal: rows.Sealing{State: rows.Unsealed, Sessions: []rows.Session{{Rows: 4}}}},
			{Path: "died.jsonl", Rows: 2, ChainOK: true, Seal: unfinished},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := parseProm(t, b.Bytes())

	w := func(name, window, family string) string {
		return name + "{arm=fault,driver=refsup,family=" + family + ",file=" + file + ",window=" + window + "}"
	}
	lo, hi := review.Wilson(2, 3, review.Z95)
	if math.Abs(lo-0.2077) > 1e-3 || math.Abs(hi-0.9385) > 1e-3 {
		t.Fatalf("Wilson(2, 3) = [%v, %v], want [0.21, 0.94] as the printed summary shows", lo, hi)
	}
	for name, want := range map[string]float64{
		"faultwin_window_rows": 3, "faultwin_window_pass_rows": 2, "faultwin_window_fail_rows": 1,
		"faultwin_window_invalid_rows": 0, "faultwin_window_error_rows": 0, "faultwin_window_measured_rows": 3,
		"faultwin_window_pass_ratio": 2.0 / 3, "faultwin_window_pass_ratio_wilson_lower": lo, "faultwin_window_pass_ratio_wilson_upper": hi,
		"faultwin_window_duration_min_seconds": 4.1, "faultwin_window_duration_median_seconds": 4.1, "faultwin_window_duration_max_seconds": 4.1,
	} {
		checkSample(t, got, w(name, "W4_30", "W4"), want)
	}
	// Nothing measured: no rate, the interval [0, 1].
	checkSample(t, got, w("faultwin_window_invalid_rows", "W3_250", "W3"), 1)
	checkSample(t, got, w("faultwin_window_error_rows", "W3_30", "W3"), 1)
	checkSample(t, got, w("faultwin_window_measured_rows", "W3_30", "W3"), 0)
	checkSample(t, got, w("faultwin_window_pass_ratio", "W3_30", "W3"), math.NaN())
	checkSample(t, got, w("faultwin_window_pass_ratio_wilson_lower", "W3_30", "W3"), 0)
	checkSample(t, got, w("faultwin_window_pass_ratio_wilson_upper", "W3_30", "W3"), 1)

	checkSample(t, got, "faultwin_file_rows{file="+file+"}", 5)
	checkSample(t, got, "faultwin_file_chain_ok{file="+file+"}", 1)
	checkSample(t, got, "faultwin_file_chain_ok{file=cut.jsonl}", 0)
	for path, state := range map[string]string{file: "sealed", "legacy.jsonl": "legacy", "cut.jsonl": "unsealed", "died.jsonl": "unfinished"} {
		for _, s := range review.SealStates {
			want := 0.0
			if s == state {
				want = 1
			}
			checkSample(t, got, "faultwin_file_seal{file="+path+",state="+s+"}", want)
		}
	}
	if _, ok := got["faultwin_merge_problems{}"]; ok {
		t.Error("a summary states a merge's problems")
	}
	// 3 windows x 12 gauges, 4 files x (rows, chain, 4 seal states).
	if len(got) != 3*12+4*6 {
		t.Errorf("%d samples, want %d:\n%s", len(got), 3*12+4*6, b.String())
	}
}

// A merge's windows carry no file label (they are the whole soak's); its
// problems are stated.
func TestPrometheusMerge(t *testing.T) {
	sums := review.Summarize(rowsOf("d25cf84aa", t0, 0.4, replaytest.Input(replaytest.W4Pass)))
	var b bytes.Buffer
	if err := render.Prometheus(&b, render.Prom{Windows: []render.PromWindows{{Sums: sums}}, Merge: &render.PromMerge{Problems: 2, Mixed: 1}}); err != nil {
		t.Fatal(err)
	}
	got := parseProm(t, b.Bytes())
	checkSample(t, got, "faultwin_window_pass_rows{arm=fault,driver=refsup,family=W4,window=W4_30}", 1)
	checkSample(t, got, "faultwin_window_pass_ratio{arm=fault,driver=refsup,family=W4,window=W4_30}", 1)
	checkSample(t, got, "faultwin_merge_problems{}", 2)
	checkSample(t, got, "faultwin_merge_mixed_provenance{}", 1)
}

// An A/B soak's numbers: the control's rows are the window's control arm,
// and each failure has its faulted and control k/N, the difference with
// its interval and whether the kill caused it.
func TestPrometheusAB(t *testing.T) {
	pass, survivor := replaytest.Input(replaytest.W4Pass), replaytest.Input(replaytest.W4Survivor)
	var rs []rows.Row
	for i := 0; i < 10; i++ {
		for j, r := range rowsOf("d25cf84aa", t0, 0.4, survivor, pass) {
			r.Window.Fault.Disarmed = j == 1
			rs = append(rs, r)
		}
	}
	ab := review.AB(rs, findings.Class)
	var b bytes.Buffer
	if err := render.Prometheus(&b, render.Prom{Windows: []render.PromWindows{{Sums: review.Summarize(rs)}}, AB: []render.PromAB{{Windows: ab}}}); err != nil {
		t.Fatal(err)
	}
	got := parseProm(t, b.Bytes())
	checkSample(t, got, "faultwin_window_fail_rows{arm=fault,driver=refsup,family=W4,window=W4_30}", 10)
	checkSample(t, got, "faultwin_window_pass_rows{arm=control,driver=refsup,family=W4,window=W4_30}", 10)
	a := ab[0].Attributions[0]
	key := func(name string) string { return name + "{class=" + a.Class + ",criterion=P1,window=W4_30}" }
	checkSample(t, got, key("faultwin_ab_fault_failed_rows"), 10)
	checkSample(t, got, key("faultwin_ab_control_measured_rows"), 10)
	checkSample(t, got, key("faultwin_ab_control_failed_rows"), 0)
	checkSample(t, got, key("faultwin_ab_difference"), 1)
	checkSample(t, got, key("faultwin_ab_difference_lower"), a.Lo)
	checkSample(t, got, key("faultwin_ab_caused"), 1)
}
