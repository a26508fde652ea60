package criteria

import (
	"slices"

	"faultwin/internal/model"
)

// Criterion is one criterion as a whole: its id, the one line a report's
// legend says of it, and its judge. Each criterion registers itself once,
// beside its judge (register in its own file); the evaluator, the legend
// and the tests tying them to docs/criteria.md and the mutants all read
// the registry, so a new criterion is its file, its docs and its mutant.
type Criterion struct {
	ID     string
	Legend string
	judge  func(*ctx) Result
}

// registry holds every registered criterion by id.
var registry = map[string]Criterion{}

// register adds a criterion; a second registration of an id is a defect
// found when the package loads.
func register(id, legend string, judge func(*ctx) Result) Criterion {
	if _, dup := registry[id]; dup {
		panic("criteria: " + id + " registered twice")
	}
	c := Criterion{ID: id, Legend: legend, judge: judge}
	registry[id] = c
	return c
}

// Registered returns every registered criterion: the gatekeepers PRE and
// F1 first, then in model.CriterionIDs order, then any the model does not
// list yet (a test fails on those).
func Registered() []Criterion {
	order := append([]string{model.PRE}, model.CriterionIDs...)
	out := make([]Criterion, 0, len(registry))
	for _, id := range order {
		if c, ok := registry[id]; ok {
			out = append(out, c)
		}
	}
	var rest []string
	for id := range registry {
		if !slices.Contains(order, id) {
			rest = append(rest, id)
		}
	}
	slices.Sort(rest)
	for _, id := range rest {
		out = append(out, registry[id])
	}
	return out
}

// Judges reports whether c has a judge.
func (c Criterion) Judges() bool { return c.judge != nil }
