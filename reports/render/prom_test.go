package render_test

import (
	"bytes"
	"math"
	"testing"
	"time"

	"faultwin/reports/decoded"
	"faultwin/reports/findings"
	"faultwin/reports/render"
	"faultwin/reports/render/promtest"
	"faultwin/reports/replaytest"
	"faultwin/reports/review"
	"faultwin/reports/rows"
)

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
	sums := review.Summarize(decoded.Of(rs...))
	file := "out/we\"ird\\name\n.jsonl"
	unfinished := rows.Sealing{State: rows.Sealed, Sessions: []rows.Session{
		{Seal: &rows.Marker{Seal: &rows.SealMark{End: rows.EndClosed}}},
		{Seal: &rows.Marker{Seal: &rows.SealMark{End: rows.EndUnfinished}}},
	}}
	var b bytes.Buffer
	err := render.Prometheus(&b, render.Prom{
		Windows: []render.PromWindows{{File: file, Sums: sums}},
		Files: []render.PromFile{
			{Path: file, Rows: len(rs), ChainOK: true, Seal: rows.Sealing{State: rows.Sealed, Sessions: []rows.Session{{Seal: &rows.Marker{Seal: &rows.SealMark{End: rows.EndClosed}}}}},
				Last: render.LastFinished(decoded.Of(rs...))},
			{Path: "legacy.jsonl", Rows: 23, ChainOK: true, Seal: rows.Sealing{State: rows.Legacy, LegacyRows: 23}},
			{Path: "cut.jsonl", Rows: 4, ChainOK: false, Seal: rows.Sealing{State: rows.Unsealed, Sessions: []rows.Session{{Rows: 4}}}},
			{Path: "died.jsonl", Rows: 2, ChainOK: true, Seal: unfinished},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := promtest.Samples(t, "prometheus text", b.Bytes())

	// No path in any series: a window's series are its window, arm,
	// family and driver alone; a file's name it by its base name.
	noPath(t, b.Bytes())
	w := func(name, window, family string) string {
		return name + "{arm=fault,driver=refsup,family=" + family + ",window=" + window + "}"
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
		promtest.Sample(t, got, w(name, "W4_30", "W4"), want)
	}
	// Nothing measured: no rate, the interval [0, 1].
	promtest.Sample(t, got, w("faultwin_window_invalid_rows", "W3_250", "W3"), 1)
	promtest.Sample(t, got, w("faultwin_window_error_rows", "W3_30", "W3"), 1)
	promtest.Sample(t, got, w("faultwin_window_measured_rows", "W3_30", "W3"), 0)
	promtest.Sample(t, got, w("faultwin_window_pass_ratio", "W3_30", "W3"), math.NaN())
	promtest.Sample(t, got, w("faultwin_window_pass_ratio_wilson_lower", "W3_30", "W3"), 0)
	promtest.Sample(t, got, w("faultwin_window_pass_ratio_wilson_upper", "W3_30", "W3"), 1)

	base := "we\"ird\\name\n.jsonl"
	promtest.Sample(t, got, "faultwin_file_rows{file="+base+"}", 5)
	promtest.Sample(t, got, "faultwin_file_chain_ok{file="+base+"}", 1)
	promtest.Sample(t, got, "faultwin_file_chain_ok{file=cut.jsonl}", 0)
	// The newest row's finish time: rowsOf starts row i at t0 + 7i s, and
	// each runs 4.1 s.
	last := rs[len(rs)-1].Run.Finished
	if !last.Equal(t0.Add(4*7*time.Second + 4100*time.Millisecond)) {
		t.Fatalf("the last row finished at %v", last)
	}
	promtest.Sample(t, got, "faultwin_last_row_timestamp_seconds{driver=refsup}", float64(last.UnixMilli())/1e3)
	for path, state := range map[string]string{base: "sealed", "legacy.jsonl": "legacy", "cut.jsonl": "unsealed", "died.jsonl": "unfinished"} {
		for _, s := range review.SealStates {
			want := 0.0
			if s == state {
				want = 1
			}
			promtest.Sample(t, got, "faultwin_file_seal{file="+path+",state="+s+"}", want)
		}
	}
	if _, ok := got["faultwin_merge_problems{}"]; ok {
		t.Error("a summary states a merge's problems")
	}
	// 3 windows x 12 gauges, 4 files x (rows, chain, 4 seal states), one
	// driver's last row (the other files have no Last: no rows read).
	if len(got) != 3*12+4*6+1 {
		t.Errorf("%d samples, want %d:\n%s", len(got), 3*12+4*6+1, b.String())
	}
}

// A merge's windows carry no file label (they are the whole soak's); its
// problems are stated.
func TestPrometheusMerge(t *testing.T) {
	rs := rowsOf("d25cf84aa", t0, 0.4, replaytest.Input(replaytest.W4Pass))
	later := rowsOf("d25cf84aa", t0.Add(time.Hour), 0.4, replaytest.Input(replaytest.W4Pass))
	sums := review.Summarize(decoded.Of(append(rs, later...)...))
	var b bytes.Buffer
	if err := render.Prometheus(&b, render.Prom{Windows: []render.PromWindows{{Sums: sums}}, Merge: &render.PromMerge{Problems: 2, Mixed: 1},
		Files: []render.PromFile{
			{Path: "/results/faultwin-soak-x7k2p/results-shard-1.jsonl", Rows: 1, Seal: shardSealing(1, 2), Last: render.LastFinished(decoded.Of(later...))},
			{Path: "/results/faultwin-soak-x7k2p/results-shard-2.jsonl", Rows: 1, Seal: shardSealing(2, 2), Last: render.LastFinished(decoded.Of(rs...))},
		}}); err != nil {
		t.Fatal(err)
	}
	got := promtest.Samples(t, "prometheus text", b.Bytes())
	noPath(t, b.Bytes())
	// The whole soak's newest row, over every shard's file, no shard label.
	promtest.Sample(t, got, "faultwin_last_row_timestamp_seconds{driver=refsup}", float64(later[0].Run.Finished.UnixMilli())/1e3)
	promtest.Sample(t, got, "faultwin_file_rows{file=results-shard-2.jsonl}", 1)
	promtest.Sample(t, got, "faultwin_window_pass_rows{arm=fault,driver=refsup,family=W4,window=W4_30}", 2)
	promtest.Sample(t, got, "faultwin_window_pass_ratio{arm=fault,driver=refsup,family=W4,window=W4_30}", 1)
	promtest.Sample(t, got, "faultwin_merge_problems{}", 2)
	promtest.Sample(t, got, "faultwin_merge_mixed_provenance{}", 1)
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
	ab := review.AB(decoded.Of(rs...), findings.Class)
	var b bytes.Buffer
	if err := render.Prometheus(&b, render.Prom{Windows: []render.PromWindows{{Sums: review.Summarize(decoded.Of(rs...))}}, AB: []render.PromAB{{Windows: ab}}}); err != nil {
		t.Fatal(err)
	}
	got := promtest.Samples(t, "prometheus text", b.Bytes())
	promtest.Sample(t, got, "faultwin_window_fail_rows{arm=fault,driver=refsup,family=W4,window=W4_30}", 10)
	promtest.Sample(t, got, "faultwin_window_pass_rows{arm=control,driver=refsup,family=W4,window=W4_30}", 10)
	a := ab[0].Attributions[0]
	key := func(name string) string { return name + "{class=" + a.Class + ",criterion=P1,window=W4_30}" }
	promtest.Sample(t, got, key("faultwin_ab_fault_failed_rows"), 10)
	promtest.Sample(t, got, key("faultwin_ab_control_measured_rows"), 10)
	promtest.Sample(t, got, key("faultwin_ab_control_failed_rows"), 0)
	promtest.Sample(t, got, key("faultwin_ab_difference"), 1)
	promtest.Sample(t, got, key("faultwin_ab_difference_lower"), a.Lo)
	promtest.Sample(t, got, key("faultwin_ab_caused"), 1)
	noPath(t, b.Bytes())

	// A file's A/B series summarised apart carry no path either.
	b.Reset()
	if err := render.Prometheus(&b, render.Prom{AB: []render.PromAB{{File: "out/ab.jsonl", Windows: ab}}, Files: []render.PromFile{{Path: "out/ab.jsonl", Rows: len(rs)}}}); err != nil {
		t.Fatal(err)
	}
	got = promtest.Samples(t, "prometheus text", b.Bytes())
	noPath(t, b.Bytes())
	promtest.Sample(t, got, key("faultwin_ab_fault_failed_rows"), 10)
}

// noPath fails on a series with a label its metric does not have: no
// file label outside the faultwin_file_* series, whose file is a base
// name, never a path. A path changes with each run directory, and each new
// noPath fails on a label a metric does not have, and on a file label
// that is a path (promtest.Labels).
func noPath(t *testing.T, text []byte) {
	t.Helper()
	promtest.Labels(t, "prometheus text", text)
}

// shardSealing is the sealing of a file that `soak --shard k/n` wrote.
func shardSealing(k, n int) rows.Sealing {
	return rows.Sealing{State: rows.Sealed, Sessions: []rows.Session{{
		Open: &rows.Marker{Open: &rows.OpenMark{Shard: &rows.ShardMark{K: k, N: n}}},
		Seal: &rows.Marker{Seal: &rows.SealMark{End: rows.EndClosed}},
		Rows: 1,
	}}}
}

// soak --summary of shard files summarises each apart: each file's series
// carry its shard, never its path; its newest row is its own.
func TestPrometheusShards(t *testing.T) {
	pass := replaytest.Input(replaytest.W4Pass)
	r1 := rowsOf("d25cf84aa", t0, 0.4, pass, pass)
	r2 := rowsOf("d25cf84aa", t0.Add(time.Hour), 0.4, replaytest.Input(replaytest.W4Survivor))
	p1, p2 := "/results/faultwin-soak-x7k2p/results-shard-1.jsonl", "/results/faultwin-soak-x7k2p/results-shard-2.jsonl"
	var b bytes.Buffer
	err := render.Prometheus(&b, render.Prom{
		Windows: []render.PromWindows{{File: p1, Sums: review.Summarize(decoded.Of(r1...))}, {File: p2, Sums: review.Summarize(decoded.Of(r2...))}},
		Files: []render.PromFile{
			{Path: p1, Rows: 2, ChainOK: true, Seal: shardSealing(1, 2), Last: render.LastFinished(decoded.Of(r1...))},
			{Path: p2, Rows: 1, ChainOK: true, Seal: shardSealing(2, 2), Last: render.LastFinished(decoded.Of(r2...))},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := promtest.Samples(t, "prometheus text", b.Bytes())
	noPath(t, b.Bytes())
	promtest.Sample(t, got, "faultwin_window_pass_rows{arm=fault,driver=refsup,family=W4,shard=1/2,window=W4_30}", 2)
	promtest.Sample(t, got, "faultwin_window_fail_rows{arm=fault,driver=refsup,family=W4,shard=2/2,window=W4_30}", 1)
	promtest.Sample(t, got, "faultwin_last_row_timestamp_seconds{driver=refsup,shard=1/2}", float64(r1[1].Run.Finished.UnixMilli())/1e3)
	promtest.Sample(t, got, "faultwin_last_row_timestamp_seconds{driver=refsup,shard=2/2}", float64(r2[0].Run.Finished.UnixMilli())/1e3)
	promtest.Sample(t, got, "faultwin_file_rows{file=results-shard-1.jsonl}", 2)
	promtest.Sample(t, got, "faultwin_file_seal{file=results-shard-2.jsonl,state=sealed}", 1)
	if v := got["faultwin_last_row_timestamp_seconds{driver=refsup,shard=2/2}"]; v != float64(t0.Add(time.Hour+4100*time.Millisecond).Unix())+0.1 {
		t.Errorf("shard 2's last row at %v, want %v + 4.1 s in Unix seconds", v, t0.Add(time.Hour))
	}
}

// Files that nothing but their path would tell apart are refused, and
// nothing is written: two unsharded files summarised apart, two files of
// one shard, two files of one base name.
func TestPrometheusAmbiguous(t *testing.T) {
	sums := review.Summarize(decoded.Of(rowsOf("d25cf84aa", t0, 0.4, replaytest.Input(replaytest.W4Pass))...))
	for name, p := range map[string]render.Prom{
		"unsharded": {Windows: []render.PromWindows{{File: "a/soak.jsonl", Sums: sums}, {File: "b.jsonl", Sums: sums}},
			Files: []render.PromFile{{Path: "a/soak.jsonl"}, {Path: "b.jsonl"}}},
		"one shard": {Windows: []render.PromWindows{{File: "s1.jsonl", Sums: sums}, {File: "again.jsonl", Sums: sums}},
			Files: []render.PromFile{{Path: "s1.jsonl", Seal: shardSealing(1, 2)}, {Path: "again.jsonl", Seal: shardSealing(1, 2)}}},
		"one name": {Windows: []render.PromWindows{{Sums: sums}},
			Files: []render.PromFile{{Path: "run1/results-shard-1.jsonl"}, {Path: "run2/results-shard-1.jsonl"}}},
	} {
		var b bytes.Buffer
		err := render.Prometheus(&b, p)
		if err == nil || b.Len() != 0 {
			t.Errorf("%s: err %v, wrote %d bytes: want an error and nothing written", name, err, b.Len())
		}
	}
}
