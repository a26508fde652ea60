package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"faultwin/reports/replaytest"
)

func TestCompactVerb(t *testing.T) {
	dir := t.TempDir()
	in, _ := fixtureFile(t, dir, "run1.jsonl", passIn("W3_30"), replaytest.Input(replaytest.W4Survivor), passIn("W4_80"))
	out := filepath.Join(dir, "run1.jsonl.gz")
	msg, code, err := runVerb(t, "compact", in, out)
	if code != 0 || !strings.Contains(msg, "3 rows") || !strings.Contains(msg, "is a new chain") {
		t.Fatalf("compact: exit %d (%v)\n%s", code, err, msg)
	}
	// replay, report and soak --summary read the compact file, alone and
	// in a directory next to the plain one.
	for _, args := range [][]string{{"replay", out}, {"replay", dir}, {"report", "--out", filepath.Join(t.TempDir(), "r.md"), out}, {"soak", "--summary", out}} {
		msg, code, err := runVerb(t, args...)
		want := 0
		if args[0] != "replay" {
			want = 1 // the W4 survivor is a recorded FAIL
		}
		if code != want || strings.Contains(msg, "DOES NOT VERIFY") {
			t.Errorf("%v: exit %d (%v), want %d\n%s", args, code, err, want, msg)
		}
		if args[1] == dir && !strings.Contains(msg, "2 files, 6 rows") {
			t.Errorf("replay DIR does not read both files:\n%s", msg)
		}
	}
	// A part: rows 2-3 only, its own chain, read back as those rows.
	part := filepath.Join(dir, "part.jsonl.gz")
	if msg, code, err := runVerb(t, "compact", "--rows", "2-3", in, part); code != 0 || !strings.Contains(msg, "holds rows 2-3") {
		t.Fatalf("compact --rows 2-3: exit %d (%v)\n%s", code, err, msg)
	}
	if msg, code, _ := runVerb(t, "replay", part); code != 0 || !strings.Contains(msg, "2 rows") {
		t.Errorf("replay of a part: exit %d\n%s", code, msg)
	}
	for _, bad := range []string{"3-2", "0-1", "x", "2-9"} {
		if _, code, err := runVerb(t, "compact", "--rows", bad, in, filepath.Join(dir, "p-"+bad+".jsonl.gz")); code == 0 {
			t.Errorf("compact --rows %s accepted", bad)
		} else if !strings.Contains(err.Error(), "rows") {
			t.Errorf("compact --rows %s: %v", bad, err)
		}
	}
	// OUT exists: refused.
	if _, code, err := runVerb(t, "compact", in, out); code == 0 || !strings.Contains(err.Error(), "exists") {
		t.Errorf("compact onto an existing file: exit %d (%v)", code, err)
	}
	// A tampered IN is refused and leaves no OUT.
	b, _ := os.ReadFile(in)
	os.WriteFile(in, []byte(strings.Replace(string(b), `"refsup"`, `"refsup2"`, 1)), 0o644)
	bad := filepath.Join(dir, "bad.jsonl.gz")
	if _, code, err := runVerb(t, "compact", in, bad); code == 0 || !strings.Contains(err.Error(), "does not replay cleanly") {
		t.Errorf("compact of a tampered file: exit %d (%v)", code, err)
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("refused compact left %s", bad)
	}
}
