package rows

import (
	"bytes"

	"faultwin/internal/strictjson"
)

// decodeMain decodes a compact row's main blob m into r. The input and
// the recorded criteria are nine tenths of a row and their readers decode
// them strictly anyway (the replay, into the criteria's input and
// results), so they are not scanned here as well: their bytes are found
// by their brackets and kept as they are in m, and the rest of the row is
// decoded strictly with both values read as null. That path is taken only
// when it must give what decodeRow(m) gives: the input is an object, the
// criteria an array, and no object outside them holds a name twice (a
// second "input" would be the one decodeRow keeps). On anything else m is
// decoded whole, with decodeRow's errors.
func decodeMain(m []byte, r *Row) error {
	at := memberValues(m, `"input"`, `"criteria"`)
	in, crit := at[0], at[1]
	if in[0] > 0 && m[in[0]] == '{' && crit[0] > in[1] && m[crit[0]] == '[' {
		rest := make([]byte, 0, len(m)-(in[1]-in[0])-(crit[1]-crit[0])+2*len("null"))
		rest = append(rest, m[:in[0]]...)
		rest = append(rest, "null"...)
		rest = append(rest, m[in[1]:crit[0]]...)
		rest = append(rest, "null"...)
		rest = append(rest, m[crit[1]:]...)
		if err := strictjson.DecodeUnique(rest, r); err == nil && isNull(r.Input) && isNull(r.Criteria) {
			// The input is most of m and goes when its readers are done
			// (reports/decoded); the criteria are kept as long as the row, so
			// they are copied: the row must not hold all of m for them.
			r.Input = m[in[0]:in[1]:in[1]]
			r.Criteria = bytes.Clone(m[crit[0]:crit[1]])
			return nil
		}
		*r = Row{}
	}
	return decodeRow(m, r)
}

func isNull(raw []byte) bool { return raw == nil || string(raw) == "null" }

// memberValues returns where the object or array value of each of b's
// top-level members keys (given quoted) begins and ends, b being an
// object's JSON without white space between tokens, as Marshal writes it;
// {0, 0} for a key b has no such member for, or for every key when b is
// not what it should be.
func memberValues(b []byte, keys ...string) [][2]int {
	at := make([][2]int, len(keys))
	if len(b) == 0 || b[0] != '{' {
		return at
	}
	found := 0
	for i := 1; i < len(b) && found < len(keys); i++ {
		switch b[i] {
		case '"':
			j := stringEnd(b, i)
			if j < 0 {
				return make([][2]int, len(keys))
			}
			if j+2 < len(b) && b[j+1] == ':' && (b[j+2] == '{' || b[j+2] == '[') {
				e := valueEnd(b, j+2)
				if e < 0 {
					return make([][2]int, len(keys))
				}
				for k, key := range keys {
					if at[k][0] == 0 && string(b[i:j+1]) == key {
						at[k] = [2]int{j + 2, e}
						found++
					}
				}
				// the member's value is passed over whole: i stays at
				// the top level
				j = e - 1
			}
			i = j
		case '{', '[', '}', ']':
			// only the object's own brackets are met at the top level
			if i != len(b)-1 {
				return make([][2]int, len(keys))
			}
		}
	}
	return at
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
