package rows

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"faultwin/internal/model"
)

func TestOpenRefusesPartialLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rows.jsonl")
	appendRows(t, path, model.StatusPass)
	first, _ := os.ReadFile(path)
	if err := os.WriteFile(path, append(first, `{"schema":1,"win`...), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Open(path)
	want := fmt.Sprintf("%s: ends without a newline: a partial row starts at byte offset %d", path, len(first))
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %q", err, want)
	}
	_, err = Read(path)
	want = fmt.Sprintf("%s:4: partial row without a newline at byte offset %d", path, len(first))
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %q", err, want)
	}

	// A file that is nothing but a partial row.
	only := filepath.Join(t.TempDir(), "only.jsonl")
	os.WriteFile(only, []byte(`{"schema"`), 0o644)
	if _, err := Open(only); err == nil || !strings.Contains(err.Error(), "partial row starts at byte offset 0") {
		t.Fatalf("got %v", err)
	}
}

func TestOpenRefusesTamperedLastRow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rows.jsonl")
	appendRows(t, path, model.StatusPass, model.StatusFail)
	lines := fileLines(t, path)
	seal := strings.Replace(lines[3], `"session_rows":2`, `"session_rows":1`, 1)
	writeLines(t, path, append(lines[:3:3], seal))
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "last line (a seal, at byte offset") {
		t.Fatalf("edited seal: got %v", err)
	}
	// A legacy file: rows only.
	legacy := rowLines(lines)
	legacy[1] = strings.Replace(legacy[1], `"FAIL"`, `"PASS"`, 1)
	writeLines(t, path, legacy)
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "last row (W3_80, at byte offset") {
		t.Fatalf("got %v", err)
	}
	writeLines(t, path, []string{legacy[0], "not json"})
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "last row, at byte offset") {
		t.Fatalf("got %v", err)
	}
}

func TestOneWriterPerFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rows.jsonl")
	w, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "another writer has it open") {
		t.Fatalf("second writer: %v", err)
	}
	w.Close()
	w2, err := Open(path)
	if err != nil {
		t.Fatalf("after close: %v", err)
	}
	w2.Close()
	if err := w2.Append(sampleRow(t, 0, model.StatusPass)); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("append after close: %v", err)
	}
	if err := w2.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
}

func TestAppendRefusesBadRows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rows.jsonl")
	w, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cases := map[string]func(r *Row){
		`status "PASSED" is not one of`: func(r *Row) { r.Status = "PASSED" },
		"hash does not match its source": func(r *Row) {
			r.Window.Source += "# edited\n"
		},
		"no window id":                 func(r *Row) { r.Window = model.Window{} },
		"schema 2":                     func(r *Row) { r.Schema = 2 },
		"unexpected end of JSON input": func(r *Row) { r.Input = json.RawMessage(`{"trace": [`) },
		"unsupported value: NaN":       func(r *Row) { r.Durations["x"] = math.NaN() },
	}
	for want, breakRow := range cases {
		r := sampleRow(t, 0, model.StatusPass)
		breakRow(r)
		if err := w.Append(r); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %q", err, want)
		}
	}
	if lines, _ := os.ReadFile(path); len(lines) != 0 {
		t.Fatalf("a refused row was written: %s", lines)
	}
	if err := w.Append(sampleRow(t, 0, model.StatusPass)); err != nil {
		t.Fatalf("a good row after refused ones: %v", err)
	}
}

func TestFailedWriteBreaksWriter(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Fatal("no /dev/full: the test writes to it to make a write fail")
	}
	w, err := Open("/dev/full")
	if err != nil {
		t.Fatalf("cannot open /dev/full: %v", err)
	}
	defer w.Close()
	if err := w.Append(sampleRow(t, 0, model.StatusPass)); err == nil || !strings.Contains(err.Error(), "write failed") {
		t.Fatalf("got %v", err)
	}
	if err := w.Append(sampleRow(t, 0, model.StatusPass)); err == nil || !strings.Contains(err.Error(), "an earlier append failed") {
		t.Fatalf("got %v", err)
	}
	// The session stays unsealed: the file is left as it is.
	if err := w.Seal(""); err == nil || !strings.Contains(err.Error(), "not sealed") {
		t.Fatalf("seal after a failed write: %v", err)
	}
}

func TestLogsCapped(t *testing.T) {
	big := strings.Repeat("é", LogLimit) // 2 bytes each: twice the limit
	r := sampleRow(t, 0, model.StatusPass)
	r.SetLog("criu.log", big)
	got := r.Logs["criu.log"]
	if len(got) > LogLimit || len(got) < LogLimit-1 || !utf8.ValidString(got) || !strings.HasSuffix(big, got) {
		t.Fatalf("kept %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
	if r.LogsTruncated["criu.log"] != len(big) {
		t.Fatalf("truncated sizes %v", r.LogsTruncated)
	}
	if _, cut := r.LogsTruncated["refsup.log"]; cut {
		t.Fatal("a short log is marked truncated")
	}

	// Logs put straight into the map are capped by Append; invalid UTF-8 is
	// replaced so the row still verifies after reading back.
	path := filepath.Join(t.TempDir(), "rows.jsonl")
	w, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	r = sampleRow(t, 0, model.StatusPass)
	r.Logs["raw"] = strings.Repeat("x", 3*LogLimit)
	r.Logs["binary"] = "ok\xff\xfe end"
	r.Logs["a"], r.Logs["b"], r.Logs["c"] = big, big, big // the line spans several 64 KiB chunks
	if err := w.Append(r); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if len(r.Logs["raw"]) != LogLimit || r.LogsTruncated["raw"] != 3*LogLimit || r.Logs["binary"] != "ok\uFFFD end" {
		t.Fatalf("raw %d bytes, truncated %v, binary %q", len(r.Logs["raw"]), r.LogsTruncated, r.Logs["binary"])
	}
	rows, err := VerifyFile(path)
	if err != nil || len(rows) != 1 {
		t.Fatalf("%d rows: %v", len(rows), err)
	}
	// Reopening reads a last line longer than one read chunk.
	more := appendRows(t, path, model.StatusPass)
	if more[0].Prev != r.Hash {
		t.Fatal("not chained after a long last line")
	}
}

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rows.jsonl")
	appendRows(t, path, model.StatusPass, model.StatusPass)
	lines := rowLines(fileLines(t, path))
	cases := map[string]struct {
		lines []string
		want  string
	}{
		"blank":   {[]string{lines[0], "", lines[1]}, ":2: empty line"},
		"garbage": {[]string{lines[0], lines[1], "{oops"}, ":3: invalid character"},
		"unknown": {[]string{strings.Replace(lines[0], `{"schema":1,`, `{"schema":1,"extra":true,`, 1)}, `:1: json: unknown field "extra"`},
		"schema":  {[]string{strings.Replace(lines[0], `{"schema":1,`, `{"schema":2,`, 1)}, ":1: row schema 2; this faultwin reads schema 1"},
		"two":     {[]string{lines[0] + " {}"}, ":1: data after the row"},
	}
	for name, c := range cases {
		p := filepath.Join(dir, name+".jsonl")
		writeLines(t, p, c.lines)
		rows, err := Read(p)
		if err == nil || !strings.HasPrefix(err.Error(), p) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", name, err, c.want)
		}
		if name == "garbage" && len(rows) != 2 {
			t.Errorf("garbage: %d rows before the bad line, want 2", len(rows))
		}
	}
	if _, err := Read(filepath.Join(dir, "missing.jsonl")); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
}
