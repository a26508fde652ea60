package rows

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

func TestPackKeepsChainAndRefusesAppend(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "soak.jsonl.gz")
	want := compactRows(t, in, 12)
	out := filepath.Join(dir, "packed.jsonl.gz")
	p, err := Pack(in, out)
	if err != nil {
		t.Fatal(err)
	}
	if p.Rows != 12 || p.OutBytes >= p.InBytes {
		t.Errorf("packed %d rows, %d -> %d bytes; want 12 rows, smaller", p.Rows, p.InBytes, p.OutBytes)
	}
	if packed, _ := IsPacked(out); !packed {
		t.Fatalf("%s is not a zstd stream", out)
	}
	back, err := VerifyContents(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := SameContent(want, back.Rows); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if back.Rows[i].Hash != want[i].Hash {
			t.Fatalf("row %d: hash %s, want %s (packing must keep the chain)", i+1, back.Rows[i].Hash, want[i].Hash)
		}
	}
	if _, err := Open(out); err == nil || !strings.Contains(err.Error(), "packed") {
		t.Errorf("Open(packed) = %v, want a refusal", err)
	}
}

func TestPackedTamperingIsCaught(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "soak.jsonl.gz")
	compactRows(t, in, 4)
	if _, err := Pack(in, in); err != nil {
		t.Fatal(err)
	}
	lines, err := rawLines(in)
	if err != nil {
		t.Fatal(err)
	}
	// Edit one character of a blob's text: its sha256 no longer matches.
	for i, l := range lines {
		if bytes.HasPrefix(l, []byte(`{"blob":`)) && bytes.Contains(l, []byte(`PASS`)) {
			lines[i] = bytes.Replace(l, []byte(`PASS`), []byte(`FAIL`), 1)
			break
		}
	}
	var buf bytes.Buffer
	z, _ := zstd.NewWriter(&buf)
	z.Write(append(bytes.Join(lines, []byte("\n")), '\n'))
	z.Close()
	if err := os.WriteFile(in, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := VerifyContents(in); err == nil || !strings.Contains(err.Error(), "edited") {
		t.Errorf("a packed file with an edited blob verifies: %v", err)
	}
}
