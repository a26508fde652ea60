package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/reports/replaytest"
	"faultwin/reports/rows"
)

var t0 = time.Date(2026, 10, 24, 10, 33, 52, 0, time.UTC)

// fixtureFile writes rows judged by the real criteria, chained by the real
// Writer, to dir/name.
func fixtureFile(t *testing.T, dir, name string, ins ...criteria.Input) (string, []rows.Row) {
	t.Helper()
	var rows []rows.Row
	for i, in := range ins {
		rows = append(rows, replaytest.Row(in, replaytest.Prov{Commit: "d25cf84", Started: t0.Add(time.Duration(i) * time.Minute), Load: 0.5}))
	}
	path := filepath.Join(dir, name)
	written, err := replaytest.Write(path, rows...)
	if err != nil {
		t.Fatal(err)
	}
	return path, written
}

func passIn(id string) criteria.Input { return replaytest.As(replaytest.Input(replaytest.W4Pass), id) }

// runVerb runs the CLI and returns its output and exit code (0 for nil).
func runVerb(t *testing.T, args ...string) (string, int, error) {
	t.Helper()
	var out bytes.Buffer
	err := run(context.Background(), &out, args)
	code := 0
	if err != nil {
		code = 1
		var ec exitCoder
		if errors.As(err, &ec) {
			code = ec.ExitCode()
		}
	}
	return out.String(), code, err
}

func TestReplayVerbAgrees(t *testing.T) {
	dir := t.TempDir()
	path, _ := fixtureFile(t, dir, "run1.jsonl", passIn("W3_30"), replaytest.Input(replaytest.W4Survivor))
	out, code, err := runVerb(t, "replay", path)
	if code != 0 {
		t.Fatalf("exit %d (%v), want 0: a faithfully recorded FAIL replays cleanly\n%s", code, err, out)
	}
	for _, want := range []string{"run1.jsonl: 2 rows, chain ok", "W4_30", "replay: 1 file, 2 rows: every chain holds"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	// A directory stands for its *.jsonl files.
	fixtureFile(t, dir, "run3.jsonl", passIn("W3_30"))
	if out, code, _ := runVerb(t, "replay", dir); code != 0 || !strings.Contains(out, "2 files, 3 rows") {
		t.Errorf("directory: exit %d\n%s", code, out)
	}
}

func TestReplayVerbDisagrees(t *testing.T) {
	dir := t.TempDir()
	_, rows := fixtureFile(t, dir, "good.jsonl", passIn("W3_30"), replaytest.Input(replaytest.W4Survivor))
	rows[1].Status = model.StatusPass
	forged := filepath.Join(dir, "forged.jsonl")
	if err := os.WriteFile(forged, replaytest.Lines(replaytest.Reforge(rows)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code, err := runVerb(t, "replay", filepath.Join(dir, "good.jsonl"), forged)
	if code != exitUnverified {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	if !strings.Contains(out, forged+" row 2 (W4_30): status recorded PASS, recomputed FAIL") {
		t.Errorf("difference not named:\n%s", out)
	}
	if !strings.Contains(err.Error(), "1 of 2 files do not replay cleanly") {
		t.Errorf("error: %v", err)
	}
}

func TestReplayVerbNothingToCheck(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// Naming no evidence is a usage error (64), not a verdict on any.
	if out, code, err := runVerb(t, "replay", empty); code != exitUsage || !strings.Contains(err.Error(), "is empty (0 bytes)") {
		t.Errorf("empty file: exit %d, %v\n%s", code, err, out)
	}
	if _, code, err := runVerb(t, "replay", t.TempDir()); code != exitUsage || !strings.Contains(err.Error(), "no *.jsonl files") {
		t.Errorf("empty directory: exit %d, %v", code, err)
	}
	if _, code, _ := runVerb(t, "replay"); code != exitUsage {
		t.Errorf("no argument: exit %d", code)
	}
	if _, code, _ := runVerb(t, "replay", filepath.Join(dir, "missing.jsonl")); code != exitUsage {
		t.Errorf("missing file: exit %d", code)
	}
}

// cutSeal removes a file's last line, its seal: what a harness killed after
// its last row, or a file cut from the end, leaves.
func cutSeal(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	if !strings.HasPrefix(lines[len(lines)-2], `{"seal":`) {
		t.Fatalf("%s does not end in a seal", path)
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines[:len(lines)-2], "")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// legacyFile writes rows the way faultwin wrote them before seals: rows only.
func legacyFile(t *testing.T, dir, name string, ins ...criteria.Input) string {
	t.Helper()
	_, written := fixtureFile(t, t.TempDir(), name, ins...)
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, replaytest.Lines(written), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReplayVerbSeals(t *testing.T) {
	dir := t.TempDir()
	sealed, _ := fixtureFile(t, dir, "sealed.jsonl", passIn("W3_30"), replaytest.Input(replaytest.W4Survivor))
	legacy := legacyFile(t, dir, "legacy.jsonl", passIn("W3_30"))
	out, code, err := runVerb(t, "replay", sealed, legacy)
	if code != 0 {
		t.Fatalf("exit %d (%v)\n%s", code, err, out)
	}
	for _, want := range []string{
		sealed + ": 2 rows, chain ok, sealed, last hash",
		legacy + ": 1 rows, chain ok, unsealed (legacy: written before sealing), last hash",
		"replay: 2 files, 3 rows: every chain holds and every row re-judges as recorded; 1 sealed, 1 legacy (written before sealing: a cut tail cannot be told)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}

	// The last row and the seal cut: the chain holds, the seal is missing.
	cut, _ := fixtureFile(t, dir, "cut.jsonl", passIn("W3_30"), passIn("W4_30"), replaytest.Input(replaytest.W4Survivor))
	cutSeal(t, cut)
	b, _ := os.ReadFile(cut)
	lines := strings.SplitAfter(string(b), "\n")
	os.WriteFile(cut, []byte(strings.Join(lines[:len(lines)-2], "")), 0o644)
	out, code, err = runVerb(t, "replay", sealed, cut)
	if code != exitUnverified {
		t.Fatalf("cut file: exit %d, want 1\n%s", code, out)
	}
	for _, want := range []string{
		cut + ": 2 rows, chain ok, UNSEALED",
		cut + " line 1: UNSEALED: the session opened at ",
		"has 2 rows and no seal: the run that wrote them never finished (the harness was killed), or the file was cut from the end",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	for _, want := range []string{"1 of 2 files do not replay cleanly", "unsealed: " + cut + " (2 rows from line 1, no seal)", "faultwin seal --unfinished --reason WHY FILE", "restore it from a copy"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}

	// Sealing it as unfinished is explicit, with a reason, and then replays.
	if _, code, err := runVerb(t, "seal", cut); code != exitUsage || !strings.Contains(err.Error(), "--unfinished is required") {
		t.Errorf("seal without --unfinished: exit %d %v", code, err)
	}
	if _, code, err := runVerb(t, "seal", "--unfinished", cut); code != exitUsage || !strings.Contains(err.Error(), "--reason is required") {
		t.Errorf("seal without --reason: exit %d %v", code, err)
	}
	out, code, err = runVerb(t, "seal", "--unfinished", "--reason", "harness killed by the OOM killer", cut)
	if code != 0 || !strings.Contains(out, "seal: "+cut+": sealed its last session (2 rows) as unfinished: harness killed by the OOM killer; the file holds 2 rows") {
		t.Fatalf("seal: exit %d %v\n%s", code, err, out)
	}
	out, code, _ = runVerb(t, "replay", cut)
	if code != 0 || !strings.Contains(out, cut+" line 1: session of 2 rows sealed as unfinished at ") {
		t.Errorf("replay after sealing: exit %d\n%s", code, out)
	}
	_, code, err = runVerb(t, "seal", "--unfinished", "--reason", "x", cut, legacy)
	if code != 1 || !strings.Contains(err.Error(), "sealed already") || !strings.Contains(err.Error(), "a legacy file") {
		t.Errorf("sealing a sealed and a legacy file: exit %d %v", code, err)
	}
}

// TestRunRefusesUnsealedResults: the next run does not append to a file
// whose last session was never sealed; it says how to get out.
func TestRunRefusesUnsealedResults(t *testing.T) {
	dir := t.TempDir()
	results, _ := fixtureFile(t, dir, "windows.jsonl", passIn("W3_30"))
	cutSeal(t, results)
	before, _ := os.ReadFile(results)
	bin := filepath.Join(dir, "refsup")
	os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755)
	for _, v := range []string{"run", "soak"} {
		_, code, err := runVerb(t, v, "--windows", "../../windows/refsup", "--refsup", bin, "--state-root", filepath.Join(dir, "state"), "--results", results)
		if code != 1 || !errors.Is(err, rows.ErrUnsealed) {
			t.Fatalf("%s: exit %d %v", v, code, err)
		}
		for _, want := range []string{results + ": the session opened at line 1 at ", "has 1 row and no seal", "faultwin replay " + results, "faultwin seal --unfinished --reason WHY " + results, "--results"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %q lacks %q", v, err, want)
			}
		}
	}
	if after, _ := os.ReadFile(results); string(after) != string(before) {
		t.Error("the refused file was changed")
	}
}

// TestReportUnsealed: the report lists a session without its seal among
// the evidence that does not verify, and exits 1.
func TestReportUnsealed(t *testing.T) {
	dir := t.TempDir()
	path, _ := fixtureFile(t, dir, "run.jsonl", passIn("W3_30"))
	if _, code, err := runVerb(t, "report", path); code != 0 {
		t.Fatalf("sealed: exit %d %v", code, err)
	}
	cutSeal(t, path)
	out, code, err := runVerb(t, "report", path)
	if code != exitUnverified || !strings.Contains(err.Error(), "the evidence does not verify") || !strings.Contains(out, path+" line 1: UNSEALED") {
		t.Errorf("unsealed: exit %d %v\n%s", code, err, out)
	}
	legacy := legacyFile(t, dir, "legacy.jsonl", passIn("W3_30"))
	if out, code, err := runVerb(t, "report", legacy); code != 0 || strings.Contains(out, "UNSEALED") {
		t.Errorf("legacy: exit %d %v\n%s", code, err, out)
	}
}
