package rows

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// Writer appends rows to one JSONL file. Each row is one line written with a
// single write to a file opened O_APPEND, then fsync'd, so a crash leaves
// either the whole row or none of it; a file that does not end in a newline
// is refused rather than extended. The file is flock'ed while open, so two
// writers cannot fork the chain.
type Writer struct {
	mu     sync.Mutex
	path   string
	f      *os.File
	size   int64  // bytes in the file, all complete lines
	last   string // Hash of the file's last row, "" when empty
	broken error  // set by a failed append; the file is then left alone
}

// Open opens path for appending, creating it (and its directory's entry,
// fsync'd) if needed, and reads the last row to chain the next one to. It
// fails if the file ends in a partial line or its last row fails its own
// hash.
func Open(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	w := &Writer{path: path, f: f}
	if err := w.init(); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

func (w *Writer) init() error {
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
	if w.size == 0 {
		return syncDir(filepath.Dir(w.path))
	}
	line, start, err := lastLine(w.f, w.size)
	if err != nil {
		return fmt.Errorf("%s: %w", w.path, err)
	}
	var r Row
	if err := decodeRow(line, &r); err != nil {
		return fmt.Errorf("%s: last row, at byte offset %d: %w", w.path, start, err)
	}
	if h, err := ComputeHash(r); err != nil || h != r.Hash {
		return fmt.Errorf("%s: last row (%s, at byte offset %d) fails its own hash; check the file with VerifyChain before appending to it", w.path, r.Window.ID, start)
	}
	w.last = r.Hash
	return nil
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
// appends it as one line. On return row holds exactly what was written. A
// failed write is rolled back to the previous end of file and the Writer
// refuses further rows: the caller decides what to do with the file.
func (w *Writer) Append(row *Row) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return fmt.Errorf("%s: writer is closed", w.path)
	}
	if w.broken != nil {
		return fmt.Errorf("%s: an earlier append failed, reopen the file: %w", w.path, w.broken)
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
	if n.Hash, err = ComputeHash(n); err != nil {
		return fmt.Errorf("%s: row not written: %w", w.path, err)
	}
	line, err := json.Marshal(n)
	if err != nil {
		return fmt.Errorf("%s: row not written: %w", w.path, err)
	}
	line = append(line, '\n')
	if k, err := w.f.Write(line); err != nil || k != len(line) {
		if err == nil {
			err = io.ErrShortWrite
		}
		w.broken = err
		if terr := w.f.Truncate(w.size); terr != nil {
			return fmt.Errorf("%s: write failed (%w) and the partial row at byte offset %d could not be removed: %v", w.path, err, w.size, terr)
		}
		return fmt.Errorf("%s: write failed, row not written: %w", w.path, err)
	}
	if err := w.f.Sync(); err != nil {
		w.broken = err
		return fmt.Errorf("%s: fsync failed, the row may not be durable: %w", w.path, err)
	}
	w.size += int64(len(line))
	w.last = n.Hash
	*row = n
	return nil
}

// Last returns the Hash of the file's last row ("" for an empty file): record
// it elsewhere to detect rows later cut from the end.
func (w *Writer) Last() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

// Path returns the file the Writer appends to.
func (w *Writer) Path() string { return w.path }

// Close releases the file and its lock.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
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
