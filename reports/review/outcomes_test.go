package review

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"faultwin/criteria"
	"faultwin/internal/model"
)

func TestVerdictOutcome(t *testing.T) {
	res := func(id string, holds bool) criteria.Result {
		return criteria.Result{ID: id, Judged: true, Pass: holds}
	}
	for _, tc := range []struct {
		v    criteria.Verdict
		want string
	}{
		{criteria.Verdict{Status: "PASS", Results: []criteria.Result{res("F1", true), res("P1", true)}}, "PASS"},
		{criteria.Verdict{Status: "FAIL", Results: []criteria.Result{res("F1", true), res("P1", false), res("P3", false)}}, "FAIL P1 P3"},
		// An INVALID window measured nothing: only why it is INVALID.
		{criteria.Verdict{Status: "INVALID", Results: []criteria.Result{res("F1", false), res("P1", false)}}, "INVALID F1"},
		{criteria.Verdict{Status: "FAIL", Results: []criteria.Result{{ID: "P2", Judged: false}}}, "FAIL P2"},
	} {
		if got := VerdictOutcome(tc.v); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.v, got, tc.want)
		}
	}
}

func TestExpectationsAccepts(t *testing.T) {
	e := Expectations{
		"PR1_150": {"FAIL P1 P3", "FAIL P2 P3", "PASS"},
		"PC4":     {"PASS"},
	}
	for _, tc := range []struct {
		id, outcome string
		want        bool
	}{
		{"PR1_150", "PASS", true},
		{"PR1_150", "FAIL P1 P3", true},
		{"PR1_150", "FAIL P1 P2 P3", true}, // every criterion failed before, together or not
		{"PR1_150", "FAIL P3", true},
		{"PR1_150", "FAIL P6", false},    // a criterion never failed here
		{"PR1_150", "INVALID F1", false}, // a status never seen here
		{"PC4", "FAIL P3", false},        // a window that always passed now fails
		{"PC9", "PASS", false},           // no expectation at all
	} {
		if got := e.Accepts(tc.id, tc.outcome); got != tc.want {
			t.Errorf("Accepts(%s, %q) = %v, want %v", tc.id, tc.outcome, got, tc.want)
		}
	}
}

func TestExpectationsFile(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "outcomes.yaml")
	e := Expectations{}
	e.Add("W3_30", "PASS")
	e.Add("W3_30", "FAIL P1")
	e.Add("W3_30", "PASS")
	e.Add("W1", "PASS")
	if err := e.Write(f); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(f)
	if !strings.Contains(string(b), "W1: [\"PASS\"]\nW3_30: [\"FAIL P1\", \"PASS\"]\n") {
		t.Errorf("written:\n%s", b)
	}
	back, err := ReadExpectations(f)
	if err != nil || len(back["W3_30"]) != 2 {
		t.Fatalf("read back %v, %v", back, err)
	}
	if err := back.Check([]model.Window{{ID: "W1"}, {ID: "W2"}}); err == nil ||
		!strings.Contains(err.Error(), "W2 has no expected outcome") || !strings.Contains(err.Error(), "W3_30 is not a registered window") {
		t.Errorf("check: %v", err)
	}
	if err := os.WriteFile(f, []byte("W1: [\"MAYBE\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadExpectations(f); err == nil || !strings.Contains(err.Error(), `outcome "MAYBE" does not start with PASS`) {
		t.Errorf("bad status accepted: %v", err)
	}
	if err := os.WriteFile(f, []byte("W1: {status: PASS}\n"), 0o644); err == nil {
		if _, err := ReadExpectations(f); err == nil {
			t.Error("a mapping instead of a list was accepted")
		}
	}
}
