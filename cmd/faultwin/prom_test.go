package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"faultwin/internal/model"
	"faultwin/reports/render/promtest"
	"faultwin/reports/replaytest"
	"faultwin/reports/review"
	"faultwin/reports/rows"
)

// promSamples is promtest.Samples of the Prometheus text file at path.
func promSamples(t *testing.T, path string) map[string]float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return promtest.Samples(t, path, b)
}

// onlyFile says dir holds nothing but name: no temporary file was left.
func onlyFile(t *testing.T, dir, name string) {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].Name() != name {
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		t.Errorf("%s holds %v, want only %s", dir, names, name)
	}
}

// soak --summary --prom on a checked-in soak (25 podman windows, 10
// passes, compact): every window's numbers are the rows' own, counted here
// straight from the rows, and a few are pinned as the printed summary
// shows them; the file is written whole, replacing the one before.
func TestSoakSummaryProm(t *testing.T) {
	const soak = "../../results/podman/soak-10-5cffb9b.jsonl.gz"
	dir := t.TempDir()
	prom := filepath.Join(dir, "faultwin.prom")
	if err := os.WriteFile(prom, []byte("stale\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code, err := runVerb(t, "soak", "--summary", "--prom", prom, soak)
	if code != exitFail || !strings.Contains(err.Error(), "101 rows FAIL in 14 windows") {
		t.Errorf("exit %d (%v), want 1: 101 rows FAIL in 14 windows", code, err)
	}
	if !strings.Contains(out, "soak --summary: Prometheus text written to "+prom) {
		t.Errorf("output does not name the Prometheus file:\n%s", out)
	}
	onlyFile(t, dir, "faultwin.prom")
	if st, err := os.Stat(prom); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("%s: %v, mode %v, want 0644", prom, err, st.Mode())
	}
	got := promSamples(t, prom)

	rs, err := rows.Read(soak)
	if err != nil {
		t.Fatal(err)
	}
	type tallyOf struct {
		family, driver           string
		rows, pass, fail, inv, e int
		secs                     []float64
	}
	by := map[string]*tallyOf{}
	for _, r := range rs {
		w := by[r.Window.ID]
		if w == nil {
			w = &tallyOf{family: r.Window.Family, driver: r.Driver}
			by[r.Window.ID] = w
		}
		w.rows++
		switch r.Status {
		case model.StatusPass:
			w.pass++
		case model.StatusFail:
			w.fail++
		case model.StatusInvalid:
			w.inv++
		case model.StatusError:
			w.e++
		}
		w.secs = append(w.secs, r.Run.Finished.Sub(r.Run.Started).Seconds())
	}
	if len(by) != 25 {
		t.Fatalf("%d windows in %s, want 25", len(by), soak)
	}
	for id, w := range by {
		key := func(name string) string {
			return name + "{arm=fault,driver=" + w.driver + ",family=" + w.family + ",window=" + id + "}"
		}
		lo, hi := review.Wilson(w.pass, w.pass+w.fail, review.Z95)
		sort.Float64s(w.secs)
		for name, want := range map[string]float64{
			"faultwin_window_rows": float64(w.rows), "faultwin_window_pass_rows": float64(w.pass),
			"faultwin_window_fail_rows": float64(w.fail), "faultwin_window_invalid_rows": float64(w.inv),
			"faultwin_window_error_rows": float64(w.e), "faultwin_window_measured_rows": float64(w.pass + w.fail),
			"faultwin_window_pass_ratio":              float64(w.pass) / float64(w.pass+w.fail),
			"faultwin_window_pass_ratio_wilson_lower": lo, "faultwin_window_pass_ratio_wilson_upper": hi,
			"faultwin_window_duration_min_seconds": w.secs[0], "faultwin_window_duration_max_seconds": w.secs[len(w.secs)-1],
		} {
			promtest.Sample(t, got, key(name), want)
		}
	}
	// As the printed summary has them.
	pin := func(name, window, family string, want float64) {
		t.Helper()
		promtest.Sample(t, got, name+"{arm=fault,driver=podman,family="+family+",window="+window+"}", want)
	}
	pin("faultwin_window_fail_rows", "PD1_120", "PD1", 10)
	pin("faultwin_window_pass_ratio", "PD1_120", "PD1", 0)
	pin("faultwin_window_pass_rows", "PR5", "PR5", 5)
	pin("faultwin_window_invalid_rows", "PR5", "PR5", 5)
	pin("faultwin_window_measured_rows", "PR6_10", "PR6", 9)
	if v := got["faultwin_window_pass_ratio_wilson_lower{arm=fault,driver=podman,family=PC1,window=PC1_50}"]; math.Round(v*100) != 24 {
		t.Errorf("PC1_50 Wilson lower %v, want 0.24", v)
	}
	// The file by its name, not its path.
	base := "soak-10-5cffb9b.jsonl.gz"
	promtest.Sample(t, got, "faultwin_file_rows{file="+base+"}", 250)
	promtest.Sample(t, got, "faultwin_file_chain_ok{file="+base+"}", 1)
	for _, s := range review.SealStates {
		want := 0.0
		if s == review.SealSealed {
			want = 1
		}
		promtest.Sample(t, got, "faultwin_file_seal{file="+base+",state="+s+"}", want)
	}
	promLabels(t, prom)
	// When the soak last wrote a row: the newest finish time of its rows.
	var last time.Time
	for _, r := range rs {
		if r.Run.Finished.After(last) {
			last = r.Run.Finished
		}
	}
	if last.IsZero() {
		t.Fatal("no row has a finish time")
	}
	promtest.Sample(t, got, "faultwin_last_row_timestamp_seconds{driver=podman}", float64(last.UnixMilli())/1e3)
	if n := len(got) - 25*12 - 6; n != 1 {
		t.Errorf("%d samples beside 25 windows x 12 and the file's 6, want 1 (the last row's time)", n)
	}
}

// promLabels fails on a series of path's with a label its metric does
// not have (promtest.Labels).
func promLabels(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	promtest.Labels(t, path, b)
}

// lastFinished is the newest finish time of the rows of paths.
func lastFinished(t *testing.T, paths ...string) float64 {
	t.Helper()
	var last time.Time
	for _, p := range paths {
		rs, err := rows.Read(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if r.Run.Finished.After(last) {
				last = r.Run.Finished
			}
		}
	}
	if last.IsZero() {
		t.Fatalf("no row of %v has a finish time", paths)
	}
	return float64(last.UnixMilli()) / 1e3
}

// A file that does not verify is stated so (chain 0), its rows still
// summarised, and the file written; a legacy file's seal state is legacy.
func TestSoakSummaryPromBroken(t *testing.T) {
	dir := t.TempDir()
	_, rs := fixtureFile(t, dir, "good.jsonl", passIn("W3_30"), passIn("W4_30"))
	cut := filepath.Join(dir, "cut.jsonl")
	if err := os.WriteFile(cut, replaytest.Lines(rs[1:]), 0o644); err != nil {
		t.Fatal(err)
	}
	prom := filepath.Join(dir, "textfile", "x.prom")
	if err := os.MkdirAll(filepath.Dir(prom), 0o755); err != nil {
		t.Fatal(err)
	}
	_, code, err := runVerb(t, "soak", "--summary", "--prom", prom, cut)
	if code != exitUnverified || !strings.Contains(err.Error(), "do not verify") {
		t.Errorf("exit %d (%v), want 1: the file does not verify", code, err)
	}
	got := promSamples(t, prom)
	promLabels(t, prom)
	promtest.Sample(t, got, "faultwin_file_chain_ok{file=cut.jsonl}", 0)
	promtest.Sample(t, got, "faultwin_file_rows{file=cut.jsonl}", 1)
	promtest.Sample(t, got, "faultwin_window_pass_rows{arm=fault,driver=refsup,family=W4,window=W4_30}", 1)
	promtest.Sample(t, got, "faultwin_file_seal{file=cut.jsonl,state=legacy}", 1)
	// A file that does not verify still says when its last row finished.
	promtest.Sample(t, got, "faultwin_last_row_timestamp_seconds{driver=refsup}", float64(rs[1].Run.Finished.UnixMilli())/1e3)
}

// soak --summary --prom of a soak's shard files: each file's series carry
// its shard, not its path; each shard's newest row is its own, so a shard
// that stopped writing rows stands out among the others. Files nothing but
// their path would tell apart are refused, and the .prom file before is
// left as it was.
func TestSoakSummaryPromShards(t *testing.T) {
	dir := t.TempDir()
	paths := writeShards(t, dir, 2)
	prom := filepath.Join(dir, "shards.prom")
	if _, code, err := runVerb(t, append([]string{"soak", "--summary", "--prom", prom}, paths...)...); code != exitFail {
		t.Errorf("exit %d (%v), want 1: the soak has a FAIL", code, err)
	}
	got := promSamples(t, prom)
	promLabels(t, prom)
	for k, p := range paths {
		shard := fmt.Sprintf("shard=%d/2", k+1)
		promtest.Sample(t, got, "faultwin_last_row_timestamp_seconds{driver=refsup,"+shard+"}", lastFinished(t, p))
		rs, err := rows.Read(p)
		if err != nil {
			t.Fatal(err)
		}
		promtest.Sample(t, got, "faultwin_file_rows{file="+filepath.Base(p)+"}", float64(len(rs)))
	}
	promtest.Sample(t, got, "faultwin_window_fail_rows{arm=fault,driver=refsup,family=W4,shard=2/2,window=W4_30}", 1)

	before, err := os.ReadFile(prom)
	if err != nil {
		t.Fatal(err)
	}
	// Two unsharded files; two files of shard 1/2 (a copy elsewhere).
	a, _ := fixtureFile(t, dir, "a.jsonl", passIn("W3_30"))
	sub := filepath.Join(dir, "again")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := fixtureFile(t, sub, "b.jsonl", passIn("W3_30"))
	s1, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	again := filepath.Join(sub, "shard-1-again.jsonl")
	if err := os.WriteFile(again, s1, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{a, b}, {paths[0], again}} {
		_, code, err := runVerb(t, append([]string{"soak", "--summary", "--prom", prom}, args...)...)
		if code == 0 || err == nil || !strings.Contains(err.Error(), "--prom") || !strings.Contains(err.Error(), "the same series") {
			t.Errorf("soak --summary --prom %v: exit %d (%v), want an error: the files' series would be the same", args, code, err)
		}
		if after, _ := os.ReadFile(prom); !bytes.Equal(after, before) {
			t.Errorf("soak --summary --prom %v rewrote %s", args, prom)
		}
	}
}

// merge --prom: the merged soak's numbers, the same as the whole soak's,
// with no file label; each shard file's chain and seals; no problem.
func TestMergeProm(t *testing.T) {
	dir := t.TempDir()
	paths := writeShards(t, dir, 2)
	prom := filepath.Join(dir, "prom", "merge.prom")
	if err := os.MkdirAll(filepath.Dir(prom), 0o755); err != nil {
		t.Fatal(err)
	}
	out, code, err := runVerb(t, append([]string{"merge", "--prom", prom}, paths...)...)
	if code != exitFail || !strings.Contains(err.Error(), "1 row FAIL in 1 window") {
		t.Errorf("exit %d (%v), want 1: 1 row FAIL in 1 window\n%s", code, err, out)
	}
	onlyFile(t, filepath.Dir(prom), "merge.prom")
	got := promSamples(t, prom)
	lo, hi := review.Wilson(2, 3, review.Z95)
	promtest.Sample(t, got, "faultwin_window_pass_rows{arm=fault,driver=refsup,family=W4,window=W4_30}", 2)
	promtest.Sample(t, got, "faultwin_window_fail_rows{arm=fault,driver=refsup,family=W4,window=W4_30}", 1)
	promtest.Sample(t, got, "faultwin_window_pass_ratio_wilson_lower{arm=fault,driver=refsup,family=W4,window=W4_30}", lo)
	promtest.Sample(t, got, "faultwin_window_pass_ratio_wilson_upper{arm=fault,driver=refsup,family=W4,window=W4_30}", hi)
	promtest.Sample(t, got, "faultwin_window_pass_ratio{arm=fault,driver=refsup,family=W3,window=W3_80}", 1)
	promtest.Sample(t, got, "faultwin_merge_problems{}", 0)
	promtest.Sample(t, got, "faultwin_merge_mixed_provenance{}", 0)
	promLabels(t, prom)
	// The whole soak's newest row, over every shard's file, no shard label.
	promtest.Sample(t, got, "faultwin_last_row_timestamp_seconds{driver=refsup}", lastFinished(t, paths...))
	total := 0.0
	for _, p := range paths {
		base := filepath.Base(p)
		promtest.Sample(t, got, "faultwin_file_chain_ok{file="+base+"}", 1)
		promtest.Sample(t, got, "faultwin_file_seal{file="+base+",state=sealed}", 1)
		total += got["faultwin_file_rows{file="+base+"}"]
	}
	if total != 9 {
		t.Errorf("the shard files hold %v rows, want 9", total)
	}
	// A missing shard is a problem the file states.
	_, _, _ = runVerb(t, "merge", "--prom", prom, paths[0])
	promtest.Sample(t, promSamples(t, prom), "faultwin_merge_problems{}", 2) // shard 2 absent, its pairs missing
}

// --prom takes a file, and soak only with --summary.
func TestPromFlag(t *testing.T) {
	rowsFile, _ := fixtureFile(t, t.TempDir(), "run.jsonl", passIn("W3_30"))
	for _, args := range [][]string{
		{"soak", "--prom", filepath.Join(t.TempDir(), "x.prom")},
		{"soak", "--summary", "--prom", "-", rowsFile},
		{"merge", "--prom", "-", rowsFile},
	} {
		if _, code, err := runVerb(t, args...); code != exitUsage || !strings.Contains(err.Error(), "--prom") {
			t.Errorf("%q: exit %d (%v), want %d naming --prom", args, code, err, exitUsage)
		}
	}
}
