package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestShardedSoakEndToEnd runs a 2-pass soak of W1 as two shards, one
// after the other on this host, against the real supervisor, merges them,
// and compares the merge with the same soak run whole: the same windows
// and pass count, every pair exactly once, all PASS, the same k/N and
// Wilson intervals. It runs in a fresh clone of this repository's HEAD, so
// every row records one commit and a clean tree whatever else the working
// tree holds. It needs root and the built binaries (`make build`), and
// checks the host is clean before and after.
func TestShardedSoakEndToEnd(t *testing.T) {
	faultwin, refsup := builtBinaries(t)
	tmp := t.TempDir()
	repo := filepath.Join(tmp, "repo")
	if out, err := exec.Command("git", "clone", "-q", "../..", repo).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	head, err := exec.Command("git", "-C", repo, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	root := "/var/lib/faultwin/sharde2e"
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(root) })
	fw := func(args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(faultwin, args...)
		cmd.Dir = repo
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("faultwin %v: %v", args, err)
		}
		return string(out), code
	}
	if out, code := fw("hostcheck", "--state-root", root); code != 0 {
		t.Fatalf("host not clean before the test:\n%s", out)
	}
	defer func() {
		if out, code := fw("hostcheck", "--state-root", root); code != 0 {
			t.Errorf("host not clean after the test:\n%s", out)
		}
	}()
	soakArgs := func(results string) []string {
		return []string{"soak", "-n", "2", "--label-filter", "W1", "--state-root", root, "--refsup", refsup,
			"--logs", filepath.Join(tmp, "logs"), "--results", results}
	}
	var shards []string
	for _, k := range []string{"1", "2"} {
		p := filepath.Join(tmp, "results-shard-"+k+".jsonl")
		out, code := fw(append(soakArgs(p), "--shard", k+"/2")...)
		t.Logf("shard %s/2:\n%s", k, out)
		if code != 0 {
			t.Fatalf("shard %s/2: exit %d, want 0 (all PASS)", k, code)
		}
		shards = append(shards, p)
	}
	summary := filepath.Join(tmp, "SUMMARY.md")
	merged, code := fw(append([]string{"merge", "--out", summary}, shards...)...)
	t.Logf("merge:\n%s", merged)
	if code != 0 {
		t.Fatalf("merge: exit %d, want 0", code)
	}
	whole, code := fw(soakArgs(filepath.Join(tmp, "whole.jsonl"))...)
	t.Logf("unsharded soak:\n%s", whole)
	if code != 0 {
		t.Fatalf("unsharded soak: exit %d, want 0", code)
	}
	for _, want := range []string{
		"2 shards of 2 passes over 1 windows (W1): 2 of 2 (window, pass) pairs merged.",
		"Every row: commit " + strings.TrimSpace(string(head)) + ", clean work tree: true.",
		"- coverage: ok, each of the 2 pairs exactly once",
		"- provenance: ok",
		"1 windows, 2 rows: PASS 2, FAIL 0, INVALID 0, ERROR 0",
	} {
		if !strings.Contains(merged, want) {
			t.Errorf("no %q in the merge", want)
		}
	}
	m, w := wilsonLines(merged), wilsonLines(whole)
	if len(m) != 1 || strings.Join(m, "\n") != strings.Join(w, "\n") || !strings.HasPrefix(m[0], "W1  2/2 pass  (95% Wilson [0.34, 1.00])") {
		t.Errorf("merged %q, unsharded %q: want the same, W1 2/2 pass", m, w)
	}
	if b, err := os.ReadFile(summary); err != nil || !strings.HasPrefix(merged, string(b)) {
		t.Errorf("--out: %v", err)
	}
}
