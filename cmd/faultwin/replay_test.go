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
	"faultwin/model"
	"faultwin/review/replaytest"
	"faultwin/rows"
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
	if code != 1 {
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
	if out, code, err := runVerb(t, "replay", empty); code != 1 || !strings.Contains(err.Error(), "nothing was checked") {
		t.Errorf("empty file: exit %d, %v\n%s", code, err, out)
	}
	if _, code, err := runVerb(t, "replay", t.TempDir()); code != 1 || !strings.Contains(err.Error(), "no *.jsonl files") {
		t.Errorf("empty directory: exit %d, %v", code, err)
	}
	if _, code, _ := runVerb(t, "replay"); code != 1 {
		t.Errorf("no argument: exit %d", code)
	}
	if _, code, _ := runVerb(t, "replay", filepath.Join(dir, "missing.jsonl")); code != 1 {
		t.Errorf("missing file: exit %d", code)
	}
}

func TestVerbHelp(t *testing.T) {
	for _, v := range []string{"replay", "report", "soak"} {
		out, code, err := runVerb(t, v, "-h")
		if code != 0 || !strings.Contains(out, "usage: faultwin "+v) || !strings.Contains(out, "Exit status") {
			t.Errorf("%s -h: exit %d %v\n%s", v, code, err, out)
		}
	}
}
