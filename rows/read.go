package rows

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
)

// Read returns every row of a JSONL file, in file order. Errors name the
// file and line: an empty line, a row that does not decode (or carries a
// field this package does not know), a row of another schema, or a last line
// without its newline (a partial row). The rows before the first bad line
// are returned with the error. Read does not check the chain: VerifyChain
// (or VerifyFile) does.
func Read(path string) ([]Row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	var rows []Row
	var offset int64
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			if len(line) > 0 {
				return rows, fmt.Errorf("%s:%d: partial row without a newline at byte offset %d (an interrupted write)", path, n, offset)
			}
			return rows, nil
		}
		if err != nil {
			return rows, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		offset += int64(len(line))
		line = line[:len(line)-1]
		if len(line) == 0 {
			return rows, fmt.Errorf("%s:%d: empty line (rows are never separated by blank lines)", path, n)
		}
		var r Row
		if err := decodeRow(line, &r); err != nil {
			return rows, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		if r.Schema != Schema {
			return rows, fmt.Errorf("%s:%d: row schema %d; this faultwin reads schema %d", path, n, r.Schema, Schema)
		}
		rows = append(rows, r)
	}
}

// VerifyFile reads path and verifies its chain; a chain error names the
// file and the row's line.
func VerifyFile(path string) ([]Row, error) {
	rows, err := Read(path)
	if err != nil {
		return rows, err
	}
	if err := VerifyChain(rows); err != nil {
		var ce *ChainError
		if errors.As(err, &ce) {
			return rows, fmt.Errorf("%s:%d: %w", path, ce.Row, err)
		}
		return rows, err
	}
	return rows, nil
}
