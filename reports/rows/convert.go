package rows

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
)

// Converted is what Convert did.
type Converted struct {
	In, Out  string
	Rows     int    // in out
	InRows   int    // in in
	InSHA256 string // of the input file's bytes
	InLast   string // Hash of the input's last row
	InState  SealState
	Sessions int // the input's sessions
	Note     string
	// From and To are the 1-based rows of in that out holds (all of them
	// when Convert was not given a part).
	From, To int
}

// Convert writes every row of the file in into a new file out, in out's
// form (compact for a name ending in ".gz", see Open), as one session.
// It refuses an input that does not read to its end or verify, or has a
// session without its seal, and an out that exists. Every row keeps its
// content; Prev and Hash are recomputed, so out starts a new chain, which
// proves only that out matched in when it was converted: the session's
// seal note records in's name, sha256, row count and last row hash. After
// writing, out is read back and verified and each row compared with in's;
// on any failure out is removed.
func Convert(in, out string) (*Converted, error) { return ConvertPart(in, out, 0, 0) }

// ConvertPart is Convert of rows from..to of in (1-based, inclusive; 0, 0
// for all of them): a file too large to keep whole is split into parts,
// each a chain of its own whose seal note names the rows of in it holds.
func ConvertPart(in, out string, from, to int) (*Converted, error) {
	return convert(in, out, from, to, nil, "")
}

// ConvertForResults is Convert of each row as results/ stores it (see
// StripOutput).
func ConvertForResults(in, out string) (*Converted, error) {
	var bad error
	cv, err := convert(in, out, 0, 0, func(r *Row) {
		if err := StripOutput(r); err != nil && bad == nil {
			bad = err
		}
	}, "supervisor output no criterion reads dropped (each log's name and size kept in logs_truncated; input.sweep1.raw, input.sweep2.raw); ")
	if err == nil && bad != nil {
		os.Remove(out)
		return nil, fmt.Errorf("not converted: %w", bad)
	}
	return cv, err
}

// strippedInput are the parts of a row's input no criterion reads: the
// supervisor's own output of each sweep, kept beside its parsed report.
var strippedInput = [][2]string{{"sweep1", "raw"}, {"sweep2", "raw"}}

// StripOutput drops from r the supervisor's output that no criterion
// reads: each log's text (DropLogText) and each sweep's raw output. The
// criteria re-judge the same: replay checks it of every stored row.
func StripOutput(r *Row) error {
	DropLogText(r)
	if !HasStrippable(*r) {
		return nil
	}
	var in map[string]json.RawMessage
	if err := json.Unmarshal(r.Input, &in); err != nil {
		return fmt.Errorf("row (%s): input: %w", r.Window.ID, err)
	}
	for _, f := range strippedInput {
		var part map[string]json.RawMessage
		if len(in[f[0]]) == 0 || json.Unmarshal(in[f[0]], &part) != nil || part == nil {
			continue
		}
		if _, ok := part[f[1]]; !ok {
			continue
		}
		delete(part, f[1])
		b, err := json.Marshal(part)
		if err != nil {
			return err
		}
		in[f[0]] = b
	}
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	r.Input = b
	return nil
}

// HasStrippable reports whether StripOutput would change r.
func HasStrippable(r Row) bool {
	for _, text := range r.Logs {
		if text != "" {
			return true
		}
	}
	var in map[string]json.RawMessage
	for _, f := range strippedInput {
		if !bytes.Contains(r.Input, []byte(`"`+f[1]+`":`)) {
			continue
		}
		if in == nil && json.Unmarshal(r.Input, &in) != nil {
			return false
		}
		var part map[string]json.RawMessage
		if json.Unmarshal(in[f[0]], &part) == nil {
			if _, ok := part[f[1]]; ok {
				return true
			}
		}
	}
	return false
}

// DropLogText empties every log of r, recording its size in
// LogsTruncated as a log cut to its last 0 bytes. No reader judges a log
// (replay re-judges the input), and a 16 KiB CRIU log tail is most of a
// refsup row.
func DropLogText(r *Row) {
	for name, text := range r.Logs {
		if text == "" {
			continue
		}
		if r.LogsTruncated == nil {
			r.LogsTruncated = map[string]int{}
		}
		if _, cut := r.LogsTruncated[name]; !cut {
			r.LogsTruncated[name] = len(text)
		}
		r.Logs[name] = ""
	}
}

// HasOutput reports whether any row keeps output StripOutput drops.
func HasOutput(rs []Row) bool {
	for _, r := range rs {
		if HasStrippable(r) {
			return true
		}
	}
	return false
}

// convert is ConvertPart with each row passed through edit (if set)
// before it is written and compared; what names the edit in the note.
func convert(in, out string, from, to int, edit func(*Row), what string) (*Converted, error) {
	raw, err := os.ReadFile(in)
	if err != nil {
		return nil, err
	}
	c, err := VerifyContents(in)
	if err != nil {
		return nil, fmt.Errorf("not converted: %w", err)
	}
	s := c.Sealing()
	if s.State == Unsealed {
		return nil, fmt.Errorf("not converted: %s has a session without its seal (line %d): replay it and seal it first", in, s.Unsealed()[0].Line)
	}
	if len(c.Rows) == 0 {
		return nil, fmt.Errorf("not converted: %s holds no rows", in)
	}
	if _, err := os.Stat(out); err == nil {
		return nil, fmt.Errorf("not converted: %s exists; convert into a new file", out)
	}
	all := len(c.Rows)
	if from == 0 && to == 0 {
		from, to = 1, all
	}
	if from < 1 || to < from || to > all {
		return nil, fmt.Errorf("not converted: rows %d-%d are not a part of %s's %d rows", from, to, in, all)
	}
	part := c.Rows[from-1 : to]
	if edit != nil {
		part = slices.Clone(part)
		for i := range part {
			part[i].Logs = maps.Clone(part[i].Logs)
			part[i].LogsTruncated = maps.Clone(part[i].LogsTruncated)
			edit(&part[i])
		}
	}
	sum := sha256.Sum256(raw)
	cv := &Converted{In: in, Out: out, Rows: len(part), InRows: all, InSHA256: hex.EncodeToString(sum[:]),
		InLast: c.Rows[all-1].Hash, InState: s.State, Sessions: len(s.Sessions), From: from, To: to}
	cv.Note = fmt.Sprintf("%sconverted from %s (sha256 %s, %d rows, %s, %d sessions, last row hash %s); rows re-chained: this file proves only that it matched that file when converted",
		what, in, cv.InSHA256, all, s.State, cv.Sessions, cv.InLast)
	if len(part) < all {
		cv.Note = fmt.Sprintf("rows %d-%d (first row hash %s, last %s) %s", from, to, part[0].Hash, part[len(part)-1].Hash, cv.Note)
	}
	fail := func(err error) (*Converted, error) {
		os.Remove(out)
		return nil, fmt.Errorf("not converted: %w", err)
	}
	w, err := Open(out)
	if err != nil {
		return nil, fmt.Errorf("not converted: %w", err)
	}
	for _, r := range part {
		r.Prev, r.Hash = "", ""
		if err := w.Append(&r); err != nil {
			w.Close()
			return fail(err)
		}
	}
	if err := w.Seal(cv.Note); err != nil {
		w.Close()
		return fail(err)
	}
	if err := w.Close(); err != nil {
		return fail(err)
	}
	back, err := VerifyContents(out)
	if err != nil {
		return fail(fmt.Errorf("%s does not read back: %w", out, err))
	}
	if err := SameContent(part, back.Rows); err != nil {
		return fail(fmt.Errorf("%s read back differs from %s: %w", out, in, err))
	}
	return cv, nil
}

// SameContent reports the first row of b whose content (its JSON with Prev
// and Hash empty) differs from a's, or a different row count.
func SameContent(a, b []Row) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d rows, want %d", len(b), len(a))
	}
	for i := range a {
		x, err1 := mainOf(a[i])
		y, err2 := mainOf(b[i])
		if err := firstErr(err1, err2); err != nil {
			return err
		}
		if !bytes.Equal(x, y) || !sameLogs(a[i].Logs, b[i].Logs) {
			return fmt.Errorf("row %d (%s) differs", i+1, a[i].Window.ID)
		}
	}
	return nil
}

func sameLogs(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
