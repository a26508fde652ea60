package suite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"faultwin/internal/model"
	"faultwin/reports/review"
	"faultwin/windows/runner"
)

// Described is the suite of one supervisor described as data: the windows
// registered in the suite's directory, run against the real supervisor. A
// verdict there is a finding about that supervisor, not a target: each
// spec checks the verdict against expected/outcomes.yaml (the outcomes
// seen so far), so that a change in the supervisor or in faultwin shows as
// drift, never as a silently different row.
//
// Settings come from the environment like the refsup suite's:
// FAULTWIN_RESULTS (rows file), FAULTWIN_STATE_ROOT, FAULTWIN_EXPECT=record
// to add the outcomes seen to expected/outcomes.yaml instead of failing on
// new ones, and FAULTWIN_DRIFT=warn to report a drifted verdict without
// failing (make test: the supervisor's verdicts depend on where its own
// races fall, and CI must not fail because it raced another way; an ERROR,
// a window that did not run or zero windows still fail).
type Described struct {
	Name       string // the supervisor, as windows name it in driver:
	Registered []model.Window
	Expected   review.Expectations
	Session    *runner.Session
}

// ExpectedFile is where a described suite keeps the outcomes seen.
const ExpectedFile = "expected/outcomes.yaml"

// WindowTimeout bounds one window: every call is bounded by the
// description's timeout_ms (30 s), and a window makes at most about a dozen.
const WindowTimeout = 4 * time.Minute

// LoadDescribed loads the suite's windows and expectations; call it from
// the suite's Test function before RunSpecs.
func LoadDescribed(t *testing.T, name string) *Described {
	ws, err := runner.LoadWindows(".")
	if err != nil {
		t.Fatalf("loading %s window definitions: %v", name, err)
	}
	if len(ws) == 0 {
		t.Fatalf("no window definitions in windows/%s/*.yaml", name)
	}
	exp, err := review.ReadExpectations(ExpectedFile)
	if err != nil {
		t.Fatal(err)
	}
	return &Described{Name: name, Registered: ws, Expected: exp}
}

// Open opens the suite's session: call it in BeforeSuite.
func (s *Described) Open() {
	Expect(os.Geteuid()).To(BeZero(), s.Name+" windows drive real containers, CRIU and namespaces: run as root")
	results := EnvOr("FAULTWIN_RESULTS", filepath.Join("..", "..", "out", s.Name+".jsonl"))
	var err error
	s.Session, err = runner.Open(runner.Config{
		StateRoot: EnvOr("FAULTWIN_STATE_ROOT", model.DefaultStateRoot),
		LogDir:    filepath.Join(filepath.Dir(results), "logs"),
		Progress:  GinkgoWriter,
	}, filepath.Join("..", ".."), results, nil)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(s.Session.Close)
	if os.Getenv("FAULTWIN_EXPECT") == "record" {
		DeferCleanup(func() { Expect(s.Expected.Write(ExpectedFile)).To(Succeed()) })
	}
}

// Specs adds, inside a Serial container, the expectations check and one
// spec per registered window. Windows are Serial (they share host-global
// names) but not Ordered: a drifted verdict is reported for its window and
// the others still run.
func (s *Described) Specs() {
	if os.Getenv("FAULTWIN_EXPECT") != "record" {
		It("has an expectation for every registered window and no other", func() {
			Expect(s.Expected.Check(s.Registered)).To(Succeed())
		})
	}
	for _, w := range s.Registered {
		w := w
		It(w.ID, Label(w.SelectionLabels()...), SpecTimeout(WindowTimeout), func(ctx SpecContext) {
			s.runOne(ctx, w)
		})
	}
}

func (s *Described) runOne(ctx SpecContext, w model.Window) {
	o, _, err := s.Session.RunAndRecord(ctx, w)
	Expect(err).NotTo(HaveOccurred())
	if len(o.HostLeft) > 0 {
		// One leftover must not make every later window INVALID: stop once.
		AbortSuite(runner.StopMessage(w.ID, o, -1, s.Session.StateRoot()))
	}
	got := review.VerdictOutcome(o.Verdict)
	AddReportEntry("verdict", got+" "+o.Verdict.Reason)
	if os.Getenv("FAULTWIN_EXPECT") == "record" {
		s.Expected.Add(w.ID, got)
		return
	}
	// An ERROR is the harness failing, and a precondition not reached or an
	// unclean host means nothing of the supervisor was measured (it is
	// missing, a broken setup): neither is a finding.
	Expect(o.Verdict.Status).NotTo(Equal(model.StatusError), "%s: %s", w.ID, o.Verdict.Reason)
	Expect(o.Input.PrepareErr).To(BeEmpty(), "%s: precondition not reached: %s", w.ID, o.Verdict.Reason)
	Expect(o.Verdict.Reason).NotTo(HavePrefix("preflight"), "%s: %s", w.ID, o.Verdict.Reason)
	if s.Expected.Accepts(w.ID, got) {
		return
	}
	msg := fmt.Sprintf("%s drifted: %q (%s): its status or a failing criterion was never seen for it; seen: %q. Look at the row, then record it with FAULTWIN_EXPECT=record if it is a real change",
		w.ID, got, o.Verdict.Reason, s.Expected[w.ID])
	if os.Getenv("FAULTWIN_DRIFT") == "warn" {
		AddReportEntry("drift", msg)
		GinkgoWriter.Println("DRIFT:", msg)
		if f := os.Getenv("FAULTWIN_DRIFT_FILE"); f != "" {
			Expect(appendLine(f, msg)).To(Succeed())
		}
		return
	}
	Fail(msg)
}

func appendLine(file, line string) error {
	f, err := os.OpenFile(file, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(f, line)
	return errors.Join(err, f.Close())
}
