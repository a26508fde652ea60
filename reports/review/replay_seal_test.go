package review_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"faultwin/internal/model"
	"faultwin/reports/replaytest"
	"faultwin/reports/review"
	"faultwin/reports/rows"
)

// fileLines returns a file's lines without their newlines.
func fileLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func writeLines(t *testing.T, name string, lines []string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func replayText(t *testing.T, f review.FileReplay) (string, int) {
	t.Helper()
	var out bytes.Buffer
	bad, err := review.WriteReplay(&out, []review.FileReplay{f})
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), bad
}

func contains(t *testing.T, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("no %q in:\n%s", w, got)
		}
	}
}

// TestReplayCutTail: rows cut from the end of a sealed file take its seal
// with them; the chain still holds, the missing seal fails the replay.
func TestReplayCutTail(t *testing.T) {
	path, _ := pass1(t)
	lines := fileLines(t, path) // open, 4 rows, seal
	for name, keep := range map[string]int{"seal-cut.jsonl": 5, "row-and-seal-cut.jsonl": 4} {
		p := writeLines(t, name, lines[:keep])
		f := review.ReplayFile(p)
		if f.OK() || f.Chain != nil || f.ReadErr != nil || len(f.Diffs) != 0 || f.Seal.State != rows.Unsealed {
			t.Errorf("%s: ok %v chain %v read %v state %s", name, f.OK(), f.Chain, f.ReadErr, f.Seal.State)
		}
		out, bad := replayText(t, f)
		if bad != 1 {
			t.Errorf("%s: bad %d", name, bad)
		}
		contains(t, out, p+": "+strconv.Itoa(keep-1)+" rows, chain ok, UNSEALED",
			p+" line 1: UNSEALED: the session opened at 2", "has "+strconv.Itoa(keep-1)+" rows and no seal",
			"faultwin seal --unfinished --reason WHY "+p)
	}
}

// TestReplayTwoSessions: a second session appended after the first's seal
// replays sealed; cutting it leaves the first sealed and the second not.
func TestReplayTwoSessions(t *testing.T) {
	path, written := pass1(t)
	p := replaytest.Prov{Commit: "d25cf84", Started: t0.Add(time.Hour), Load: 0.5}
	more, err := replaytest.Write(path, replaytest.Row(replaytest.Input(replaytest.W4Pass), p))
	if err != nil {
		t.Fatal(err)
	}
	if more[0].Prev != written[3].Hash {
		t.Fatal("the second session's row does not chain to the first's last row")
	}
	f := review.ReplayFile(path)
	if !f.OK() || f.Seal.State != rows.Sealed || len(f.Seal.Sessions) != 2 || len(f.Records) != 5 {
		t.Fatalf("ok %v chain %v seal %+v rows %d", f.OK(), f.Chain, f.Seal, len(f.Records))
	}
	out, _ := replayText(t, f)
	contains(t, out, "run1.jsonl: 5 rows, chain ok, sealed (2 sessions), last hash "+more[0].Hash[:12])

	lines := fileLines(t, path) // open, 4 rows, seal, open, row, seal
	cut := writeLines(t, "cut.jsonl", lines[:8])
	f = review.ReplayFile(cut)
	if f.OK() || f.Seal.State != rows.Unsealed || len(f.Seal.Unsealed()) != 1 || f.Seal.Unsealed()[0].Line != 7 {
		t.Fatalf("cut second session: ok %v seal %+v", f.OK(), f.Seal)
	}
	out, _ = replayText(t, f)
	contains(t, out, cut+": 5 rows, chain ok, UNSEALED", cut+" line 7: UNSEALED: the session opened at ", "has 1 row and no seal")
}

// TestReplayEditedSeal: a seal edited after it was written breaks the chain.
func TestReplayEditedSeal(t *testing.T) {
	path, _ := pass1(t)
	lines := fileLines(t, path)
	lines[5] = strings.Replace(lines[5], `"rows":4`, `"rows":5`, 1)
	p := writeLines(t, "edited-seal.jsonl", lines)
	f := review.ReplayFile(p)
	if f.OK() || f.Chain == nil || !strings.Contains(f.Chain.Error(), p+" line 6 (seal marker): chain broken: hash ") {
		t.Errorf("chain: %v", f.Chain)
	}
	out, bad := replayText(t, f)
	if bad != 1 {
		t.Errorf("bad %d", bad)
	}
	contains(t, out, "CHAIN BROKEN, sealed")
}

// TestReplayLegacyFile: a file written before sealing (rows only) replays
// cleanly, and says it is unsealed for that reason.
func TestReplayLegacyFile(t *testing.T) {
	_, rs := pass1(t)
	p := writeRows(t, "legacy.jsonl", rs)
	f := review.ReplayFile(p)
	if !f.OK() || f.Seal.State != rows.Legacy || f.Seal.LegacyRows != 4 {
		t.Fatalf("ok %v seal %+v", f.OK(), f.Seal)
	}
	out, bad := replayText(t, f)
	if bad != 0 || strings.Contains(out, "UNSEALED") {
		t.Errorf("bad %d:\n%s", bad, out)
	}
	contains(t, out, p+": 4 rows, chain ok, unsealed (legacy: written before sealing), last hash")

	// Rows given without their file: the seals are not checked or shown.
	f = review.ReplayRows(p, rs)
	if !f.OK() || f.Seal.State != "" {
		t.Errorf("ReplayRows: ok %v state %q", f.OK(), f.Seal.State)
	}
	out, _ = replayText(t, f)
	contains(t, out, p+": 4 rows, chain ok, last hash")
}

// TestReplayUnfinishedSession: a session sealed afterwards as unfinished
// replays cleanly, with a note saying so.
func TestReplayUnfinishedSession(t *testing.T) {
	path, _ := pass1(t)
	lines := fileLines(t, path)
	p := writeLines(t, "died.jsonl", lines[:4])
	if _, err := rows.SealUnfinished(p, "host rebooted"); err != nil {
		t.Fatal(err)
	}
	f := review.ReplayFile(p)
	if !f.OK() || f.Seal.State != rows.Sealed || !f.Seal.Sessions[0].Unfinished() {
		t.Fatalf("ok %v chain %v seal %+v", f.OK(), f.Chain, f.Seal)
	}
	out, _ := replayText(t, f)
	contains(t, out, p+" line 1: session of 3 rows sealed as unfinished at ", ": host rebooted")
}

// TestMarkersAreNotWindows: the summary, pass numbers and differences of a
// sealed file see its rows only; a difference names the row's line too.
func TestMarkersAreNotWindows(t *testing.T) {
	path, rs := pass1(t)
	replaytest.Write(path, rs[0]) // a second session: open, row, seal
	f := review.ReplayFile(path)
	if len(f.Records) != 5 {
		t.Fatalf("%d rows", len(f.Records))
	}
	sums := review.Summarize(f.Records)
	n := 0
	for _, s := range sums {
		n += s.Rows
		if !strings.HasPrefix(s.Window, "W") {
			t.Errorf("summary of a non-window %q", s.Window)
		}
	}
	if n != 5 || len(sums) != 4 {
		t.Errorf("%d windows, %d rows summarised", len(sums), n)
	}

	// A forged status in the second session: the difference names row 5,
	// on line 8 (after open, 4 rows, seal, open).
	lines := fileLines(t, path)
	var r rows.Row
	if err := json.Unmarshal([]byte(lines[7]), &r); err != nil {
		t.Fatal(err)
	}
	r.Status = model.StatusFail
	r.Hash, _ = rows.ComputeHash(r)
	b, _ := json.Marshal(r)
	lines[7] = string(b)
	p := writeLines(t, "forged.jsonl", lines)
	f = review.ReplayFile(p)
	wantDiff(t, f, p+" row 5 at line 8 (W3_30): status recorded FAIL, recomputed PASS")
	if f.Chain == nil || !strings.Contains(f.Chain.Error(), p+" line 9 (seal marker): chain broken: prev is") {
		t.Errorf("chain: %v", f.Chain)
	}
}
