package rows

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
)

// Read returns every row of a JSONL file, in file order, without the
// file's open and seal markers (ReadContents returns those too). Errors
// name the file and line: an empty line, a row or marker that does not
// decode (or carries a field this package does not know), a line of another
// schema, or a last line without its newline (a partial row). The rows
// before the first bad line are returned with the error. Read does not
// check the chain: VerifyFile or Contents.Verify does.
func Read(path string) ([]Row, error) {
	c, err := ReadContents(path)
	return c.Rows, err
}

// ReadContents reads a JSONL file as Read does and returns its rows and its
// markers with their lines. On an error, Contents holds the lines before
// the bad one.
//
// A packed file (one zstd stream, see pack.go) is read as one stream of
// lines. A gzip-compressed file (told by its first bytes, whatever its name) is
// read member by member, its lines numbered as `zcat` shows them; a member
// cut short (an interrupted write) is an error naming its byte offset.
// Compact rows (see compact.go) are expanded to full rows, each blob
// checked against its sha256, in plain and compressed files alike.
func ReadContents(path string) (*Contents, error) {
	c := &Contents{Path: path}
	f, err := os.Open(path)
	if err != nil {
		return c, err
	}
	defer f.Close()
	return c, readContents(c, f)
}

// readContents reads the lines of f into c.
func readContents(c *Contents, f io.Reader) error {
	path := c.Path
	br := getBuffered(f)
	defer putBuffered(br)
	magic, _ := br.Peek(4)
	if len(magic) >= 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		return readGzip(c, br)
	}
	if bytes.Equal(magic, zstdMagic) {
		return readZstd(c, br)
	}
	lr := &lineReader{c: c, blobs: newBlobStore()}
	var offset int64
	var long []byte
	for n := 1; ; n++ {
		line, err := nextLine(br, &long)
		if errors.Is(err, io.EOF) {
			if len(line) > 0 {
				return fmt.Errorf("%s:%d: partial row without a newline at byte offset %d (an interrupted write)", path, n, offset)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
		offset += int64(len(line))
		if err := lr.line(line[:len(line)-1], n); err != nil {
			return err
		}
	}
}

// buffered are the 1 MiB line readers not in use: a reader of many files
// allocates (and clears) one per file at once, not two per file.
var buffered sync.Pool

func getBuffered(r io.Reader) *bufio.Reader {
	if br, ok := buffered.Get().(*bufio.Reader); ok {
		br.Reset(r)
		return br
	}
	return bufio.NewReaderSize(r, 1<<20)
}

func putBuffered(br *bufio.Reader) {
	br.Reset(nil)
	buffered.Put(br)
}

// nextLine is br.ReadBytes('\n') without a copy of each line: the line
// is br's buffer, or *long for a line longer than it, and holds only until
// the next call. lineReader.line keeps nothing of the bytes it is given.
func nextLine(br *bufio.Reader, long *[]byte) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	*long = append((*long)[:0], line...)
	for errors.Is(err, bufio.ErrBufferFull) {
		line, err = br.ReadSlice('\n')
		*long = append(*long, line...)
	}
	return *long, err
}

// readGzip reads a gzip file member by member: each member holds whole
// lines (a compact Writer writes one member per row or seal). It inflates
// with klauspost/compress, which reads the same format as compress/gzip
// about twice as fast, through one reader reset for each member.
func readGzip(c *Contents, br *bufio.Reader) error {
	path := c.Path
	lr := &lineReader{c: c, blobs: newBlobStore()}
	cr := &countReader{r: br}
	zbr := bufio.NewReaderSize(cr, 64<<10)
	at := func() int64 { return cr.n - int64(zbr.Buffered()) }
	n := 1
	var z gzip.Reader
	var buf bytes.Buffer
	for member := 0; ; member++ {
		start := at()
		if _, err := zbr.Peek(1); errors.Is(err, io.EOF) {
			return nil
		}
		err := z.Reset(zbr)
		if err == nil {
			z.Multistream(false)
			buf.Reset()
			_, err = buf.ReadFrom(&z)
			b := buf.Bytes()
			if err == nil && len(b) > 0 && b[len(b)-1] != '\n' {
				err = fmt.Errorf("its lines do not end in a newline")
			}
			if err == nil {
				for len(b) > 0 {
					i := bytes.IndexByte(b, '\n')
					if lerr := lr.line(b[:i], n); lerr != nil {
						return lerr
					}
					b = b[i+1:]
					n++
				}
				continue
			}
		}
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return fmt.Errorf("%s:%d: the gzip member at byte offset %d is cut short (an interrupted write, or the file was cut): keep a copy, then truncate the file to %d bytes", path, n, start, start)
		}
		return fmt.Errorf("%s:%d: gzip member %d at byte offset %d: %w (the compressed file was edited or damaged)", path, n, member+1, start, err)
	}
}

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n += int64(k)
	return k, err
}

// lineReader files each line of a file into its Contents.
type lineReader struct {
	c     *Contents
	blobs *blobStore
}

func (lr *lineReader) line(line []byte, n int) error {
	c, path := lr.c, lr.c.Path
	if len(line) == 0 {
		return fmt.Errorf("%s:%d: empty line (rows are never separated by blank lines)", path, n)
	}
	var r Row
	lineHash := ""
	switch compactKind(line) {
	case kindBlob:
		if err := lr.blobs.add(line); err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
		return nil
	case kindCompactRow:
		var err error
		if r, lineHash, err = lr.blobs.expand(line); err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
	default:
		if kindOf(line) != kindRow {
			var m Marker
			if err := decodeMarker(line, &m); err != nil {
				return fmt.Errorf("%s:%d: %w", path, n, err)
			}
			if m.Schema != Schema {
				return fmt.Errorf("%s:%d: marker schema %d; this faultwin reads schema %d", path, n, m.Schema, Schema)
			}
			m.Line = n
			c.Markers = append(c.Markers, m)
			return nil
		}
		if err := decodeRow(line, &r); err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
	}
	if r.Schema != Schema {
		return fmt.Errorf("%s:%d: row schema %d; this faultwin reads schema %d", path, n, r.Schema, Schema)
	}
	c.Rows = append(c.Rows, r)
	c.RowLines = append(c.RowLines, n)
	c.read = append(c.read, asRead{lineHash, r.readKey()})
	return nil
}

// VerifyFile reads path and verifies its chain, markers included (see
// Contents.Verify), and returns its rows; a chain error names the file and
// the line. It does not require the file to be sealed: Contents.Sealing
// says whether it is.
func VerifyFile(path string) ([]Row, error) {
	c, err := VerifyContents(path)
	return c.Rows, err
}

// VerifyContents is VerifyFile returning the file's markers too.
func VerifyContents(path string) (*Contents, error) {
	c, err := ReadContents(path)
	if err != nil {
		return c, err
	}
	if err := c.Verify(); err != nil {
		var ce *ChainError
		if errors.As(err, &ce) {
			return c, fmt.Errorf("%s:%d: %w", path, ce.Line, err)
		}
		return c, err
	}
	return c, nil
}

// asRead is how a row was read: the hash of its compact line as read
// ("" for a plain row), and the fields by which Verify tells the row from
// one edited in memory since.
type asRead struct {
	lineHash string
	key      readKey
}

// readKey is what a row's verdict and evidence are: an edit to any of
// them, or a row put in its place, changes it.
type readKey struct {
	hash, prev, window, windowHash, status, reason string
	schema                                         int
	input, criteria                                *byte
	n, k                                           int
}

func (r Row) readKey() readKey {
	k := readKey{hash: r.Hash, prev: r.Prev, window: r.Window.ID, windowHash: r.Window.Hash, status: r.Status, reason: r.Reason,
		schema: r.Schema, n: len(r.Input), k: len(r.Criteria)}
	if len(r.Input) > 0 {
		k.input = &r.Input[0]
	}
	if len(r.Criteria) > 0 {
		k.criteria = &r.Criteria[0]
	}
	return k
}

// checkRow checks Rows[i], row n at line, against its hash and prev. A
// compact row as it was read is checked by its line's hash, which commits
// to each blob by the sha256 the reader checked its content against: the
// row is not encoded again. Any other row, and one changed since it was
// read, is encoded as checkRow does for rows given without their file.
func (c *Contents) checkRow(i, n, line int, prev string) error {
	r := c.Rows[i]
	if i < len(c.read) && c.read[i].lineHash != "" && c.read[i].lineHash == r.Hash && c.read[i].key == r.readKey() {
		return checkPrev(r, n, line, prev)
	}
	return checkRow(r, n, line, prev, strings.HasSuffix(c.Path, ".gz"))
}
