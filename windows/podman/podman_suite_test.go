package podman_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"faultwin/internal/model"
	"faultwin/reports/review"
	"faultwin/windows/runner"
	"faultwin/windows/suite"
)

// The podman windows: registered YAML in this directory, run against real
// podman, conmon, runc and CRIU. A verdict here is a finding about podman,
// not a target: each spec checks the verdict against expected/outcomes.yaml (the
// outcomes seen so far) so that a change in podman or in faultwin shows as
// drift, never as a silently different row.
//
// Settings come from the environment like the refsup suite's:
// FAULTWIN_RESULTS (rows file), FAULTWIN_STATE_ROOT, and
// FAULTWIN_EXPECT=record to add the outcomes seen to expected/outcomes.yaml instead
// of failing on new ones, and FAULTWIN_DRIFT=warn to report a drifted verdict
// without failing (make test: podman's verdicts depend on where its own
// races fall, and CI must not fail because podman raced another way; an
// ERROR, a window that did not run or zero windows still fail).
var (
	registered []model.Window
	expected   review.Expectations
	session    *runner.Session
)

// It lives in a subdirectory: every *.yaml here is a window definition.
const expectedFile = "expected/outcomes.yaml"

func TestPodman(t *testing.T) {
	RegisterFailHandler(Fail)
	ws, err := runner.LoadWindows(".")
	if err != nil {
		t.Fatalf("loading podman window definitions: %v", err)
	}
	if len(ws) == 0 {
		t.Fatal("no window definitions in windows/podman/*.yaml")
	}
	registered = ws
	if expected, err = review.ReadExpectations(expectedFile); err != nil {
		t.Fatal(err)
	}
	RunSpecs(t, "faultwin podman windows")
}

var _ = BeforeSuite(func() {
	Expect(os.Geteuid()).To(BeZero(), "podman windows drive real containers, CRIU and netns: run as root")
	results := suite.EnvOr("FAULTWIN_RESULTS", filepath.Join("..", "..", "out", "podman.jsonl"))
	var err error
	session, err = runner.Open(runner.Config{
		StateRoot: suite.EnvOr("FAULTWIN_STATE_ROOT", model.DefaultStateRoot),
		LogDir:    filepath.Join(filepath.Dir(results), "logs"),
		Progress:  GinkgoWriter,
	}, filepath.Join("..", ".."), results, nil)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(session.Close)
	if os.Getenv("FAULTWIN_EXPECT") == "record" {
		DeferCleanup(func() { Expect(expected.Write(expectedFile)).To(Succeed()) })
	}
})

// windowTimeout bounds one window: every podman call is bounded by the
// description's timeout_ms (30 s), and a window makes at most about ten.
const windowTimeout = 4 * time.Minute

// Windows are Serial (they share host-global names) but not Ordered: a
// drifted verdict is reported for its window and the others still run.
var _ = Describe("podman windows", Serial, func() {
	if os.Getenv("FAULTWIN_EXPECT") != "record" {
		It("has an expectation for every registered window and no other", func() {
			Expect(expected.Check(registered)).To(Succeed())
		})
	}
	// F1 holds an external kill to the phase its window names. PR1 at 50 ms
	// kills podman while it prepares the restore, long before the CRIU
	// that restores exists; the same window required to land there is
	// INVALID and says where it landed. The row is not recorded: the
	// window is not a registered one.
	It("refuses a kill that landed outside the phase its window names", Label("landing", "restore"), SpecTimeout(windowTimeout), func(ctx SpecContext) {
		i := slices.IndexFunc(registered, func(w model.Window) bool { return w.ID == "PR1_50" })
		Expect(i).To(BeNumerically(">=", 0), "PR1_50 is registered")
		w := registered[i]
		w.ID, w.Fault.LandsIn = "PR1_50_AIMED", "criu_restoring"
		o, err := session.Run(ctx, w)
		Expect(err).NotTo(HaveOccurred())
		f1, ok := o.Verdict.Result(model.F1)
		Expect(ok).To(BeTrue())
		Expect(f1.Holds()).To(BeFalse(), "F1 evidence: %q", f1.Evidence)
		Expect(f1.Evidence).To(ContainElement(ContainSubstring("the window must land in criu_restoring")))
		Expect(o.Verdict.Status).To(Equal(model.StatusInvalid))
		Expect(o.Input.Death.Landing).NotTo(BeNil())
		Expect(o.Input.Death.Landing.Phase).NotTo(Equal("criu_restoring"))
	})
	for _, w := range registered {
		w := w
		It(w.ID, Label(w.SelectionLabels()...), SpecTimeout(windowTimeout), func(ctx SpecContext) {
			o, _, err := session.RunAndRecord(ctx, w)
			Expect(err).NotTo(HaveOccurred())
			got := review.VerdictOutcome(o.Verdict)
			AddReportEntry("verdict", got+" "+o.Verdict.Reason)
			if os.Getenv("FAULTWIN_EXPECT") == "record" {
				expected.Add(w.ID, got)
				return
			}
			// An ERROR is the harness failing, and a precondition not reached
			// or an unclean host means nothing of podman was measured
			// (podman missing, a broken setup): neither is a finding.
			Expect(o.Verdict.Status).NotTo(Equal(model.StatusError), "%s: %s", w.ID, o.Verdict.Reason)
			Expect(o.Input.PrepareErr).To(BeEmpty(), "%s: precondition not reached: %s", w.ID, o.Verdict.Reason)
			Expect(o.Verdict.Reason).NotTo(HavePrefix("preflight"), "%s: %s", w.ID, o.Verdict.Reason)
			if expected.Accepts(w.ID, got) {
				return
			}
			msg := fmt.Sprintf("%s drifted: %q (%s): its status or a failing criterion was never seen for it; seen: %q. Look at the row, then record it with FAULTWIN_EXPECT=record if it is a real change",
				w.ID, got, o.Verdict.Reason, expected[w.ID])
			if os.Getenv("FAULTWIN_DRIFT") == "warn" {
				AddReportEntry("drift", msg)
				GinkgoWriter.Println("DRIFT:", msg)
				if f := os.Getenv("FAULTWIN_DRIFT_FILE"); f != "" {
					Expect(appendLine(f, msg)).To(Succeed())
				}
				return
			}
			Fail(msg)
		})
	}
})

func appendLine(file, line string) error {
	f, err := os.OpenFile(file, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(f, line)
	return errors.Join(err, f.Close())
}
