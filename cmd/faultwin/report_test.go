package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"faultwin/criteria"
	"faultwin/reports/replaytest"
	"faultwin/reports/rows"
)

func TestReportVerbMarkdown(t *testing.T) {
	dir := t.TempDir()
	path, _ := fixtureFile(t, dir, "run1.jsonl", passIn("W3_30"), replaytest.Input(replaytest.W4Survivor))
	out, code, _ := runVerb(t, "report", path)
	if code != 1 {
		t.Errorf("a FAIL row: exit %d, want 1", code)
	}
	for _, want := range []string{"# faultwin report", "| Window | Run 1 |", "| W4_30 | FAIL: P1 (pid 4242"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	pass, _ := fixtureFile(t, dir, "run3.jsonl", passIn("W3_30"), passIn("W4_30"))
	if out, code, err := runVerb(t, "report", pass); code != 0 {
		t.Errorf("all PASS: exit %d %v\n%s", code, err, out)
	}
}

func TestReportVerbHTMLToFile(t *testing.T) {
	dir := t.TempDir()
	path, _ := fixtureFile(t, dir, "run1.jsonl", passIn("W3_30"), replaytest.Input(replaytest.W3NotFired))
	html := filepath.Join(dir, "site", "report.html")
	if err := os.MkdirAll(filepath.Dir(html), 0o755); err != nil {
		t.Fatal(err)
	}
	out, code, _ := runVerb(t, "report", "--format", "html", "--out", html, path)
	if code != 2 {
		t.Errorf("INVALID only: exit %d, want 2", code)
	}
	if !strings.Contains(out, "report: wrote "+html+" (2 windows, 1 runs, 1 files)") {
		t.Errorf("output:\n%s", out)
	}
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "<!DOCTYPE html>") || !strings.Contains(string(b), `data-window="W3_250"`) {
		t.Errorf("not the HTML report:\n%.300s", b)
	}
	if _, code, _ := runVerb(t, "report", "--format", "pdf", path); code != exitUsage {
		t.Errorf("unknown format: exit %d", code)
	}
}

func TestReportVerbCompare(t *testing.T) {
	dir := t.TempDir()
	a, _ := fixtureFile(t, dir, "a.jsonl", passIn("W3_30"), replaytest.Input(replaytest.W4Survivor))
	b, _ := fixtureFile(t, dir, "b.jsonl", passIn("W3_30"), passIn("W4_30"))
	out, code, err := runVerb(t, "report", "--compare", a, b)
	if code != 0 {
		t.Errorf("B all PASS: exit %d %v, want 0 (A's FAIL is history)", code, err)
	}
	if !strings.Contains(out, "0 windows changed") || !strings.Contains(out, "1 differ in their commonest verdict within the intervals, not counted; 1 kept their verdict") {
		t.Errorf("changes not listed:\n%s", out)
	}
	if _, code, err := runVerb(t, "report", "--compare", a); code != exitUsage || !strings.Contains(err.Error(), "exactly two files") {
		t.Errorf("one file: exit %d %v", code, err)
	}
}

func TestReportVerbTampered(t *testing.T) {
	dir := t.TempDir()
	_, rows := fixtureFile(t, dir, "good.jsonl", passIn("W3_30"), passIn("W4_30"))
	rows = rows[1:] // the first row removed
	path := filepath.Join(dir, "cut.jsonl")
	if err := os.WriteFile(path, replaytest.Lines(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code, err := runVerb(t, "report", path)
	if code != exitUnverified || !strings.Contains(err.Error(), "does not verify") {
		t.Errorf("exit %d %v, want 1: the evidence does not verify", code, err)
	}
	if !strings.Contains(out, "## Evidence that does not verify") || !strings.Contains(out, "| `"+path+"` | 1 | BROKEN |") {
		t.Errorf("report does not flag the broken chain:\n%s", out)
	}
}

// Without --format, --out's extension names the format; a --format the
// extension contradicts is refused, and nothing is written.
func TestReportVerbFormatFromOut(t *testing.T) {
	dir := t.TempDir()
	path, _ := fixtureFile(t, dir, "run1.jsonl", passIn("W3_30"), passIn("W4_30"))
	for _, c := range []struct {
		args []string
		out  string
		html bool
	}{
		{nil, "r.html", true},
		{nil, "R.HTM", true},
		{nil, "r.md", false},
		{nil, "r.txt", false},
		{[]string{"--format", "html"}, "r.txt", true},
		{[]string{"--format", "html"}, "r2.html", true},
		{[]string{"--format", "md"}, "r2.md", false},
	} {
		out := filepath.Join(dir, c.out)
		msg, code, err := runVerb(t, append(append([]string{"report"}, c.args...), "--out", out, path)...)
		if code != 0 {
			t.Errorf("%v --out %s: exit %d (%v)\n%s", c.args, c.out, code, err, msg)
			continue
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.HasPrefix(string(b), "<!DOCTYPE html>"); got != c.html || (!c.html && !strings.HasPrefix(string(b), "# faultwin report")) {
			t.Errorf("%v --out %s: HTML %v, want %v:\n%.100s", c.args, c.out, got, c.html, b)
		}
	}
	for _, c := range [][]string{{"--format", "md", "--out", "x.html"}, {"--format", "html", "--out", "x.md"}} {
		out := filepath.Join(dir, c[3])
		_, code, err := runVerb(t, "report", c[0], c[1], c[2], out, path)
		if code != exitUsage || !strings.Contains(err.Error(), "drop --format") {
			t.Errorf("%v: exit %d (%v), want %d", c, code, err, exitUsage)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%v: wrote %s", c, out)
		}
	}
}

// The exit message counts rows and the windows they are of.
func TestExitCountsRowsAndWindows(t *testing.T) {
	path, _ := fixtureFile(t, t.TempDir(), "run.jsonl",
		replaytest.Input(replaytest.W4Survivor), replaytest.Input(replaytest.W4Survivor), replaytest.Input(replaytest.W5IPForward),
		replaytest.Input(replaytest.W3NotFired))
	for _, verb := range [][]string{{"report", "--out", filepath.Join(t.TempDir(), "r.md")}, {"soak", "--summary"}} {
		_, code, err := runVerb(t, append(verb, path)...)
		if code != exitFail || err.Error() != "3 rows FAIL in 2 windows" {
			t.Errorf("%s: exit %d (%v), want 1: 3 rows FAIL in 2 windows", verb[0], code, err)
		}
	}
	inv, _ := fixtureFile(t, t.TempDir(), "inv.jsonl", replaytest.Input(replaytest.W3NotFired), passIn("W3_30"))
	if _, code, err := runVerb(t, "soak", "--summary", inv); code != exitInvalid || err.Error() != "1 row INVALID in 1 window (not measurements)" {
		t.Errorf("INVALID: exit %d (%v)", code, err)
	}
}

// A directory stands for every rows file below it: a results tree that
// gains a directory (results/containerd/) is reported without naming it,
// grouped by supervisor with the mutants apart, whose planted FAIL is not
// the report's exit status; logs and other files are never read as rows.
func TestReportVerbCoversEveryResultsDir(t *testing.T) {
	root := filepath.Join(t.TempDir(), "results")
	write := func(rel, driver string, ins ...criteria.Input) {
		t.Helper()
		var rs []rows.Row
		for i, in := range ins {
			row := replaytest.Row(in, replaytest.Prov{Commit: "d25cf84", Started: t0.Add(time.Duration(i) * time.Minute), Load: 0.5})
			row.Driver = driver
			rs = append(rs, row)
		}
		path := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := replaytest.Write(path, rs...); err != nil {
			t.Fatal(err)
		}
	}
	write("windows.jsonl", "refsup", passIn("W3_30"))
	write("containerd/soak-1.jsonl", "containerd", passIn("W3_30"), passIn("W4_30"))
	write("mutants/leak-cgroup.jsonl", "refsup", replaytest.Input(replaytest.W4Survivor))
	// Not rows: a window's logs (one of them JSON lines) and a signature.
	for rel, text := range map[string]string{
		"logs/W1-r1/refsup-serve.log": "serving run r1\n",
		"logs/W1-r1/events.jsonl":     "{\"not\":\"a row\"}\n",
		"windows.jsonl.sig":           "seal 00\n",
	} {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	md := filepath.Join(t.TempDir(), "r.md")
	out, code, err := runVerb(t, "report", "--out", md, root, filepath.Join(root, "containerd"))
	if code != 0 {
		t.Fatalf("exit %d (%v), want 0: every supervisor's row passed, and the mutant's FAIL is planted\n%s", code, err, out)
	}
	if !strings.Contains(out, "(2 windows, 3 runs, 3 files)") {
		t.Errorf("want 3 files, each once (containerd/ named twice):\n%s", out)
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	report := string(b)
	for _, want := range []string{
		"| `" + filepath.Join(root, "windows.jsonl") + "` | 1 | ok |",
		"| `" + filepath.Join(root, "containerd", "soak-1.jsonl") + "` | 2 | ok |",
		"| `" + filepath.Join(root, "mutants", "leak-cgroup.jsonl") + "` | 1 | ok |",
		"| containerd | 1 | 1 | 2 | 2 | 0 | 0 | 0 |",
		"| refsup | 1 | 1 | 1 | 1 | 0 | 0 | 0 |",
		"| mutants (bugs planted on purpose) | 1 | 1 | 1 | 0 | 1 expected (bugs planted) | 0 | 0 |",
		"## Supervisor: containerd",
		"## Supervisor: refsup",
		"## Mutants (bugs planted on purpose)",
		"| W4_30 | bug switch leak-cgroup: expected FAIL: P1",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("no %q in:\n%s", want, report)
		}
	}
	if strings.Contains(report, "logs") || strings.Contains(report, ".sig") || strings.Contains(report, "Evidence that does not verify") {
		t.Errorf("a log or signature was read as rows:\n%s", report)
	}
	// A directory's own files come before its subdirectories'.
	if i, j := strings.Index(report, "windows.jsonl` |"), strings.Index(report, "soak-1.jsonl` |"); i < 0 || j < i {
		t.Errorf("results/windows.jsonl listed after results/containerd/")
	}

	// The mutant's row alone: nothing of a supervisor to fail.
	if out, code, err := runVerb(t, "report", filepath.Join(root, "mutants")); code != 0 || !strings.Contains(out, "bug switch leak-cgroup: expected FAIL") {
		t.Errorf("mutants alone: exit %d (%v)\n%s", code, err, out)
	}
	if _, code, err := runVerb(t, "report", filepath.Join(root, "logs")); code != exitUsage || !strings.Contains(err.Error(), "holds no rows") {
		t.Errorf("logs alone: exit %d (%v), want %d: no rows files there", code, err, exitUsage)
	}
}

// TestReportVerbMaxBytes: a brief Markdown report stays within its
// budget, leads with what failed, and says where it was cut; a budget too
// small to hold anything, or one asked of the HTML, is a usage error.
func TestReportVerbMaxBytes(t *testing.T) {
	dir := t.TempDir()
	var ins []criteria.Input
	for i := 0; i < 40; i++ {
		ins = append(ins, passIn("W3_30"), replaytest.Input(replaytest.W4Survivor))
	}
	path, _ := fixtureFile(t, dir, "big.jsonl", ins...)
	full, _, _ := runVerb(t, "report", path)
	const budget = 2048
	if len(full) <= budget {
		t.Fatalf("the full report is %d bytes: too small to be cut at %d", len(full), budget)
	}
	out, code, _ := runVerb(t, "report", "--max-bytes", strconv.Itoa(budget), path)
	if code != 1 {
		t.Errorf("brief report of FAIL rows: exit %d, want 1", code)
	}
	if len(out) > budget {
		t.Errorf("brief report is %d bytes, over its budget of %d", len(out), budget)
	}
	for _, want := range []string{"# faultwin report (brief: at most 2048 bytes, failures first)", "### Windows that did not all pass: 1 of 2",
		"| W4_30 | 0/40 |", "_Cut here to stay within 2048 bytes (--max-bytes)"} {
		if !strings.Contains(out, want) {
			t.Errorf("brief report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "| W3_30 | 40/40 |") {
		t.Errorf("a window that passed is listed among the failures:\n%s", out)
	}
	if strings.Count(out, "```")%2 != 0 {
		t.Errorf("a cut left a code fence open:\n%s", out)
	}
	for _, args := range [][]string{{"--max-bytes", "100", path}, {"--max-bytes", "65536", "--out", filepath.Join(dir, "r.html"), path}} {
		if _, code, err := runVerb(t, append([]string{"report"}, args...)...); code != exitUsage || !strings.Contains(err.Error(), "--max-bytes") {
			t.Errorf("report %v: exit %d (%v), want a usage error naming --max-bytes", args, code, err)
		}
	}
}
