package render

import (
	"fmt"
	"strconv"
	"strings"

	"faultwin/internal/model"
	"faultwin/reports/review"
)

// evidenceRunes bounds the evidence quoted in a cell: enough to tell a
// criu restorer from a leftover link, short enough for a table.
const evidenceRunes = 48

// shortText is a cell's text: PASS; FAIL with its false criteria and the
// first evidence line of the first; INVALID or ERROR with the reason.
func shortText(c Cell) string {
	if c.Mutant == nil {
		return verdictText(c)
	}
	// A mutant's verdict is about the bug planted on purpose, not about
	// the supervisor as shipped.
	if c.Expected() {
		return c.Mutant.Label() + ": expected " + verdictText(c)
	}
	return c.Mutant.Label() + ": " + verdictText(c)
}

func verdictText(c Cell) string {
	switch c.Status {
	case model.StatusPass:
		return model.StatusPass
	case model.StatusFail:
		s := model.StatusFail
		if len(c.Failed) > 0 {
			s += ": " + strings.Join(c.Failed, ", ")
		}
		if ev := firstEvidence(c); ev != "" {
			s += " (" + review.Cut(ev, evidenceRunes) + ")"
		}
		return s
	case model.StatusInvalid, model.StatusError:
		return c.Status + ": " + review.Cut(c.Row.Reason, evidenceRunes+12)
	}
	return "UNKNOWN STATUS " + strconv.Quote(c.Status)
}

// firstEvidence is the first evidence line of the first false criterion.
func firstEvidence(c Cell) string {
	for _, r := range c.Results {
		if r.Judged && !r.Pass && len(r.Evidence) > 0 {
			return r.Evidence[0]
		}
	}
	return ""
}

// label is a row's verdict without evidence, for comparing files: the
// status, and for a FAIL which criteria were false.
func label(c Cell) string {
	if c.Status == model.StatusFail && len(c.Failed) > 0 {
		return "FAIL: " + strings.Join(c.Failed, ", ")
	}
	return c.Status
}

// Comparison lists the windows whose verdict differs between two files.
type Comparison struct {
	A, B string
	// Changed are the windows that ran on both sides whose pass rates'
	// 95% Wilson intervals do not overlap: the changes the evidence
	// supports rather than a flake's draw.
	Changed []Change
	// Within counts the windows whose commonest verdict differs but whose
	// intervals overlap: not a change the rows support.
	Within int
	Same   int // windows on both sides with the same verdict, intervals overlapping
	// OnlyA and OnlyB are the windows that ran on one side only: no
	// change can be told for them.
	OnlyA, OnlyB []string
}

// Sentence says what the comparison counted.
func (c *Comparison) Sentence() string {
	s := fmt.Sprintf("%d windows changed (they ran in both files and their pass rates' 95%% intervals do not overlap); %d differ in their commonest verdict within the intervals, not counted; %d kept their verdict",
		len(c.Changed), c.Within, c.Same)
	if len(c.OnlyA)+len(c.OnlyB) > 0 {
		s += fmt.Sprintf("; %d ran only in A and %d only in B, not compared", len(c.OnlyA), len(c.OnlyB))
	}
	return s + "."
}

// Change is one window's verdict in A and in B, with its pass rate (k/N
// and the 95% Wilson interval) in each.
type Change struct {
	Window       string
	A, B         string
	RateA, RateB string // "8/10 [0.49, 0.94]"; "no measurement"
}

// NotRun is the verdict of a window a file has no row for.
const NotRun = "not run"

// compareFiles lists what changed from a to b: only windows that ran in
// both, and only where their intervals part.
func compareFiles(a, b File) *Comparison {
	va, vb := verdicts(a), verdicts(b)
	sa, sb := sumsByWindow(a), sumsByWindow(b)
	cmp := &Comparison{A: a.Path, B: b.Path}
	ids := map[string]bool{}
	for id := range va {
		ids[id] = true
	}
	for id := range vb {
		ids[id] = true
	}
	for _, id := range sortedIDs(ids) {
		wa, oka := sa[id]
		wb, okb := sb[id]
		switch {
		case !okb:
			cmp.OnlyA = append(cmp.OnlyA, id)
			continue
		case !oka:
			cmp.OnlyB = append(cmp.OnlyB, id)
			continue
		}
		apart := wa.Measured() > 0 && wb.Measured() > 0 && (wa.Hi < wb.Lo || wb.Hi < wa.Lo)
		switch {
		case apart:
			cmp.Changed = append(cmp.Changed, Change{Window: id, A: va[id], B: vb[id], RateA: rate(wa), RateB: rate(wb)})
		case va[id] != vb[id]:
			cmp.Within++
		default:
			cmp.Same++
		}
	}
	return cmp
}

func sumsByWindow(f File) map[string]review.WindowSummary {
	out := map[string]review.WindowSummary{}
	for _, s := range review.Summarize(f.Records) {
		out[s.Window] = s
	}
	return out
}

// rate is a window's pass rate in one file as the summaries print it.
func rate(s review.WindowSummary) string {
	switch {
	case s.Window == "":
		return NotRun
	case s.Measured() == 0:
		return "no measurement"
	}
	return fmt.Sprintf("%d/%d [%.2f, %.2f]", s.Pass, s.Measured(), s.Lo, s.Hi)
}

func verdicts(f File) map[string]string {
	type tally struct {
		order  []string
		counts map[string]int
	}
	by := map[string]*tally{}
	for _, row := range f.Records {
		t := by[review.SummaryID(row)]
		if t == nil {
			t = &tally{counts: map[string]int{}}
			by[review.SummaryID(row)] = t
		}
		l := label(Cell{Status: row.Status, Failed: review.FailedCriteria(row)})
		if t.counts[l] == 0 {
			t.order = append(t.order, l)
		}
		t.counts[l]++
	}
	out := map[string]string{}
	for id, t := range by {
		if len(t.order) == 1 {
			out[id] = t.order[0]
			continue
		}
		parts := make([]string, len(t.order))
		for i, l := range t.order {
			parts[i] = fmt.Sprintf("%d× %s", t.counts[l], l)
		}
		out[id] = strings.Join(parts, ", ")
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }
