package rows

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"faultwin/internal/strictjson"
)

// TestDecodeMainIsDecodeRow holds the main blob's fast decoding to the
// strict one: the same row, or the same error, for blobs as written and
// for blobs no writer makes.
func TestDecodeMainIsDecodeRow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rows.jsonl.gz")
	compactRows(t, path, 3)
	lines := gzLines(t, path)
	var mains [][]byte
	for _, l := range lines {
		if strings.HasPrefix(l, `{"row":`) {
			var c compactLine
			if err := strictjson.Decode([]byte(l), &c, "line's value"); err != nil {
				t.Fatal(err)
			}
			mains = append(mains, mustBlob(t, lines, c.Row.Main))
		}
	}
	m := string(mains[0])
	at := strings.Index(m, `"input":`) + len(`"input":`)
	end := valueEnd([]byte(m), at)
	if end < 0 || m[at] != '{' {
		t.Fatalf("no input object in %.200s", m)
	}
	input := m[at:end]
	cases := map[string]string{
		"as written": m,
		// encoding/json keeps the last of two names: so must the fast path
		"input twice":        strings.Replace(m, `"status":`, `"input":{"window":{}},"status":`, 1),
		"input twice, null":  strings.Replace(m, `"status":`, `"input":null,"status":`, 1),
		"status twice":       strings.Replace(m, `"driver":`, `"status":"FAIL","driver":`, 1),
		"input null":         m[:at] + "null" + m[at+len(input):],
		"input an array":     m[:at] + "[1,2]" + m[at+len(input):],
		"input a string":     m[:at] + `"}{"` + m[at+len(input):],
		"quotes and braces":  m[:at] + `{"note":"a \"}{[ \\\\\"","x":{"y":["}"]}}` + m[at+len(input):],
		"input cut":          m[:at] + input[:len(input)/2],
		"criteria twice":     strings.Replace(m, `"logs":`, `"criteria":[],"logs":`, 1),
		"criteria null":      strings.Replace(m, `"criteria":[`, `"criteria":null,"x":[`, 1),
		"criteria an object": strings.Replace(m, `"criteria":[`, `"criteria":{"a":[`, 1),
		"no criteria":        strings.Replace(m, `"criteria":`, `"criterion":`, 1),
		"unknown field":      strings.Replace(m, `"driver":`, `"drivers":"x","driver":`, 1),
		"data after":         m + " {}",
		"space in input":     m[:at] + strings.Replace(input, `":`, `": `, 1) + m[at+len(input):],
	}
	// As written, the fast path is the one taken: the input is m's own
	// bytes, not a copy (the criteria are copied: see decodeMain).
	var asWritten Row
	if err := decodeMain(mains[0], &asWritten); err != nil {
		t.Fatal(err)
	}
	within := func(b []byte) bool {
		lo, at := uintptr(unsafe.Pointer(unsafe.SliceData(mains[0]))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		return len(b) > 0 && at >= lo && at < lo+uintptr(len(mains[0]))
	}
	if !within(asWritten.Input) || within(asWritten.Criteria) {
		t.Error("a main blob as written was decoded whole, not by its input's brackets, or its criteria hold on to the whole blob")
	}
	// An input that is not JSON is left to its decoder, which the replay
	// runs on every row: it is read as the bytes it is.
	var r Row
	bad := `{"a":tru}`
	if err := decodeMain([]byte(m[:at]+bad+m[at+len(input):]), &r); err != nil || string(r.Input) != bad {
		t.Errorf("input that is not JSON: %v, input %.80s", err, r.Input)
	}
	for i, b := range mains[1:] {
		cases[fmt.Sprintf("row %d", i+2)] = string(b)
	}
	for name, blob := range cases {
		var fast, slow Row
		ferr := decodeMain([]byte(blob), &fast)
		serr := decodeRow([]byte(blob), &slow)
		if fmt.Sprint(ferr) != fmt.Sprint(serr) {
			t.Errorf("%s: decodeMain error %v, decodeRow error %v", name, ferr, serr)
			continue
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Errorf("%s: decodeMain gave input %.80s, decodeRow %.80s", name, fast.Input, slow.Input)
		}
	}
}

// TestVerifyFindsRowsEditedAfterReading: Contents.Verify takes a compact
// row's hash from its line as read, but not for a row changed since.
func TestVerifyFindsRowsEditedAfterReading(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rows.jsonl.gz")
	compactRows(t, path, 3)
	for name, edit := range map[string]func(r *Row){
		"status":   func(r *Row) { r.Status = "FAIL" },
		"reason":   func(r *Row) { r.Reason = "edited" },
		"input":    func(r *Row) { r.Input = append(json.RawMessage(nil), r.Input...) },
		"criteria": func(r *Row) { r.Criteria = json.RawMessage(`[]`) },
		"window":   func(r *Row) { r.Window.Hash = strings.Repeat("0", 64) },
	} {
		c := contents(t, path)
		if err := c.Verify(); err != nil {
			t.Fatal(err)
		}
		edit(&c.Rows[1])
		err := c.Verify()
		if name == "input" {
			// the same bytes elsewhere: encoded again, the hash holds
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "does not match its content") {
			t.Errorf("%s edited in memory: Verify gave %v", name, err)
		}
	}
}

// TestMainBlobWithABigLogIsRefused: a log of blobLogMin bytes or more is a
// blob of its own; a main blob that carries one is not as written.
func TestMainBlobWithABigLogIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rows.jsonl.gz")
	compactRows(t, path, 3)
	err := tamper(t, path, func(ls []string) []string {
		j := len(ls) - 2 // the last row's line, before the seal
		var c compactLine
		if err := strictjson.Decode([]byte(ls[j]), &c, "line's value"); err != nil {
			t.Fatal(err)
		}
		var r Row
		if err := decodeRow(mustBlob(t, ls, c.Row.Main), &r); err != nil {
			t.Fatal(err)
		}
		r.Logs["logs/big.log"] = bigLog(7)
		m, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		h := sha(m)
		return append(ls[:j:j], fmt.Sprintf(`{"blob":{"sha256":%q,"size":%d,"data":%q}}`, h, len(m), m), strings.Replace(ls[j], c.Row.Main, h, 1), ls[j+1])
	})
	if err == nil || !strings.Contains(err.Error(), "which is a blob of its own") {
		t.Fatalf("main blob with a big log: %v", err)
	}
}

func TestStringEnd(t *testing.T) {
	for in, want := range map[string]int{
		`"ab"`:      3,
		`"a\"b"`:    5,
		`"a\\"b"`:   4,
		`"a\\\"b"`:  7,
		`"abc`:      -1,
		`"a\"`:      -1,
		`""`:        1,
		`"\\\\"x"`:  5,
		`"x\\\\\\"`: 8,
	} {
		if got := stringEnd([]byte(in), 0); got != want {
			t.Errorf("stringEnd(%s) = %d, want %d", in, got, want)
		}
	}
}
