package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/reports/replaytest"
	"faultwin/reports/review"
	"faultwin/reports/rows"
	"faultwin/snapshots"
	"faultwin/windows/runner"
)

// pairRunner plays one outcome per (window, pass) pair of the plan it is
// given, in order, judged by the real criteria; it fails the run if the
// soak asks for another window than the plan's next.
type pairRunner struct {
	plan   []review.Pair
	i      int
	in     func(review.Pair) criteria.Input
	kernel string
	load   float64
}

func (r *pairRunner) Run(_ context.Context, w model.Window) (*runner.Outcome, error) {
	if r.i >= len(r.plan) {
		return nil, fmt.Errorf("pairRunner: %s run after the plan's %d pairs", w.ID, len(r.plan))
	}
	p := r.plan[r.i]
	r.i++
	if p.Window != w.ID {
		return nil, fmt.Errorf("pairRunner: ran %s, the plan's next pair is %s", w.ID, p)
	}
	in := r.in(p)
	start := t0.Add(time.Duration(p.Pass*100+r.i) * time.Minute)
	return &runner.Outcome{
		Input:   in,
		Verdict: criteria.Evaluate(in),
		Host: snapshots.Host{Kernel: r.kernel, CRIUVersion: "4.2.1", Cores: 2, MemBytes: 4 << 30,
			LoadBefore: [3]float64{r.load + float64(r.i)/100, 0.4, 0.3}},
		Started:   start,
		Finished:  start.Add(4100 * time.Millisecond),
		Durations: map[string]float64{"prepare": 800},
	}, nil
}

var mergeWindows = []string{"W3_30", "W3_80", "W4_30"}

// outcomes: every pair passes but W4_30 pass 2 (FAIL: P1).
func outcomes(p review.Pair) criteria.Input {
	if p.Window == "W4_30" && p.Pass == 2 {
		return replaytest.Input(replaytest.W4Survivor)
	}
	return passIn(p.Window)
}

// shardRun runs shard sh (nil: the whole soak) of a passes-pass soak of
// mergeWindows with the scripted outcomes, into dir/name, sealed.
func shardRun(t *testing.T, dir, name string, sh *review.Shard, passes int, prov runner.Provenance, in func(review.Pair) criteria.Input) (string, string, error) {
	t.Helper()
	path := filepath.Join(dir, name)
	w, err := rows.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	plan := review.AllPairs(mergeWindows, passes)
	kernel := "6.1.0-whole"
	if sh != nil {
		plan = review.ShardPairs(mergeWindows, passes, *sh)
		kernel = fmt.Sprintf("6.1.0-shard%d", sh.K)
	}
	var ws []model.Window
	for _, id := range mergeWindows {
		ws = append(ws, replaytest.Window(id))
	}
	r := &pairRunner{plan: plan, in: in, kernel: kernel, load: 0.5}
	s := &windowSession{windows: ws, runner: r, Session: &runner.Session{Prov: &prov, Rows: w, Results: path}}
	var out bytes.Buffer
	err = soakShard(context.Background(), &out, s, passes, sh, false)
	if cerr := closeSession(s, nil); cerr != nil {
		t.Fatal(cerr)
	}
	return path, out.String(), err
}

func clean(commit string) runner.Provenance { return runner.Provenance{Commit: commit} }

// writeShards runs every shard of n of a 3-pass soak into dir.
func writeShards(t *testing.T, dir string, n int) []string {
	t.Helper()
	var paths []string
	for k := 1; k <= n; k++ {
		p, _, _ := shardRun(t, dir, fmt.Sprintf("shard-%d.jsonl", k), &review.Shard{K: k, N: n}, 3, clean("5e45759"), outcomes)
		paths = append(paths, p)
	}
	return paths
}

// wilsonLines keeps each window's counts and interval from a summary:
// "W4_30  2/3 pass  (95% Wilson [0.21, 0.94])  FAIL 1  INVALID 0  ERROR 0".
func wilsonLines(s string) []string {
	return regexp.MustCompile(`(?m)^W\S+ +\d+/\d+ pass +\(95% Wilson \[[\d.]+, [\d.]+\]\) +FAIL \d+ +INVALID \d+ +ERROR \d+`).FindAllString(s, -1)
}

// TestSoakShard: a shard runs exactly the rule's pairs, numbers its
// progress and summary by the soak's passes, and records its shard in the
// session's open marker, from which every row's shard and pass follow.
func TestSoakShard(t *testing.T) {
	dir := t.TempDir()
	sh := review.Shard{K: 2, N: 2}
	path, out, err := shardRun(t, dir, "s2.jsonl", &sh, 3, clean("5e45759"), outcomes)
	if code := exitCode(err); code != 1 {
		t.Errorf("exit %d (%v), want 1 (W4_30 pass 2 FAILs on shard 2)", code, err)
	}
	for _, want := range []string{
		"soak: shard 2/2 (pass-major-mod-n): 4 of the 9 rows of 3 passes over 3 windows, appended to " + path,
		"[1/3] W3_80    PASS", "[2/3] W3_30    PASS", "[2/3] W4_30    FAIL", "[3/3] W3_80    PASS",
		"  W4_30 pass 2: FAIL (P1 false)",
		"3 windows, 4 rows: PASS 3, FAIL 1, INVALID 0, ERROR 0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	c, err := rows.VerifyContents(path)
	if err != nil {
		t.Fatal(err)
	}
	if st := c.Sealing(); st.State != rows.Sealed || len(st.Sessions) != 1 {
		t.Fatalf("sealing %+v", st)
	}
	open := c.Markers[0].Open
	if open == nil || open.Shard == nil {
		t.Fatalf("no shard facts in the open marker: %+v", c.Markers[0])
	}
	want := rows.ShardMark{K: 2, N: 2, Passes: 3, Windows: mergeWindows, Rule: review.ShardRule}
	if fmt.Sprint(*open.Shard) != fmt.Sprint(want) {
		t.Errorf("shard mark %+v, want %+v", *open.Shard, want)
	}
	passes, ok := review.ShardPasses(c)
	var got []string
	for i, r := range c.Rows {
		got = append(got, fmt.Sprintf("%s/%d", r.Window.ID, passes[i]))
	}
	if !ok || strings.Join(got, " ") != "W3_80/1 W3_30/2 W4_30/2 W3_80/3" {
		t.Errorf("rows by shard pass: %v (ok %v)", got, ok)
	}
	// soak --summary numbers a shard's rows by the rule too.
	sum, _, _ := runVerb(t, "soak", "--summary", path)
	if !strings.Contains(sum, path+": 4 rows, 3 passes, chain ok, sealed, shard 2/2") || !strings.Contains(sum, "  W4_30 pass 2: FAIL (P1 false)") {
		t.Errorf("soak --summary of a shard:\n%s", sum)
	}
	// Old markers (no shard) read and verify unchanged: the field is omitempty.
	if b := readFile(t, path); strings.Count(b, `"shard":`) != 1 {
		t.Errorf("want the shard facts on the open marker only:\n%s", b)
	}
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ec exitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return 1
}

func TestSoakShardFlag(t *testing.T) {
	for v, want := range map[string]string{
		"3/2": "--shard 3/2: k must be 1..n",
		"0/4": "--shard 0/4: k must be 1..n",
		"2/0": "--shard 2/0: n must be at least 1",
		"x":   "--shard x: want k/n",
	} {
		if _, code, err := runVerb(t, "soak", "--shard", v, "--windows", "../../windows/refsup"); code != exitUsage || err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--shard %s: exit %d %v, want %q", v, code, err, want)
		}
	}
	// A shard the rule gives no pair is refused, not run empty.
	_, _, err := shardRun(t, t.TempDir(), "empty.jsonl", &review.Shard{K: 4, N: 4}, 1, clean("5e45759"), outcomes)
	if err == nil || !strings.Contains(err.Error(), "the soak has 3 pairs (1 passes x 3 windows), fewer than 4 shards, so shard 4 has none") {
		t.Errorf("empty shard: %v", err)
	}
}

// TestMergeShards: the shards of a soak, merged, summarise exactly as the
// same soak run whole, for several shard counts; each shard's rows, load
// and host facts are listed; the exit is the statuses' (a FAIL: 1).
func TestMergeShards(t *testing.T) {
	whole, wholeOut, _ := shardRun(t, t.TempDir(), "whole.jsonl", nil, 3, clean("5e45759"), outcomes)
	want := wilsonLines(wholeOut)
	if len(want) != 3 || !strings.Contains(wholeOut, "W4_30  2/3 pass  (95% Wilson [0.21, 0.94])  FAIL 1") {
		t.Fatalf("unsharded soak summary:\n%s", wholeOut)
	}
	for _, n := range []int{1, 2, 3, 4} {
		dir := t.TempDir()
		paths := writeShards(t, dir, n)
		md := filepath.Join(dir, "summary", "SUMMARY.md")
		if err := os.MkdirAll(filepath.Dir(md), 0o755); err != nil {
			t.Fatal(err)
		}
		out, code, err := runVerb(t, append([]string{"merge", "--out", md}, paths...)...)
		if code != 1 || !strings.Contains(err.Error(), "1 row FAIL in 1 window") {
			t.Errorf("%d shards: exit %d (%v), want 1 for the FAIL\n%s", n, code, err, out)
		}
		if got := wilsonLines(out); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%d shards: merged summary\n%s\nwant the unsharded soak's\n%s", n, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		for _, w := range []string{
			fmt.Sprintf("%d shards of 3 passes over 3 windows (W3_30 W3_80 W4_30): 9 of 9 (window, pass) pairs merged.", n),
			"Every row: commit 5e45759, clean work tree: true.",
			"- files: " + fmt.Sprint(n) + " read; chains, seals and re-judgement: ok",
			"- coverage: ok, each of the 9 pairs exactly once",
			"- provenance: ok",
			"  W4_30 pass 2: FAIL (P1 false)",
			"3 windows, 9 rows: PASS 8, FAIL 1, INVALID 0, ERROR 0",
			"merge: summary written to " + md,
		} {
			if !strings.Contains(out, w) {
				t.Errorf("%d shards: no %q in:\n%s", n, w, out)
			}
		}
		for k := 1; k <= n; k++ {
			rowsK := len(review.ShardPairs(mergeWindows, 3, review.Shard{K: k, N: n}))
			re := regexp.MustCompile(fmt.Sprintf(`(?m)^\| %d/%d \| %d of %d \| PASS \d+(, FAIL 1)? \| 0\.51/[\d.]+/[\d.]+ \| 6\.1\.0-shard%d \| 4\.2\.1 \| 2 \| 4\.0 GiB \| %s \|$`,
				k, n, rowsK, rowsK, k, regexp.QuoteMeta(paths[k-1])))
			if !re.MatchString(out) {
				t.Errorf("%d shards: no shard line for %d/%d matching %s in:\n%s", n, k, n, re, out)
			}
		}
		if b := readFile(t, md); !strings.HasPrefix(out, b) {
			t.Errorf("%d shards: --out holds something else than the printed summary:\n%s", n, b)
		}
	}
	// An unsharded soak's file is not a shard.
	out, code, _ := runVerb(t, "merge", whole)
	if code != exitUnverified || !strings.Contains(out, "a session of 9 rows with no shard facts in its open marker") || !strings.Contains(out, "no shard session in 1 file") {
		t.Errorf("unsharded file: exit %d\n%s", code, out)
	}
}

func TestMergeAllPass(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for k := 1; k <= 2; k++ {
		p, _, err := shardRun(t, dir, fmt.Sprintf("s%d.jsonl", k), &review.Shard{K: k, N: 2}, 2, clean("5e45759"), func(p review.Pair) criteria.Input { return passIn(p.Window) })
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	out, code, err := runVerb(t, append([]string{"merge"}, paths...)...)
	if code != 0 || !strings.Contains(out, "W3_30  2/2 pass  (95% Wilson [0.34, 1.00])") {
		t.Errorf("all PASS: exit %d %v\n%s", code, err, out)
	}
	// INVALID only: exit 2; an ERROR: 3.
	inv, _, _ := shardRun(t, t.TempDir(), "inv.jsonl", &review.Shard{K: 1, N: 1}, 1, clean("5e45759"), func(p review.Pair) criteria.Input {
		if p.Window == "W3_30" {
			return replaytest.As(replaytest.Input(replaytest.W3NotFired), "W3_30")
		}
		return passIn(p.Window)
	})
	if out, code, _ := runVerb(t, "merge", inv); code != 2 {
		t.Errorf("INVALID only: exit %d, want 2\n%s", code, out)
	}
	errd, _, _ := shardRun(t, t.TempDir(), "err.jsonl", &review.Shard{K: 1, N: 1}, 1, clean("5e45759"), func(p review.Pair) criteria.Input {
		return replaytest.Errored(passIn(p.Window), "snapshot after_death: EMFILE")
	})
	if out, code, _ := runVerb(t, "merge", errd); code != 3 {
		t.Errorf("ERROR: exit %d, want 3\n%s", code, out)
	}
}

// TestMergeProvenance: shards of different commits, or of a dirty tree,
// are named and refused; --allow-mixed merges them with a warning.
func TestMergeProvenance(t *testing.T) {
	dir := t.TempDir()
	pass := func(p review.Pair) criteria.Input { return passIn(p.Window) }
	s1, _, _ := shardRun(t, dir, "s1.jsonl", &review.Shard{K: 1, N: 3}, 2, clean("5e45759aaaa"), pass)
	s2, _, _ := shardRun(t, dir, "s2.jsonl", &review.Shard{K: 2, N: 3}, 2, clean("f0a16bebbbb"), pass)
	s3, _, _ := shardRun(t, dir, "s3.jsonl", &review.Shard{K: 3, N: 3}, 2, runner.Provenance{Commit: "5e45759aaaa", Dirty: true}, pass)
	out, code, err := runVerb(t, "merge", s1, s2, s3)
	if code != 1 || !strings.Contains(err.Error(), "mixed provenance") {
		t.Errorf("mixed: exit %d %v\n%s", code, err, out)
	}
	for _, w := range []string{
		"**MIXED PROVENANCE** (commits 5e45759aaaa, f0a16bebbbb",
		"- provenance: rows of 2 commits: 5e45759aaaa in " + s1 + " (shard 1/3): 2 rows, " + s3 + " (shard 3/3): 2 rows; f0a16bebbbb in " + s2 + " (shard 2/3): 2 rows",
		"- provenance: " + s3 + " (shard 3/3): 2 of 2 rows run from a dirty work tree",
		"- coverage: ok, each of the 6 pairs exactly once",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("no %q in:\n%s", w, out)
		}
	}
	out, code, err = runVerb(t, "merge", "--allow-mixed", s1, s2, s3)
	if code != 0 || !strings.Contains(out, "**WARNING: mixed provenance, accepted with --allow-mixed**") ||
		!strings.Contains(out, "- (accepted with --allow-mixed) provenance: rows of 2 commits") {
		t.Errorf("--allow-mixed: exit %d %v\n%s", code, err, out)
	}
}

// TestMergeCoverage: a missing shard, a shard given twice, an interrupted
// shard and a shard of another soak are each named, with their pairs.
func TestMergeCoverage(t *testing.T) {
	dir := t.TempDir()
	paths := writeShards(t, dir, 3) // 9 pairs: 3 each
	out, code, err := runVerb(t, "merge", paths[0], paths[2])
	if code != exitUnverified || !strings.Contains(err.Error(), "problem(s)") {
		t.Errorf("missing shard: exit %d %v", code, err)
	}
	for _, w := range []string{
		"- shard 2/3: no session of it in any file",
		// 3 windows over 3 shards: the rule keeps each window on one shard.
		"- coverage: 3 pairs of 9 missing: W3_80 pass 1 (shard 2/3), W3_80 pass 2 (shard 2/3), W3_80 pass 3 (shard 2/3)",
		"- coverage: 6 of 9 pairs, 3 MISSING, 0 DUPLICATED",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("missing shard: no %q in:\n%s", w, out)
		}
	}

	dup := filepath.Join(dir, "copy-of-shard-1.jsonl")
	os.WriteFile(dup, []byte(readFile(t, paths[0])), 0o644)
	out, code, _ = runVerb(t, "merge", paths[0], paths[1], paths[2], dup)
	if code != exitUnverified || !strings.Contains(out, "- coverage: W3_30 pass 1 measured 2 times: "+paths[0]+" line 2 (shard 1/3), "+dup+" line 2 (shard 1/3) (the first is merged)") ||
		!strings.Contains(out, "9 of 9 pairs, 0 MISSING, 3 DUPLICATED") {
		t.Errorf("duplicate shard: exit %d\n%s", code, out)
	}

	// Shard 2 interrupted after one row: its seal says so, the rest is missing.
	ctx, cancel := context.WithCancel(context.Background())
	p2 := filepath.Join(dir, "interrupted.jsonl")
	w, err := rows.Open(p2)
	if err != nil {
		t.Fatal(err)
	}
	var ws []model.Window
	for _, id := range mergeWindows {
		ws = append(ws, replaytest.Window(id))
	}
	sh := review.Shard{K: 2, N: 3}
	r := &pairRunner{plan: review.ShardPairs(mergeWindows, 3, sh), in: outcomes, kernel: "k", load: 0.1}
	stop := &stopAfter{windowRunner: r, n: 1, cancel: cancel}
	s := &windowSession{windows: ws, runner: stop, Session: &runner.Session{Prov: &runner.Provenance{Commit: "5e45759"}, Rows: w, Results: p2}}
	soakShard(ctx, &bytes.Buffer{}, s, 3, &sh, false)
	closeSession(s, nil)
	out, code, _ = runVerb(t, "merge", paths[0], p2, paths[2])
	if code != exitUnverified || !strings.Contains(out, "- coverage: 2 pairs of 9 missing: W3_80 pass 2 (shard 2/3), W3_80 pass 3 (shard 2/3)") ||
		!strings.Contains(out, "| "+p2+" | 2/3 (line 1, 1 of 3 rows) | 1 | sealed |") {
		t.Errorf("interrupted shard: exit %d\n%s", code, out)
	}

	// A shard of a 2-pass soak does not merge with a 3-pass soak's.
	other, _, _ := shardRun(t, dir, "other.jsonl", &review.Shard{K: 2, N: 3}, 2, clean("5e45759"), outcomes)
	out, code, _ = runVerb(t, "merge", paths[0], other, paths[2])
	if code != exitUnverified || !strings.Contains(out, "- "+other+" line 1 (shard 2/3): another plan: 2 passes, not 3 than "+paths[0]+" line 1 (shard 1/3): a shard of another soak, not merged") {
		t.Errorf("another plan: exit %d\n%s", code, out)
	}
}

// stopAfter cancels the soak after n windows.
type stopAfter struct {
	windowRunner
	n, calls int
	cancel   func()
}

func (s *stopAfter) Run(ctx context.Context, w model.Window) (*runner.Outcome, error) {
	o, err := s.windowRunner.Run(ctx, w)
	if s.calls++; s.calls == s.n {
		s.cancel()
	}
	return o, err
}

// TestMergeChains: an edited row, a cut seal and a re-forged row (chain
// recomputed, verdict edited) each fail the merge, naming the file.
func TestMergeChains(t *testing.T) {
	dir := t.TempDir()
	paths := writeShards(t, dir, 2)
	lines := strings.SplitAfter(readFile(t, paths[1]), "\n") // open, 4 rows, seal, ""

	edited := filepath.Join(dir, "edited.jsonl")
	os.WriteFile(edited, []byte(lines[0]+strings.Replace(lines[1], `"load_before":[0.51`, `"load_before":[0.01`, 1)+strings.Join(lines[2:], "")), 0o644)
	out, code, _ := runVerb(t, "merge", paths[0], edited)
	if code != exitUnverified || !strings.Contains(out, "- "+edited+" row 1 (W3_80): chain broken: hash") || !strings.Contains(out, "| "+edited+" | 2/2 (line 1, 4 of 4 rows) | 4 | CHAIN BROKEN |") {
		t.Errorf("edited row: exit %d\n%s", code, out)
	}

	cut := filepath.Join(dir, "cut.jsonl")
	os.WriteFile(cut, []byte(strings.Join(lines[:5], "")), 0o644)
	out, code, _ = runVerb(t, "merge", paths[0], cut)
	if code != exitUnverified || !strings.Contains(out, "- "+cut+" line 1: UNSEALED: the session opened at") {
		t.Errorf("cut seal: exit %d\n%s", code, out)
	}

	// A verdict edited to PASS and rewritten with its chain and seal
	// recomputed: the file verifies, the re-judgement does not.
	c, err := rows.ReadContents(paths[1])
	if err != nil {
		t.Fatal(err)
	}
	fp := filepath.Join(dir, "forged.jsonl")
	w, err := rows.Open(fp)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.StartSession(c.Markers[0].Open.Shard); err != nil {
		t.Fatal(err)
	}
	forged := false
	for _, r := range c.Rows {
		if r.Status == model.StatusFail {
			r.Status, forged = model.StatusPass, true
		}
		if err := w.Append(&r); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	if !forged {
		t.Fatal("no FAIL row in shard 2")
	}
	out, code, _ = runVerb(t, "merge", paths[0], fp)
	if code != exitUnverified || !strings.Contains(out, "- does not re-judge as recorded: "+fp+" row 3 at line 4 (W4_30): status recorded PASS, recomputed FAIL") ||
		!strings.Contains(out, "- coverage: ok, each of the 9 pairs exactly once") {
		t.Errorf("forged verdict: exit %d\n%s", code, out)
	}
}
