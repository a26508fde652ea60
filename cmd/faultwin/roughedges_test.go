package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRoughEdges: each misuse a reviewer met gets a message saying what
// to do and the usage exit code, never a silent 0 or a raw system error.
func TestRoughEdges(t *testing.T) {
	const good = "../../results/mutants/leave-ledger.jsonl"
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		says string
	}{
		{"rows of an empty file", []string{"rows", empty}, "holds no row"},
		{"rows of a window no file holds", []string{"rows", "--window", "NOPE", good}, "--window NOPE: no row of 1 file is of that window or family; they hold W11"},
		{"report into a directory", []string{"report", "--out", dir, good}, "is a directory: name the file to write in it"},
		{"report into a directory that does not exist", []string{"report", "--out", filepath.Join(dir, "no", "r.html"), good}, "does not exist; create it first"},
		{"compare a file with itself", []string{"report", "--compare", good, good}, "A and B are the same file"},
		{"summary of a shard", []string{"soak", "--summary", "--shard", "3/2", good}, "--summary summarises rows already written"},
		{"caused-only without summary", []string{"soak", "--caused-only"}, "--caused-only: only with --summary"},
		{"control with a shard", []string{"soak", "--control", "--shard", "1/2"}, "--control with --shard"},
		{"sign a legacy file", []string{"sign", "--key", filepath.Join(dir, "key"), "../../results/windows.jsonl"}, "is a legacy file (written before sealing): it has no seal to sign"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, code, err := runVerb(t, tc.args...)
			if code != exitUsage || err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("exit %d (%v), want %d saying %q:\n%s", code, err, exitUsage, tc.says, out)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "no")); err == nil {
		t.Error("report created the directory --out named")
	}
	if _, err := os.Stat("../../results/windows.jsonl.sig"); err == nil {
		t.Error("a refused sign wrote a signature file")
	}
	// JSON that is not rows: no "chain ok" over it. It cannot be told from
	// a rows file whose first line was edited, so it does not verify.
	notRows := filepath.Join(dir, "other.jsonl")
	if err := os.WriteFile(notRows, []byte(`{"foo": 1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code, _ := runVerb(t, "replay", notRows)
	if code != exitUnverified || strings.Contains(out, "chain ok") || !strings.Contains(out, "NOT ROWS") || !strings.Contains(out, `unknown field "foo"`) {
		t.Errorf("replay of JSON that is not rows: exit %d, want %d, saying NOT ROWS and not chain ok:\n%s", code, exitUnverified, out)
	}
}

// TestUsageSaysUnverifiedExit: every verb that reads evidence exits 4 when
// it does not verify, and its own -h must say so, not the FAIL's 1 it
// once shared.
func TestUsageSaysUnverifiedExit(t *testing.T) {
	for verb, usage := range map[string]string{
		"replay": replayUsage, "report": reportUsage, "merge": mergeUsage,
		"rows": rowsUsage, "soak": soakUsage, "findings": findingsUsage,
	} {
		at := strings.Index(usage, "Exit status")
		if at < 0 {
			t.Errorf("faultwin %s -h has no exit status paragraph", verb)
			continue
		}
		exit := usage[at:]
		if !strings.Contains(strings.Join(strings.Fields(exit), " "), "4 (the evidence does not verify)") {
			t.Errorf("faultwin %s -h does not give exit 4 for evidence that does not verify:\n%s", verb, exit)
		}
	}
}
