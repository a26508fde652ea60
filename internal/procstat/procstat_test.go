package procstat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	line := "4242 (a) (b c) S 17 4242 4242 0 -1 4194560 88 0 0 0 0 0 0 0 20 0 1 0 987654 1 2\n"
	st, err := Parse([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if st != (Stat{Comm: "a) (b c", State: 'S', PPID: 17, Flags: 4194560, StartTime: 987654}) {
		t.Errorf("parsed %+v", st)
	}
	// A line that ends right after the start time, newline and all.
	st, err = Parse([]byte(strings.Join(strings.Fields(line)[:24], " ") + "\n"))
	if err != nil || st.StartTime != 987654 {
		t.Errorf("start time at the line's end: %+v, %v", st, err)
	}
	for _, bad := range []string{"4242 (x) S 1", "4242 x S 1", ")(", "1 (x) S notanumber 1 1 0 -1 1 0 0 0 0 0 0 0 0 20 0 1 0 5"} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// Read reads under any proc root: a fake tree in a test.
func TestReadUnderRoot(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "77"), 0o755); err != nil {
		t.Fatal(err)
	}
	line := "77 (sleep) Z 1 77 77 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 1234 0 0\n"
	if err := os.WriteFile(filepath.Join(root, "77", "stat"), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := Read(root, 77)
	if err != nil || st.Comm != "sleep" || !st.Zombie() || st.StartTime != 1234 {
		t.Fatalf("%+v, %v", st, err)
	}
	if _, err := Read(root, 78); err == nil {
		t.Error("a missing pid read")
	}
}

// FuzzParse: no panic on any line, and what it accepts has the comm between
// the first "(" and the last ")".
func FuzzParse(f *testing.F) {
	f.Add([]byte("4242 (criu) S 1 4242 4242 0 -1 4194560 88 0 0 0 0 0 0 0 20 0 1 0 99812 1 2 3\n"))
	f.Add([]byte("7 (a) b) (c) R 1 7 7 0 -1 4194368 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0\n"))
	f.Add([]byte("1 () Z 0"))
	f.Add([]byte("("))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := Parse(b)
		if err != nil {
			return
		}
		open, end := strings.IndexByte(string(b), '('), strings.LastIndexByte(string(b), ')')
		if st.Comm != string(b[open+1:end]) {
			t.Errorf("comm %q, want %q", st.Comm, b[open+1:end])
		}
	})
}
