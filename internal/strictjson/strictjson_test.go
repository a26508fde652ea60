package strictjson

import (
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	type T struct {
		A int `json:"a"`
	}
	for in, want := range map[string]string{
		`{"a":1}`:         "",
		" {\"a\":1}\n\t ": "",
		`{"a":1,"b":2}`:   `unknown field "b"`,
		`{"a":1} {}`:      "data after the row",
		`{"a":1}]`:        "data after the row",
		`{"a":1} x`:       "data after the row",
		``:                "empty",
		" \n":             "empty",
		`{"a":`:           "unexpected EOF",
		`{"a":"x"}`:       "cannot unmarshal string",
	} {
		var v T
		err := Decode([]byte(in), &v, "row")
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v", in, err)
		case want == "" && v.A != 1:
			t.Errorf("%q: decoded %+v", in, v)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%q: error %v, want one containing %q", in, err, want)
		}
	}
}
