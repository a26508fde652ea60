package rows

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Writer appends rows to one JSONL file. Each row is one line written with a
// single write to a file opened O_APPEND, then fsync'd, so a crash leaves
// either the whole row or none of it; a file that does not end in a newline
// is refused rather than extended. The file is flock'ed while open, so two
// writers cannot fork the chain.
//
// A Writer is one session (see Marker): its first row is written together
// with an open marker, and Close (or Seal) appends the seal. A session that
// wrote no row leaves the file as it found it. Open refuses a file whose
// last session has no seal.
type Writer struct {
	mu       sync.Mutex
	path     string
	f        *os.File
	size     int64   // bytes in the file, all complete lines
	last     string  // Hash of the file's last row, "" when it has none
	lastLine string  // Hash of the file's last line, row or marker
	rows     int     // rows in the file
	open     *Marker // this session's open marker, from its first row to its seal
	session  int     // rows written since open
	broken   error   // set by a failed write; the file is then left alone
	// gz: the file is compact (a name ending in ".gz", see compact.go):
	// each write is one gzip member and rows are stored by reference,
	// their blobs encoded by enc.
	gz  bool
	enc *encoder
}

// Open opens path for appending, creating it (and its directory's entry,
// fsync'd) if needed, and reads its last line to chain the next row to. It
// fails if the file ends in a partial line or its last line fails its own
// hash, and with an *UnsealedError (errors.Is ErrUnsealed) if the file's
// last session has no seal: the harness that wrote it died, or the file was
// cut. A legacy file (rows only, written before sealing) is appended to:
// the new session's open marker follows its rows.
//
// A path ending in ".gz" is written compact (see compact.go): opening one
// that exists reads and verifies all of it, blobs included. A packed file
// (pack.go) is refused.
func Open(path string) (*Writer, error) {
	return openLocked(path, false)
}

// openLocked opens and locks path; forSeal opens an existing file without
// reading its state (SealUnfinished reads and verifies all of it).
func openLocked(path string, forSeal bool) (*Writer, error) {
	flags := os.O_RDWR | os.O_APPEND
	if !forSeal {
		flags |= os.O_CREATE
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return nil, err
	}
	w := &Writer{path: path, f: f, gz: IsCompactPath(path)}
	if w.gz {
		w.enc = newEncoder()
	}
	err = w.lock()
	if err == nil && !forSeal {
		err = w.init()
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

func (w *Writer) lock() error {
	if err := syscall.Flock(int(w.f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("%s: another writer has it open", w.path)
		}
		return fmt.Errorf("%s: lock: %w", w.path, err)
	}
	st, err := w.f.Stat()
	if err != nil {
		return err
	}
	w.size = st.Size()
	return nil
}

func (w *Writer) init() error {
	if w.size == 0 {
		return syncDir(filepath.Dir(w.path))
	}
	magic := make([]byte, len(zstdMagic))
	if n, _ := w.f.ReadAt(magic, 0); n == len(magic) && bytes.Equal(magic, zstdMagic) {
		return fmt.Errorf("%s: a packed file (see `faultwin results prune`) is finished and read-only: write new rows to another file", w.path)
	}
	if w.gz {
		return w.initCompact()
	}
	line, start, err := lastLine(w.f, w.size)
	if err != nil {
		return fmt.Errorf("%s: %w", w.path, err)
	}
	switch kindOf(line) {
	case kindSeal:
		var m Marker
		if err := decodeMarker(line, &m); err != nil {
			return fmt.Errorf("%s: last line (a seal), at byte offset %d: %w", w.path, start, err)
		}
		if h, err := ComputeMarkerHash(m); err != nil || h != m.Hash {
			return fmt.Errorf("%s: last line (a seal, at byte offset %d) fails its own hash; check the file with `faultwin replay` before appending to it", w.path, start)
		}
		w.last, w.lastLine, w.rows = m.Seal.Last, m.Hash, m.Seal.Rows
		return nil
	case kindOpen:
		var m Marker
		if err := decodeMarker(line, &m); err != nil {
			return fmt.Errorf("%s: last line (an open marker), at byte offset %d: %w", w.path, start, err)
		}
	default:
		var r Row
		if err := decodeRow(line, &r); err != nil {
			return fmt.Errorf("%s: last row, at byte offset %d: %w", w.path, start, err)
		}
		if h, err := ComputeHash(r); err != nil || h != r.Hash {
			return fmt.Errorf("%s: last row (%s, at byte offset %d) fails its own hash; check the file with VerifyChain before appending to it", w.path, r.Window.ID, start)
		}
		w.last, w.lastLine = r.Hash, r.Hash
	}
	st, err := scan(io.NewSectionReader(w.f, 0, w.size))
	if err != nil {
		return fmt.Errorf("%s: %w", w.path, err)
	}
	if st.marker == 0 {
		w.rows = st.rows // a legacy file
		return nil
	}
	return &UnsealedError{Path: w.path, Line: st.session, Opened: st.opened, Rows: st.after}
}

// fileState is what scan finds in a file not ending in a seal.
type fileState struct {
	rows    int       // rows in the file
	marker  int       // line of the last marker, 0 if none
	session int       // first line of the unsealed session
	opened  time.Time // its open marker's time
	after   int       // rows after the last marker
}

// scan reads every line, decoding markers only.
func scan(r io.Reader) (fileState, error) {
	var st fileState
	br := bufio.NewReaderSize(r, 1<<20)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return st, nil
		}
		if err != nil {
			return st, err
		}
		switch kindOf(line) {
		case kindRow:
			if st.marker > 0 && st.after == 0 && st.session == 0 {
				st.session = n // rows after a seal with no open marker
			}
			st.rows++
			st.after++
		default:
			var m Marker
			if err := decodeMarker(line, &m); err != nil {
				return st, fmt.Errorf("line %d: %w", n, err)
			}
			st.marker, st.after, st.session, st.opened = n, 0, 0, time.Time{}
			if m.Open != nil {
				st.session, st.opened = n, m.Open.At
			}
		}
	}
}

// lastLine returns the file's last line without its newline, and the byte
// offset it starts at. A file not ending in a newline holds a partial row.
func lastLine(f io.ReaderAt, size int64) ([]byte, int64, error) {
	var b [1]byte
	if _, err := f.ReadAt(b[:], size-1); err != nil {
		return nil, 0, err
	}
	if b[0] != '\n' {
		start, err := lineStart(f, size)
		if err != nil {
			return nil, 0, err
		}
		return nil, 0, fmt.Errorf("ends without a newline: a partial row starts at byte offset %d (an interrupted write; keep a copy, then truncate the file to %d bytes)", start, start)
	}
	start, err := lineStart(f, size-1)
	if err != nil {
		return nil, 0, err
	}
	line := make([]byte, size-1-start)
	if _, err := f.ReadAt(line, start); err != nil {
		return nil, 0, err
	}
	return line, start, nil
}

// lineStart returns the offset just after the last newline before end, or 0.
func lineStart(f io.ReaderAt, end int64) (int64, error) {
	buf := make([]byte, 64<<10)
	for end > 0 {
		n := min(int64(len(buf)), end)
		if _, err := f.ReadAt(buf[:n], end-n); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return end - n + int64(i) + 1, nil
		}
		end -= n
	}
	return 0, nil
}

// Append sets row's Schema (if unset), Prev and Hash, caps its logs, and
// appends it as one line, preceded by the session's open marker if it is
// the session's first row. On return row holds exactly what was written. A
// failed write is rolled back to the previous end of file and the Writer
// refuses further rows and leaves the session unsealed: the caller decides
// what to do with the file.
func (w *Writer) Append(row *Row) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return err
	}
	var buf []byte
	var open *Marker
	if w.open == nil {
		m, line, err := newMarker(Marker{Open: &OpenMark{At: time.Now().UTC(), Rows: w.rows, Last: w.last}}, w.lastLine)
		if err != nil {
			return fmt.Errorf("%s: row not written: open marker: %w", w.path, err)
		}
		open, buf = &m, line
	}
	r := *row
	if r.Schema == 0 {
		r.Schema = Schema
	}
	r.Prev = w.last
	r.capLogs()
	if err := r.check(); err != nil {
		return fmt.Errorf("%s: row not written: %w", w.path, err)
	}
	n, err := normalize(r)
	if err != nil {
		return fmt.Errorf("%s: row not written: %w", w.path, err)
	}
	var parts []part
	if w.gz {
		var lines []byte
		if lines, parts, err = w.enc.compactRowLines(&n); err != nil {
			return fmt.Errorf("%s: row not written: %w", w.path, err)
		}
		buf = append(buf, lines...)
	} else {
		if n.Hash, err = ComputeHash(n); err != nil {
			return fmt.Errorf("%s: row not written: %w", w.path, err)
		}
		line, err := json.Marshal(n)
		if err != nil {
			return fmt.Errorf("%s: row not written: %w", w.path, err)
		}
		buf = append(append(buf, line...), '\n')
	}
	if err := w.write(buf); err != nil {
		return err
	}
	if w.gz {
		w.enc.seen(n.Window.ID, parts)
	}
	if open != nil {
		w.open = open
	}
	w.last, w.lastLine = n.Hash, n.Hash
	w.rows++
	w.session++
	*row = n
	return nil
}

// usable refuses a closed or broken writer.
func (w *Writer) usable() error {
	if w.f == nil {
		return fmt.Errorf("%s: writer is closed", w.path)
	}
	if w.broken != nil {
		return fmt.Errorf("%s: an earlier append failed, reopen the file: %w", w.path, w.broken)
	}
	return nil
}

// write appends whole lines with one write and fsyncs them; a compact
// file's lines are written as one gzip member. A failed write is rolled
// back to the previous end of file; any failure breaks the Writer.
func (w *Writer) write(buf []byte) error {
	if w.gz {
		var err error
		if buf, err = gzipMember(buf); err != nil {
			return fmt.Errorf("%s: line not written: gzip: %w", w.path, err)
		}
	}
	if k, err := w.f.Write(buf); err != nil || k != len(buf) {
		if err == nil {
			err = io.ErrShortWrite
		}
		w.broken = err
		if terr := w.f.Truncate(w.size); terr != nil {
			return fmt.Errorf("%s: write failed (%w) and the partial line at byte offset %d could not be removed: %v", w.path, err, w.size, terr)
		}
		return fmt.Errorf("%s: write failed, row not written: %w", w.path, err)
	}
	if err := w.f.Sync(); err != nil {
		w.broken = err
		return fmt.Errorf("%s: fsync failed, the line may not be durable: %w", w.path, err)
	}
	w.size += int64(len(buf))
	return nil
}

// Seal ends the session: it appends a seal (EndClosed) recording the file's
// row count, its last row's hash and the session's open marker, with note
// (why the run ended early, say; "" for a run that finished). A session that
// wrote no row has nothing to seal. A later Append starts a new session.
// After a failed write the session stays unsealed, and Seal says so.
func (w *Writer) Seal(note string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seal(note)
}

func (w *Writer) seal(note string) error {
	if err := w.usable(); err != nil {
		return fmt.Errorf("not sealed: %w", err)
	}
	if w.open == nil {
		return nil
	}
	m, line, err := newMarker(Marker{Seal: &SealMark{At: time.Now().UTC(), End: EndClosed, Rows: w.rows, SessionRows: w.session,
		Last: w.last, Open: w.open.Hash, Note: note}}, w.lastLine)
	if err != nil {
		return fmt.Errorf("%s: not sealed: %w", w.path, err)
	}
	if err := w.write(line); err != nil {
		return err
	}
	w.lastLine, w.open, w.session = m.Hash, nil, 0
	return nil
}

// Last returns the Hash of the file's last row ("" if it has none): record
// it elsewhere to detect whole sessions later cut from the end.
func (w *Writer) Last() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

// Path returns the file the Writer appends to.
func (w *Writer) Path() string { return w.path }

// Close seals the session if it wrote rows and is not sealed yet (unless a
// write failed: the file is then left as it is), and releases the file and
// its lock. Only a writer that never closes (a killed harness) leaves its
// session unsealed.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	var serr error
	if w.open != nil && w.broken == nil {
		serr = w.seal("")
	}
	err := w.f.Close()
	w.f = nil
	return errors.Join(serr, err)
}

// syncDir makes a new file's directory entry durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return nil
}

// initCompact reads a compact file to its end, verifies it and takes its
// state and its blobs (as delta bases) from it.
func (w *Writer) initCompact() error {
	c := &Contents{Path: w.path}
	if err := readContents(c, io.NewSectionReader(w.f, 0, w.size)); err != nil {
		return err
	}
	if err := c.Verify(); err != nil {
		return fmt.Errorf("%s: does not verify, check it with `faultwin replay` before appending to it: %w", w.path, err)
	}
	s := c.Sealing()
	if s.State == Unsealed {
		u := s.Unsealed()[0]
		e := &UnsealedError{Path: w.path, Line: u.Line, Rows: u.Rows}
		if u.Open != nil {
			e.Opened = u.Open.Open.At
		}
		return e
	}
	for _, r := range c.Rows {
		_, parts, err := compactOf(r)
		if err != nil {
			return fmt.Errorf("%s: %w", w.path, err)
		}
		w.enc.seen(r.Window.ID, parts)
	}
	w.rows = len(c.Rows)
	if w.rows > 0 {
		w.last = c.Rows[w.rows-1].Hash
	}
	w.lastLine = c.lastHash()
	return nil
}
