package rows

import (
	"bytes"
	"encoding/json"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// encodeRow is json.Marshal(r), the encoding a row's hash covers, without
// the cost of encoding/json re-compacting Input and Criteria: Marshal
// passes a json.RawMessage through its compactor (white space dropped,
// <, >, &, U+2028 and U+2029 escaped), and Input is most of a row. When
// both are valid JSON that the compactor would leave as they are, as a
// row read back from its line always holds, the rest of the row is
// encoded by encoding/json with both left out and they are set into its
// output verbatim; otherwise encoding/json encodes all of it. The bytes
// are Marshal's either way, which TestEncodeRowIsMarshal holds.
func encodeRow(r Row) ([]byte, error) {
	in, crit := r.Input, r.Criteria
	if !settled(in) || !settled(crit) {
		return json.Marshal(r)
	}
	r.Input, r.Criteria = nil, nil
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	at := topLevelValues(b, `"input"`, `"criteria"`)
	for _, i := range at {
		if i < 0 || !bytes.HasPrefix(b[i:], []byte("null")) {
			return json.Marshal(r) // cannot happen: Row has both fields
		}
	}
	out := make([]byte, 0, len(b)+len(in)+len(crit))
	out = append(out, b[:at[0]]...)
	out = appendRaw(out, in)
	out = append(out, b[at[0]+len("null"):at[1]]...)
	out = appendRaw(out, crit)
	return append(out, b[at[1]+len("null"):]...), nil
}

// appendRaw appends raw as Marshal writes it: a nil RawMessage as null.
func appendRaw(out []byte, raw json.RawMessage) []byte {
	if raw == nil {
		return append(out, "null"...)
	}
	return append(out, raw...)
}

// lenient accepts what encoding/json accepts as valid JSON: it takes
// duplicate names and invalid UTF-8 in strings.
var lenient = jsonv2.JoinOptions(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))

// settled reports whether Marshal would write raw exactly as it is: nil
// (written as null), or valid JSON with no white space between its tokens
// and none of the bytes its compactor escapes. Inside a string of valid
// JSON a space is the only white space byte allowed, so white space
// outside strings is found by following the quotes.
func settled(raw json.RawMessage) bool {
	if raw == nil {
		return true
	}
	if len(raw) == 0 {
		return false
	}
	inString := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if notable[c] == 0 {
			continue
		}
		switch {
		case c == '<' || c == '>' || c == '&':
			return false
		case c == 0xE2 && i+2 < len(raw) && raw[i+1] == 0x80 && raw[i+2]&^1 == 0xA8: // U+2028, U+2029
			return false
		case c == '\\' && inString:
			i++ // the escaped byte cannot end the string
		case c == '"':
			inString = !inString
		case !inString && c != 0xE2 && c != '\\':
			return false // white space between tokens
		}
	}
	return jsontext.Value(raw).IsValid(lenient)
}

// notable marks the bytes settled looks at; the rest it passes over.
var notable = func() (t [256]byte) {
	for _, c := range []byte("<>&\"\\ \t\n\r\xe2") {
		t[c] = 1
	}
	return t
}()

// topLevelValues returns where, in b (the compact JSON of an object, as
// Marshal writes it), the value of each key begins, -1 for a key not
// among the object's own members; keys are given quoted.
func topLevelValues(b []byte, keys ...string) []int {
	at := make([]int, len(keys))
	for i := range at {
		at[i] = -1
	}
	depth, inString, start := 0, false, 0
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
				// A string at depth 1 followed by a colon is a member's name.
				if depth == 1 && i+1 < len(b) && b[i+1] == ':' {
					for k, key := range keys {
						if at[k] < 0 && string(b[start:i+1]) == key {
							at[k] = i + 2
						}
					}
				}
			}
			continue
		}
		switch c {
		case '"':
			inString, start = true, i
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		}
	}
	return at
}
