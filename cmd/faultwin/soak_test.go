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

// scripted plays back one outcome per call and window, judged by the real
// criteria, so the soak's loop, rows, progress and summary are tested
// without a supervisor or the host.
type scripted struct {
	plan   map[string][]func() (criteria.Input, error)
	calls  map[string]int
	onCall func(total int)
	total  int
	// left is what the judge of a clean host finds after a window's k-th
	// call (none when absent).
	left map[string]map[int][]string
}

func (s *scripted) Run(_ context.Context, w model.Window) (*runner.Outcome, error) {
	k := s.calls[w.ID]
	s.calls[w.ID]++
	s.total++
	if s.onCall != nil {
		s.onCall(s.total)
	}
	in, err := s.plan[w.ID][k]()
	if err != nil {
		return nil, err
	}
	start := t0.Add(time.Duration(s.total) * time.Minute)
	return &runner.Outcome{
		Input:     in,
		Verdict:   criteria.Evaluate(in),
		Host:      snapshots.Host{Kernel: "6.18.0", LoadBefore: [3]float64{0.5 + float64(s.total)/100, 0.4, 0.3}},
		Started:   start,
		Finished:  start.Add(4100 * time.Millisecond),
		Durations: map[string]float64{"prepare": 800},
		HostLeft:  s.left[w.ID][k],
	}, nil
}

func ok(in criteria.Input) func() (criteria.Input, error) {
	return func() (criteria.Input, error) { return in, nil }
}

func broke(msg string) func() (criteria.Input, error) {
	return func() (criteria.Input, error) { return criteria.Input{}, errors.New(msg) }
}

func session(t *testing.T, r windowRunner, ids ...string) *windowSession {
	t.Helper()
	out := filepath.Join(t.TempDir(), "soak.jsonl")
	w, err := rows.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	var ws []model.Window
	for _, id := range ids {
		ws = append(ws, replaytest.Window(id))
	}
	return &windowSession{windows: ws, runner: r, Session: &runner.Session{Prov: &runner.Provenance{Commit: "8b3bfd2"}, Rows: w, Results: out}}
}

// TestSoakNeverStops: a FAIL in pass 2 and a runner that breaks in pass 3
// do not stop the soak; every pass writes a row per window, the runner's
// failure becomes an ERROR row, and the summary counts them apart.
func TestSoakNeverStops(t *testing.T) {
	pass := replaytest.Input(replaytest.W4Pass)
	r := &scripted{calls: map[string]int{}, plan: map[string][]func() (criteria.Input, error){
		"W3_30": {ok(replaytest.As(pass, "W3_30")), ok(replaytest.As(pass, "W3_30")), ok(replaytest.As(pass, "W3_30"))},
		"W4_30": {ok(pass), ok(replaytest.Input(replaytest.W4Survivor)), broke("driver: refsup did not start")},
	}}
	s := session(t, r, "W3_30", "W4_30")
	var out bytes.Buffer
	err := soak(context.Background(), &out, s, 3)
	var ec exitCoder
	if !errors.As(err, &ec) || ec.ExitCode() != 3 {
		t.Errorf("exit %v, want 3 (an ERROR row)", err)
	}
	got := out.String()
	progress := regexp.MustCompile(`(?m)^\[(\d)/3\] (W\S+) +(\S+) +4\.1s load (\d\.\d\d) eta \d+m\d\ds$`).FindAllStringSubmatch(got, -1)
	if len(progress) != 5 {
		t.Errorf("%d progress lines of the form [k/N] W3_30 PASS 4.1s load 0.52 eta 0m03s, want 5 (the ERROR row has no duration):\n%s", len(progress), got)
	}
	if !regexp.MustCompile(`(?m)^\[3/3\] W4_30 +ERROR +0\.0s load `).MatchString(got) {
		t.Errorf("no progress line for the runner's failure:\n%s", got)
	}
	for _, want := range []string{
		"soak: 3 passes over 2 windows, 6 rows, appended to " + s.Results,
		review.RateRule,
		"W3_30  3/3 pass  (95% Wilson [0.44, 1.00])  FAIL 0  INVALID 0  ERROR 0",
		"W4_30  1/2 pass  (95% Wilson [0.09, 0.91])  FAIL 1  INVALID 0  ERROR 1",
		"  W4_30 pass 2: FAIL (P1 false)",
		"  W4_30 pass 3: ERROR (harness error: runner: driver: refsup did not start)",
		"2 windows, 6 rows: PASS 4, FAIL 1, INVALID 0, ERROR 1",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
	// The soak's rows are one session, sealed when the verb closes it.
	if f := review.ReplayFile(s.Results); f.Seal.State != rows.Unsealed {
		t.Errorf("before close: %s, want unsealed", f.Seal.State)
	}
	if err := closeSession(s, nil); err != nil {
		t.Fatal(err)
	}
	f := review.ReplayFile(s.Results)
	if !f.OK() || len(f.Records) != 6 {
		t.Fatalf("soak rows do not replay: %d rows, read %v chain %v diffs %v seal %+v", len(f.Records), f.ReadErr, f.Chain, f.Diffs, f.Seal)
	}
	if len(f.Seal.Sessions) != 1 || f.Seal.Sessions[0].Seal.Seal.Note != "" || f.Seal.Sessions[0].Rows != 6 {
		t.Errorf("seal %+v", f.Seal.Sessions)
	}
	if p := review.Passes(f.Records); fmt.Sprint(p) != "[1 1 2 2 3 3]" {
		t.Errorf("passes %v", p)
	}
}

func TestSoakInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pass := replaytest.Input(replaytest.W4Pass)
	plan := []func() (criteria.Input, error){ok(pass), ok(pass), ok(pass), ok(pass)}
	r := &scripted{calls: map[string]int{}, plan: map[string][]func() (criteria.Input, error){"W4_30": plan},
		onCall: func(n int) {
			if n == 2 {
				cancel()
			}
		}}
	s := session(t, r, "W4_30")
	var out bytes.Buffer
	err := soak(ctx, &out, s, 4)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
	if !strings.Contains(out.String(), "soak: interrupted after 2 of 4 rows") || !strings.Contains(out.String(), "W4_30  2/2 pass") {
		t.Errorf("no summary of the rows so far:\n%s", out.String())
	}
	// The interrupted soak seals its rows, saying why they stop short.
	f := review.ReplayFile(s.Results)
	if !f.OK() || len(f.Seal.Sessions) != 1 || f.Seal.Sessions[0].Seal == nil ||
		f.Seal.Sessions[0].Seal.Seal.Note != "soak interrupted after 2 of 4 rows: context canceled" {
		t.Errorf("interrupted soak: ok %v seal %+v", f.OK(), f.Seal.Sessions)
	}
}

func TestSoakSummaryVerb(t *testing.T) {
	dir := t.TempDir()
	pass := replaytest.Input(replaytest.W4Pass)
	a, _ := fixtureFile(t, dir, "a.jsonl", replaytest.As(pass, "W3_30"), pass, replaytest.As(pass, "W3_30"), replaytest.Input(replaytest.W4Survivor))
	out, code, _ := runVerb(t, "soak", "--summary", a)
	if code != 1 {
		t.Errorf("a FAIL: exit %d, want 1", code)
	}
	for _, want := range []string{a + ": 4 rows, 2 passes, chain ok, sealed", "W4_30  1/2 pass  (95% Wilson [0.09, 0.91])  FAIL 1", "  W4_30 pass 2: FAIL (P1 false)"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}

	inv, _ := fixtureFile(t, dir, "inv.jsonl", replaytest.As(pass, "W3_30"), replaytest.As(replaytest.Input(replaytest.W3NotFired), "W3_30"))
	if out, code, _ := runVerb(t, "soak", "--summary", inv); code != 2 || !strings.Contains(out, "W3_30  1/1 pass  (95% Wilson [0.21, 1.00])  FAIL 0  INVALID 1  ERROR 0") {
		t.Errorf("INVALID only: exit %d, want 2\n%s", code, out)
	}

	errd, _ := fixtureFile(t, dir, "err.jsonl", replaytest.Errored(pass, "snapshot after_death: EMFILE"))
	if _, code, _ := runVerb(t, "soak", "--summary", errd, inv); code != 3 {
		t.Errorf("an ERROR: exit %d, want 3", code)
	}

	lines := strings.SplitAfter(readFile(t, a), "\n") // open, 4 rows, seal, ""
	cut := filepath.Join(dir, "cut.jsonl")
	os.WriteFile(cut, []byte(lines[0]+strings.Join(lines[2:], "")), 0o644) // the first row removed
	if out, code, err := runVerb(t, "soak", "--summary", cut); code != exitUnverified || !strings.Contains(out, "DOES NOT VERIFY") || !strings.Contains(err.Error(), "faultwin replay") {
		t.Errorf("broken chain: exit %d %v\n%s", code, err, out)
	}

	// The seal cut off: the rows verify and are summarised, the file fails.
	unsealed := filepath.Join(dir, "unsealed.jsonl")
	os.WriteFile(unsealed, []byte(strings.Join(lines[:5], "")), 0o644)
	out, code, err := runVerb(t, "soak", "--summary", unsealed)
	if code != exitUnverified || !strings.Contains(out, unsealed+": 4 rows, 2 passes, chain ok, UNSEALED") || !strings.Contains(out, "W4_30  1/2 pass") ||
		!strings.Contains(out, unsealed+" line 1: UNSEALED: the session opened at ") || !strings.Contains(err.Error(), "1 session(s) without a seal") {
		t.Errorf("unsealed: exit %d %v\n%s", code, err, out)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSoakFlags(t *testing.T) {
	if _, code, err := runVerb(t, "soak", "-n", "0"); code != exitUsage || !strings.Contains(err.Error(), "at least one pass") {
		t.Errorf("-n 0: exit %d %v", code, err)
	}
	if _, code, err := runVerb(t, "soak", "extra"); code != exitUsage || !strings.Contains(err.Error(), "--summary") {
		t.Errorf("stray argument: exit %d %v", code, err)
	}
	missing := filepath.Join(t.TempDir(), "refsup")
	for _, v := range []string{"run", "soak"} {
		_, _, err := runVerb(t, v, "--windows", "../../windows/refsup", "--refsup", missing, "--results", filepath.Join(t.TempDir(), "x.jsonl"))
		if err == nil || !strings.Contains(err.Error(), "refsup binary") {
			t.Errorf("%s with no refsup binary: %v", v, err)
		}
		_, _, err = runVerb(t, v, "--windows", "../../windows/refsup", "--label-filter", "NO_SUCH_WINDOW")
		if !errors.Is(err, runner.ErrNoWindows) {
			t.Errorf("%s selecting nothing: %v, want ErrNoWindows", v, err)
		}
	}
}

func TestClock(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0m00s", 3 * time.Second: "0m03s", 12*time.Minute + 3*time.Second: "12m03s", time.Hour + 2*time.Minute + 3*time.Second: "1h02m03s",
	} {
		if got := clock(d); got != want {
			t.Errorf("clock(%v) = %s, want %s", d, got, want)
		}
	}
}
