package render

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"faultwin/internal/model"
	"faultwin/reports/decoded"
	"faultwin/reports/findings"
	"faultwin/reports/review"
)

// MutantsGroup names the group of the rows of a supervisor run with a
// known-bug switch, and of their control runs.
const MutantsGroup = "mutants (bugs planted on purpose)"

// MutantsDir is the directory name under which a rows file named
// <bug>.jsonl (or control.jsonl) holds a mutant run: `make mutants` writes
// out/mutants/, and the committed rows are results/mutants/.
const MutantsDir = "mutants"

// ControlName is the file name (without .jsonl or .jsonl.gz) of the
// mutants' control runs: refsup with no bug switch.
const ControlName = "control"

// MutantsRule explains the mutants group wherever it is shown.
const MutantsRule = "Rows of a supervisor run with a known-bug switch on (`run.bugs`; rows written before it was recorded are named by their file, `mutants/<bug>.jsonl`), and the control runs with no bug (`mutants/control.jsonl`). A FAIL with a bug switch on is expected: it is the bug planted on purpose, not a finding about a supervisor. `make mutants` checks every row here, controls included, against the verdict its case expects; none of them counts as a supervisor's verdict, nor in the report's exit status."

// Mutant says which bug switches a mutant row ran with.
type Mutant struct {
	Bugs []string // none: a control run
	// FromName is set when the row predates run.bugs and its bug is the
	// name of its file.
	FromName bool
}

// Control reports whether the row is a control run: no bug switch on.
func (m Mutant) Control() bool { return len(m.Bugs) == 0 }

// Label is how the report names the mutant: "bug switch leak-cgroup",
// "control (no bug)".
func (m Mutant) Label() string {
	if m.Control() {
		return "control (no bug)"
	}
	return "bug switch " + strings.Join(m.Bugs, ",")
}

// Origin is Label with where the bug switch was read from.
func (m Mutant) Origin() string {
	switch {
	case m.FromName && m.Control():
		return "control (no bug), named by its file"
	case m.FromName:
		return m.Label() + ", named by its file (the row predates run.bugs)"
	}
	return m.Label() + ", recorded in run.bugs"
}

// MutantOf says whether row, read from path, is a mutant's row, and with
// which bug. run.bugs decides when the row has it. A row without it is a
// mutant only when its file sits directly in a directory named mutants:
// there a file is named after its bug switch (control.jsonl: none), and
// rows written before run.bugs existed say so only through that name.
func MutantOf(path string, row decoded.Record) (Mutant, bool) {
	if len(row.Run.Bugs) > 0 {
		return Mutant{Bugs: row.Run.Bugs}, true
	}
	if filepath.Base(filepath.Dir(path)) != MutantsDir {
		return Mutant{}, false
	}
	base := filepath.Base(path)
	name := strings.TrimSuffix(base, ".gz")
	name = strings.TrimSuffix(name, ".jsonl")
	if name == "" || name == base {
		return Mutant{}, false
	}
	if name == ControlName {
		return Mutant{FromName: true}, true
	}
	return Mutant{Bugs: []string{name}, FromName: true}, true
}

// Group is the rows of one supervisor, or the mutants' rows: the report
// shows each under its own heading, and only a supervisor's group speaks
// of that supervisor.
type Group struct {
	Name      string // the supervisor ("refsup", "podman"), or MutantsGroup
	Mutants   bool
	Runs      []int    // the runs (columns) that hold a row of the group
	Windows   []string // natural order
	Files     []string // in the order given
	Summaries []FileSummary
	Counts    map[string]int // rows by status
	// Expected counts the FAILs of rows with a bug switch on, and
	// ControlFails those of control runs (mutants group only).
	Expected, ControlFails int
}

// Rows is how many rows the group holds.
func (g *Group) Rows() int {
	n := 0
	for _, c := range g.Counts {
		n += c
	}
	return n
}

// FailCell is the group's FAIL count as the headline prints it: in the
// mutants group, which FAILs were planted.
func (g *Group) FailCell() string {
	n := g.Counts[model.StatusFail]
	if !g.Mutants || n == 0 {
		return itoa(n)
	}
	var parts []string
	if g.Expected > 0 {
		parts = append(parts, fmt.Sprintf("%d expected (bugs planted)", g.Expected))
	}
	if g.ControlFails > 0 {
		parts = append(parts, fmt.Sprintf("%d of control runs", g.ControlFails))
	}
	return strings.Join(parts, ", ")
}

// Title is the group's heading.
func (g *Group) Title() string {
	if g.Mutants {
		return "Mutants (bugs planted on purpose)"
	}
	return "Supervisor: " + g.Name
}

// HasCell reports whether window has a row of the group in run n: a run
// may hold rows of two groups (a mutant's cascade next to a plain row),
// so a cell is shown only under its own group.
func (r *Report) HasCell(g *Group, window string, n int) (Cell, bool) {
	c, ok := r.Cell(window, n)
	if !ok || c.Group != g.Name {
		return Cell{}, false
	}
	return c, true
}

// grouping collects the groups while Build lays the cells out.
type grouping struct {
	by      map[string]*Group
	windows map[string]map[string]bool
	runs    map[string]map[int]bool
}

func newGrouping() *grouping {
	return &grouping{by: map[string]*Group{}, windows: map[string]map[string]bool{}, runs: map[string]map[int]bool{}}
}

func (gs *grouping) group(name string, mutants bool) *Group {
	g := gs.by[name]
	if g == nil {
		g = &Group{Name: name, Mutants: mutants, Counts: map[string]int{}}
		gs.by[name] = g
		gs.windows[name] = map[string]bool{}
		gs.runs[name] = map[int]bool{}
	}
	return g
}

func (gs *grouping) add(c Cell, file string) {
	g := gs.group(c.Group, c.Mutant != nil)
	g.Counts[c.Status]++
	if c.Mutant != nil && c.Status == model.StatusFail {
		if c.Mutant.Control() {
			g.ControlFails++
		} else {
			g.Expected++
		}
	}
	gs.windows[g.Name][c.Window] = true
	gs.runs[g.Name][c.Run] = true
	if n := len(g.Files); n == 0 || g.Files[n-1] != file {
		g.Files = append(g.Files, file)
	}
}

// done orders the groups: supervisors by name, the mutants last, since
// they are not a supervisor's verdicts.
func (gs *grouping) done() []*Group {
	out := make([]*Group, 0, len(gs.by))
	for name, g := range gs.by {
		g.Windows = sortedIDs(gs.windows[name])
		for n := range gs.runs[name] {
			g.Runs = append(g.Runs, n)
		}
		sort.Ints(g.Runs)
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Mutants != out[j].Mutants {
			return !out[i].Mutants
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// MutantsHeadline follows the headline when the mutants are among the rows.
const MutantsHeadline = "The mutants' rows are not a supervisor's verdicts: their FAILs with a bug switch on are expected (the bugs planted on purpose), and none of their rows counts in the report's exit status. Their own section says more."

// GroupFindings are the findings of a supervisor's group: its rows' failed
// criteria grouped by signature. None for the mutants' group.
func GroupFindings(r *Report, g *Group) []findings.Finding {
	if g.Mutants {
		return nil
	}
	return findings.Group(groupRows(r, g))
}

// groupRows are the rows of a supervisor's group, the mutants' left out.
func groupRows(r *Report, g *Group) []decoded.Record {
	var rs []decoded.Record
	for _, f := range r.Files {
		for _, row := range f.Records {
			if _, mutant := MutantOf(f.Path, row); !mutant && row.Supervisor() == g.Name {
				rs = append(rs, row)
			}
		}
	}
	return rs
}

// GroupAB compares, for a group's windows that ran controls (an A/B
// soak), each failure with its control's (review.AB): what the kill
// caused, what the supervisor does with no fault, what is not separable
// yet. Windows without control rows are left out.
func GroupAB(r *Report, g *Group) []review.WindowAB {
	if g.Mutants {
		return nil
	}
	var out []review.WindowAB
	for _, w := range review.AB(groupRows(r, g), findings.Class) {
		if w.Control.Measured() > 0 || w.Control.Invalid+w.Control.Error > 0 {
			out = append(out, w)
		}
	}
	return out
}
