package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"faultwin/reports/replaytest"
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
	if !strings.Contains(out, "| W4_30 | FAIL: P1 | PASS |") || !strings.Contains(out, "1 windows changed, 1 kept their verdict; 0 of the changes are supported") {
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
	if code != 1 || !strings.Contains(err.Error(), "does not verify") {
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
