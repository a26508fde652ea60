package triggers

import (
	"bytes"
	"testing"
)

// FuzzParseStat feeds the trigger's /proc/<pid>/stat parser any line: it
// must not panic, and what it accepts has the comm between the first "("
// and the last ")" (a comm may hold spaces and parentheses).
func FuzzParseStat(f *testing.F) {
	f.Add([]byte("4242 (criu) S 1 4242 4242 0 -1 4194560 88 0 0 0 0 0 0 0 20 0 1 0 99812 1 2 3\n"))
	f.Add([]byte("7 (a) b) (c) R 1 7 7 0 -1 4194368 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0\n"))
	f.Add([]byte("1 () Z 0"))
	f.Add([]byte("("))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := parseStat(b)
		if err != nil {
			return
		}
		open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		if st.comm != string(b[open+1:end]) {
			t.Errorf("comm %q, want %q", st.comm, b[open+1:end])
		}
	})
}
