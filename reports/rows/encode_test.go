package rows

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestEncodeRowIsMarshal holds encodeRow to json.Marshal: the same bytes,
// or the same error, for raw fields Marshal leaves as they are and for
// every kind it rewrites or refuses.
func TestEncodeRowIsMarshal(t *testing.T) {
	raws := []string{
		"", // nil
		`{}`, `[]`, `null`, `1`, `"x"`,
		`{"trace":[{"point":"restore.during_criu"}],"note":"a \" b \\ c"}`,
		`{"input":null,"criteria":null,"a":"\"input\":null"}`,
		"{\n  \"a\": 1\n}", `{"a": 1}`, `[1, 2]`, ` {"a":1}`, `{"a":1} `,
		`{"note":"<&>"}`, `{"note":"\u003c"}`, "{\"s\":\"\u2028\u2029\"}", `{"s":"\u2028"}`,
		"{\"s\":\"\xff\"}", `{"a":1,"a":2}`, `{"s":"a b"}`, `{"s":"\\"}`,
		`{"a":`, `{"a":1}}`, `nope`, `{"a":01}`,
	}
	base := sampleRow(t, 0, "PASS")
	for _, in := range raws {
		for _, crit := range []string{`[{"id":"P1","pass":true}]`, in} {
			r := *base
			r.Input, r.Criteria = raw(in), raw(crit)
			want, werr := json.Marshal(r)
			got, gerr := encodeRow(r)
			switch {
			case (werr == nil) != (gerr == nil):
				t.Errorf("input %q criteria %q: Marshal error %v, encodeRow %v", in, crit, werr, gerr)
			case werr != nil && werr.Error() != gerr.Error():
				t.Errorf("input %q: Marshal error %v, encodeRow %v", in, werr, gerr)
			case !bytes.Equal(want, got):
				t.Errorf("input %q criteria %q:\nMarshal   %s\nencodeRow %s", in, crit, want, got)
			}
		}
	}
	// Empty but not nil: Marshal refuses it.
	r := *base
	r.Input = json.RawMessage{}
	if _, err := encodeRow(r); err == nil {
		t.Error("an empty, non-nil input encoded")
	}
}

func raw(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}
