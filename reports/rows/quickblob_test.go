package rows

import (
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"faultwin/internal/strictjson"
)

// quickBlob reads a blob line as the strict decode does, or leaves it to
// the strict decode: it never gives other content.
func TestQuickBlobAgreesWithStrictDecode(t *testing.T) {
	text := "{\"input\":{\"a\":\"<b> & \\\"q\\\" \\u2028 é\"}}\n\ttab"
	data := text
	line, err := json.Marshal(blobLine{Blob: blobRec{SHA256: sha([]byte(text)), Size: len(text), Data: &data}})
	if err != nil {
		t.Fatal(err)
	}
	h := sha([]byte(text))
	for _, l := range []string{
		string(line),
		`{"blob":{"sha256":"` + h + `","size":3,"data":"a\ud800b"}}`,             // a lone surrogate: left to the strict decode
		`{"blob":{"sha256":"` + h + `","size":03,"data":"abc"}}`,                 // not as Marshal writes it
		`{"blob":{"sha256":"` + strings.ToUpper(h) + `","size":3,"data":"abc"}}`, // idem
		`{"blob":{"sha256":"` + h + `","size":3,"data":"a"b"}}`,                  // not one string
		`{"blob":{"sha256":"` + h + `","size":3,"data":"abc","x":1}}`,            // a field the strict decode refuses
	} {
		rec, content, ok := quickBlob([]byte(l))
		var b blobLine
		serr := strictjson.Decode([]byte(l), &b, "line's value")
		if !ok {
			continue
		}
		if serr != nil || b.Blob.Data == nil || *b.Blob.Data != string(content) || b.Blob.SHA256 != rec.SHA256 || b.Blob.Size != rec.Size {
			t.Errorf("%s: quick read %q %+v, strict decode %v %+v", l, content, rec, serr, b.Blob)
		}
	}
	if _, content, ok := quickBlob(line); !ok || string(content) != text {
		t.Errorf("a line as Marshal writes it: ok %v, content %q", ok, content)
	}
}

// unquote gives what jsontext.AppendUnquote gives, or leaves the string
// to it: never other content.
func TestUnquoteAgreesWithAppendUnquote(t *testing.T) {
	quoted := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	cases := []string{
		quoted(`{"input":{"a":"<b> & \"q\" é ✓ 😀"}}` + "\n\t\r\b\f\x00\x1f/\\"),
		quoted(strings.Repeat(`"x\"`, 1000)),
		`""`, `"plain"`, `"a\/b"`, `"\u00e9\u2028\u0000"`, `"\u00E9"`,
		`"\ud83d\ude00"`, `"a\ud800b"`, // surrogates: left to AppendUnquote
		`"bad \x escape"`, `"cut \u12"`, `"ends in \"`, `"raw "quote"`, "\"raw \x01 control\"",
		"\"bad \xff utf8\"", "\"cut \xe2\x9c utf8\"", "\"\xe2\\u0041\"", `"no end`, `no start"`,
	}
	for _, q := range cases {
		got, ok := unquote([]byte(q))
		want, err := jsontext.AppendUnquote(nil, []byte(q))
		if ok && (err != nil || string(got) != string(want)) {
			t.Errorf("%q: unquote %q, AppendUnquote %q (%v)", q, got, want, err)
		}
	}
	if got, ok := unquote([]byte(cases[0])); !ok || len(got) == 0 {
		t.Errorf("a string as Marshal writes it was left to AppendUnquote")
	}
}

func FuzzUnquote(f *testing.F) {
	f.Add(`"a\"b\\c\u00e9\n"`)
	f.Add("\"\xe2\\u0041\"")
	f.Fuzz(func(t *testing.T, q string) {
		got, ok := unquote([]byte(q))
		want, err := jsontext.AppendUnquote(nil, []byte(q))
		if ok && (err != nil || string(got) != string(want)) {
			t.Errorf("%q: unquote %q, AppendUnquote %q (%v)", q, got, want, err)
		}
	})
}

// anySpecial finds a control character, a quote or a backslash at any of
// the 8 places, and nothing else.
func TestAnySpecial(t *testing.T) {
	for c := 0; c < 256; c++ {
		want := c < 0x20 || c == '"' || c == '\\'
		for at := 0; at < 8; at++ {
			b := []byte("abcdefgh")
			b[at] = byte(c)
			if got := anySpecial(binary.LittleEndian.Uint64(b)); got != want {
				t.Fatalf("byte %#x at %d: %v, want %v", c, at, got, want)
			}
		}
	}
}
