package rows

import (
	"bytes"

	"faultwin/internal/strictjson"
)

// decodeMain decodes a compact row's main blob m into r. The input is
// three quarters of a row and its readers decode it strictly anyway (the
// replay into the criteria's input), so it is not scanned here as well: its
// bytes are found by their brackets and kept as they are in m, and the
// rest of the row is decoded strictly with the input's value read as null.
// That path is taken only when it must give what decodeRow(m) gives: the
// input is an object, and no object outside it holds a name twice (a
// second "input" would be the one decodeRow keeps). On anything else m is
// decoded whole, with decodeRow's errors.
func decodeMain(m []byte, r *Row) error {
	if start, end := memberValue(m, `"input"`); start > 0 {
		rest := make([]byte, 0, len(m)-(end-start)+len("null"))
		rest = append(rest, m[:start]...)
		rest = append(rest, "null"...)
		rest = append(rest, m[end:]...)
		if err := strictjson.DecodeUnique(rest, r); err == nil && (r.Input == nil || string(r.Input) == "null") {
			r.Input = m[start:end:end]
			return nil
		}
		*r = Row{}
	}
	return decodeRow(m, r)
}

// memberValue returns where the object value of b's top-level member key
// (given quoted) begins and ends, b being an object's JSON without white
// space between tokens, as Marshal writes it; 0, 0 when b has no such
// member, its value is not an object, or b is not what it should be.
func memberValue(b []byte, key string) (start, end int) {
	if len(b) == 0 || b[0] != '{' {
		return 0, 0
	}
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			j := stringEnd(b, i)
			if j < 0 {
				return 0, 0
			}
			if depth == 1 && j+2 < len(b) && b[j+1] == ':' && string(b[i:j+1]) == key {
				if b[j+2] != '{' {
					return 0, 0
				}
				if e := valueEnd(b, j+2); e > 0 {
					return j + 2, e
				}
				return 0, 0
			}
			i = j
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		}
	}
	return 0, 0
}

// valueEnd returns the index just after the object or array that begins
// at b[i], found by its brackets outside strings; -1 if b ends first.
func valueEnd(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			j := stringEnd(b, i)
			if j < 0 {
				return -1
			}
			i = j
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}

// stringEnd returns the index of the quote that closes the string whose
// opening quote is b[i]; -1 if b ends first. A quote preceded by an odd
// number of backslashes is escaped.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		q := j + k
		n := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q
		}
		j = q + 1
	}
	return -1
}
