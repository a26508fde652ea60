package rows

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"faultwin/internal/strictjson"
)

// A file holds sessions: each invocation that writes rows (a run, a soak, a
// suite) is one session. Its first row is preceded by an open marker and its
// writer, when it closes, appends a seal. Markers are lines of their own,
// never rows: Read skips them, so summaries, reports and pass numbering see
// window rows only, and the Row type and its hash are unchanged. On disk
// (canonical encoding/json output, one line each):
//
//	{"open":{"at":"2026-10-24T10:33:52.1Z","rows":4,"last":"<hash of row 4>"},"schema":1,"prev":"<hash of the line before>","hash":"…"}
//	{"seal":{"at":"…","end":"closed","rows":7,"session_rows":3,"last":"<hash of row 7>","open":"<hash of the session's open marker>","note":"…"},"schema":1,"prev":"<hash of row 7>","hash":"…"}
//
// A reader tells a marker from a row by its first key ("open" or "seal";
// a row's is "schema"). A marker's Hash is the sha256 of its line with hash
// "", like a row's.
//
// Chaining: a row's Prev is the Hash of the row before it, markers skipped,
// so the rows of a sealed file chain exactly like the rows of a file written
// before sealing existed (a legacy file: rows only, which still reads,
// verifies and replays). A marker's Prev is the Hash of the line just before
// it, whatever it is ("" on line 1): a seal's Prev is its session's last row,
// an open's the previous seal. A seal also names its session's open marker
// and counts the file's rows, so an edited, removed or moved marker breaks
// the chain like an edited row does.
//
// What a seal buys: the last line of a file written by a session that
// closed is its seal. A file cut from the end (the seal and rows before it
// removed) ends in an open marker or in rows after one: its last session is
// unsealed, whether the harness died mid-run or the file was cut, and Open
// refuses to append to it until SealUnfinished records it as unfinished.
// A cut exactly at a session boundary (whole sessions removed from the end)
// leaves a sealed file: compare the last hash with a copy kept elsewhere.

// Marker is an open or seal line: exactly one of Open and Seal is set.
type Marker struct {
	Open   *OpenMark `json:"open,omitempty"`
	Seal   *SealMark `json:"seal,omitempty"`
	Schema int       `json:"schema"`
	Prev   string    `json:"prev"`
	Hash   string    `json:"hash"`
	// Line is the marker's 1-based line in the file it was read from (not
	// stored).
	Line int `json:"-"`
}

// Open starts a session: written with the session's first row.
type OpenMark struct {
	At   time.Time `json:"at"`   // when the session's first row was written (UTC)
	Rows int       `json:"rows"` // rows in the file before this marker
	Last string    `json:"last"` // Hash of the file's last row before it, "" if none
	// Shard is set by `faultwin soak --shard k/n` only: the session's rows
	// are shard k of n of a soak, and the session's j-th row (0-based) is
	// the j-th (window, pass) pair the shard rule gives that shard. Absent
	// (omitempty) from every other open marker, so markers written before
	// it existed read and hash exactly as they did.
	Shard *ShardMark `json:"shard,omitempty"`
}

// ShardMark says which slice of a sharded soak a session's rows are. Every
// shard of one soak records the same N, Passes, Windows and Rule; only K
// differs. The rows package only stores it: review.ShardPairs computes the
// (window, pass) pairs from it.
type ShardMark struct {
	K       int      `json:"k"`       // this shard, 1..N
	N       int      `json:"n"`       // shards in the soak
	Passes  int      `json:"passes"`  // passes of the whole soak (soak -n)
	Windows []string `json:"windows"` // the soak's selected window ids, in natural order
	Rule    string   `json:"rule"`    // the rule assigning pairs to shards (review.ShardRule)
}

// StartSession writes the session's open marker now, carrying shard (nil
// for none), instead of letting the session's first Append write a plain
// one. It refuses a session already open. Call it just before the first
// row, so a session that never writes a row leaves at most an open marker
// that Close seals with zero rows.
func (w *Writer) StartSession(shard *ShardMark) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return err
	}
	if w.open != nil {
		return fmt.Errorf("%s: a session is open already", w.path)
	}
	m, line, err := newMarker(Marker{Open: &OpenMark{At: time.Now().UTC(), Rows: w.rows, Last: w.last, Shard: shard}}, w.lastLine)
	if err != nil {
		return fmt.Errorf("%s: open marker: %w", w.path, err)
	}
	if err := w.write(line); err != nil {
		return err
	}
	w.open, w.lastLine, w.session = &m, m.Hash, 0
	return nil
}

// Seal ends a session.
type SealMark struct {
	At          time.Time `json:"at"`           // UTC
	End         string    `json:"end"`          // EndClosed or EndUnfinished
	Rows        int       `json:"rows"`         // rows in the file up to this seal, every session's
	SessionRows int       `json:"session_rows"` // rows since the session's open marker
	Last        string    `json:"last"`         // Hash of the file's last row, "" if none
	Open        string    `json:"open"`         // Hash of the session's open marker
	Note        string    `json:"note,omitempty"`
}

// How a session ended, as its seal records.
const (
	// EndClosed: the session's own writer sealed it when it closed (the
	// note says if the run was interrupted or stopped early).
	EndClosed = "closed"
	// EndUnfinished: the session's writer never closed (the harness died,
	// or the file was cut); SealUnfinished sealed it afterwards, with the
	// reason given in the note.
	EndUnfinished = "unfinished"
)

// Kind names the marker: "open" or "seal".
func (m Marker) Kind() string {
	if m.Seal != nil {
		return "seal"
	}
	return "open"
}

// Rows returns the row count and last row hash the marker records.
func (m Marker) Rows() (int, string) {
	if m.Seal != nil {
		return m.Seal.Rows, m.Seal.Last
	}
	return m.Open.Rows, m.Open.Last
}

// ComputeMarkerHash returns what m's Hash must be.
func ComputeMarkerHash(m Marker) (string, error) {
	m.Hash = ""
	b, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// newMarker completes m (schema, prev, hash) as read back from its line.
func newMarker(m Marker, prev string) (Marker, []byte, error) {
	m.Schema, m.Prev, m.Hash = Schema, prev, ""
	b, err := json.Marshal(m)
	if err != nil {
		return Marker{}, nil, err
	}
	var n Marker
	if err := decodeMarker(b, &n); err != nil {
		return Marker{}, nil, err
	}
	if n.Hash, err = ComputeMarkerHash(n); err != nil {
		return Marker{}, nil, err
	}
	line, err := json.Marshal(n)
	if err != nil {
		return Marker{}, nil, err
	}
	return n, append(line, '\n'), nil
}

// lineKind is what a line holds.
type lineKind int

const (
	kindRow lineKind = iota
	kindOpen
	kindSeal
)

// kindOf tells a marker line from a row by its first key, reading no more
// of the line than that key. Anything else is a row (and fails as one if it
// is not).
func kindOf(line []byte) lineKind {
	dec := json.NewDecoder(bytes.NewReader(line))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return kindRow
	}
	switch t, _ := dec.Token(); t {
	case "open":
		return kindOpen
	case "seal":
		return kindSeal
	}
	return kindRow
}

// decodeMarker decodes one marker line strictly.
func decodeMarker(b []byte, m *Marker) error {
	if err := strictjson.Decode(b, m, "marker"); err != nil {
		return err
	}
	if (m.Open == nil) == (m.Seal == nil) {
		return fmt.Errorf("a marker is either open or seal")
	}
	return nil
}

// Contents is a file as read: its rows and its markers, each with its line.
type Contents struct {
	Path     string
	Rows     []Row
	RowLines []int // RowLines[i] is the 1-based line of Rows[i]
	Markers  []Marker

	read []asRead // read[i] is how Rows[i] was read, for Verify
}

// item is one line of Contents in file order.
type item struct {
	line int
	row  int // index into Rows, or -1
	mark int // index into Markers, or -1
}

func (c *Contents) items() []item {
	out := make([]item, 0, len(c.Rows)+len(c.Markers))
	i, j := 0, 0
	for i < len(c.Rows) || j < len(c.Markers) {
		if j >= len(c.Markers) || (i < len(c.Rows) && c.RowLines[i] < c.Markers[j].Line) {
			out = append(out, item{c.RowLines[i], i, -1})
			i++
		} else {
			out = append(out, item{c.Markers[j].Line, -1, j})
			j++
		}
	}
	return out
}

// Verify checks the rows' chain (as VerifyChain) and every marker: its own
// hash, its Prev (the line before it), the row count and last row hash it
// records, and for a seal its session's open marker and row count. The
// first problem is returned as a *ChainError naming its line. Verify does
// not judge whether the file is sealed: Sealing does.
func (c *Contents) Verify() error {
	prevRow, prevLine := "", ""
	var open *Marker // the open marker of the session not yet sealed
	rowN := 0
	for _, it := range c.items() {
		if it.row >= 0 {
			r := c.Rows[it.row]
			rowN++
			if err := c.checkRow(it.row, rowN, it.line, prevRow); err != nil {
				return err
			}
			prevRow, prevLine = r.Hash, r.Hash
			continue
		}
		m := &c.Markers[it.mark]
		bad := func(format string, a ...any) error {
			return &ChainError{Line: it.line, ID: m.Kind(), Problem: fmt.Sprintf(format, a...)}
		}
		h, err := ComputeMarkerHash(*m)
		if err != nil {
			return bad("cannot encode: %v", err)
		}
		if h != m.Hash {
			return bad("hash %s does not match its content (%s): the marker was edited after it was written", ShortHash(m.Hash), ShortHash(h))
		}
		if m.Prev != prevLine {
			return bad("prev is %s, want %s (the hash of line %d): a line was removed, inserted or moved here", ShortHash(m.Prev), ShortHash(prevLine), it.line-1)
		}
		rowsBefore, last := m.Rows()
		if rowsBefore != rowN {
			return bad("records %d rows before it, the file has %d: rows were removed or inserted, or the marker was forged", rowsBefore, rowN)
		}
		if last != prevRow {
			return bad("records last row %s, the row before it is %s", ShortHash(last), ShortHash(prevRow))
		}
		if m.Seal != nil {
			s := m.Seal
			switch {
			case s.End != EndClosed && s.End != EndUnfinished:
				return bad("end %q is not %q or %q", s.End, EndClosed, EndUnfinished)
			case open == nil:
				return bad("no open marker since the previous seal: the session's open marker was removed")
			case s.Open != open.Hash:
				return bad("names open marker %s, the session's open marker (line %d) is %s", ShortHash(s.Open), open.Line, ShortHash(open.Hash))
			case s.SessionRows != rowN-open.Open.Rows:
				return bad("records %d rows in its session, %d follow the open marker at line %d", s.SessionRows, rowN-open.Open.Rows, open.Line)
			}
			open = nil
		} else {
			open = m
		}
		prevLine = m.Hash
	}
	return nil
}

// SealState says whether a file's sessions are sealed.
type SealState string

const (
	// Legacy: no marker at all, the file was written before sealing
	// existed. Its rows verify; a cut tail cannot be told.
	Legacy SealState = "legacy"
	// Sealed: every session has its seal and the file ends with one.
	Sealed SealState = "sealed"
	// Unsealed: a session has no seal (the file ends in an open marker or
	// in rows after one or after a seal): the run that wrote it never
	// finished, or the file was cut from the end.
	Unsealed SealState = "unsealed"
)

// Session is one session of a file.
type Session struct {
	Open *Marker // nil for rows after a seal with no open marker
	Seal *Marker // nil when unsealed
	Line int     // the first line: the open marker's, or the first row's
	Rows int     // rows in the session
}

// Unfinished reports whether the session was sealed afterwards as unfinished.
func (s Session) Unfinished() bool { return s.Seal != nil && s.Seal.Seal.End == EndUnfinished }

// Sealing is a file's sessions and whether they are sealed.
type Sealing struct {
	State      SealState
	LegacyRows int // rows before the first marker, written before sealing
	Sessions   []Session
}

// Unsealed returns the sessions without a seal.
func (s Sealing) Unsealed() []Session {
	var out []Session
	for _, x := range s.Sessions {
		if x.Seal == nil {
			out = append(out, x)
		}
	}
	return out
}

// Sealing groups the file's lines into sessions. It assumes nothing about
// the chain: Verify checks that.
func (c *Contents) Sealing() Sealing {
	var s Sealing
	if len(c.Markers) == 0 {
		s.State = Legacy
		s.LegacyRows = len(c.Rows)
		return s
	}
	var cur *Session
	for _, it := range c.items() {
		switch {
		case it.row >= 0 && cur == nil && len(s.Sessions) == 0:
			s.LegacyRows++
		case it.row >= 0:
			if cur == nil {
				s.Sessions = append(s.Sessions, Session{Line: it.line})
				cur = &s.Sessions[len(s.Sessions)-1]
			}
			cur.Rows++
		case c.Markers[it.mark].Open != nil:
			s.Sessions = append(s.Sessions, Session{Open: &c.Markers[it.mark], Line: it.line})
			cur = &s.Sessions[len(s.Sessions)-1]
		default:
			if cur == nil {
				s.Sessions = append(s.Sessions, Session{Line: it.line})
				cur = &s.Sessions[len(s.Sessions)-1]
			}
			cur.Seal = &c.Markers[it.mark]
			cur = nil
		}
	}
	s.State = Sealed
	if len(s.Unsealed()) > 0 {
		s.State = Unsealed
	}
	return s
}

// lastHash is the Hash of the file's last line, "" for an empty file.
func (c *Contents) lastHash() string {
	its := c.items()
	if len(its) == 0 {
		return ""
	}
	it := its[len(its)-1]
	if it.row >= 0 {
		return c.Rows[it.row].Hash
	}
	return c.Markers[it.mark].Hash
}

// ErrUnsealed is what Open's *UnsealedError matches with errors.Is.
var ErrUnsealed = errors.New("the file's last session is not sealed")

// UnsealedError is Open's refusal to append to a file whose last session
// has no seal.
type UnsealedError struct {
	Path   string
	Line   int       // the line the unsealed session starts at
	Opened time.Time // its open marker's time; zero if it has none
	Rows   int       // rows in the unsealed session
}

func (e *UnsealedError) Error() string {
	when := ""
	if !e.Opened.IsZero() {
		when = " at " + e.Opened.Format(time.RFC3339)
	}
	rows := fmt.Sprintf("%d rows", e.Rows)
	if e.Rows == 1 {
		rows = "1 row"
	}
	return fmt.Sprintf("%s: the session opened at line %d%s has %s and no seal: the harness that wrote it died before closing the file, or the file was cut from the end; rows are not appended to an unsealed file", e.Path, e.Line, when, rows)
}

// Is makes errors.Is(err, ErrUnsealed) true.
func (e *UnsealedError) Is(target error) bool { return target == ErrUnsealed }

// SealUnfinished seals the last session of path, which its writer never
// sealed, as EndUnfinished with reason as its note, and returns the seal.
// It refuses a file another writer has open (a run in progress seals its
// own file), one that does not read to its end or verify, a legacy file,
// and a file whose last session is sealed.
func SealUnfinished(path, reason string) (*Marker, error) {
	if reason == "" {
		return nil, fmt.Errorf("%s: not sealed: give the reason the session never finished", path)
	}
	w, err := openLocked(path, true)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	c, err := ReadContents(path)
	if err != nil {
		return nil, fmt.Errorf("not sealed: %w", err)
	}
	if err := c.Verify(); err != nil {
		return nil, fmt.Errorf("%s: not sealed, the file does not verify: %w", path, err)
	}
	s := c.Sealing()
	switch s.State {
	case Legacy:
		return nil, fmt.Errorf("%s: not sealed: a legacy file (written before sealing, no open marker) has no session to seal", path)
	case Sealed:
		return nil, fmt.Errorf("%s: not sealed: its last session is sealed already", path)
	}
	last := s.Sessions[len(s.Sessions)-1]
	switch {
	case last.Seal != nil:
		u := s.Unsealed()[0]
		return nil, fmt.Errorf("%s: not sealed: the unsealed session at line %d is followed by sealed ones; only the last session is sealed afterwards", path, u.Line)
	case last.Open == nil:
		return nil, fmt.Errorf("%s: not sealed: the rows from line %d follow a seal with no open marker (not written by a sealing faultwin)", path, last.Line)
	}
	lastRow := ""
	if n := len(c.Rows); n > 0 {
		lastRow = c.Rows[n-1].Hash
	}
	seal := Marker{Seal: &SealMark{At: time.Now().UTC(), End: EndUnfinished, Rows: len(c.Rows), SessionRows: last.Rows,
		Last: lastRow, Open: last.Open.Hash, Note: reason}}
	m, line, err := newMarker(seal, c.lastHash())
	if err != nil {
		return nil, fmt.Errorf("%s: not sealed: %w", path, err)
	}
	if err := w.write(line); err != nil {
		return nil, err
	}
	return &m, nil
}
