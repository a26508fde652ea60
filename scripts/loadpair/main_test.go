package main

import (
	"testing"

	"faultwin/internal/model"
)

// Verdicts that agree pass; an INVALID the load explains (a starved
// workload) is said and passes; any other difference, a FAIL of other
// criteria and a window run in one pass only among them, is counted.
func TestCompare(t *testing.T) {
	fail := func(r string) Verdict { return Verdict{Status: model.StatusFail, Reason: r} }
	pass := Verdict{Status: model.StatusPass, Reason: "all 13 criteria hold"}
	one := func(v Verdict) []Verdict { return []Verdict{v} }
	quiet := map[string][]Verdict{
		"W3X_30": one(pass), "W3X_80": one(pass), "W3X_150": one(pass), "W3X_250": one(fail("P1 false")), "W4_10": one(fail("U1 false")), "W9_1": one(pass),
	}
	loaded := map[string][]Verdict{
		"W3X_30":  one(Verdict{Status: model.StatusPass, Reason: "all 13 criteria hold"}),
		"W3X_80":  one(Verdict{Status: model.StatusInvalid, Reason: "U1 (not judged: starved: s4 got 0 ms of CPU in the 2.0 s wait for its counter; load 2.10, 5 runnable)"}),
		"W3X_150": one(fail("U1 false")),
		"W3X_250": one(fail("P1 false")),
		"W4_10":   one(fail("U1, U3 false")),
	}
	lines, differ := Compare(quiet, loaded)
	notes := map[string]string{}
	for _, l := range lines {
		notes[l.Window] = l.Note
	}
	want := map[string]string{"W3X_30": "", "W3X_80": "load-attributed INVALID", "W3X_150": "differs", "W3X_250": "", "W4_10": "differs", "W9_1": "differs"}
	for id, n := range want {
		if notes[id] != n {
			t.Errorf("%s: note %q, want %q", id, notes[id], n)
		}
	}
	if differ != 3 || len(lines) != 6 {
		t.Errorf("%d lines, %d differ; want 6 lines, 3 differ", len(lines), differ)
	}
	// an INVALID for another reason is no excuse
	_, differ = Compare(map[string][]Verdict{"W1_5": one(pass)}, map[string][]Verdict{"W1_5": one(Verdict{Status: model.StatusInvalid, Reason: "F1: the fault did not fire"})})
	if differ != 1 {
		t.Errorf("an INVALID not caused by the load was taken for one")
	}
	// every row of a soak counts: one FAIL among passes differs
	lines, differ = Compare(map[string][]Verdict{"W3_80": one(pass)}, map[string][]Verdict{"W3_80": {pass, fail("U1, U2 false"), pass}})
	if differ != 1 || len(lines) != 3 {
		t.Errorf("a soak of 3 rows, one FAIL: %d lines, %d differ; want 3, 1", len(lines), differ)
	}
}
