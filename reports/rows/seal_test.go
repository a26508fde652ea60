package rows

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"faultwin/internal/model"
)

func contents(t *testing.T, path string) *Contents {
	t.Helper()
	c, err := ReadContents(path)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func marker(t *testing.T, line string) Marker {
	t.Helper()
	var m Marker
	if err := decodeMarker([]byte(line), &m); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	return m
}

// sealedAs checks the file verifies and is in state want, and returns its sealing.
func sealedAs(t *testing.T, path string, want SealState) Sealing {
	t.Helper()
	c := contents(t, path)
	if err := c.Verify(); err != nil {
		t.Fatalf("%s does not verify: %v", path, err)
	}
	s := c.Sealing()
	if s.State != want {
		t.Fatalf("%s: state %s, want %s (%+v)", path, s.State, want, s)
	}
	return s
}

func TestSealFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rows.jsonl")
	written := appendRows(t, path, model.StatusPass, model.StatusFail, model.StatusPass)
	lines := fileLines(t, path)
	if len(lines) != 5 || !strings.HasPrefix(lines[0], `{"open":{"at":"`) || !strings.HasPrefix(lines[4], `{"seal":{"at":"`) {
		t.Fatalf("want open, 3 rows, seal:\n%s", strings.Join(lines, "\n"))
	}
	open, seal := marker(t, lines[0]), marker(t, lines[4])
	if open.Prev != "" || open.Open.Rows != 0 || open.Open.Last != "" || open.Schema != Schema || len(open.Hash) != 64 {
		t.Errorf("open marker %s", lines[0])
	}
	s := seal.Seal
	if s.End != EndClosed || s.Rows != 3 || s.SessionRows != 3 || s.Last != written[2].Hash || s.Open != open.Hash || seal.Prev != written[2].Hash || s.Note != "" {
		t.Errorf("seal %s", lines[4])
	}
	if !strings.Contains(lines[4], `"end":"closed","rows":3,"session_rows":3,"last":"`+written[2].Hash+`","open":"`+open.Hash+`"},"schema":1,"prev":"`+written[2].Hash+`","hash":"`) {
		t.Errorf("seal line shape: %s", lines[4])
	}
	// The markers do not enter the rows' chain: row 1 starts it.
	if written[0].Prev != "" {
		t.Errorf("first row's prev %q", written[0].Prev)
	}
	st := sealedAs(t, path, Sealed)
	if len(st.Sessions) != 1 || st.Sessions[0].Rows != 3 || st.Sessions[0].Line != 1 || st.Sessions[0].Seal.Line != 5 || st.LegacyRows != 0 {
		t.Errorf("sealing %+v", st)
	}
	c := contents(t, path)
	if len(c.Rows) != 3 || len(c.Markers) != 2 || c.RowLines[0] != 2 || c.RowLines[2] != 4 {
		t.Errorf("contents: %d rows at %v, %d markers", len(c.Rows), c.RowLines, len(c.Markers))
	}
}

func TestTwoSessionsAppended(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rows.jsonl")
	first := appendRows(t, path, model.StatusPass, model.StatusPass)
	second := appendRows(t, path, model.StatusFail)
	lines := fileLines(t, path)
	if len(lines) != 7 {
		t.Fatalf("%d lines, want 7: open, 2 rows, seal, open, row, seal", len(lines))
	}
	seal1, open2, seal2 := marker(t, lines[3]), marker(t, lines[4]), marker(t, lines[6])
	if open2.Prev != seal1.Hash || open2.Open.Rows != 2 || open2.Open.Last != first[1].Hash {
		t.Errorf("second open marker %s", lines[4])
	}
	if second[0].Prev != first[1].Hash {
		t.Error("the rows' chain does not continue across the seal")
	}
	if seal2.Seal.Rows != 3 || seal2.Seal.SessionRows != 1 || seal2.Seal.Open != open2.Hash {
		t.Errorf("second seal %s", lines[6])
	}
	st := sealedAs(t, path, Sealed)
	if len(st.Sessions) != 2 || st.Sessions[1].Line != 5 || st.Sessions[1].Rows != 1 {
		t.Errorf("sessions %+v", st.Sessions)
	}
	if rows, err := Read(path); err != nil || len(rows) != 3 || VerifyChain(rows) != nil {
		t.Errorf("rows alone: %d, %v, %v", len(rows), err, VerifyChain(rows))
	}
}

func TestCutTailIsUnsealed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rows.jsonl")
	appendRows(t, path, model.StatusPass, model.StatusPass)
	appendRows(t, path, model.StatusPass, model.StatusFail, model.StatusPass)
	lines := fileLines(t, path) // open, r, r, seal, open, r, r, r, seal
	cut := func(name string, n int) string {
		p := filepath.Join(dir, name+".jsonl")
		writeLines(t, p, lines[:n])
		return p
	}
	for _, c := range []struct {
		name  string
		keep  int
		line  int // where the unsealed session starts
		after int // rows in it
	}{
		{"seal-cut", 8, 5, 3},
		{"row-and-seal-cut", 7, 5, 2},
		{"all-but-open-cut", 5, 5, 0},
		{"first-session-cut", 3, 1, 2},
	} {
		p := cut(c.name, c.keep)
		st := sealedAs(t, p, Unsealed) // the chain holds: only the seal tells
		u := st.Unsealed()
		if len(u) != 1 || u[0].Line != c.line || u[0].Rows != c.after || u[0].Open == nil {
			t.Errorf("%s: unsealed sessions %+v", c.name, u)
		}
		_, err := Open(p)
		var ue *UnsealedError
		if !errors.Is(err, ErrUnsealed) || !errors.As(err, &ue) || ue.Line != c.line || ue.Rows != c.after || ue.Opened.IsZero() {
			t.Errorf("%s: Open: %v", c.name, err)
		}
	}
	// Whole sessions cut from the end leave a sealed file: only the last
	// hash, compared with a copy kept elsewhere, tells.
	sealedAs(t, cut("session-cut", 4), Sealed)
}

func TestEditedMarkers(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rows.jsonl")
	appendRows(t, path, model.StatusPass, model.StatusPass)
	appendRows(t, path, model.StatusPass)
	lines := fileLines(t, path) // open, r, r, seal, open, r, seal
	check := func(name string, lines []string, want string) {
		t.Helper()
		p := filepath.Join(dir, name+".jsonl")
		writeLines(t, p, lines)
		_, err := VerifyFile(p)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", name, err, want)
		}
	}
	with := func(i int, line string) []string {
		out := append([]string(nil), lines...)
		out[i] = line
		return out
	}
	check("seal-count", with(6, strings.Replace(lines[6], `"rows":3`, `"rows":2`, 1)),
		"seal-count.jsonl:7: seal marker: hash ")
	check("seal-end", with(3, strings.Replace(lines[3], `"end":"closed"`, `"end":"unfinished"`, 1)),
		"the marker was edited after it was written")

	// A forger who rehashes an edited seal still has to match the rows.
	rehash := func(line string, edit func(m *Marker)) string {
		m := marker(t, line)
		edit(&m)
		m.Hash, _ = ComputeMarkerHash(m)
		b, _ := json.Marshal(m)
		return string(b)
	}
	check("forged-count", with(6, rehash(lines[6], func(m *Marker) { m.Seal.Rows = 2 })),
		"forged-count.jsonl:7: seal marker: records 2 rows before it, the file has 3")
	check("forged-session", with(6, rehash(lines[6], func(m *Marker) { m.Seal.SessionRows = 3 })),
		"records 3 rows in its session, 1 follow the open marker at line 5")

	// Markers removed or moved break the chain.
	check("seal-removed", append(lines[:3:3], lines[4:]...), "seal-removed.jsonl:4: open marker: prev is ")
	check("open-removed", append(lines[:4:4], lines[5:]...), "open-removed.jsonl:6: seal marker: no open marker since the previous seal")
	check("pair-removed", append(lines[:3:3], lines[5:]...), "pair-removed.jsonl:5: seal marker: names open marker")
	check("row-into-next-session", []string{lines[0], lines[1], lines[3], lines[2], lines[4], lines[5], lines[6]}, "row-into-next-session.jsonl:3: seal marker: prev is")
	check("first-row-removed", append(lines[:1:1], lines[2:]...), "first-row-removed.jsonl:2: row 1 (W3_80): prev is")
}

func TestLegacyFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rows.jsonl")
	appendRows(t, path, model.StatusPass, model.StatusFail)
	legacy := filepath.Join(dir, "legacy.jsonl")
	writeLines(t, legacy, rowLines(fileLines(t, path)))
	st := sealedAs(t, legacy, Legacy)
	if st.LegacyRows != 2 || len(st.Sessions) != 0 {
		t.Errorf("legacy sealing %+v", st)
	}
	// A cut legacy file is still a legacy file: nothing tells.
	writeLines(t, legacy, rowLines(fileLines(t, path))[:1])
	sealedAs(t, legacy, Legacy)

	// A session appended to a legacy file opens after its rows.
	more := appendRows(t, legacy, model.StatusPass)
	lines := fileLines(t, legacy)
	open := marker(t, lines[1])
	if open.Open.Rows != 1 || open.Prev != lines0Hash(t, lines[0]) || more[0].Prev != lines0Hash(t, lines[0]) {
		t.Errorf("open after legacy rows: %s", lines[1])
	}
	st = sealedAs(t, legacy, Sealed)
	if st.LegacyRows != 1 || len(st.Sessions) != 1 || st.Sessions[0].Rows != 1 {
		t.Errorf("sealing %+v", st)
	}
	if _, err := SealUnfinished(filepath.Join(dir, "rows.jsonl"), "x"); err == nil || !strings.Contains(err.Error(), "sealed already") {
		t.Errorf("sealing a sealed file: %v", err)
	}
	writeLines(t, legacy, rowLines(fileLines(t, path)))
	if _, err := SealUnfinished(legacy, "x"); err == nil || !strings.Contains(err.Error(), "a legacy file") {
		t.Errorf("sealing a legacy file: %v", err)
	}
}

func TestUnfinishedSessionRefusedThenSealed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rows.jsonl")
	appendRows(t, path, model.StatusPass)
	first := appendRows(t, path, model.StatusPass, model.StatusFail)
	lines := fileLines(t, path)
	writeLines(t, path, lines[:len(lines)-1]) // the harness died before its seal

	_, err := Open(path)
	want := path + ": the session opened at line 4 at "
	if !errors.Is(err, ErrUnsealed) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "has 2 rows and no seal") {
		t.Fatalf("Open: got %v, want %q", err, want)
	}
	if _, err := SealUnfinished(path, ""); err == nil || !strings.Contains(err.Error(), "give the reason") {
		t.Errorf("no reason: %v", err)
	}
	w, err := openLocked(path, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := SealUnfinished(path, "harness killed"); err == nil || !strings.Contains(err.Error(), "another writer has it open") {
		t.Errorf("while locked: %v", err)
	}
	w.Close()

	m, err := SealUnfinished(path, "harness killed by the OOM killer")
	if err != nil {
		t.Fatal(err)
	}
	if m.Seal.End != EndUnfinished || m.Seal.Rows != 3 || m.Seal.SessionRows != 2 || m.Prev != first[1].Hash || m.Seal.Note != "harness killed by the OOM killer" {
		t.Errorf("seal %+v", m.Seal)
	}
	st := sealedAs(t, path, Sealed)
	if len(st.Sessions) != 2 || st.Sessions[0].Unfinished() || !st.Sessions[1].Unfinished() {
		t.Errorf("sessions %+v", st.Sessions)
	}
	if _, err := SealUnfinished(path, "again"); err == nil || !strings.Contains(err.Error(), "sealed already") {
		t.Errorf("sealing twice: %v", err)
	}
	// The file takes new sessions again.
	more := appendRows(t, path, model.StatusPass)
	if more[0].Prev != first[1].Hash {
		t.Error("not chained after the unfinished seal")
	}
	sealedAs(t, path, Sealed)

	// A broken file is not sealed: that would bless the break.
	lines = fileLines(t, path)
	lines[1] = strings.Replace(lines[1], `"PASS"`, `"FAIL"`, 1)
	writeLines(t, path, lines[:len(lines)-1])
	if _, err := SealUnfinished(path, "x"); err == nil || !strings.Contains(err.Error(), "does not verify") {
		t.Errorf("broken file: %v", err)
	}
	if _, err := SealUnfinished(filepath.Join(dir, "missing.jsonl"), "x"); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
}

func TestSealNoteAndEmptySession(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rows.jsonl")
	w, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	// No row, nothing to seal: the file stays empty.
	if err := w.Seal("nothing ran"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); len(b) != 0 {
		t.Fatalf("a session without rows wrote %q", b)
	}
	if err := w.Append(sampleRow(t, 0, model.StatusPass)); err != nil {
		t.Fatal(err)
	}
	if err := w.Seal("interrupted after 1 of 4 rows"); err != nil {
		t.Fatal(err)
	}
	// An Append after a seal starts a new session; Close seals it.
	if err := w.Append(sampleRow(t, 1, model.StatusPass)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lines := fileLines(t, path)
	if len(lines) != 6 || marker(t, lines[2]).Seal.Note != "interrupted after 1 of 4 rows" || marker(t, lines[5]).Seal.Note != "" {
		t.Fatalf("lines:\n%s", strings.Join(lines, "\n"))
	}
	if st := sealedAs(t, path, Sealed); len(st.Sessions) != 2 {
		t.Errorf("sessions %+v", st.Sessions)
	}
	if err := w.Seal(""); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("seal after close: %v", err)
	}
}

func TestMarkerReadErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rows.jsonl")
	appendRows(t, path, model.StatusPass)
	lines := fileLines(t, path)
	cases := map[string]struct {
		lines []string
		want  string
	}{
		"unknown": {[]string{strings.Replace(lines[0], `{"open":{`, `{"open":{"extra":1,`, 1)}, `:1: json: unknown field "extra"`},
		"schema":  {[]string{strings.Replace(lines[0], `"schema":1,`, `"schema":2,`, 1)}, ":1: marker schema 2; this faultwin reads schema 1"},
		"both": {[]string{`{"open":{"at":"2026-01-01T00:00:00Z","rows":0,"last":""},"seal":{"at":"2026-01-01T00:00:00Z","end":"closed","rows":0,"session_rows":0,"last":"","open":""},"schema":1,"prev":"","hash":""}`},
			":1: a marker is either open or seal"},
		"two": {[]string{lines[0] + " {}"}, ":1: data after the marker"},
	}
	for name, c := range cases {
		p := filepath.Join(dir, name+".jsonl")
		writeLines(t, p, c.lines)
		_, err := Read(p)
		if err == nil || !strings.HasPrefix(err.Error(), p) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", name, err, c.want)
		}
	}
}
