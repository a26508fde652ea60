package model

import (
	"slices"
	"testing"
)

func TestOutcomeSpelling(t *testing.T) {
	for _, o := range []Outcome{{Status: StatusPass}, {Status: StatusFail, False: []string{P1, P3}}, {Status: StatusInvalid, False: []string{F1}}} {
		got := ParseOutcome(o.String())
		if got.Status != o.Status || !slices.Equal(got.False, o.False) {
			t.Errorf("%q read back as %+v", o, got)
		}
	}
	if s := (Outcome{Status: StatusFail, False: []string{P1, P3}}).String(); s != "FAIL P1 P3" {
		t.Errorf("spelt %q", s)
	}
	if ParseOutcome("INVALID F1").Measured() || !ParseOutcome("FAIL U1").Measured() {
		t.Error("Measured: INVALID measured nothing, FAIL did")
	}
}
