package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"faultwin/reports/replaytest"
	"faultwin/reports/rows"
)

// outLines splits the verb's output into its lines.
func outLines(out string) []string {
	if out == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(out, "\n"), "\n")
}

// sameRows checks that out is, line by line, the rows the rows package
// reads from path, each encoded as a plain file holds it.
func sameRows(t *testing.T, out, path string) {
	t.Helper()
	rs, err := rows.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := outLines(out)
	if len(lines) != len(rs) {
		t.Fatalf("%s: %d lines printed, the file holds %d rows", path, len(lines), len(rs))
	}
	for i, r := range rs {
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if lines[i] != string(want) {
			t.Fatalf("%s: line %d is not row %d as read:\n%.300s\nwant\n%.300s", path, i+1, i+1, lines[i], want)
		}
	}
}

// A compact file's rows print expanded: the full rows the rows package
// reads (logs stored as blobs put back), one plain JSON line each; a plain
// file's print as the lines it holds, markers left out.
func TestRowsVerbExpandsCompact(t *testing.T) {
	dir := t.TempDir()
	var rs []rows.Row
	for i, in := range []string{replaytest.W4Pass, replaytest.W4Survivor, replaytest.W3NotFired} {
		r := replaytest.Row(replaytest.Input(in), replaytest.Prov{Commit: "d25cf84", Started: t0.Add(time.Duration(i) * time.Minute), Load: 0.5})
		r.SetLog("criu-dump.log", strings.Repeat("dump: a line of a long CRIU log\n", 400)) // a blob of its own
		rs = append(rs, r)
	}
	gz := filepath.Join(dir, "soak.jsonl.gz")
	if _, err := replaytest.Write(gz, rs...); err != nil {
		t.Fatal(err)
	}
	if raw, _ := os.ReadFile(gz); strings.Contains(string(raw), "a line of a long CRIU log") {
		t.Fatal("the compact file holds its text uncompressed: not the test's subject")
	}
	out, code, err := runVerb(t, "rows", gz)
	if code != 0 {
		t.Fatalf("exit %d (%v)", code, err)
	}
	sameRows(t, out, gz)
	if strings.Count(out, "dump: a line of a long CRIU log") != 3*400 || strings.Contains(out, `"main":`) || strings.Contains(out, `{"blob":`) {
		t.Errorf("rows not expanded:\n%.500s", out)
	}
	for _, l := range outLines(out) {
		var r rows.Row
		if err := json.Unmarshal([]byte(l), &r); err != nil || r.Window.ID == "" || len(r.Input) == 0 {
			t.Errorf("not a row: %v\n%.200s", err, l)
		}
	}

	// A plain, sealed file: its row lines exactly.
	plain, _ := fixtureFile(t, dir, "run.jsonl", passIn("W3_30"), passIn("W4_30"))
	out, code, _ = runVerb(t, "rows", plain)
	raw, _ := os.ReadFile(plain)
	var want []string
	for _, l := range outLines(string(raw)) {
		if !strings.HasPrefix(l, `{"open":`) && !strings.HasPrefix(l, `{"seal":`) {
			want = append(want, l)
		}
	}
	if code != 0 || strings.Join(outLines(out), "\n") != strings.Join(want, "\n") || len(want) != 2 {
		t.Errorf("exit %d; printed\n%s\nwant the file's row lines\n%s", code, out, strings.Join(want, "\n"))
	}

	// A directory: its files in name order.
	out, _, _ = runVerb(t, "rows", dir)
	if n := len(outLines(out)); n != 5 {
		t.Errorf("rows DIR printed %d rows, want 5", n)
	}
}

// The checked-in podman soak prints as its 250 rows, expanded.
func TestRowsVerbCheckedInSoak(t *testing.T) {
	const soak = "../../results/podman/soak-10-5cffb9b.jsonl.gz"
	out, code, err := runVerb(t, "rows", soak)
	if code != 0 {
		t.Fatalf("exit %d (%v)", code, err)
	}
	sameRows(t, out, soak)
	// PD1's FAIL rows with P3 false: 10 + 8 + 7, as its summary shows.
	out, _, _ = runVerb(t, "rows", "--window", "PD1", "--status", "FAIL", "--criterion", "P3", soak)
	if n := len(outLines(out)); n != 25 {
		t.Errorf("PD1 FAIL with P3 false: %d rows, want 25", n)
	}
}

func TestRowsVerbFilters(t *testing.T) {
	path, _ := fixtureFile(t, t.TempDir(), "run.jsonl",
		passIn("W3_30"),
		replaytest.Input(replaytest.W4Survivor), // W4_30 FAIL: P1
		replaytest.Input(replaytest.W3NotFired), // W3_250 INVALID
		passIn("W4_30"),
		replaytest.Input(replaytest.W5IPForward), // W5 FAIL: H1
	)
	for _, c := range []struct {
		args []string
		want string // the printed rows' window and status
	}{
		{nil, "W3_30 PASS, W4_30 FAIL, W3_250 INVALID, W4_30 PASS, W5 FAIL"},
		{[]string{"--window", "W4"}, "W4_30 FAIL, W4_30 PASS"},
		{[]string{"--window", "W3_30,W3_250"}, "W3_30 PASS, W3_250 INVALID"},
		{[]string{"--window", "W3_30", "--window", "W5"}, "W3_30 PASS, W5 FAIL"},
		{[]string{"--status", "fail"}, "W4_30 FAIL, W5 FAIL"},
		{[]string{"--status", "PASS,INVALID", "--window", "W3"}, "W3_30 PASS, W3_250 INVALID"},
		{[]string{"--criterion", "P1"}, "W4_30 FAIL"},
		{[]string{"--criterion", "P1,H1"}, "W4_30 FAIL, W5 FAIL"},
		{[]string{"--criterion", "H1", "--window", "W4"}, ""},
		{[]string{"--status", "ERROR"}, ""},
	} {
		out, code, err := runVerb(t, append(append([]string{"rows"}, c.args...), path)...)
		if code != 0 {
			t.Errorf("%q: exit %d (%v)", c.args, code, err)
			continue
		}
		var got []string
		for _, l := range outLines(out) {
			var r rows.Row
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatalf("%q: %v", c.args, err)
			}
			got = append(got, r.Window.ID+" "+r.Status)
		}
		if strings.Join(got, ", ") != c.want {
			t.Errorf("%q: printed %q, want %q", c.args, strings.Join(got, ", "), c.want)
		}
	}
}

// Bad filters are usage errors; a file that does not verify prints the
// rows read and exits 1.
func TestRowsVerbErrors(t *testing.T) {
	dir := t.TempDir()
	path, rs := fixtureFile(t, dir, "run.jsonl", passIn("W3_30"), passIn("W4_30"))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"rows"}, "name at least one JSONL file"},
		{[]string{"rows", "--status", "flaky", path}, "--status FLAKY: want one of PASS, FAIL, INVALID, ERROR"},
		{[]string{"rows", "--criterion", "Z9", path}, "--criterion Z9: want one of"},
		{[]string{"rows", "--window"}, "flag needs an argument"},
		{[]string{"rows", "--bogus", path}, "bogus"},
		{[]string{"rows", filepath.Join(dir, "missing.jsonl")}, "does not exist"},
	} {
		out, code, err := runVerb(t, c.args...)
		if code != exitUsage || !strings.Contains(err.Error(), c.want) || !strings.HasSuffix(err.Error(), "run `faultwin rows -h`") || out != "" {
			t.Errorf("%q: exit %d (%v), printed %q; want %d, %q", c.args, code, err, out, exitUsage, c.want)
		}
	}
	cut := filepath.Join(dir, "cut.jsonl")
	if err := os.WriteFile(cut, replaytest.Lines(rs[1:]), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code, err := runVerb(t, "rows", cut)
	if code != exitUnverified || !strings.Contains(err.Error(), "faultwin replay") || len(outLines(out)) != 1 {
		t.Errorf("a broken chain: exit %d (%v), %d rows printed; want 1, the row read", code, err, len(outLines(out)))
	}
}

// --brief prints each row as one line and, under a failed row, the failed
// criterion with its summary and evidence: what a CI log's tail shows.
func TestRowsVerbBrief(t *testing.T) {
	path, _ := fixtureFile(t, t.TempDir(), "run.jsonl",
		passIn("W3_30"),
		replaytest.Input(replaytest.W4Survivor), // W4_30 FAIL: P1
	)
	out, code, err := runVerb(t, "rows", "--brief", path)
	if code != 0 {
		t.Fatalf("exit %d (%v)", code, err)
	}
	lines := outLines(out)
	if len(lines) < 4 || !strings.HasPrefix(lines[0], "W3_30 PASS ") || !strings.HasPrefix(lines[1], "W4_30 FAIL ") {
		t.Fatalf("brief output:\n%s", out)
	}
	if !strings.HasPrefix(lines[2], "  P1: ") || !strings.HasPrefix(lines[3], "    ") {
		t.Errorf("the failed row's P1 and its evidence are not under it:\n%s", out)
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "  P1") && !strings.HasPrefix(l, "    ") {
			t.Errorf("a criterion that held is printed: %q", l)
		}
	}
}

// findings groups the failed criteria: two W4_30 rows with the same P1
// leftover are one finding, seen in 2 of the 3 measured rows of that
// window (the PASS of W3_30 is another window's); --format json prints it
// as one line with its rows.
func TestFindingsVerb(t *testing.T) {
	path, _ := fixtureFile(t, t.TempDir(), "run.jsonl",
		passIn("W3_30"),
		replaytest.Input(replaytest.W4Survivor),
		replaytest.Input(replaytest.W4Survivor),
		passIn("W4_30"),
	)
	out, code, err := runVerb(t, "findings", path)
	if code != 0 {
		t.Fatalf("exit %d (%v)", code, err)
	}
	if !strings.Contains(out, "# Findings: 1, from 4 rows of ") || !strings.Contains(out, "| refsup | P1 |") || !strings.Contains(out, "| W4_30 | 2/3 |") {
		t.Errorf("findings:\n%s", out)
	}
	out, code, _ = runVerb(t, "findings", "--format", "json", path)
	var f struct {
		ID       string   `json:"id"`
		Seen     int      `json:"seen"`
		Measured int      `json:"measured"`
		Rows     []string `json:"rows"`
	}
	if lines := outLines(out); code != 0 || len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &f) != nil || f.Seen != 2 || f.Measured != 3 || len(f.Rows) != 2 {
		t.Errorf("findings --format json (exit %d):\n%s", code, out)
	}
	if _, code, _ := runVerb(t, "findings", "--format", "xml", path); code != exitUsage {
		t.Errorf("--format xml: exit %d, want %d", code, exitUsage)
	}
	// A file whose chain is broken yields no finding: its evidence does
	// not verify.
	cut, _ := fixtureFile(t, t.TempDir(), "cut.jsonl", replaytest.Input(replaytest.W4Survivor), passIn("W3_30"))
	b, err := os.ReadFile(cut)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	if err := os.WriteFile(cut, []byte(strings.Join(append(lines[:1], lines[2:]...), "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, code, err := runVerb(t, "findings", cut); code != exitUnverified || err == nil || !strings.Contains(err.Error(), "does not verify") {
		t.Errorf("a broken chain: exit %d (%v), want %d", code, err, exitUnverified)
	}
}
