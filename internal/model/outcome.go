package model

import "strings"

// Outcome is a verdict as the expected outcomes, the drift check and the
// landings count it: the status, then the criteria that did not hold (for
// an INVALID window only F1 and PRE, what made it so). It is computed
// from a verdict (criteria.Verdict.Outcome); String is how it is shown
// and how the expected outcomes files spell it.
type Outcome struct {
	Status string
	False  []string
}

// String spells the outcome: "FAIL P1 P3", "PASS".
func (o Outcome) String() string {
	return strings.Join(append([]string{o.Status}, o.False...), " ")
}

// Measured reports whether the window measured the supervisor (PASS or
// FAIL), as INVALID and ERROR windows did not.
func (o Outcome) Measured() bool { return o.Status == StatusPass || o.Status == StatusFail }

// ParseOutcome reads an outcome as String spells it: the one reader of
// that spelling, for the outcomes files store it as text.
func ParseOutcome(s string) Outcome {
	f := strings.Fields(s)
	if len(f) == 0 {
		return Outcome{}
	}
	o := Outcome{Status: f[0]}
	if len(f) > 1 {
		o.False = f[1:]
	}
	return o
}
