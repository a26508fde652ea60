package matchers_test

import (
	"testing"

	. "github.com/onsi/gomega"

	"faultwin/criteria"
	. "faultwin/criteria/matchers"
	"faultwin/internal/model"
)

var (
	holds  = criteria.Result{ID: "P2", Pass: true, Judged: true, Summary: "nothing mounted"}
	failed = criteria.Result{ID: "P1", Judged: true, Summary: "1 live process of the run or criu survived the sweeps",
		Evidence: []string{`pid 4242 (start 1190518) criu argv="criu swrk 3" cwd=/var/lib/faultwin/r1/checkpoints/c1: env tag, comm criu (in after_sweep2)`}}
	unjudged = criteria.Result{ID: "H1", Summary: "not judged: snapshot after_sweep2 missing",
		Evidence: []string{"snapshot after_sweep2 missing"}}
	verdict = criteria.Verdict{Status: model.StatusFail, Reason: "P1 false", Results: []criteria.Result{holds, failed}}
)

func TestResultMatchers(t *testing.T) {
	g := NewWithT(t)
	g.Expect(holds).To(Hold())
	g.Expect(&holds).To(Hold())
	g.Expect(failed).NotTo(Hold())
	g.Expect(unjudged).NotTo(Hold())
	g.Expect(unjudged).To(BeUnjudged())
	g.Expect(failed).NotTo(BeUnjudged())
	g.Expect(failed).To(HaveEvidence("env tag, comm criu"))
	g.Expect(failed).NotTo(HaveEvidence("argv tag"))

	ok, err := Hold().Match("P1")
	g.Expect(ok).To(BeFalse())
	g.Expect(err).To(MatchError(ContainSubstring("expected a criteria.Result")))
}

// A failing Hold prints the criterion's summary and every evidence line.
func TestHoldMessage(t *testing.T) {
	g := NewWithT(t)
	msg := Hold().FailureMessage(failed)
	g.Expect(msg).To(ContainSubstring("Expected criterion P1 to hold"))
	g.Expect(msg).To(ContainSubstring("1 live process of the run or criu survived the sweeps"))
	g.Expect(msg).To(ContainSubstring(failed.Evidence[0]))
}

func TestVerdictMatchers(t *testing.T) {
	g := NewWithT(t)
	g.Expect(verdict).To(HaveStatus("FAIL"))
	g.Expect(&verdict).NotTo(HaveStatus("PASS"))
	g.Expect(verdict).To(FailOn("P1"))
	g.Expect(verdict).NotTo(FailOn("P1", "P2"))
	g.Expect(verdict).NotTo(FailOn("P9"))
	g.Expect(verdict).To(FailOnly("P1"))
	g.Expect(verdict).NotTo(FailOnly())

	withUnjudged := verdict
	withUnjudged.Results = append([]criteria.Result{}, verdict.Results...)
	withUnjudged.Results = append(withUnjudged.Results, unjudged)
	g.Expect(withUnjudged).NotTo(FailOnly("P1"))
}

// A failing HaveStatus prints the failing criteria with all their evidence
// and not the evidence of those that hold.
func TestHaveStatusMessage(t *testing.T) {
	g := NewWithT(t)
	v := verdict
	v.Results = append(append([]criteria.Result{}, v.Results...), unjudged)
	msg := HaveStatus("PASS").FailureMessage(v)
	g.Expect(msg).To(ContainSubstring("Expected verdict to have status PASS"))
	g.Expect(msg).To(ContainSubstring("FAIL: P1 false"))
	g.Expect(msg).To(ContainSubstring("P1 FALSE: 1 live process"))
	g.Expect(msg).To(ContainSubstring("- " + failed.Evidence[0]))
	g.Expect(msg).To(ContainSubstring("H1 NOT JUDGED: snapshot after_sweep2 missing"))
	g.Expect(msg).To(ContainSubstring("P2 holds: nothing mounted"))
	g.Expect(HaveStatus("FAIL").NegatedFailureMessage(v)).To(ContainSubstring("not to have status FAIL"))
}
