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
	if !strings.Contains(out, "| W4_30 | FAIL: P1 | PASS |") || !strings.Contains(out, "1 windows changed, 1 kept their verdict.") {
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
