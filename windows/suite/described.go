package suite

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"faultwin/drivers/catalog"
	"faultwin/internal/model"
	"faultwin/windows/expected"
	"faultwin/windows/runner"
)

// Described is the suite of one supervisor described as data: the windows
// registered in the suite's directory, run against the real supervisor. A
// verdict there is a finding about that supervisor, not a target. What the
// supervisor did in its recorded soaks is expected/outcomes.yaml (learned
// with `faultwin expect`, never by hand):
//   - a smoke window (label "smoke", one per operation, the most stable in
//     its soak; what make test runs) fails on a status its soak never
//     showed (expected.SmokeAccepts): a PASS where every soaked row failed,
//     an INVALID where the fault always landed, once the drift check's test
//     supports it (expected.SmokeDrift: it runs the window again until it
//     does or the runs say chance); a different set of failed criteria
//     under a status it showed is said, and left to the drift check over
//     many rows;
//   - every other window fails only when nothing of the supervisor was
//     measured (an ERROR, a precondition not reached, an unclean host);
//     whether its outcomes moved is a statistical question over many rows,
//     which `faultwin drift` answers on the rows (make windows-podman and
//     make nightly run it).
//
// Settings come from the environment: FAULTWIN_RESULTS_DIR and
// FAULTWIN_RESULTS_PREFIX (where its rows go, ResultsFile),
// FAULTWIN_STATE_ROOT.
type Described struct {
	Name       string // the supervisor, as windows name it in driver:
	Dir        string // its windows' directory
	Registered []model.Window
	Expected   expected.Expectations
	Session    *runner.Session
}

// ExpectedFile is where a described suite keeps the outcomes its soaks saw.
const ExpectedFile = "expected/outcomes.yaml"

// SmokeLabel marks the specs make test runs of a described supervisor.
const SmokeLabel = "smoke"

// WindowTimeout bounds one window: every call is bounded by the
// description's timeout_ms (30 s), and a window makes at most about a dozen.
const WindowTimeout = 4 * time.Minute

// Discover loads every described supervisor's suite under windowsDir:
// each subdirectory holding expected/outcomes.yaml (learned by faultwin
// expect) is one, named for its directory. Adding a supervisor is a
// description, a folder of windows and its learned outcomes: no code.
func Discover(windowsDir string) ([]*Described, error) {
	matches, err := filepath.Glob(filepath.Join(windowsDir, "*", ExpectedFile))
	if err != nil {
		return nil, err
	}
	var out []*Described
	for _, m := range matches {
		dir := filepath.Dir(filepath.Dir(m))
		s, err := Load(dir, filepath.Base(dir))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Load loads one described supervisor's suite from dir: its windows and
// the outcomes its soaks showed.
func Load(dir, name string) (*Described, error) {
	ws, err := runner.LoadWindows(dir)
	if err != nil {
		return nil, fmt.Errorf("loading %s window definitions: %w", name, err)
	}
	if len(ws) == 0 {
		return nil, fmt.Errorf("no window definitions in %s/*.yaml", dir)
	}
	exp, err := expected.ReadExpectations(filepath.Join(dir, ExpectedFile))
	if err != nil {
		return nil, err
	}
	return &Described{Name: name, Dir: dir, Registered: ws, Expected: exp}, nil
}

// ResultsFile is where a described supervisor's rows go: under
// FAULTWIN_RESULTS_DIR (default out/), named FAULTWIN_RESULTS_PREFIX (""
// unless set, "smoke-" for make smoke) and the supervisor's name.
func (s *Described) ResultsFile(repo string) string {
	dir := EnvOr("FAULTWIN_RESULTS_DIR", filepath.Join(repo, "out"))
	return filepath.Join(dir, os.Getenv("FAULTWIN_RESULTS_PREFIX")+s.Name+".jsonl")
}

// Open opens the suite's session the first time one of its windows runs,
// so a run that selects none of them writes no rows file for it.
func (s *Described) Open() {
	if s.Session != nil {
		return
	}
	Expect(os.Geteuid()).To(BeZero(), s.Name+" windows drive real containers, CRIU and namespaces: run as root")
	repo := filepath.Join(s.Dir, "..", "..")
	results := s.ResultsFile(repo)
	var err error
	s.Session, err = runner.Open(runner.Config{
		StateRoot: EnvOr("FAULTWIN_STATE_ROOT", model.DefaultStateRoot),
		LogDir:    filepath.Join(filepath.Dir(results), "logs"),
		Progress:  GinkgoWriter,
	}, repo, results, nil)
	Expect(err).NotTo(HaveOccurred())
}

// Close closes the session, if a window opened one: call it in AfterSuite.
func (s *Described) Close() error {
	if s.Session == nil {
		return nil
	}
	return s.Session.Close()
}

// Extras are specs a supervisor's suite has beyond its windows, by
// supervisor name (the podman suite's landing refusal).
var Extras = map[string]func(s *Described){}

// Specs adds a Serial container labelled with the supervisor's name
// holding the expectations check, the check of each described
// supervisor's requires, its extras and one spec per registered window.
// Windows are Serial (they share host-global names) but not Ordered: a
// failed window is reported for itself and the others still run, unless it
// left the host unclean (then the suite stops once).
func (s *Described) Specs() {
	Describe(s.Name+" windows", Serial, Label(s.Name), func() { s.specs() })
}

func (s *Described) specs() {
	It("has recorded outcomes for every registered window and a smoke window per operation", Label(SmokeLabel), func() {
		Expect(s.Expected.Check(s.Registered)).To(Succeed())
	})
	It("loads the description of every supervisor its windows name, whose requires hold on this host", Label(SmokeLabel), func(ctx SpecContext) {
		drivers := map[string]bool{}
		for _, w := range s.Registered {
			drivers[w.Driver] = true
		}
		for _, name := range slices.Sorted(maps.Keys(drivers)) {
			d := catalog.Description(name)
			Expect(d).NotTo(BeNil(), "window driver %q: no such description (drivers/described/supervisors/%s.yaml)", name, name)
			for _, p := range d.CheckHost(ctx, "") {
				Expect(p.OK).To(BeTrue(), "%s requires %s: %s; %s (sudo make deps)", name, p.Name, p.Detail, p.Fix)
			}
		}
	})
	if extra := Extras[s.Name]; extra != nil {
		extra(s)
	}
	smoke := map[string]bool{}
	for _, id := range s.Expected.Smoke {
		smoke[id] = true
	}
	for _, w := range s.Registered {
		w := w
		labels := w.SelectionLabels()
		if smoke[w.ID] {
			labels = append(labels, SmokeLabel)
		}
		It(w.ID, Label(labels...), SpecTimeout(WindowTimeout), func(ctx SpecContext) {
			s.runOne(ctx, w, smoke[w.ID])
		})
	}
}

func (s *Described) runOne(ctx SpecContext, w model.Window, smoke bool) {
	s.Open()
	var outcomes []model.Outcome
	for {
		o, got := s.runAttempt(ctx, w)
		if !smoke {
			return
		}
		outcomes = append(outcomes, got)
		if d := s.Expected.SmokeDifference(w.ID, got); d != "" {
			AddReportEntry("outcome not in its soak", d)
			fmt.Fprintln(GinkgoWriter, d)
		}
		// A status the soak never showed, in one run, may be chance (a
		// supervisor's own race before the trigger, seen as INVALID F1):
		// the window runs again, every row kept, until the drift check's
		// test says drift or the runs say chance.
		switch step, p := s.Expected.SmokeNext(w.ID, outcomes); step {
		case expected.SmokePass:
			return
		case expected.SmokeFail:
			seen := s.Expected.Windows[w.ID]
			Fail(fmt.Sprintf("%s drifted: %q (%s), a status its soaks (%s) never showed (%v in %d rows), in these smoke runs: %q (one-sided Fisher p = %.3f): a smoke window is the most stable of its operation, so this is a change in %s or in faultwin. Look at the rows (faultwin rows --window %s %s); once it is understood, soak the suite again and learn its outcomes with faultwin expect",
				w.ID, got, o.Verdict.Reason, strings.Join(seen.From, ", "), seen.Outcomes, seen.N(), outcomes, p, s.Name, w.ID, s.Session.Results))
		default:
			msg := fmt.Sprintf("%s: %q is a status its soak never showed (runs so far %q, p = %.3f: not yet a drift): running it again", w.ID, got, outcomes, p)
			AddReportEntry("run again", msg)
			fmt.Fprintln(GinkgoWriter, msg)
		}
	}
}

// runAttempt runs w once and records its row, returning its outcome too; an
// ERROR, a precondition not reached or an unclean host fails the spec, a
// leftover stops the suite.
func (s *Described) runAttempt(ctx SpecContext, w model.Window) (*runner.Outcome, model.Outcome) {
	o, _, err := s.Session.RunAndRecord(ctx, w)
	Expect(err).NotTo(HaveOccurred())
	if len(o.HostLeft) > 0 {
		// One leftover must not make every later window INVALID: stop once.
		AbortSuite(runner.StopMessage(w.ID, o, -1, s.Session.StateRoot()))
	}
	got := o.Verdict.Outcome()
	seen := s.Expected.Windows[w.ID]
	AddReportEntry("verdict", fmt.Sprintf("%s %s (its soaks: %v of %d rows, %s)", got, o.Verdict.Reason, seen.Outcomes, seen.N(), strings.Join(seen.From, ", ")))
	// An ERROR is the harness failing, and a precondition not reached or an
	// unclean host means nothing of the supervisor was measured (it is
	// missing, a broken setup): neither is a finding.
	Expect(o.Verdict.Status).NotTo(Equal(model.StatusError), "%s: %s", w.ID, o.Verdict.Reason)
	Expect(o.Input.PrepareErr).To(BeEmpty(), "%s: precondition not reached: %s", w.ID, o.Verdict.Reason)
	Expect(o.Verdict.Reason).NotTo(HavePrefix("preflight"), "%s: %s", w.ID, o.Verdict.Reason)
	return o, got
}
