package procstat

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	line := "4242 (a) (b c) S 17 4242 4242 0 -1 4194560 88 0 0 0 11 12 13 14 20 0 1 0 987654 1 2\n"
	st, err := Parse([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if st != (Stat{Comm: "a) (b c", State: 'S', PPID: 17, Flags: 4194560, StartTime: 987654, UTime: 11, STime: 12, CUTime: 13, CSTime: 14}) {
		t.Errorf("parsed %+v", st)
	}
	if st.CPUTicks() != 50 {
		t.Errorf("CPU ticks %d, want 11+12+13+14", st.CPUTicks())
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

// FuzzParse builds a stat line as the kernel writes it from a fuzzed comm
// (up to 15 bytes, any of them, parentheses and spaces included: the
// kernel does not escape them), state, ppid, flags and start time, and
// parses it back: every field must come back as it went in. Any other
// bytes must not panic the parser.
func FuzzParse(f *testing.F) {
	f.Add("criu", byte('S'), 1, uint64(4194560), uint64(99812), []byte("4242 (criu) S 1"))
	f.Add("a) b) (c", byte('Z'), 0, uint64(0), uint64(5), []byte("("))
	f.Add(") R 1 2 3", byte('D'), 77, uint64(1), uint64(1<<40), []byte("1 () Z 0"))
	f.Fuzz(func(t *testing.T, comm string, state byte, ppid int, flags, start uint64, junk []byte) {
		_, _ = Parse(junk)
		if len(comm) > 15 || !(state >= 'A' && state <= 'Z' || state >= 'a' && state <= 'z') || ppid < 0 {
			return
		}
		line := fmt.Sprintf("4242 (%s) %c %d 4242 4242 0 -1 %d 88 0 0 0 0 0 0 0 20 0 1 0 %d 1 2 3\n", comm, state, ppid, flags, start)
		st, err := Parse([]byte(line))
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		want := Stat{Comm: comm, State: state, PPID: ppid, Flags: flags, StartTime: start}
		if st != want {
			t.Errorf("%q: parsed %+v, want %+v", line, st, want)
		}
	})
}
