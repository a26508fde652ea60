package render

import (
	"strings"
	"testing"

	"faultwin/internal/model"
	"faultwin/reports/decoded"
	"faultwin/reports/review"
	"faultwin/reports/rows"
)

// A mutant's row says which bug was planted, so its FAIL is not read as a
// finding about the supervisor as shipped; other rows read as before.
func TestShortTextMarksBugSwitches(t *testing.T) {
	row := rows.Row{Window: model.Window{ID: "W11"}, Status: model.StatusFail, Run: rows.Run{Bugs: []string{"leak-cgroup"}}}
	c := newCell(decoded.Of(row)[0], 1, "results/mutants/leak-cgroup.jsonl", 2, nil)
	if !strings.HasPrefix(c.Short, "bug switch leak-cgroup: expected FAIL") {
		t.Fatalf("mutant cell %q does not name its bug switch", c.Short)
	}
	row.Run.Bugs = nil
	if c := newCell(decoded.Of(row)[0], 1, "results/windows.jsonl", 2, nil); c.Short != "FAIL" {
		t.Fatalf("plain cell %q", c.Short)
	}
}

// A change counts when the window ran on both sides and the pass rates'
// intervals part: 10/10 against 0/10 does; 1/1 against 0/1 does not
// (either could be a flake's draw); a window of one side only is no change.
func TestCompareCountsOnlySupportedChanges(t *testing.T) {
	rs := func(id, status string, n int) []rows.Row {
		var out []rows.Row
		for i := 0; i < n; i++ {
			out = append(out, rows.Row{Window: model.Window{ID: id, Family: id}, Status: status})
		}
		return out
	}
	a := File{Path: "a", Records: decoded.Of(append(append(rs("W9", model.StatusPass, 10), rs("W8", model.StatusPass, 1)...), rs("W7", model.StatusPass, 5)...)...)}
	b := File{Path: "b", Records: decoded.Of(append(append(rs("W9", model.StatusFail, 10), rs("W8", model.StatusFail, 1)...), rs("W6", model.StatusFail, 5)...)...)}
	c := compareFiles(a, b)
	if len(c.Changed) != 1 || c.Changed[0].Window != "W9" || c.Within != 1 || c.Same != 0 {
		t.Fatalf("changed %+v, within %d, same %d: want W9 alone changed, W8 within its intervals", c.Changed, c.Within, c.Same)
	}
	if len(c.OnlyA) != 1 || c.OnlyA[0] != "W7" || len(c.OnlyB) != 1 || c.OnlyB[0] != "W6" {
		t.Errorf("one side only: A %v, B %v", c.OnlyA, c.OnlyB)
	}
	if s := c.Sentence(); !strings.Contains(s, "1 windows changed") || !strings.Contains(s, "1 ran only in A and 1 only in B") {
		t.Errorf("sentence %q", s)
	}
}

// A file whose session was sealed afterwards as unfinished says so in the
// report, with why; it is not shown as plainly sealed.
func TestSealCellUnfinished(t *testing.T) {
	unfinished := &rows.Marker{Seal: &rows.SealMark{End: rows.EndUnfinished, Note: "harness killed"}}
	closed := &rows.Marker{Seal: &rows.SealMark{End: rows.EndClosed}}
	f := File{Replay: review.FileReplay{Seal: rows.Sealing{State: rows.Sealed, Sessions: []rows.Session{{Seal: closed, Rows: 3}, {Seal: unfinished, Rows: 4}}}}}
	if got := f.SealCell(); got != "UNFINISHED (4 rows: harness killed)" {
		t.Fatalf("seal cell %q", got)
	}
	f.Replay.Seal.Sessions = f.Replay.Seal.Sessions[:1]
	if got := f.SealCell(); got != "sealed" {
		t.Fatalf("seal cell %q, want sealed", got)
	}
}
