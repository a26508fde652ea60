package review_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/reports/decoded"
	"faultwin/reports/replaytest"
	"faultwin/reports/review"
	"faultwin/reports/rows"
	"faultwin/snapshots"
)

var t0 = time.Date(2026, 10, 24, 10, 33, 52, 0, time.UTC)

// pass1Rows are the rows of run 1: four windows, 10 s apart, with one real
// failure (W4_30's restorer survived) and one H1 failure (W5).
func pass1Rows() []rows.Row {
	p := replaytest.Prov{Commit: "d25cf84", Started: t0, Load: 0.5}
	pass := replaytest.Input(replaytest.W4Pass)
	in := []criteria.Input{
		replaytest.As(pass, "W3_30"),
		replaytest.Input(replaytest.W4Survivor),
		replaytest.Input(replaytest.W5IPForward),
		replaytest.As(pass, "W4_80"),
	}
	var rs []rows.Row
	for i, x := range in {
		p.Started = t0.Add(time.Duration(i) * 10 * time.Second)
		rs = append(rs, replaytest.Row(x, p))
	}
	return rs
}

// pass1 is a run of four windows with one real failure (run 1's W4_30),
// written through the Writer.
func pass1(t *testing.T) (string, []rows.Row) {
	t.Helper()
	rs := pass1Rows()
	path := filepath.Join(t.TempDir(), "run1.jsonl")
	written, err := replaytest.Write(path, rs...)
	if err != nil {
		t.Fatal(err)
	}
	return path, written
}

// writeRows writes rows as they are, whatever their chain.
func writeRows(t *testing.T, name string, rs []rows.Row) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, replaytest.Lines(rs), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func diffs(f review.FileReplay) string {
	var b strings.Builder
	for _, d := range f.Diffs {
		b.WriteString(d.String() + "\n")
	}
	return b.String()
}

func wantDiff(t *testing.T, f review.FileReplay, want ...string) {
	t.Helper()
	got := diffs(f)
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("no difference %q in:\n%s", w, got)
		}
	}
}

func TestReplayCleanFileAgrees(t *testing.T) {
	path, written := pass1(t)
	f := review.ReplayFile(path)
	if !f.OK() {
		t.Fatalf("clean file does not replay: read %v, chain %v\n%s", f.ReadErr, f.Chain, diffs(f))
	}
	if f.Last != written[3].Hash {
		t.Errorf("last hash %s, want %s", f.Last, written[3].Hash)
	}
	var ids []string
	for _, w := range f.Windows {
		ids = append(ids, w.Window)
		if !w.Agree || w.Rows != 1 {
			t.Errorf("%s: %+v", w.Window, w)
		}
	}
	if got := strings.Join(ids, " "); got != "W3_30 W4_30 W4_80 W5" {
		t.Errorf("windows in order %q", got)
	}
	if f.Windows[1].Statuses[model.StatusFail] != 1 {
		t.Errorf("W4_30 statuses %v", f.Windows[1].Statuses)
	}
	var out bytes.Buffer
	bad, err := review.WriteReplay(&out, []review.FileReplay{f})
	if err != nil || bad != 0 {
		t.Fatalf("bad %d err %v", bad, err)
	}
	for _, want := range []string{"run1.jsonl: 4 rows, chain ok, sealed, last hash " + written[3].Hash[:12], "window", "agree", "W4_30"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in:\n%s", want, out.String())
		}
	}
	if f.Seal.State != rows.Sealed || len(f.Seal.Sessions) != 1 || len(f.Records) != 4 {
		t.Errorf("seal %+v, %d rows (markers are not rows)", f.Seal, len(f.Records))
	}
	if strings.Contains(out.String(), "NO") {
		t.Errorf("a window disagrees:\n%s", out.String())
	}
}

func TestReplayEditedStatus(t *testing.T) {
	_, rs := pass1(t)
	rs[1].Status = model.StatusPass // W4_30 FAIL made a PASS

	f := review.ReplayFile(writeRows(t, "edited.jsonl", rs))
	if f.Chain == nil || !strings.Contains(f.Chain.Error(), "edited.jsonl row 2 (W4_30): chain broken: hash") {
		t.Errorf("chain: %v", f.Chain)
	}
	wantDiff(t, f, "edited.jsonl row 2 (W4_30): status recorded PASS, recomputed FAIL")

	// The same edit with the chain forged over it: the re-judgement alone
	// still catches it.
	f = review.ReplayFile(writeRows(t, "forged.jsonl", replaytest.Reforge(rs)))
	if f.Chain != nil {
		t.Fatalf("forged chain should verify: %v", f.Chain)
	}
	wantDiff(t, f, "forged.jsonl row 2 (W4_30): status recorded PASS, recomputed FAIL")
	if f.OK() || f.Windows[1].Agree {
		t.Error("forged status replays as agreeing")
	}
	if !f.Windows[0].Agree || !f.Windows[2].Agree {
		t.Error("untouched windows should agree")
	}
}

func TestReplayRemovedRow(t *testing.T) {
	_, rs := pass1(t)
	f := review.ReplayFile(writeRows(t, "removed.jsonl", append(rs[:1:1], rs[2:]...)))
	if f.OK() || f.Chain == nil || !strings.Contains(f.Chain.Error(), "removed.jsonl row 2 (W5): chain broken: prev is") {
		t.Errorf("chain: %v", f.Chain)
	}
	if len(f.Diffs) != 0 {
		t.Errorf("the remaining rows are genuine and re-judge the same:\n%s", diffs(f))
	}
}

func TestReplayReorderedRows(t *testing.T) {
	_, rs := pass1(t)
	rs[1], rs[2] = rs[2], rs[1]
	f := review.ReplayFile(writeRows(t, "reordered.jsonl", rs))
	if f.OK() || f.Chain == nil || !strings.Contains(f.Chain.Error(), "reordered.jsonl row 2 (W5): chain broken: prev is") {
		t.Errorf("chain: %v", f.Chain)
	}
}

// addSurvivor puts a criu restorer in the row's after_sweep2 snapshot: the
// evidence of run 1's W4_30 failure hidden inside a passing row.
func addSurvivor(t *testing.T, r *rows.Row) {
	t.Helper()
	var in criteria.Input
	if err := json.Unmarshal(r.Input, &in); err != nil {
		t.Fatal(err)
	}
	in.AfterSweep2.Processes = append(in.AfterSweep2.Processes, snapshots.Process{
		PID: 4242, StartTime: 1190518, PPID: 1, State: "S", Comm: "criu", Argv: []string{"criu", "swrk", "3"},
	})
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	r.Input = b
}

func TestReplayEditedSnapshot(t *testing.T) {
	_, rs := pass1(t)
	addSurvivor(t, &rs[0])

	// The tamperer rehashes the edited row only: the next row's link breaks.
	h, err := rows.ComputeHash(rs[0])
	if err != nil {
		t.Fatal(err)
	}
	rs[0].Hash = h
	f := review.ReplayFile(writeRows(t, "rehashed.jsonl", rs))
	if f.Chain == nil || !strings.Contains(f.Chain.Error(), "rehashed.jsonl row 2 (W4_30): chain broken: prev is") {
		t.Errorf("chain: %v", f.Chain)
	}

	// With the whole chain forged, the criteria see the survivor the
	// recorded verdict ignores.
	f = review.ReplayFile(writeRows(t, "forged.jsonl", replaytest.Reforge(rs)))
	if f.Chain != nil {
		t.Fatalf("forged chain should verify: %v", f.Chain)
	}
	wantDiff(t, f,
		"forged.jsonl row 1 (W3_30): P1 recorded pass=true, recomputed pass=false",
		"forged.jsonl row 1 (W3_30): status recorded PASS, recomputed FAIL",
		`forged.jsonl row 1 (W3_30): P1 evidence: 0 lines recorded, 1 recomputed; first extra recomputed line "pid 4242 (start 1190518) criu`,
	)
	if strings.Contains(diffs(f), "row 2") {
		t.Errorf("untouched rows differ:\n%s", diffs(f))
	}
}

func TestReplayEditedWindowDefinition(t *testing.T) {
	_, rs := pass1(t)
	// P1 dropped from W4_30's definition after its row was written.
	w := &rs[1].Window
	w.Source = strings.Replace(w.Source, "P1, ", "", 1)
	w.Criteria = []string{"F1", "O1", "P2", "P3", "P4", "P5", "P6", "H1"}

	f := review.ReplayFile(writeRows(t, "definitions.jsonl", replaytest.Reforge(rs)))
	wantDiff(t, f,
		"definitions.jsonl row 2 (W4_30): window definition hash "+w.Hash[:12]+" does not match its source",
		"definitions.jsonl row 2 (W4_30): the input's window",
	)

	// A tamperer who also fixes the hash is still caught by the input's
	// window, which the criteria judged.
	w.Hash = w.SourceHash()
	f = review.ReplayFile(writeRows(t, "def2.jsonl", replaytest.Reforge(rs)))
	if strings.Contains(diffs(f), "does not match its source") {
		t.Errorf("hash was fixed:\n%s", diffs(f))
	}
	wantDiff(t, f, "def2.jsonl row 2 (W4_30): the input's window (hash")
}

func TestReplayEditedCriterion(t *testing.T) {
	_, got := pass1(t)
	var rs []criteria.Result
	if err := json.Unmarshal(got[1].Criteria, &rs); err != nil {
		t.Fatal(err)
	}
	for i := range rs {
		if rs[i].ID == model.P1 {
			rs[i].Pass = true
			rs[i].Evidence = nil
		}
	}
	rs = append(rs, criteria.Result{ID: "P9", Pass: true, Judged: true})
	got[1].Criteria, _ = json.Marshal(rs)
	f := review.ReplayFile(writeRows(t, "crit.jsonl", replaytest.Reforge(got)))
	wantDiff(t, f,
		"crit.jsonl row 2 (W4_30): P1 recorded pass=true, recomputed pass=false",
		"crit.jsonl row 2 (W4_30): P1 evidence: 0 lines recorded, 1 recomputed",
		"crit.jsonl row 2 (W4_30): P9 recorded but not recomputed",
	)
	if f.Chain != nil {
		t.Errorf("forged chain should verify: %v", f.Chain)
	}
}

func TestReplayUnreadableTail(t *testing.T) {
	path, _ := pass1(t)
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fh.WriteString(`{"schema":1,"window":{"id":"W`)
	fh.Close()
	f := review.ReplayFile(path)
	if f.OK() || f.ReadErr == nil || len(f.Records) != 4 {
		t.Fatalf("partial last line: ok=%v err=%v rows=%d", f.OK(), f.ReadErr, len(f.Records))
	}
	var out bytes.Buffer
	if bad, _ := review.WriteReplay(&out, []review.FileReplay{f}); bad != 1 || !strings.Contains(out.String(), "UNREADABLE past row 4") {
		t.Errorf("bad %d:\n%s", bad, out.String())
	}
}

// TestReplayInputThatIsNotJSON: a compact row's input is read as the
// bytes its blob holds, unscanned (rows.decodeMain); the replay's strict
// decode is what finds one that is not JSON, and the row does not verify.
func TestReplayInputThatIsNotJSON(t *testing.T) {
	r := pass1Rows()[0]
	r.Input = json.RawMessage(`{"window":tru}`)
	ds := review.ReplayRow(r)
	if len(ds) == 0 || !strings.Contains(ds[0].Detail, "input does not decode as the criteria's input") {
		t.Fatalf("differences %v", ds)
	}
}

// A replay that keeps no record judges every row as one that keeps them,
// and reads no Parts for them.
func TestReplayFilesWithoutRecords(t *testing.T) {
	path, _ := pass1(t)
	kept, lean := review.ReplayFiles([]string{path}, true)[0], review.ReplayFiles([]string{path}, false)[0]
	if lean.Records != nil || lean.N != kept.N || kept.N != 4 {
		t.Fatalf("without records: %d records, N %d; kept N %d", len(lean.Records), lean.N, kept.N)
	}
	a := fmt.Sprint(lean.Windows, lean.Diffs, lean.Chain, lean.Seal.State, lean.Last)
	if b := fmt.Sprint(kept.Windows, kept.Diffs, kept.Chain, kept.Seal.State, kept.Last); a != b {
		t.Errorf("without records the replay gives\n%s\nwith them\n%s", a, b)
	}
	for _, r := range kept.Records {
		if r.Parts == nil {
			t.Errorf("a kept record of %s has no Parts", r.Window.ID)
		}
	}
	df := decoded.ReadToJudge(path, func(_ int, rec *decoded.Record, in *criteria.Input) {
		if in == nil || rec.Parts != nil {
			t.Errorf("%s: judged without its input (%v), or its Parts read", rec.Window.ID, in == nil)
		}
	})
	if len(df.Records) != 4 {
		t.Errorf("%d records read to judge, want 4", len(df.Records))
	}
}
