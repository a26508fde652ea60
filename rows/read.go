package rows

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
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
func ReadContents(path string) (*Contents, error) {
	c := &Contents{Path: path}
	f, err := os.Open(path)
	if err != nil {
		return c, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	var offset int64
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			if len(line) > 0 {
				return c, fmt.Errorf("%s:%d: partial row without a newline at byte offset %d (an interrupted write)", path, n, offset)
			}
			return c, nil
		}
		if err != nil {
			return c, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		offset += int64(len(line))
		line = line[:len(line)-1]
		if len(line) == 0 {
			return c, fmt.Errorf("%s:%d: empty line (rows are never separated by blank lines)", path, n)
		}
		if kindOf(line) != kindRow {
			var m Marker
			if err := decodeMarker(line, &m); err != nil {
				return c, fmt.Errorf("%s:%d: %w", path, n, err)
			}
			if m.Schema != Schema {
				return c, fmt.Errorf("%s:%d: marker schema %d; this faultwin reads schema %d", path, n, m.Schema, Schema)
			}
			m.Line = n
			c.Markers = append(c.Markers, m)
			continue
		}
		var r Row
		if err := decodeRow(line, &r); err != nil {
			return c, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		if r.Schema != Schema {
			return c, fmt.Errorf("%s:%d: row schema %d; this faultwin reads schema %d", path, n, r.Schema, Schema)
		}
		c.Rows = append(c.Rows, r)
		c.RowLines = append(c.RowLines, n)
	}
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
