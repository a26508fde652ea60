package rows

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"faultwin/internal/model"
	"faultwin/internal/strictjson"
)

// bigLog is a CRIU-like log tail, long enough to be a blob of its own.
func bigLog(i int) string {
	var b strings.Builder
	for k := 0; b.Len() < 6<<10; k++ {
		fmt.Fprintf(&b, "(00.%06d) Dumping pages (type: 59 pid: %d)\n", k*37+i, 28000+i)
	}
	return b.String()
}

// compactRows writes n sample rows to path (plain or compact by its name),
// each with a big log, row 0's big log repeated in the last row.
func compactRows(t *testing.T, path string, n int) []Row {
	t.Helper()
	w, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var out []Row
	for i := 0; i < n; i++ {
		r := sampleRow(t, i, model.StatusPass)
		r.SetLog("logs/criu-dump-c1-s1.log", bigLog(i%(n-1)))
		if err := w.Append(r); err != nil {
			t.Fatal(err)
		}
		out = append(out, *r)
	}
	return out
}

func gzLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func writeGz(t *testing.T, path string, lines []string) {
	t.Helper()
	b, err := gzipMember([]byte(strings.Join(lines, "\n") + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCompactRoundTrip(t *testing.T) {
	dir := t.TempDir()
	plain, compact := filepath.Join(dir, "rows.jsonl"), filepath.Join(dir, "rows.jsonl.gz")
	wp := compactRows(t, plain, 4)
	wc := compactRows(t, compact, 4)
	rp, err := VerifyFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := VerifyFile(compact)
	if err != nil {
		t.Fatal(err)
	}
	if err := SameContent(rp, rc); err != nil {
		t.Fatal(err)
	}
	// The rows read back are the rows as written, field for field, the
	// compact ones with the hash of their compact line.
	if !reflect.DeepEqual(rc, wc) || !reflect.DeepEqual(rp, wp) {
		t.Fatal("rows read back differ from the rows written")
	}
	for i := range rc {
		p, c := rp[i], rc[i]
		p.Prev, p.Hash, c.Prev, c.Hash = "", "", "", ""
		if !reflect.DeepEqual(p, c) {
			t.Fatalf("row %d: compact %+v, plain %+v", i+1, c, p)
		}
		if h, _ := ComputeCompactHash(rc[i]); h != rc[i].Hash {
			t.Fatalf("row %d: hash %s, its compact hash %s", i+1, rc[i].Hash, h)
		}
	}
	if err := VerifyChain(rc); err != nil {
		t.Fatalf("VerifyChain on compact rows: %v", err)
	}
	// The same log in rows 1 and 4 is stored once; the others are deltas.
	lines := gzLines(t, compact)
	var blobs, deltas int
	for _, l := range lines {
		if strings.HasPrefix(l, `{"blob":`) {
			blobs++
			if strings.Contains(l, `"deflate":`) {
				deltas++
			}
		}
	}
	if blobs != 4+3 || deltas == 0 {
		t.Errorf("%d blob lines (%d deltas), want 7: 4 main blobs and 3 distinct logs", blobs, deltas)
	}
	c := contents(t, compact)
	if s := c.Sealing(); s.State != Sealed || len(c.Markers) != 2 {
		t.Errorf("seal %q, %d markers", s.State, len(c.Markers))
	}
	// A compact file is also read uncompressed (zcat FILE > FILE.jsonl).
	unz := filepath.Join(dir, "unzipped.jsonl")
	writeLines(t, unz, lines)
	ru, err := VerifyFile(unz)
	if err != nil || !reflect.DeepEqual(ru, rc) {
		t.Fatalf("unzipped: %v", err)
	}
	if st, _ := os.Stat(compact); st.Size()*2 > mustSize(t, plain) {
		t.Errorf("compact %d bytes, plain %d", st.Size(), mustSize(t, plain))
	}
}

func mustSize(t *testing.T, p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

func TestCompactSessionsAndSeal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rows.jsonl.gz")
	first := compactRows(t, path, 3)
	second := compactRows(t, path, 3) // appended: a second session, bases from the first
	c := contents(t, path)
	if err := c.Verify(); err != nil {
		t.Fatal(err)
	}
	if s := c.Sealing(); s.State != Sealed || len(s.Sessions) != 2 || len(c.Rows) != 6 {
		t.Fatalf("state %q, %d sessions, %d rows", s.State, len(s.Sessions), len(c.Rows))
	}
	if c.Rows[3].Prev != first[2].Hash || c.Rows[5].Hash != second[2].Hash {
		t.Fatal("second session does not chain to the first")
	}
	// Drop the last member (the seal): the session is unsealed, Open
	// refuses, SealUnfinished seals it.
	lines := gzLines(t, path)
	writeGz(t, path, lines[:len(lines)-1])
	if _, err := Open(path); !errors.Is(err, ErrUnsealed) {
		t.Fatalf("Open on an unsealed compact file: %v", err)
	}
	if _, err := SealUnfinished(path, "harness killed"); err != nil {
		t.Fatal(err)
	}
	c = contents(t, path)
	if err := c.Verify(); err != nil || c.Sealing().State != Sealed {
		t.Fatalf("after SealUnfinished: %v, %q", err, c.Sealing().State)
	}
}

// tamper rewrites the compact file at path with edit applied to its lines
// and returns the error of reading and verifying it.
func tamper(t *testing.T, path string, edit func([]string) []string) error {
	t.Helper()
	p := filepath.Join(t.TempDir(), filepath.Base(path))
	writeGz(t, p, edit(gzLines(t, path)))
	_, err := VerifyFile(p)
	return err
}

func firstLine(t *testing.T, lines []string, prefix, contains string) int {
	t.Helper()
	for i, l := range lines {
		if strings.HasPrefix(l, prefix) && strings.Contains(l, contains) {
			return i
		}
	}
	t.Fatalf("no line %s…%s", prefix, contains)
	return -1
}

func TestCompactTampering(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rows.jsonl.gz")
	compactRows(t, path, 3)
	if _, err := VerifyFile(path); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		edit func(t *testing.T, ls []string) []string
		want string
	}{
		"edited blob": {func(t *testing.T, ls []string) []string {
			i := firstLine(t, ls, `{"blob":`, `"data":"(00.`)
			ls[i] = strings.Replace(ls[i], "Dumping pages", "Dumping pagez", 1)
			return ls
		}, "the blob was edited after it was written"},
		"edited delta": {func(t *testing.T, ls []string) []string {
			i := firstLine(t, ls, `{"blob":`, `"deflate":"`)
			k := strings.Index(ls[i], `"deflate":"`) + 14
			b := []byte(ls[i])
			if b[k] == 'A' {
				b[k] = 'B'
			} else {
				b[k] = 'A'
			}
			ls[i] = string(b)
			return ls
		}, "was edited"},
		"missing blob": {func(t *testing.T, ls []string) []string {
			i := firstLine(t, ls, `{"blob":`, `"data":"(00.`)
			return append(ls[:i:i], ls[i+1:]...)
		}, "is not in the file before it"},
		"edited row line": {func(t *testing.T, ls []string) []string {
			i := firstLine(t, ls, `{"row":`, ``)
			ls[i] = strings.Replace(ls[i], `"status":"PASS"`, `"status":"FAIL"`, 1)
			return ls
		}, "its main blob"},
		// A blob replaced with consistent new content, sha256 and size,
		// and the row's reference updated: the row's hash catches it.
		"replaced blob and reference": {func(t *testing.T, ls []string) []string {
			j := len(ls) - 2 // the last row's line, before the seal
			var c compactLine
			if err := strictjson.Decode([]byte(ls[j]), &c, "line's value"); err != nil {
				t.Fatal(err)
			}
			var r Row
			if err := decodeRow(mustBlob(t, ls, c.Row.Main), &r); err != nil {
				t.Fatal(err)
			}
			r.Reason = "all criteria held"
			m, _ := mainOf(r)
			h := sha(m)
			ls = append(ls[:j:j], fmt.Sprintf(`{"blob":{"sha256":%q,"size":%d,"data":%q}}`, h, len(m), m), strings.Replace(ls[j], c.Row.Main, h, 1), ls[j+1])
			return ls
		}, "does not match its content"},
	}
	for name, c := range cases {
		err := tamper(t, path, func(ls []string) []string { return c.edit(t, ls) })
		t.Logf("%s: %v", name, err)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", name, err, c.want)
		}
	}
}

// mustBlob returns the content of blob h among a compact file's lines.
func mustBlob(t *testing.T, lines []string, h string) []byte {
	t.Helper()
	s := newBlobStore()
	for _, l := range lines {
		if strings.HasPrefix(l, `{"blob":`) {
			if err := s.add([]byte(l)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return s.content[h]
}

func TestCompactTruncatedTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rows.jsonl.gz")
	compactRows(t, path, 3)
	full, _ := os.ReadFile(path)
	for _, cut := range []int{1, 9, 40, 400} {
		if err := os.WriteFile(path, full[:len(full)-cut], 0o644); err != nil {
			t.Fatal(err)
		}
		rs, err := Read(path)
		if err == nil || !strings.Contains(err.Error(), "is cut short") {
			t.Errorf("cut %d bytes: got %v", cut, err)
		}
		if len(rs) != 3 && cut < 40 {
			t.Errorf("cut %d bytes (the seal's member): %d rows before it, want 3", cut, len(rs))
		}
		if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "cut short") {
			t.Errorf("Open after a cut of %d bytes: %v", cut, err)
		}
	}
	// Garbage appended after the last member.
	os.WriteFile(path, append(full, "not a gzip member, just text\n"...), 0o644)
	if _, err := Read(path); err == nil || !strings.Contains(err.Error(), "edited or damaged") {
		t.Errorf("garbage after the last member: %v", err)
	}
}

func TestConvert(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "legacy.jsonl")
	rs := compactRows(t, filepath.Join(dir, "sealed.jsonl"), 4)
	var lines []string
	for _, l := range fileLines(t, filepath.Join(dir, "sealed.jsonl")) {
		if strings.HasPrefix(l, `{"schema":`) {
			lines = append(lines, l)
		}
	}
	writeLines(t, in, lines) // a legacy file: rows only
	out := filepath.Join(dir, "out.jsonl.gz")
	cv, err := Convert(in, out)
	if err != nil {
		t.Fatal(err)
	}
	if cv.Rows != 4 || cv.InLast != rs[3].Hash || cv.InState != Legacy {
		t.Errorf("converted %+v", cv)
	}
	c, err := VerifyContents(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := SameContent(rs, c.Rows); err != nil {
		t.Fatal(err)
	}
	seal := c.Markers[len(c.Markers)-1].Seal
	if seal == nil || !strings.Contains(seal.Note, rs[3].Hash) || !strings.Contains(seal.Note, cv.InSHA256) {
		t.Errorf("seal note does not record the input: %+v", seal)
	}
	if _, err := Convert(in, out); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("converting onto an existing file: %v", err)
	}
	// An input that does not verify is refused.
	lines[1] = strings.Replace(lines[1], `"PASS"`, `"FAIL"`, 1)
	writeLines(t, in, lines)
	if _, err := Convert(in, filepath.Join(dir, "bad.jsonl.gz")); err == nil || !strings.Contains(err.Error(), "not converted") {
		t.Errorf("tampered input: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.jsonl.gz")); !os.IsNotExist(err) {
		t.Errorf("a refused conversion left its output: %v", err)
	}
}

// soakFile is the checked-in 20-pass soak, converted once for the
// benchmarks.
const soakFile = "../../results/soak-20.jsonl"

// BenchmarkRead reads and verifies the checked-in soak plain and compact
// (converted first) and reports bytes per row of each.
func BenchmarkRead(b *testing.B) {
	if _, err := os.Stat(soakFile); err != nil {
		b.Fatal(soakFile, " not present: the benchmark reads the checked-in soak")
	}
	compact := filepath.Join(b.TempDir(), "soak-20.jsonl.gz")
	cv, err := Convert(soakFile, compact)
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range []struct{ name, path string }{{"plain", soakFile}, {"compact", compact}} {
		b.Run(p.name, func(b *testing.B) {
			st, err := os.Stat(p.path)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				c, err := VerifyContents(p.path)
				if err != nil || len(c.Rows) != cv.Rows {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(st.Size())/float64(cv.Rows), "file-B/row")
		})
	}
}
