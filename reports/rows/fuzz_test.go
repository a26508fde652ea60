package rows

import (
	"bytes"
	"compress/gzip"
	"os"
	"strings"
	"testing"
)

// FuzzReadContents feeds the rows reader any bytes, plain or gzip: it must
// not panic or hang, and an error names the file (and, for a plain file,
// the line). The seeds are checked-in rows files and hand-cut ones.
func FuzzReadContents(f *testing.F) {
	for _, path := range []string{"../../results/windows.jsonl", "../../results/external-2026-12-01.jsonl"} {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		if len(b) > 64<<10 {
			b = b[:bytes.LastIndexByte(b[:64<<10], '\n')+1]
		}
		f.Add(b)
		f.Add(b[:len(b)/2]) // cut mid-row
		var z bytes.Buffer
		w := gzip.NewWriter(&z)
		w.Write(b)
		w.Close()
		f.Add(z.Bytes())
		f.Add(z.Bytes()[:z.Len()/2]) // a member cut short
	}
	f.Add([]byte("\n"))
	f.Add([]byte(`{"schema":1}` + "\n"))
	f.Add([]byte(`{"compact":1,"blobs":{}}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := &Contents{Path: "fuzz.jsonl"}
		err := readContents(c, bytes.NewReader(data))
		if err != nil && !strings.Contains(err.Error(), "fuzz.jsonl") {
			t.Errorf("error does not name the file: %v", err)
		}
		if err == nil {
			_ = c.Verify()
		}
	})
}
