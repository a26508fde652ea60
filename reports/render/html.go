package render

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"

	"faultwin/internal/model"
	"faultwin/reports/findings"
	"faultwin/reports/review"
)

//go:embed page.html.tmpl
var pageSource string

var page = template.Must(template.New("page").Funcs(template.FuncMap{
	"class":  statusClass,
	"sub":    func(a, b int) int { return a - b },
	"hash":   shortHash,
	"spread": spread,
	"stamp":  stamp,
	"tally":  failedTally,
	"rate": func(w review.WindowSummary) string {
		if w.Measured() == 0 {
			return "no measurement"
		}
		return fmt.Sprintf("%d/%d pass, 95%% Wilson [%.2f, %.2f]", w.Pass, w.Measured(), w.Lo, w.Hi)
	},
	"seconds": func(s review.Spread) string { return fmt.Sprintf("%.1fs", s.Median) },
	"outcome": func(judged, pass bool) string {
		switch {
		case !judged:
			return "not judged"
		case !pass:
			return "false"
		}
		return "holds"
	},
	"outcomeClass": func(judged, pass bool) string {
		switch {
		case !judged:
			return "o-unjudged"
		case !pass:
			return "o-false"
		}
		return "o-holds"
	},
	"join": func(xs []string) string { return strings.Join(xs, ", ") },
	"trim": func(s string) string { return strings.TrimPrefix(s, "not judged: ") },
}).Parse(pageSource))

// statusClass is the CSS class of a status; colour is never the only cue,
// every cell also carries the status in words.
func statusClass(status string) string {
	switch status {
	case model.StatusPass, model.StatusFail, model.StatusInvalid, model.StatusError:
		return "s-" + strings.ToLower(status)
	}
	return "s-unknown"
}

// htmlView is what the template ranges over: the report, plus the
// windows-by-runs grid with empty slots filled in.
type htmlView struct {
	*Report
	Rule         string
	LandingRule  string
	MutantsRule  string
	Headline     string // set when the mutants are among the rows
	GroupedViews []groupView
	Cells        []Cell // every cell, for the detail sections
	KillMaps     []killMapView
}

// groupView is one group's heatmap: its own runs as columns.
type groupView struct {
	*Group
	N        int   // 1-based, for unique ids on the page
	Cols     []Run // the group's runs
	Grid     []gridRow
	Findings []findings.Finding // the most often seen (maxFindings)
	More     int                // findings not shown
	AB       []review.WindowAB  // windows that ran controls
}

type gridRow struct {
	Window string
	Name   string
	Slots  []slot
}

type slot struct {
	Run  int
	Cell *Cell // nil when the window has no row in this run
}

// HTML writes the report as one self-contained page: inline CSS and
// script, no network, no external fonts. The heatmap's cells are links to
// per-row detail sections, so the page works without script; with script,
// a click shows the row's criteria and evidence in a panel beside the map.
func HTML(w io.Writer, r *Report) error {
	v := htmlView{Report: r, Rule: GroupingRule + " " + review.RateRule + ".", LandingRule: LandingRule, MutantsRule: MutantsRule,
		KillMaps: killMaps(r.Files)}
	for i, grp := range r.Groups {
		gv := groupView{Group: grp, N: i + 1}
		if fs := GroupFindings(r, grp); len(fs) > 0 {
			gv.Findings = fs[:min(len(fs), maxFindings)]
			gv.More = len(fs) - len(gv.Findings)
		}
		gv.AB = GroupAB(r, grp)
		for _, n := range grp.Runs {
			gv.Cols = append(gv.Cols, r.Runs[n-1])
		}
		if grp.Mutants {
			v.Headline = MutantsHeadline
		}
		for _, id := range grp.Windows {
			g := gridRow{Window: id, Name: windowName(r, id)}
			for _, n := range grp.Runs {
				s := slot{Run: n}
				if c, ok := r.HasCell(grp, id, n); ok {
					s.Cell = &c
				}
				g.Slots = append(g.Slots, s)
			}
			gv.Grid = append(gv.Grid, g)
		}
		v.GroupedViews = append(v.GroupedViews, gv)
	}
	for _, run := range r.Runs {
		for _, id := range r.Windows {
			if c, ok := r.Cell(id, run.N); ok {
				v.Cells = append(v.Cells, c)
			}
		}
	}
	return page.Execute(w, v)
}
