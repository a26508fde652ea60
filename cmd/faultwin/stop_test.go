package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"faultwin/criteria"
	"faultwin/reports/replaytest"
	"faultwin/reports/review"
)

// leftCgroup is a leftover the last resort could not remove, as the judge
// of a clean host names it.
const leftCgroup = "cgroup /sys/fs/cgroup/cpuset/faultwin/r5f0c2a91/fw2: of run r5f0c2a91"

// TestRunStopsOnUncleanHost: a window after which the host is not clean
// stops the run once, with the leftover and the way to clean it; the
// windows after it are NOT RUN, not one INVALID row each.
func TestRunStopsOnUncleanHost(t *testing.T) {
	pass := replaytest.Input(replaytest.W4Pass)
	plan := map[string][]func() (criteria.Input, error){}
	ids := []string{"W3_30", "W4_30", "W3_80", "W4_80"}
	for _, id := range ids {
		plan[id] = []func() (criteria.Input, error){ok(replaytest.As(pass, id))}
	}
	r := &scripted{calls: map[string]int{}, plan: plan, left: map[string]map[int][]string{"W4_30": {0: {leftCgroup}}}}
	s := session(t, r, ids...)
	var out bytes.Buffer
	err := runAll(context.Background(), &out, s)
	var ec exitCoder
	if !errors.As(err, &ec) || ec.ExitCode() != exitInvalid {
		t.Errorf("exit %v, want %d: nothing was measured after the leftover", err, exitInvalid)
	}
	got := out.String()
	for _, want := range []string{
		"host left unclean after window W4_30 (PASS",
		"  - " + leftCgroup,
		"stopped: the 2 windows after it are NOT RUN",
		"sudo make sweep",
		"NOT RUN: W3_80: the host was left unclean by W4_30",
		"NOT RUN: W4_80: the host was left unclean by W4_30",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "host left unclean after window"); n != 1 {
		t.Errorf("the stop is said %d times, want once:\n%s", n, got)
	}
	if r.calls["W3_80"]+r.calls["W4_80"] != 0 {
		t.Errorf("windows after the leftover ran: %v", r.calls)
	}
	if err := closeSession(s, nil); err != nil {
		t.Fatal(err)
	}
	f := review.ReplayFile(s.Results)
	if !f.OK() || len(f.Records) != 2 {
		t.Fatalf("rows: %d (want the 2 windows run), ok %v", len(f.Records), f.OK())
	}
	if note := f.Seal.Sessions[0].Seal.Seal.Note; !strings.Contains(note, "stopped after W4_30: the host was left unclean (1 leftovers); 2 windows not run") {
		t.Errorf("seal note %q does not say why the rows stop short", note)
	}
}

// TestSoakStopsOnUncleanHost: the soak stops the same way, and its summary
// covers the rows it wrote.
func TestSoakStopsOnUncleanHost(t *testing.T) {
	pass := replaytest.Input(replaytest.W4Pass)
	surv := replaytest.Input(replaytest.W4Survivor)
	r := &scripted{calls: map[string]int{}, plan: map[string][]func() (criteria.Input, error){
		"W3_30": {ok(replaytest.As(pass, "W3_30")), ok(replaytest.As(pass, "W3_30")), ok(replaytest.As(pass, "W3_30"))},
		"W4_30": {ok(pass), ok(surv), ok(pass)},
	}, left: map[string]map[int][]string{"W4_30": {1: {leftCgroup}}}}
	s := session(t, r, "W3_30", "W4_30")
	var out bytes.Buffer
	err := soak(context.Background(), &out, s, 3)
	var ec exitCoder
	if !errors.As(err, &ec) || ec.ExitCode() != exitFail {
		t.Errorf("exit %v, want %d (a FAIL was seen before the stop)", err, exitFail)
	}
	got := out.String()
	for _, want := range []string{
		"host left unclean after window W4_30 (FAIL",
		"NOT RUN: soak stopped after W4_30 in pass 2: the host was left unclean (1 leftovers); 2 of 6 rows not run",
		"2 windows, 4 rows: PASS 3, FAIL 1",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
	if r.total != 4 {
		t.Errorf("%d windows ran, want 4 (the soak stops at the leftover)", r.total)
	}
}
