package review

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/reports/decoded"
)

// Grades is what the death cost the user in one window's rows, as U1
// graded it: kept, recovered, stuck (with the expert step that worked)
// or lost. Rows whose U1 was not graded (recorded before the grading, not
// judged, or not applicable) are counted apart.
type Grades struct {
	Window                       string
	Kept, Recovered, Stuck, Lost int
	Ungraded                     int
	// Steps counts, per expert step, the stuck rows it brought back.
	Steps map[string]int
}

// GradesOf tallies U1's grades per window (SummaryID: a control apart),
// in Summarize's order, over the rows that measured (PASS or FAIL).
func GradesOf(rs []decoded.Record) []Grades {
	by := map[string]*Grades{}
	var ids []string
	for _, r := range rs {
		if r.Window.ID == "" || (r.Status != model.StatusPass && r.Status != model.StatusFail) {
			continue
		}
		id := SummaryID(r)
		g := by[id]
		if g == nil {
			g = &Grades{Window: id, Steps: map[string]int{}}
			by[id] = g
			ids = append(ids, id)
		}
		results := r.Results
		i := slices.IndexFunc(results, func(x criteria.Result) bool { return x.ID == model.U1 })
		if i < 0 || !results[i].Judged {
			g.Ungraded++
			continue
		}
		grade, _, _ := strings.Cut(results[i].Summary, ":")
		switch grade {
		case model.GradeKept:
			g.Kept++
		case model.GradeRecovered:
			g.Recovered++
		case model.GradeStuck:
			g.Stuck++
			if step := results[i].Workaround; step != "" {
				g.Steps[step]++
			}
		case model.GradeLost:
			g.Lost++
		default:
			g.Ungraded++
		}
	}
	slices.SortFunc(ids, model.CompareIDs)
	out := make([]Grades, 0, len(ids))
	for _, id := range ids {
		out = append(out, *by[id])
	}
	return out
}

// Cell is the grades as a table cell: "kept 2 / recovered 5 / stuck 3
// (delete-runc-state 3) / lost 0".
func (g Grades) Cell() string {
	s := fmt.Sprintf("kept %d / recovered %d / stuck %d", g.Kept, g.Recovered, g.Stuck)
	if len(g.Steps) > 0 {
		var steps []string
		for _, k := range slices.Sorted(maps.Keys(g.Steps)) {
			steps = append(steps, fmt.Sprintf("%s %d", k, g.Steps[k]))
		}
		s += " (" + strings.Join(steps, ", ") + ")"
	}
	s += fmt.Sprintf(" / lost %d", g.Lost)
	if g.Ungraded > 0 {
		s += fmt.Sprintf(" / ungraded %d", g.Ungraded)
	}
	return s
}

// WriteGrades writes one line per window whose rows were graded.
func WriteGrades(w io.Writer, gs []Grades) error {
	for _, g := range gs {
		if g.Kept+g.Recovered+g.Stuck+g.Lost == 0 {
			continue
		}
		if _, err := fmt.Fprintf(w, "%-14s %s\n", g.Window, g.Cell()); err != nil {
			return err
		}
	}
	return nil
}
