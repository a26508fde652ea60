package render

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"

	"faultwin/internal/model"
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
	Rule        string
	LandingRule string
	Grid        []gridRow
	Cells       []Cell // every cell, for the detail sections
	KillMaps    []killMapView
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
	v := htmlView{Report: r, Rule: GroupingRule + " " + review.RateRule + ".", LandingRule: LandingRule, KillMaps: killMaps(r.Files)}
	for _, id := range r.Windows {
		g := gridRow{Window: id, Name: windowName(r, id)}
		for _, run := range r.Runs {
			s := slot{Run: run.N}
			if c, ok := r.Cell(id, run.N); ok {
				s.Cell = &c
			}
			g.Slots = append(g.Slots, s)
		}
		v.Grid = append(v.Grid, g)
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
