package podman_test

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"faultwin/criteria"
	"faultwin/model"
)

// Expectations map a window instance to the outcomes accepted for it: the
// status and the criteria that did not hold ("FAIL P1 P3", "PASS").
type Expectations map[string][]string

// OutcomeOf spells a verdict as an outcome.
func OutcomeOf(v criteria.Verdict) string {
	parts := []string{v.Status}
	for _, r := range v.Results {
		if !r.Holds() {
			parts = append(parts, r.ID)
		}
	}
	return strings.Join(parts, " ")
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
			errs = append(errs, fmt.Errorf("%s has no expected outcome in %s: run it with FAULTWIN_EXPECT=record and review the row", w.ID, expectedFile))
		}
	}
	for id := range e {
		if !ids[id] {
			errs = append(errs, fmt.Errorf("%s: %s is not a registered window: remove it", expectedFile, id))
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
