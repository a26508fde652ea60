package rows

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"faultwin/internal/model"
	"faultwin/snapshots"
)

const fixture = `id: W3
operation: restore
point: restore.during_criu
delays_ms: [30, 80]
precondition: {cold: 1, checkpoint: true}
criteria: [F1, P1]
description: a timed restore window
`

func testWindows(t *testing.T) []model.Window {
	t.Helper()
	var ws []model.Window
	for _, d := range []int{30, 80} {
		ws = append(ws, model.Window{ID: fmt.Sprintf("W3_%d", d), Family: "W3", Operation: "restore",
			Fault:        model.Fault{Point: "restore.during_criu", DelayMS: d, Kill: model.KillSupervisor},
			Precondition: model.Precondition{Cold: 1, Checkpoint: true}, Criteria: []string{model.F1, model.P1},
			Description: "a timed restore window", File: "windows/restore.yaml", Line: 1,
			Source: fixture, Hash: model.HashSource(fixture)})
	}
	return ws
}

// sampleRow is a row as the runner would build it, with a non-UTC time zone
// and indented raw JSON, which a round trip changes.
func sampleRow(t *testing.T, i int, status string) *Row {
	t.Helper()
	w := testWindows(t)[i%2]
	zone := time.FixedZone("CEST", 2*3600)
	start := time.Date(2026, 10, 24, 10, 33, 52, 123456789, zone).Add(time.Duration(i) * time.Minute)
	r := &Row{
		Window:       w,
		Registration: Registration{Commit: "b9f8a67", Registered: true},
		Run:          Run{Commit: "d25cf84", Dirty: false, Started: start, Finished: start.Add(7 * time.Second)},
		Host:         snapshots.Host{Kernel: "6.18.0", Arch: "amd64", CgroupVersion: "v1", CRIUVersion: "4.2.1", Cores: 4, MemBytes: 16 << 30, LoadBefore: [3]float64{0.5, 0.25, 0.125}},
		Driver:       "refsup",
		Scope:        model.Scope{Run: "r3f9a0c1d", Tag: "faultwin:r3f9a0c1d", StateDir: "/var/lib/faultwin/state/r3f9a0c1d"},
		Input:        json.RawMessage("{\n  \"trace\": [ {\"point\": \"restore.during_criu\"} ],\n  \"note\": \"<&>\"\n}"),
		Status:       status,
		Reason:       "all criteria hold",
		Criteria:     json.RawMessage(`[{"id":"P1","holds":true}]`),
		Durations:    map[string]float64{"prepare": 812.5, "sweep": 40.25},
	}
	r.SetLog("refsup.log", "line one\nline two\n")
	return r
}

func appendRows(t *testing.T, path string, statuses ...string) []Row {
	t.Helper()
	w, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var out []Row
	for i, s := range statuses {
		r := sampleRow(t, i, s)
		if err := w.Append(r); err != nil {
			t.Fatal(err)
		}
		out = append(out, *r)
	}
	return out
}

func fileLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Fatalf("%s does not end with a newline", path)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func writeLines(t *testing.T, path string, lines []string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// rowLines keeps the row lines of a file's lines, dropping its markers:
// the rows of a legacy file.
func rowLines(lines []string) []string {
	var out []string
	for _, l := range lines {
		if strings.HasPrefix(l, `{"schema":`) {
			out = append(out, l)
		}
	}
	return out
}

func TestAppendReadVerify(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rows.jsonl")
	written := appendRows(t, path, model.StatusPass, model.StatusFail, model.StatusInvalid)
	lines := fileLines(t, path)
	if len(lines) != 5 {
		t.Fatalf("%d lines, want 5: open marker, 3 rows, seal", len(lines))
	}
	if written[0].Prev != "" || written[1].Prev != written[0].Hash || written[2].Prev != written[1].Hash {
		t.Fatal("rows are not chained")
	}
	if written[0].Schema != Schema || len(written[0].Hash) != 64 {
		t.Fatalf("schema %d hash %q", written[0].Schema, written[0].Hash)
	}
	rows, err := VerifyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows read back, want 3 (markers are not rows)", len(rows))
	}
	for i := range rows {
		a, _ := json.Marshal(rows[i])
		b, _ := json.Marshal(written[i])
		if !bytes.Equal(a, b) || lines[i+1] != string(a) {
			t.Errorf("row %d reads back differently:\n%s\n%s", i+1, a, b)
		}
	}
	if rows[0].Window.ID != "W3_30" || rows[1].Window.ID != "W3_80" || rows[2].Status != model.StatusInvalid {
		t.Errorf("rows: %s %s %s", rows[0].Window.ID, rows[1].Window.ID, rows[2].Status)
	}
	if !rows[0].Run.Started.Equal(written[0].Run.Started) {
		t.Error("start time changed")
	}

	// Reopening chains the next row to the file's last row, across the seal.
	more := appendRows(t, path, model.StatusPass)
	if more[0].Prev != written[2].Hash {
		t.Fatal("reopened writer did not chain to the last row")
	}
	if _, err := VerifyFile(path); err != nil {
		t.Fatal(err)
	}
}

func TestChainCatchesTampering(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rows.jsonl")
	appendRows(t, path, model.StatusFail, model.StatusPass, model.StatusPass, model.StatusPass)
	lines := fileLines(t, path) // open, 4 rows, seal

	check := func(name string, lines []string, want string) {
		t.Helper()
		p := filepath.Join(dir, name+".jsonl")
		writeLines(t, p, lines)
		_, err := VerifyFile(p)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", name, err, want)
		}
	}
	// A sealed file: errors name the line; "row N" counts rows only.
	r1, r2, r3, r4 := lines[1], lines[2], lines[3], lines[4]
	open, seal := lines[0], lines[5]
	edited := append([]string(nil), lines...)
	edited[1] = strings.Replace(edited[1], `"status":"FAIL"`, `"status":"PASS"`, 1)
	check("edited", edited, "edited.jsonl:2: row 1 (W3_30): hash ")
	check("edited", edited, "the row was edited after it was written")

	logEdit := append([]string(nil), lines...)
	logEdit[3] = strings.Replace(logEdit[3], "line two", "line 2", 1)
	check("logedit", logEdit, "logedit.jsonl:4: row 3 (W3_30): hash")

	check("removed", []string{open, r1, r3, r4, seal}, "removed.jsonl:3: row 2 (W3_30): prev is "+lines0Hash(t, r2)[:12]+", want "+lines0Hash(t, r1)[:12]+" (the hash of row 1): a row was removed, inserted or moved here")
	check("first-removed", []string{open, r2, r3, r4, seal}, `first-removed.jsonl:2: row 1 (W3_80): prev is `+lines0Hash(t, r1)[:12]+`, want "" for a file's first row`)
	check("reordered", []string{open, r1, r3, r2, r4, seal}, "reordered.jsonl:3: row 2 (W3_30): prev is")
	check("duplicated", []string{open, r1, r2, r2, r3, seal}, "duplicated.jsonl:4: row 3 (W3_80): prev is")

	// A legacy file (rows only): the same chain, rows on lines of their own number.
	legacy := rowLines(lines)
	check("legacy-removed", []string{legacy[0], legacy[2], legacy[3]}, "legacy-removed.jsonl:2: row 2 (W3_30): prev is "+lines0Hash(t, r2)[:12])
	check("legacy-edited", []string{legacy[0], legacy[1], strings.Replace(legacy[2], "line two", "line 2", 1)}, "legacy-edited.jsonl:3: row 3 (W3_30): hash")

	var ce *ChainError
	rows, _ := Read(path)
	rows[1].Status = model.StatusFail
	if err := VerifyChain(rows); err == nil || !errors.As(err, &ce) || ce.Row != 2 || ce.Line != 2 || ce.ID != "W3_80" {
		t.Errorf("in-memory edit: %v", err)
	}
	if err := VerifyChain(nil); err != nil {
		t.Errorf("an empty file has a valid chain: %v", err)
	}
}

// lines0Hash returns the hash field of a row or marker line.
func lines0Hash(t *testing.T, line string) string {
	t.Helper()
	var r struct{ Hash string }
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatal(err)
	}
	return r.Hash
}
