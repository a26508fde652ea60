// Package matchers holds gomega matchers for criteria results and verdicts.
// Their failure messages print every criterion that does not hold with all
// its evidence lines, so a failing spec explains itself without a debugger.
package matchers

import (
	"fmt"
	"strings"

	"github.com/onsi/gomega/types"

	"faultwin/criteria"
)

// Hold succeeds for a criteria.Result (or *Result) that was judged and is
// true.
func Hold() types.GomegaMatcher {
	return &resultMatcher{
		what: "to hold",
		match: func(r criteria.Result) bool {
			return r.Holds()
		},
	}
}

// BeUnjudged succeeds for a Result whose evidence was missing or incomplete.
func BeUnjudged() types.GomegaMatcher {
	return &resultMatcher{
		what:  "not to be judged",
		match: func(r criteria.Result) bool { return !r.Judged },
	}
}

// HaveEvidence succeeds for a Result with an evidence line containing sub.
func HaveEvidence(sub string) types.GomegaMatcher {
	return &resultMatcher{
		what: fmt.Sprintf("to have an evidence line containing %q", sub),
		match: func(r criteria.Result) bool {
			for _, e := range r.Evidence {
				if strings.Contains(e, sub) {
					return true
				}
			}
			return false
		},
	}
}

// HaveStatus succeeds for a criteria.Verdict (or *Verdict) with the given
// status ("PASS", "FAIL", "INVALID", "ERROR").
func HaveStatus(status string) types.GomegaMatcher {
	return &verdictMatcher{
		what:  "to have status " + status,
		match: func(v criteria.Verdict) bool { return v.Status == status },
	}
}

// FailOn succeeds for a Verdict in which every named criterion was judged
// and is false.
func FailOn(ids ...string) types.GomegaMatcher {
	return &verdictMatcher{
		what: "to have " + strings.Join(ids, ", ") + " judged false",
		match: func(v criteria.Verdict) bool {
			for _, id := range ids {
				r, ok := v.Result(id)
				if !ok || !r.Judged || r.Pass {
					return false
				}
			}
			return true
		},
	}
}

// FailOnly succeeds for a Verdict in which exactly the named criteria were
// judged false and every other one holds.
func FailOnly(ids ...string) types.GomegaMatcher {
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	return &verdictMatcher{
		what: "to have exactly " + strings.Join(ids, ", ") + " false and the rest holding",
		match: func(v criteria.Verdict) bool {
			seen := 0
			for _, r := range v.Results {
				switch {
				case want[r.ID] && r.Judged && !r.Pass:
					seen++
				case want[r.ID] || !r.Holds():
					return false
				}
			}
			return seen == len(want)
		},
	}
}

type resultMatcher struct {
	what  string
	match func(criteria.Result) bool
}

func asResult(actual any) (criteria.Result, error) {
	switch r := actual.(type) {
	case criteria.Result:
		return r, nil
	case *criteria.Result:
		if r != nil {
			return *r, nil
		}
	}
	return criteria.Result{}, fmt.Errorf("expected a criteria.Result, got %T", actual)
}

func (m *resultMatcher) Match(actual any) (bool, error) {
	r, err := asResult(actual)
	if err != nil {
		return false, err
	}
	return m.match(r), nil
}

func (m *resultMatcher) FailureMessage(actual any) string {
	return m.message(actual, "Expected criterion ", m.what)
}

func (m *resultMatcher) NegatedFailureMessage(actual any) string {
	return m.message(actual, "Expected criterion ", "not "+m.what)
}

func (m *resultMatcher) message(actual any, prefix, what string) string {
	r, err := asResult(actual)
	if err != nil {
		return err.Error()
	}
	return prefix + r.ID + " " + what + "; it reads:\n" + describe(r)
}

type verdictMatcher struct {
	what  string
	match func(criteria.Verdict) bool
}

func asVerdict(actual any) (criteria.Verdict, error) {
	switch v := actual.(type) {
	case criteria.Verdict:
		return v, nil
	case *criteria.Verdict:
		if v != nil {
			return *v, nil
		}
	}
	return criteria.Verdict{}, fmt.Errorf("expected a criteria.Verdict, got %T", actual)
}

func (m *verdictMatcher) Match(actual any) (bool, error) {
	v, err := asVerdict(actual)
	if err != nil {
		return false, err
	}
	return m.match(v), nil
}

func (m *verdictMatcher) FailureMessage(actual any) string { return m.message(actual, m.what) }

func (m *verdictMatcher) NegatedFailureMessage(actual any) string {
	return m.message(actual, "not "+m.what)
}

func (m *verdictMatcher) message(actual any, what string) string {
	v, err := asVerdict(actual)
	if err != nil {
		return err.Error()
	}
	return "Expected verdict " + what + "; it reads:\n" + criteria.Explain(v)
}

// describe renders one result with every evidence line, holding or not.
func describe(r criteria.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  %s judged=%t pass=%t: %s\n", r.ID, r.Judged, r.Pass, r.Summary)
	for _, e := range r.Evidence {
		b.WriteString("    - " + e + "\n")
	}
	return b.String()
}
