// Outcomes of windows whose verdicts are findings about a supervisor
// faultwin did not write: what was seen per window, and whether a new
// verdict is drift.
package review

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"faultwin/criteria"
	"faultwin/internal/model"
)

// Expectations map a window instance to the outcomes accepted for it: the
// status and the criteria that did not hold ("FAIL P1 P3", "PASS").
type Expectations map[string][]string

// VerdictOutcome spells a verdict as an outcome ("FAIL P1 P3", "PASS"). An INVALID or ERROR window
// measured nothing about podman: only what made it so is kept (F1 for a
// fault that did not land, PRE for an unclean host), not the other
// criteria's accidental results.
func VerdictOutcome(v criteria.Verdict) string {
	parts := []string{v.Status}
	for _, r := range v.Results {
		if r.Holds() {
			continue
		}
		if v.Status == model.StatusInvalid && r.ID != model.F1 && r.ID != model.PRE {
			continue
		}
		parts = append(parts, r.ID)
	}
	return strings.Join(parts, " ")
}

// Accepts reports whether outcome is no drift for window id: its status was
// seen for the window, and every criterion it fails failed for the window
// with that status before. podman's races decide which of the seen
// leftovers a run shows (its cgroups alone, or its netns too); a status or
// a failing criterion never seen is what a change in podman or faultwin
// looks like.
func (e Expectations) Accepts(id, outcome string) bool {
	status, crit, _ := strings.Cut(outcome, " ")
	seen, union := false, map[string]bool{}
	for _, o := range e[id] {
		st, cs, _ := strings.Cut(o, " ")
		if st != status {
			continue
		}
		seen = true
		for _, c := range strings.Fields(cs) {
			union[c] = true
		}
	}
	if !seen {
		return false
	}
	for _, c := range strings.Fields(crit) {
		if !union[c] {
			return false
		}
	}
	return true
}

// ReadExpectations reads file; a missing file is no expectation at all.
func ReadExpectations(file string) (Expectations, error) {
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return Expectations{}, nil
	}
	if err != nil {
		return nil, err
	}
	var e Expectations
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&e); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	for id, outs := range e {
		for _, o := range outs {
			st, _, _ := strings.Cut(o, " ")
			if !slices.Contains(model.Statuses, st) {
				return nil, fmt.Errorf("%s: %s: outcome %q does not start with PASS, FAIL, INVALID or ERROR", file, id, o)
			}
		}
	}
	return e, nil
}

// Check reports windows without an expectation and expectations of no
// registered window.
func (e Expectations) Check(ws []model.Window) error {
	var errs []error
	ids := map[string]bool{}
	for _, w := range ws {
		ids[w.ID] = true
		if len(e[w.ID]) == 0 {
			errs = append(errs, fmt.Errorf("%s has no expected outcome: run it with FAULTWIN_EXPECT=record and review the row", w.ID))
		}
	}
	for id := range e {
		if !ids[id] {
			errs = append(errs, fmt.Errorf("%s is not a registered window: remove its expected outcomes", id))
		}
	}
	return errors.Join(errs...)
}

// Add records an outcome for id.
func (e Expectations) Add(id, outcome string) {
	if !slices.Contains(e[id], outcome) {
		e[id] = append(e[id], outcome)
		slices.Sort(e[id])
	}
}

// Write writes e in window order with a header.
func (e Expectations) Write(file string) error {
	ids := make([]string, 0, len(e))
	for id := range e {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, model.CompareIDs)
	var b strings.Builder
	b.WriteString("# Outcomes seen per podman window: status, then the criteria that did not\n")
	b.WriteString("# hold. The podman suite fails on an outcome not listed here (drift).\n")
	b.WriteString("# Add outcomes only after reading their rows: FAULTWIN_EXPECT=record.\n")
	for _, id := range ids {
		q := make([]string, len(e[id]))
		for i, o := range e[id] {
			q[i] = fmt.Sprintf("%q", o)
		}
		fmt.Fprintf(&b, "%s: [%s]\n", id, strings.Join(q, ", "))
	}
	return os.WriteFile(file, []byte(b.String()), 0o644)
}
