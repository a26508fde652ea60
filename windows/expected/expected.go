// Package expected holds a described supervisor's suite's expected
// outcomes: how often each outcome was seen per window in the recorded
// soaks (learned from rows, never kept by hand), the smoke set chosen from
// them, and whether new rows drift from them. Its windows' verdicts are
// findings about a supervisor faultwin did not write.
package expected

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"faultwin/internal/model"
)

// Expectations are a supervisor's recorded outcome distribution per window
// instance, learned from rows files (Learn), never kept by hand: the
// drift check (Drift) holds new rows against it, and the smoke set (Smoke)
// is chosen from it.
type Expectations struct {
	Supervisor string          `yaml:"supervisor"`
	Windows    map[string]Seen `yaml:"windows"`
	// Smoke are the windows make test runs of this supervisor: per
	// operation, the one whose soak was the most stable (ChooseSmoke).
	Smoke []string `yaml:"smoke"`
}

// Seen is one window's outcomes in the rows it was learned from: how many
// rows showed each outcome ("FAIL P1 P3", "PASS"), from which files, and
// the median wall time of a row (seconds), which the smoke choice weighs.
type Seen struct {
	From     []string       `yaml:"from,flow"`
	Outcomes map[string]int `yaml:"outcomes"`
	MedianS  float64        `yaml:"median_s"`
}

// N is the number of rows the window was learned from.
func (s Seen) N() int {
	n := 0
	for _, k := range s.Outcomes {
		n += k
	}
	return n
}

// Modal is the outcome seen most often (ties: the first in name order) and
// its count.
func (s Seen) Modal() (string, int) {
	best, k := "", -1
	for _, o := range slices.Sorted(maps.Keys(s.Outcomes)) {
		if s.Outcomes[o] > k {
			best, k = o, s.Outcomes[o]
		}
	}
	return best, max(k, 0)
}

// Stable reports whether every row the window was learned from showed one
// outcome, over at least MinStable rows.
func (s Seen) Stable() bool {
	_, k := s.Modal()
	return len(s.Outcomes) == 1 && k >= MinStable
}

// MinStable is the fewest rows that can call a window's outcome stable.
const MinStable = 10

// SmokeAccepts reports whether one run's outcome of window id is one its
// soak supports: its status (PASS, FAIL, INVALID, ERROR) is one the soak's
// rows of the window showed. The failed criteria are not held to the soak's
// from one run: a window seen with one outcome in 10 of 10 rows is, by the
// Wilson interval, still consistent with another outcome in up to 28 % of
// runs, and a single run of an outcome never seen is not yet a drift
// (FisherGreater: p = 1/11 against ten rows). Which criteria moved is the
// drift check's question, over many rows (faultwin drift); the smoke says
// it (SmokeDifference) and fails on what one run can show: a status the
// window never had, such as a PASS where every soaked row failed, or a
// window that stopped landing where it names (INVALID F1).
func (e Expectations) SmokeAccepts(id string, outcome model.Outcome) bool {
	s, ok := e.Windows[id]
	if !ok {
		return false
	}
	for o := range s.Outcomes {
		if model.ParseOutcome(o).Status == outcome.Status {
			return true
		}
	}
	return false
}

// SmokeDrift weighs the smoke runs of window id: how many showed a status
// its soak never showed (SmokeAccepts), against the soak's rows, by the
// drift check's own test (FisherGreater at DriftAlpha), and never on one
// run alone. One such run against ten soaked rows is p = 1/11; against
// twenty it is p = 1/21, below the level, yet make test runs 17 smoke
// windows, so a level met by one run of each would be met by chance far
// more often than one make test in twenty (CC1_50, FAIL U1 in 20 of 20
// soaked rows, PASSed once on a faster machine). The smoke runs the
// window again: the status must come back (two in two against ten rows is
// p = 1/66). A window with no expectation always drifts.
func (e Expectations) SmokeDrift(id string, outcomes []model.Outcome) (p float64, drift bool) {
	s, ok := e.Windows[id]
	if !ok {
		return 0, true
	}
	unseen := 0
	for _, o := range outcomes {
		if !e.SmokeAccepts(id, o) {
			unseen++
		}
	}
	if unseen == 0 {
		return 1, false
	}
	p = FisherGreater(unseen, len(outcomes), 0, s.N())
	return p, unseen >= 2 && p < DriftAlpha
}

// SmokeRuns is the most runs a smoke window is given to tell a drift from
// one run's chance (SmokeDrift): against ten rows, two runs decide.
const SmokeRuns = 3

// SmokeStep is what a smoke window does after the runs it has had.
type SmokeStep int

const (
	SmokePass  SmokeStep = iota // its last run's status is one its soak showed
	SmokeAgain                  // not yet a drift: run it again
	SmokeFail                   // a drift, or SmokeRuns runs without an accepted one
)

// SmokeNext decides a smoke window's next step from its runs' outcomes so
// far, oldest first, with the p of SmokeDrift over them.
func (e Expectations) SmokeNext(id string, outcomes []model.Outcome) (SmokeStep, float64) {
	if len(outcomes) == 0 {
		return SmokeAgain, 1
	}
	if e.SmokeAccepts(id, outcomes[len(outcomes)-1]) {
		return SmokePass, 1
	}
	p, drift := e.SmokeDrift(id, outcomes)
	if drift || len(outcomes) >= SmokeRuns {
		return SmokeFail, p
	}
	return SmokeAgain, p
}

// SmokeDifference says how outcome differs from what window id's soak
// showed, when its status was seen but the outcome itself never was ("" when
// the soak saw it): the line a smoke run prints for the drift check to
// weigh over more rows.
func (e Expectations) SmokeDifference(id string, outcome model.Outcome) string {
	s, ok := e.Windows[id]
	if !ok || s.Outcomes[outcome.String()] > 0 || !e.SmokeAccepts(id, outcome) {
		return ""
	}
	return fmt.Sprintf("%s: %q was not among its soak's outcomes %v (%d rows); its status was. One run is not a drift: `faultwin drift` over a soak's rows decides", id, outcome, s.Outcomes, s.N())
}

// ReadExpectations reads file. A missing file is an error: every described
// suite learns its expectations before it runs (faultwin expect).
func ReadExpectations(file string) (Expectations, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return Expectations{}, fmt.Errorf("%w: learn them from a soak with `faultwin expect`", err)
	}
	var e Expectations
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&e); err != nil {
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			return Expectations{}, fmt.Errorf("%s: %w", file, err)
		}
		var errs []error
		for _, m := range te.Errors {
			line, rest := 1, m
			if _, e := fmt.Sscanf(m, "line %d:", &line); e == nil {
				_, rest, _ = strings.Cut(m, ": ")
			}
			errs = append(errs, fmt.Errorf("%s:%d: %s (faultwin expect writes this file: learn it again from the suite's soaks)", file, line, rest))
		}
		return Expectations{}, errors.Join(errs...)
	}
	for _, id := range slices.Sorted(maps.Keys(e.Windows)) {
		s := e.Windows[id]
		if len(s.Outcomes) == 0 {
			return Expectations{}, fmt.Errorf("%s: windows.%s.outcomes: empty: a window is learned from at least one row", file, id)
		}
		for o, k := range s.Outcomes {
			if !slices.Contains(model.Statuses, model.ParseOutcome(o).Status) {
				return Expectations{}, fmt.Errorf("%s: windows.%s.outcomes: %q does not start with PASS, FAIL, INVALID or ERROR", file, id, o)
			}
			if k <= 0 {
				return Expectations{}, fmt.Errorf("%s: windows.%s.outcomes.%q: count %d, want at least 1", file, id, o, k)
			}
		}
	}
	for _, id := range e.Smoke {
		if _, ok := e.Windows[id]; !ok {
			return Expectations{}, fmt.Errorf("%s: smoke: %s has no outcomes under windows", file, id)
		}
	}
	return e, nil
}

// Check reports registered windows without outcomes, outcomes of no
// registered window, and an operation with no smoke window.
func (e Expectations) Check(ws []model.Window) error {
	var errs []error
	ids := map[string]bool{}
	ops := map[string]bool{}
	for _, w := range ws {
		ids[w.ID] = true
		ops[w.Operation] = true
		if _, ok := e.Windows[w.ID]; !ok {
			errs = append(errs, fmt.Errorf("%s has no recorded outcomes: soak it and learn them with `faultwin expect`", w.ID))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(e.Windows)) {
		if !ids[id] {
			errs = append(errs, fmt.Errorf("%s is not a registered window: learn the expectations again", id))
		}
	}
	covered := map[string]bool{}
	for _, id := range e.Smoke {
		for _, w := range ws {
			if w.ID == id {
				covered[w.Operation] = true
			}
		}
	}
	for _, op := range slices.Sorted(maps.Keys(ops)) {
		if !covered[op] {
			errs = append(errs, fmt.Errorf("operation %s has no smoke window: learn the expectations again", op))
		}
	}
	return errors.Join(errs...)
}

// Write writes e with a header saying where it came from.
func (e Expectations) Write(file string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Outcomes of each %s window in its recorded soak: status, then the\n", e.Supervisor)
	b.WriteString("# criteria that did not hold, with how many rows showed each. Written by\n")
	b.WriteString("# `faultwin expect`, never by hand: a nightly's rows drift when an outcome's\n")
	b.WriteString("# share moves beyond what these counts support (faultwin drift); the smoke\n")
	b.WriteString("# windows run in make test, one per operation, the most stable.\n")
	out, err := yaml.Marshal(e)
	if err != nil {
		return err
	}
	b.Write(out)
	// A new supervisor's windows have no expected/ yet: its first soak
	// is what makes it.
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	return os.WriteFile(file, []byte(b.String()), 0o644)
}
