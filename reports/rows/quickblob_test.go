package rows

import (
	"encoding/json"
	"strings"
	"testing"

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
