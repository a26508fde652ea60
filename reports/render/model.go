// Package render turns rows into reports a reviewer reads: Markdown for
// commits and reviews, and one self-contained HTML page (a heatmap of
// windows by runs whose every cell opens that row's criteria and evidence).
//
// Columns are runs. Rows do not record which invocation wrote them, so a
// run is recovered from each file with review.Passes: a stretch of
// consecutive rows of one file, under one harness commit, in which no
// window repeats. Each pass of a soak is one run; each `faultwin run`
// appended to a file is one run; files are never merged into one column.
// Columns are numbered 1..N across the report in the order the files were
// given.
//
// Nothing here reads the host: the report is a function of the rows, and
// every file is replayed first so a report never presents evidence that
// does not verify without saying so.
package render

import (
	"slices"
	"sort"
	"strings"
	"time"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/reports/decoded"
	"faultwin/reports/review"
)

// File is one JSONL file and its replay.
type File struct {
	Path    string
	Records []decoded.Record
	Replay  review.FileReplay
}

// SealCell is how the report states the file's seals: "sealed", "legacy",
// "UNSEALED", or "UNFINISHED" with each session sealed afterwards as
// unfinished and why: those rows are a run that never finished.
func (f File) SealCell() string {
	switch st := review.SealState(f.Replay.Seal); st {
	case review.SealUnfinished:
		var why []string
		for _, s := range f.Replay.Seal.Sessions {
			if s.Unfinished() {
				why = append(why, plural(s.Rows, "row", "rows")+": "+s.Seal.Seal.Note)
			}
		}
		return "UNFINISHED (" + strings.Join(why, "; ") + ")"
	case review.SealUnsealed:
		return "UNSEALED"
	case "":
		return "not checked"
	default:
		return st
	}
}

// Load reads and replays each path. A file that cannot be read to its end
// is kept with the rows before the bad line; its replay says why.
func Load(paths []string) []File {
	out := make([]File, len(paths))
	for i, f := range review.ReplayFiles(paths, true) {
		out[i] = File{Path: paths[i], Records: f.Records, Replay: f}
	}
	return out
}

// Run is one column of the report.
type Run struct {
	N        int // 1-based, across the report
	File     string
	Pass     int // 1-based within its file
	Commit   string
	Dirty    bool
	Started  time.Time // the first row's start
	Finished time.Time // the last row's finish
	Counts   map[string]int
	Load     review.Spread // 1-minute load average before each window
}

// Cell is one row, placed at its window and run.
type Cell struct {
	ID      string // "d-<run>-<window>": unique, usable as an HTML id
	Window  string
	Run     int
	File    string
	Line    int // 1-based row number in File
	Row     decoded.Record
	Status  string
	Short   string // the cell's text: "FAIL: P1 (pid 4242 …)"
	Failed  []string
	Results []criteria.Result // nil if the recorded criteria do not decode
	Diffs   []review.Difference
	Group   string  // the supervisor, or MutantsGroup
	Mutant  *Mutant // set for a mutant's row
	// ExampleID is the anchor of the example of the cell's outcome (set
	// where a report lays cells out by outcome).
	ExampleID string
}

// Expected reports whether the cell's FAIL is a bug planted on purpose.
func (c Cell) Expected() bool {
	return c.Status == model.StatusFail && c.Mutant != nil && !c.Mutant.Control()
}

// Report is everything the renderers print.
type Report struct {
	Files        []File
	Runs         []Run
	Windows      []string                // natural order
	Cells        map[string]map[int]Cell // window -> run -> cell
	Unregistered map[string]bool         // a row of the window records an unregistered definition
	Groups       []*Group                // per supervisor by name, then the mutants
	Landings     []review.Landing        // externally killed windows by the state their kills found, over every file
	Compare      *Comparison             // set by Build when compare is true
	Problems     []string                // evidence that does not verify, one line each
	Counts       map[string]int
}

// FileSummary is the per-window summary of one file's rows of one group.
type FileSummary struct {
	Path string
	Sums []review.WindowSummary
	Load review.Spread
	// Mutants names the bug switches of the file's mutant rows
	// ("bug switch leak-cgroup, named by its file"); empty outside the
	// mutants group.
	Mutants string
}

// Cell returns the cell of window in run n.
func (r *Report) Cell(window string, n int) (Cell, bool) {
	c, ok := r.Cells[window][n]
	return c, ok
}

// Build lays files out as runs and cells. With compare, files must be two
// (A and B) and Report.Compare lists the windows whose verdict changed.
func Build(files []File, compare bool) *Report {
	r := &Report{Files: files, Cells: map[string]map[int]Cell{}, Unregistered: map[string]bool{}, Counts: map[string]int{}}
	seen := map[string]bool{}
	groups := newGrouping()
	for _, f := range files {
		r.problems(f)
		diffs := map[int][]review.Difference{}
		for _, d := range f.Replay.Diffs {
			diffs[d.Row] = append(diffs[d.Row], d)
		}
		passes := review.Passes(f.Records)
		first := len(r.Runs)
		var loads [][]float64
		for i, row := range f.Records {
			k := first + passes[i] - 1
			if k == len(r.Runs) {
				r.Runs = append(r.Runs, Run{N: k + 1, File: f.Path, Pass: passes[i], Commit: row.Run.Commit,
					Dirty: row.Run.Dirty, Started: row.Run.Started, Counts: map[string]int{}})
				loads = append(loads, nil)
			}
			run := &r.Runs[k]
			run.Finished = row.Run.Finished
			run.Counts[row.Status]++
			r.Counts[row.Status]++
			loads[k-first] = append(loads[k-first], row.Host.LoadBefore[0])
			id := review.SummaryID(row) // a control is a row of its own
			if !seen[id] {
				seen[id] = true
				r.Windows = append(r.Windows, id)
				r.Cells[id] = map[int]Cell{}
			}
			if !row.Registration.Registered {
				r.Unregistered[id] = true
			}
			c := newCell(row, run.N, f.Path, i+1, diffs[i+1])
			r.Cells[id][run.N] = c
			groups.add(c, f.Path)
		}
		for j, l := range loads {
			r.Runs[first+j].Load = review.SpreadOf(l)
		}
		for _, s := range fileSummaries(f) {
			g := groups.by[s.group]
			g.Summaries = append(g.Summaries, s.FileSummary)
		}
	}
	sort.Slice(r.Windows, func(i, j int) bool { return model.CompareIDs(r.Windows[i], r.Windows[j]) < 0 })
	r.Groups = groups.done()
	var every []decoded.Record
	for _, f := range files {
		every = append(every, f.Records...)
	}
	var errs []error
	r.Landings, errs = review.Landings(every)
	for _, err := range errs {
		r.Problems = append(r.Problems, "where the kill landed: "+err.Error())
	}
	if compare && len(files) == 2 {
		r.Compare = compareFiles(files[0], files[1])
	}
	return r
}

// problems collects what makes a file's evidence untrustworthy.
func (r *Report) problems(f File) {
	if f.Replay.ReadErr != nil {
		r.Problems = append(r.Problems, "unreadable past row "+itoa(len(f.Records))+": "+f.Replay.ReadErr.Error())
	}
	if f.Replay.Chain != nil {
		r.Problems = append(r.Problems, f.Replay.Chain.Error())
	}
	for _, d := range f.Replay.Diffs {
		r.Problems = append(r.Problems, d.String())
	}
}

type groupSummary struct {
	group string
	FileSummary
}

// fileSummaries summarises f's rows per group, in the order the groups
// first appear in f.
func fileSummaries(f File) []groupSummary {
	var order []string
	by := map[string][]decoded.Record{}
	labels := map[string][]string{}
	for _, row := range f.Records {
		g := row.Supervisor()
		if m, ok := MutantOf(f.Path, row); ok {
			g = MutantsGroup
			if l := m.Origin(); !slices.Contains(labels[g], l) {
				labels[g] = append(labels[g], l)
			}
		}
		if by[g] == nil {
			order = append(order, g)
		}
		by[g] = append(by[g], row)
	}
	out := make([]groupSummary, 0, len(order))
	for _, g := range order {
		load := make([]float64, 0, len(by[g]))
		for _, row := range by[g] {
			load = append(load, row.Host.LoadBefore[0])
		}
		out = append(out, groupSummary{g, FileSummary{Path: f.Path, Sums: review.Summarize(by[g]), Load: review.SpreadOf(load),
			Mutants: strings.Join(labels[g], "; ")}})
	}
	return out
}

func newCell(row decoded.Record, run int, file string, line int, diffs []review.Difference) Cell {
	w := review.SummaryID(row)
	c := Cell{ID: "d-" + itoa(run) + "-" + strings.ReplaceAll(w, " ", "-"), Window: w, Run: run, File: file, Line: line,
		Row: row, Status: row.Status, Diffs: diffs, Group: row.Supervisor()}
	if m, ok := MutantOf(file, row); ok {
		c.Mutant, c.Group = &m, MutantsGroup
	}
	c.Results = row.Results
	c.Failed = review.FailedCriteria(row)
	c.Short = shortText(c)
	return c
}
