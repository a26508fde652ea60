package render

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

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
	"krate": func(w review.WindowSummary) string {
		if w.Measured() == 0 {
			return "no measurement"
		}
		return fmt.Sprintf("%d/%d [%.2f, %.2f]", w.Pass, w.Measured(), w.Lo, w.Hi)
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
	// outcomeClass is the class of a criterion's line that did not
	// hold; a line that holds has none (no style draws it apart, and a
	// page of thousands of them is lighter without).
	"outcomeClass": func(judged, pass bool) string {
		switch {
		case !judged:
			return "o-unjudged"
		case !pass:
			return "o-false"
		}
		return ""
	},
	"join":     func(xs []string) string { return strings.Join(xs, ", ") },
	"letter":   letter,
	"evidence": evidence,
	"runsOf": func(cs []Cell) string {
		var parts []string
		for i, c := range cs {
			if i == 40 {
				parts = append(parts, fmt.Sprintf("and %d more", len(cs)-40))
				break
			}
			parts = append(parts, itoa(c.Run))
		}
		return strings.Join(parts, ", ")
	},
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

// htmlView is what the template ranges over: the report laid out for a
// reviewer, each supervisor first with its map, findings and outcomes, the
// files and runs last.
type htmlView struct {
	*Report
	Rule         string
	LandingRule  string
	MutantsRule  string
	Unregistered string
	Legend       []struct{ ID, Text string }
	Headline     string // set when the mutants are among the rows
	GroupedViews []groupView
	KillMaps     []killMapView
}

// groupView is one group's section: its map (windows by files, a square
// per run), its findings, its controls and one example per outcome.
type groupView struct {
	*Group
	N        int // 1-based, for unique ids on the page
	Cols     []fileCol
	Grid     []heatRow
	Findings []findings.Finding // the most often seen (maxFindings)
	More     int                // findings not shown
	AB       []review.WindowAB  // windows that ran controls
	Outcomes []Outcome          // per window, worst first
	Cells    int                // squares on the map
}

type fileCol struct {
	Path, Short string
	Runs        int
}

type heatRow struct {
	Window string
	Name   string
	Sum    *review.WindowSummary
	Strips []Strip
}

// maxEvidence bounds the evidence lines an example prints per criterion,
// and maxLine their length: the row itself keeps all of it (faultwin rows).
const (
	maxEvidence = 12
	maxLine     = 600
)

// evidence is a criterion's evidence as an example prints it: none for a
// criterion that holds (its summary says it), capped otherwise.
func evidence(judged, pass bool, ev []string) []string {
	if judged && pass {
		return nil
	}
	out := make([]string, 0, min(len(ev), maxEvidence+1))
	for i, e := range ev {
		if i == maxEvidence {
			out = append(out, fmt.Sprintf("… %d more lines in the row (faultwin rows FILE)", len(ev)-maxEvidence))
			break
		}
		if len(e) > maxLine {
			e = e[:maxLine] + fmt.Sprintf(" … (%d characters)", len(e))
		}
		out = append(out, e)
	}
	return out
}

// HTML writes the report as one self-contained page: inline CSS and
// script, no network, no external fonts. Each supervisor comes first with
// its map; every square of the map links to the example of its outcome
// (the window's first row with that status and those false criteria), so
// the page works without script; with script, a click shows that example
// in a panel beside the map.
func HTML(w io.Writer, r *Report) error {
	v := htmlView{Report: r, Rule: GroupingRule + " " + review.RateRule + ".", LandingRule: LandingRule, MutantsRule: MutantsRule,
		Unregistered: UnregisteredRule, Legend: Legend}
	// Each supervisor's section is built from the report alone, so the
	// sections (and the kill maps) are built at once, as many as there
	// are CPUs, and laid out in the groups' order.
	v.GroupedViews = make([]groupView, len(r.Groups))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	wg.Add(1 + len(r.Groups))
	go func() {
		defer wg.Done()
		sem <- struct{}{}
		v.KillMaps = killMaps(r.Files)
		<-sem
	}()
	for i, grp := range r.Groups {
		if grp.Mutants {
			v.Headline = MutantsHeadline
		}
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			v.GroupedViews[i] = buildGroupView(r, grp, i+1)
			<-sem
		}()
	}
	wg.Wait()
	return page.Execute(w, v)
}

// buildGroupView is the section of one supervisor, the Nth.
func buildGroupView(r *Report, grp *Group, n int) groupView {
	gv := groupView{Group: grp, N: n}
	if fs := GroupFindings(r, grp); len(fs) > 0 {
		gv.Findings = fs[:min(len(fs), maxFindings)]
		gv.More = len(fs) - len(gv.Findings)
	}
	gv.AB = GroupAB(r, grp)
	sums := map[string]*review.WindowSummary{}
	for _, s := range GroupSummaries(r, grp) {
		s := s
		sums[s.Window] = &s
	}
	strips := GroupStrips(r, grp)
	for _, f := range grp.Files {
		runs := 0
		for _, n := range grp.Runs {
			if r.Runs[n-1].File == f {
				runs++
			}
		}
		gv.Cols = append(gv.Cols, fileCol{Path: f, Short: shortFile(f), Runs: runs})
	}
	outcomes := GroupOutcomes(r, grp)
	linkExamples(strips, outcomes)
	for _, id := range grp.Windows {
		gv.Grid = append(gv.Grid, heatRow{Window: id, Name: windowName(r, id), Sum: sums[id], Strips: strips[id]})
		gv.Outcomes = append(gv.Outcomes, outcomes[id]...)
		for _, st := range strips[id] {
			gv.Cells += len(st.Cells)
		}
	}
	return gv
}

// linkExamples points every cell of the strips at its outcome's example.
func linkExamples(strips map[string][]Strip, outcomes map[string][]Outcome) {
	for id, ss := range strips {
		ex := map[string]string{}
		for _, o := range outcomes[id] {
			ex[o.Key] = o.ID()
		}
		for i := range ss {
			for j := range ss[i].Cells {
				c := &ss[i].Cells[j]
				c.ExampleID = ex[outcomeKey(*c)]
			}
		}
	}
}

// shortFile is a file's name without its directories and extensions, for
// a map's column head (the full path is its title).
func shortFile(p string) string {
	b := filepath.Base(p)
	b = strings.TrimSuffix(b, ".gz")
	return strings.TrimSuffix(b, ".jsonl")
}
