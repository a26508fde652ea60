package rows

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"faultwin/internal/strictjson"
)

// canonical returns the bytes a row's Hash covers: the row's JSON with Hash
// empty.
func canonical(r Row) ([]byte, error) {
	r.Hash = ""
	return encodeRow(r)
}

// ComputeHash returns what r's Hash must be.
func ComputeHash(r Row) (string, error) {
	b, err := canonical(r)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// normalize returns r as it will read back from its JSON line. Hashing the
// read-back form, not the in-memory one, keeps the hash valid whatever a
// JSON round trip changes (a time zone's name, a raw message's spacing). A
// second round trip must change nothing, or the row could never verify.
func normalize(r Row) (Row, error) {
	once, b, err := roundTrip(r)
	if err != nil {
		return Row{}, err
	}
	_, b2, err := roundTrip(once)
	if err != nil {
		return Row{}, err
	}
	if !bytes.Equal(b, b2) {
		return Row{}, fmt.Errorf("row for %s does not survive a JSON round trip", r.Window.ID)
	}
	return once, nil
}

// roundTrip encodes r and decodes it again, returning the decoded row and
// the decoded row's encoding.
func roundTrip(r Row) (Row, []byte, error) {
	b, err := canonical(r)
	if err != nil {
		return Row{}, nil, err
	}
	var n Row
	if err := decodeRow(b, &n); err != nil {
		return Row{}, nil, err
	}
	b, err = canonical(n)
	return n, b, err
}

// decodeRow decodes one row strictly: a field this package does not know
// would be dropped on re-encoding and break the hash, so it is an error.
func decodeRow(b []byte, r *Row) error {
	return strictjson.Decode(b, r, "row")
}

// ChainError names the first line of a file that breaks the hash chain.
// Row is the row's 1-based number among the file's rows (markers not
// counted), 0 for a marker; Line is its 1-based line in the file (equal to
// Row in a file without markers, and in rows given to VerifyChain).
type ChainError struct {
	Row     int
	Line    int
	ID      string // the row's window instance id, or the marker's kind
	Problem string
}

func (e *ChainError) Error() string {
	if e.Row == 0 {
		return fmt.Sprintf("%s marker: %s", e.ID, e.Problem)
	}
	return fmt.Sprintf("row %d (%s): %s", e.Row, e.ID, e.Problem)
}

// VerifyChain checks that every row's Hash matches its content (as a plain
// or a compact row: ComputeHash or ComputeCompactHash) and that
// each row's Prev is the previous row's Hash (the first's is ""). An edited
// row fails its own hash; a removed, inserted or reordered row breaks the
// Prev link of the row after it. Removing rows from the end of a file leaves
// a valid shorter chain: a file's seal (see Marker) catches that, which
// Contents.Verify and Contents.Sealing check; so does comparing the last
// Hash with one recorded elsewhere (a summary, a commit).
func VerifyChain(rows []Row) error {
	prev := ""
	for i, r := range rows {
		if err := checkRow(r, i+1, i+1, prev, false); err != nil {
			return err
		}
		prev = r.Hash
	}
	return nil
}

// checkRow checks row n (at line) against its own hash and the previous
// row's.
func checkRow(r Row, n, line int, prev string, compactFirst bool) error {
	bad := func(format string, a ...any) error {
		return &ChainError{Row: n, Line: line, ID: r.Window.ID, Problem: fmt.Sprintf(format, a...)}
	}
	// A row read from a compact file is hashed over its line with
	// references (see compact.go), a plain row over its JSON; either
	// form's row may be in either file, so both are tried, the likelier
	// first (the plain hash encodes every log, the costlier of the two).
	h := ""
	if compactFirst {
		if ch, err := ComputeCompactHash(r); err == nil && ch == r.Hash {
			h = ch
		}
	}
	if h == "" {
		ph, err := ComputeHash(r)
		if err != nil {
			return bad("cannot encode: %v", err)
		}
		h = ph
	}
	if h != r.Hash && !compactFirst {
		if ch, err := ComputeCompactHash(r); err == nil && ch == r.Hash {
			h = ch
		}
	}
	if h != r.Hash {
		return bad("hash %s does not match its content (%s): the row was edited after it was written", ShortHash(r.Hash), ShortHash(h))
	}
	return checkPrev(r, n, line, prev)
}

// checkPrev checks row n's Prev against the hash of the row before it.
func checkPrev(r Row, n, line int, prev string) error {
	bad := func(format string, a ...any) error {
		return &ChainError{Row: n, Line: line, ID: r.Window.ID, Problem: fmt.Sprintf(format, a...)}
	}
	if r.Prev != prev {
		if n == 1 {
			return bad("prev is %s, want \"\" for a file's first row: rows before it were removed", ShortHash(r.Prev))
		}
		return bad("prev is %s, want %s (the hash of row %d): a row was removed, inserted or moved here", ShortHash(r.Prev), ShortHash(prev), n-1)
	}
	return nil
}

// ShortHash is the 12-digit prefix reviewers quote a hash by ("" shown as `""`).
func ShortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	if h == "" {
		return `""`
	}
	return h
}
