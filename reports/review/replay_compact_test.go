package review_test

import (
	"path/filepath"
	"strings"
	"testing"

	"faultwin/internal/model"
	"faultwin/reports/replaytest"
	"faultwin/reports/review"
	"faultwin/reports/rows"
)

// compactPass writes pass1's windows to a compact file (.jsonl.gz), each
// with a CRIU-sized log, so logs are blobs of their own.
func compactPass(t *testing.T, name string, edit func(i int, r *rows.Row)) (string, []rows.Row) {
	t.Helper()
	rs := pass1Rows()
	for i := range rs {
		rs[i].SetLog("logs/criu-restore-c1-s1.log", strings.Repeat("(00.000123) Restoring task\n", 300+i))
		if edit != nil {
			edit(i, &rs[i])
		}
	}
	path := filepath.Join(t.TempDir(), name)
	written, err := replaytest.Write(path, rs...)
	if err != nil {
		t.Fatal(err)
	}
	return path, written
}

func TestReplayCompactAgreesWithPlain(t *testing.T) {
	gz, written := compactPass(t, "run1.jsonl.gz", nil)
	f := review.ReplayFile(gz)
	if !f.OK() || len(f.Records) != 4 || f.Seal.State != rows.Sealed {
		t.Fatalf("compact replay: ok %v, %d rows, seal %q, read %v, chain %v\n%s", f.OK(), len(f.Records), f.Seal.State, f.ReadErr, f.Chain, diffs(f))
	}
	if f.Last != written[3].Hash {
		t.Errorf("last %s, written %s", f.Last, written[3].Hash)
	}
	// The same rows written plain replay the same way, row for row.
	read, err := rows.Read(gz)
	if err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(t.TempDir(), "run1.jsonl")
	if _, err := replaytest.Write(plain, stripChain(read)...); err != nil {
		t.Fatal(err)
	}
	g := review.ReplayFile(plain)
	if !g.OK() {
		t.Fatalf("plain replay: %v %v\n%s", g.ReadErr, g.Chain, diffs(g))
	}
	readPlain, err := rows.Read(plain)
	if err != nil {
		t.Fatal(err)
	}
	if err := rows.SameContent(readPlain, read); err != nil {
		t.Fatal(err)
	}
	for i := range f.Windows {
		if f.Windows[i].Window != g.Windows[i].Window || f.Windows[i].Agree != g.Windows[i].Agree || f.Windows[i].Rows != g.Windows[i].Rows {
			t.Errorf("window %d: compact %+v, plain %+v", i, f.Windows[i], g.Windows[i])
		}
	}
	// Rows given without their file (render.FromRows) verify too.
	if h := review.ReplayRows(gz, read); h.Chain != nil || len(h.Diffs) > 0 {
		t.Errorf("ReplayRows on compact rows: chain %v\n%s", h.Chain, diffs(h))
	}
}

// A compact row whose verdict was rewritten before it was written (its
// hash is then genuine) still fails the re-judgement.
func TestReplayCompactCatchesForgedVerdict(t *testing.T) {
	gz, _ := compactPass(t, "forged.jsonl.gz", func(i int, r *rows.Row) {
		if i == 1 {
			r.Status = model.StatusPass
		}
	})
	f := review.ReplayFile(gz)
	if f.OK() || f.Chain != nil || len(f.Diffs) == 0 || !strings.Contains(diffs(f), "row 2 at line") {
		t.Fatalf("forged verdict: ok %v chain %v\n%s", f.OK(), f.Chain, diffs(f))
	}
}

func stripChain(rs []rows.Row) []rows.Row {
	out := make([]rows.Row, len(rs))
	for i, r := range rs {
		r.Prev, r.Hash = "", ""
		out[i] = r
	}
	return out
}
