package render

import (
	"slices"
	"strings"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/reports/decoded"
	"faultwin/reports/review"
)

// Legend says, in one line each, what every criterion asks, as the
// criterion registered it; a report prints it beside its maps
// (docs/criteria.md says it at length).
var Legend = legend()

func legend() []struct{ ID, Text string } {
	var out []struct{ ID, Text string }
	for _, c := range criteria.Registered() {
		out = append(out, struct{ ID, Text string }{c.ID, c.Legend})
	}
	return out
}

// UnregisteredRule explains "(unregistered)" beside a window.
const UnregisteredRule = "(unregistered): the row's window definition is not the one registered at the harness commit that ran it (an edited or local definition); its verdict is of that definition."

// Outcome is one distinct outcome of a window in a group: its status with
// the criteria that did not hold, the cells that showed it, and the first
// of them as the example whose criteria and evidence the report prints.
type Outcome struct {
	Window  string
	Key     string // "FAIL P3 P7", "PASS", "FAIL U1 ≠" for a replay that disagrees
	Cells   []Cell
	Example Cell
}

// ID is the anchor of the outcome's example.
func (o Outcome) ID() string { return o.Example.ID }

// outcomeKey is what tells a cell's outcome apart from another's.
func outcomeKey(c Cell) string {
	k := c.Status
	if len(c.Failed) > 0 {
		k += " " + strings.Join(c.Failed, " ")
	}
	if len(c.Diffs) > 0 {
		k += " ≠"
	}
	if c.Mutant != nil {
		k += " (" + c.Mutant.Label() + ")"
	}
	return k
}

// GroupOutcomes lists, per window of the group in its order, its distinct
// outcomes, the worst first (a FAIL before a PASS), each with its cells in
// run order.
func GroupOutcomes(r *Report, g *Group) map[string][]Outcome {
	out := map[string][]Outcome{}
	for _, id := range g.Windows {
		at := map[string]int{}
		var os []Outcome
		for _, n := range g.Runs {
			c, ok := r.HasCell(g, id, n)
			if !ok {
				continue
			}
			k := outcomeKey(c)
			i, seen := at[k]
			if !seen {
				i = len(os)
				at[k] = i
				os = append(os, Outcome{Window: id, Key: k, Example: c})
			}
			os[i].Cells = append(os[i].Cells, c)
		}
		slices.SortStableFunc(os, func(a, b Outcome) int { return rank(a.Example.Status) - rank(b.Example.Status) })
		out[id] = os
	}
	return out
}

// rank orders statuses worst first for a reviewer: what failed leads.
func rank(status string) int {
	switch status {
	case model.StatusFail:
		return 0
	case model.StatusError:
		return 1
	case model.StatusInvalid:
		return 2
	case model.StatusPass:
		return 4
	}
	return 3
}

// GroupSummaries are the group's windows summarised over every file of it
// (a supervisor's k/N and interval per window, not per file), in the
// group's window order.
func GroupSummaries(r *Report, g *Group) []review.WindowSummary {
	var rs []decoded.Record
	for _, n := range g.Runs {
		for _, id := range g.Windows {
			if c, ok := r.HasCell(g, id, n); ok {
				rs = append(rs, c.Row)
			}
		}
	}
	sums := review.Summarize(rs)
	at := map[string]review.WindowSummary{}
	for _, s := range sums {
		at[s.Window] = s
	}
	out := make([]review.WindowSummary, 0, len(g.Windows))
	for _, id := range g.Windows {
		if s, ok := at[id]; ok {
			out = append(out, s)
		}
	}
	return out
}

// FailingFirst orders window summaries for a reviewer: windows with a
// FAIL, ERROR or INVALID row first (the lowest pass rate first), then the
// rest in their order.
func FailingFirst(sums []review.WindowSummary) []review.WindowSummary {
	out := slices.Clone(sums)
	bad := func(s review.WindowSummary) bool { return s.Fail+s.Error+s.Invalid+s.Unknown > 0 }
	slices.SortStableFunc(out, func(a, b review.WindowSummary) int {
		switch {
		case bad(a) && !bad(b):
			return -1
		case !bad(a) && bad(b):
			return 1
		case bad(a) && bad(b):
			ra, rb := passShare(a), passShare(b)
			switch {
			case ra < rb:
				return -1
			case ra > rb:
				return 1
			}
		}
		return 0
	})
	return out
}

func passShare(s review.WindowSummary) float64 {
	if s.Rows == 0 {
		return 1
	}
	return float64(s.Pass) / float64(s.Rows)
}

// Strip is one window's cells in one file of a group, in run order: a
// heatmap cell holding a square per run of the file that ran the window,
// so runs that did not run it take no room.
type Strip struct {
	File  string
	Cells []Cell
}

// GroupStrips lays a group's cells out by window and file: per window, one
// strip per file of the group (empty when the file did not run it).
func GroupStrips(r *Report, g *Group) map[string][]Strip {
	col := map[string]int{}
	for i, f := range g.Files {
		col[f] = i
	}
	out := map[string][]Strip{}
	for _, id := range g.Windows {
		strips := make([]Strip, len(g.Files))
		for i, f := range g.Files {
			strips[i].File = f
		}
		for _, n := range g.Runs {
			if c, ok := r.HasCell(g, id, n); ok {
				i := col[c.File]
				strips[i].Cells = append(strips[i].Cells, c)
			}
		}
		out[id] = strips
	}
	return out
}

// letter is a cell's status in one character, for compact maps.
func letter(status string) string {
	switch status {
	case model.StatusPass:
		return "P"
	case model.StatusFail:
		return "F"
	case model.StatusInvalid:
		return "I"
	case model.StatusError:
		return "E"
	}
	return "?"
}
