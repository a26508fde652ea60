package render

import (
	"fmt"
	"io"
	"strings"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/reports/findings"
	"faultwin/reports/review"
)

// LandingRule explains the landing table.
const LandingRule = "Rows of windows killed from outside, grouped by the run's processes (comm ×count) the trigger saw at the kill: where the kill landed decides what it can leave. Rows from every file given are counted together."

// GroupingRule explains the columns in every report.
const GroupingRule = "A run (a column) is a stretch of consecutive rows of one file, under one harness commit, in which no window repeats: each pass of a soak is one run, each `faultwin run` appended to a file is one run."

// Markdown writes the report: the rows' statuses per supervisor, files
// and whether their evidence verifies, the runs, then per supervisor (and
// the mutants apart) the verdict table (windows by runs) and each file's
// summary with load averages, the changes between two files when
// comparing, and the criteria and evidence of every row that did not pass.
func Markdown(w io.Writer, r *Report) error {
	m := &mdWriter{w: w}
	m.line("# faultwin report")
	m.line("")
	m.line(GroupingRule + " " + review.RateRule + ".")
	m.problems(r)
	m.headline(r)
	m.legend()
	for _, g := range r.Groups {
		m.group(r, g)
	}
	m.compare(r)
	m.landings(r)
	m.details(r)
	m.files(r)
	m.runs(r)
	return m.err
}

// MarkdownBrief writes the report within maxBytes, failures first, for a
// CI job summary (1 MiB) or a pull-request comment (65,536 characters):
// the evidence that does not verify, the supervisors, then per supervisor
// its findings, its windows that did not all pass (the lowest pass rate
// first) and its controls, the changes when comparing, then an example of
// each failing outcome while the budget lasts. What does not fit is cut at
// a line, and the report says where and how to read the rest.
func MarkdownBrief(w io.Writer, r *Report, maxBytes int) error {
	m := &mdWriter{w: w, max: maxBytes, limit: briefRows, budget: maxBytes}
	m.line("# faultwin report (brief: at most %d bytes, failures first)", maxBytes)
	m.line("")
	m.line(review.RateRule + ".")
	m.problems(r)
	m.headline(r)
	// Every supervisor's worst first, then each one's controls, then the
	// examples: a budget spent on one supervisor's long tables would hide
	// the next one's failures.
	for _, g := range r.Groups {
		m.line("")
		m.line("## %s", g.Title())
		m.findings(r, g)
		m.windows(r, g, true)
	}
	for _, g := range r.Groups {
		m.caused(r, g)
	}
	m.compare(r)
	for _, g := range r.Groups {
		m.examples(r, g)
	}
	m.legend()
	return m.close()
}

// briefRows bounds each table of a brief report; the full report has the
// rest.
const briefRows = 15

// caused lists the failures the kill caused against the controls (a brief
// report's share of "Against the controls").
func (m *mdWriter) caused(r *Report, g *Group) {
	var rows [][]string
	for _, w := range GroupAB(r, g) {
		for _, a := range w.Attributions {
			if a.Verdict == review.Caused {
				rows = append(rows, []string{w.Window, a.Criterion, code(a.Class), fmt.Sprintf("%d/%d", a.FaultK, a.FaultN),
					fmt.Sprintf("%d/%d", a.ControlK, a.ControlN), fmt.Sprintf("%+.2f [%+.2f, %+.2f]", a.Diff, a.Lo, a.Hi)})
			}
		}
	}
	if len(rows) == 0 {
		return
	}
	m.line("")
	m.line("## %s: failures the kill caused (against the controls)", g.Name)
	m.line("")
	m.head("window", "criterion", "evidence", "fault k/N", "control k/N", "difference [95%]")
	for i, c := range rows {
		if i == m.limit {
			m.line("")
			m.line("… and %d more (the full report lists them)", len(rows)-i)
			break
		}
		m.row(c...)
	}
}

// briefReserve is kept free of a brief report's budget for the line that
// says it was cut.
const briefReserve = 320

type mdWriter struct {
	w   io.Writer
	err error
	// max bounds the bytes written (0: no bound); n counts them, and cut
	// says a line did not fit, after which nothing more is written.
	max, n int
	cut    bool
	// limit bounds the rows of the tables that honour it (0: none).
	limit  int
	budget int  // the bound asked for, for the note that says it was cut
	fenced bool // inside a code fence: a cut closes it
}

// close ends a bounded report, saying so when something did not fit.
func (m *mdWriter) close() error {
	if m.cut && m.err == nil {
		m.max, m.cut = 0, false
		if m.fenced {
			m.line("```")
		}
		m.line("")
		m.line("_Cut here to stay within %d bytes (--max-bytes): the rest of the report, every row's evidence included, is in `faultwin report FILES` without --max-bytes, or `faultwin findings FILES`._", m.budget)
	}
	return m.err
}

func (m *mdWriter) line(format string, a ...any) {
	if m.err != nil || m.cut {
		return
	}
	l := fmt.Sprintf(format+"\n", a...)
	if m.max > 0 && m.n+len(l) > m.max-briefReserve {
		m.cut = true
		return
	}
	m.n += len(l)
	if strings.HasPrefix(l, "```") {
		m.fenced = !m.fenced
	}
	_, m.err = io.WriteString(m.w, l)
}

// legend says what each criterion asks, and what "(unregistered)" means.
func (m *mdWriter) legend() {
	m.line("")
	m.line("## Legend")
	m.line("")
	for _, l := range Legend {
		m.line("- **%s**: %s", l.ID, l.Text)
	}
	m.line("")
	m.line("%s", UnregisteredRule)
}

// windows lists the group's windows over every file of it: pass k/N with
// its interval, the other statuses and the false criteria. With bad, only
// the windows that did not all pass, the lowest pass rate first.
func (m *mdWriter) windows(r *Report, g *Group, bad bool) {
	sums := GroupSummaries(r, g)
	title := "Windows, over every file of the supervisor"
	if bad {
		sums = FailingFirst(sums)
		n := 0
		for n < len(sums) && sums[n].Fail+sums[n].Error+sums[n].Invalid+sums[n].Unknown > 0 {
			n++
		}
		title = fmt.Sprintf("Windows that did not all pass: %d of %d, the lowest pass rate first", n, len(sums))
		sums = sums[:n]
	}
	if len(sums) == 0 {
		return
	}
	shown, more := m.limited(len(sums))
	m.line("")
	m.line("### %s", title)
	m.line("")
	m.head("Window", "Pass", "95% Wilson", "FAIL", "INVALID", "ERROR", "False criteria")
	defer func() {
		if more != "" {
			m.line("")
			m.line("%s", more)
		}
	}()
	for _, w := range sums[:shown] {
		interval := "no measurement"
		if w.Measured() > 0 {
			interval = fmt.Sprintf("[%.2f, %.2f]", w.Lo, w.Hi)
		}
		m.row(windowName(r, w.Window), fmt.Sprintf("%d/%d", w.Pass, w.Measured()), interval, itoa(w.Fail),
			itoa(w.Invalid), itoa(w.Error), failedTally(w.Failed))
	}
}

// limited cuts a table's rows to the writer's limit, saying how many were
// left out.
func (m *mdWriter) limited(n int) (shown int, more string) {
	if m.limit == 0 || n <= m.limit {
		return n, ""
	}
	return m.limit, fmt.Sprintf("… and %d more (the full report lists them)", n-m.limit)
}

// examples prints, for each outcome of the group that did not pass, its
// first row's reason and criteria, the evidence capped.
func (m *mdWriter) examples(r *Report, g *Group) {
	outcomes := GroupOutcomes(r, g)
	first := true
	for _, id := range g.Windows {
		for _, o := range outcomes[id] {
			c := o.Example
			if c.Status == model.StatusPass && len(c.Diffs) == 0 {
				continue
			}
			if first {
				m.line("")
				m.line("## Outcomes that did not pass: %s, one example each", g.Name)
				first = false
			}
			m.line("")
			m.line("### %s: %s, %s", id, o.Key, plural(len(o.Cells), "row", "rows"))
			m.line("")
			m.line("%s row %d, reason: %s", code(c.File), c.Line, mdCell(c.Row.Reason))
			m.line("")
			m.line("```text")
			for _, res := range c.Results {
				if res.Holds() {
					continue
				}
				capped := res
				capped.Evidence = evidence(res.Judged, res.Pass, res.Evidence)
				m.line("%s", strings.TrimRight(explain(capped), "\n"))
			}
			m.line("```")
		}
	}
}

// row writes one table row, escaping each cell.
func (m *mdWriter) row(cells ...string) {
	for i, c := range cells {
		cells[i] = mdCell(c)
	}
	m.line("| %s |", strings.Join(cells, " | "))
}

func (m *mdWriter) head(cells ...string) {
	m.row(cells...)
	seps := make([]string, len(cells))
	for i := range seps {
		seps[i] = "---"
	}
	m.line("|%s|", strings.Join(seps, "|"))
}

// mdCell keeps a value inside its table cell: no pipe, no line break.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.Join(strings.Fields(s), " ")
}

func code(s string) string { return "`" + strings.ReplaceAll(s, "`", "'") + "`" }

func (m *mdWriter) files(r *Report) {
	m.line("")
	m.line("## Files")
	m.line("")
	m.head("File", "Rows", "Chain", "Seal", "Replay", "Last hash")
	for _, f := range r.Files {
		chain, replay := "ok", "agrees"
		if f.Replay.Chain != nil {
			chain = "BROKEN"
		}
		if f.Replay.ReadErr != nil {
			chain += ", UNREADABLE TAIL"
		}
		if n := len(f.Replay.Diffs); n > 0 {
			replay = "DISAGREES: " + plural(n, "difference", "differences")
		}
		m.row(code(f.Path), itoa(len(f.Records)), chain, f.SealCell(), replay, code(shortHash(f.Replay.Last)))
	}
}

func (m *mdWriter) problems(r *Report) {
	if len(r.Problems) == 0 {
		return
	}
	m.line("")
	m.line("## Evidence that does not verify")
	m.line("")
	for _, p := range r.Problems {
		m.line("- %s", mdCell(p))
	}
}

func (m *mdWriter) runs(r *Report) {
	m.line("")
	m.line("## Runs")
	m.line("")
	m.head("Run", "File", "Pass", "Commit", "Started (UTC)", "Rows", "PASS", "FAIL", "INVALID", "ERROR", "Load before (1 min) min / median / max")
	for _, run := range r.Runs {
		commit := shortHash(run.Commit)
		if run.Dirty {
			commit += " (dirty)"
		}
		rs := 0
		for _, n := range run.Counts {
			rs += n
		}
		m.row(itoa(run.N), code(run.File), itoa(run.Pass), code(commit), stamp(run), itoa(rs),
			itoa(run.Counts[model.StatusPass]), itoa(run.Counts[model.StatusFail]),
			itoa(run.Counts[model.StatusInvalid]), itoa(run.Counts[model.StatusError]), spread(run.Load))
	}
}

// headline counts the rows' statuses per group, so the mutants' planted
// FAILs are never read as a supervisor's.
func (m *mdWriter) headline(r *Report) {
	m.line("")
	m.line("## Supervisors")
	m.line("")
	m.head("Supervisor", "Files", "Runs", "Rows", "PASS", "FAIL", "INVALID", "ERROR")
	mutants := false
	for _, g := range r.Groups {
		mutants = mutants || g.Mutants
		m.row(g.Name, itoa(len(g.Files)), itoa(len(g.Runs)), itoa(g.Rows()), itoa(g.Counts[model.StatusPass]), g.FailCell(),
			itoa(g.Counts[model.StatusInvalid]), itoa(g.Counts[model.StatusError]))
	}
	if mutants {
		m.line("")
		m.line("%s", MutantsHeadline)
	}
}

// group writes one group's verdict table and its files' summaries under
// the group's heading.
func (m *mdWriter) group(r *Report, g *Group) {
	m.line("")
	m.line("## %s", g.Title())
	if g.Mutants {
		m.line("")
		m.line("%s", MutantsRule)
	}
	m.findings(r, g)
	m.windows(r, g, false)
	m.against(r, g)
	m.verdicts(r, g)
	m.summaries(r, g)
}

// maxFindings bounds the findings a group's section lists; `faultwin
// findings` lists every one with its rows.
const maxFindings = 12

// findings lists, first in a supervisor's section, the distinct findings
// its failed rows show (reports/findings), the most often seen first: what
// a maintainer reads before the heatmap. The mutants' planted bugs are no
// findings.
func (m *mdWriter) findings(r *Report, g *Group) {
	fs := GroupFindings(r, g)
	if len(fs) == 0 {
		return
	}
	m.line("")
	m.line("### Findings")
	m.line("")
	max := maxFindings
	if m.limit > 0 {
		max = min(max, m.limit/2)
	}
	shown := fs[:min(len(fs), max)]
	m.line("%d distinct findings; the %d most often seen (`faultwin findings FILES` lists each with its rows):", len(fs), len(shown))
	m.line("")
	m.head("id", "criterion", "landed in", "killed", "evidence", "windows", "k/N", "control k/N", "workaround")
	for _, f := range shown {
		phase := f.Phase
		if phase == "" {
			phase = "-"
		}
		m.row(f.ID, f.Criterion, phase, f.Killed, code(f.Evidence), strings.Join(f.Windows, " "), fmt.Sprintf("%d/%d", f.Seen, f.Measured),
			controlKN(f), dash(strings.Join(f.Workarounds, " ")))
	}
}

func controlKN(f findings.Finding) string {
	if f.ControlMeasured == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d", f.ControlSeen, f.ControlMeasured)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// against lists, for the windows that ran controls, each failure beside
// its control's, with the difference and what it says: caused by the
// kill, baseline, or not separable yet.
func (m *mdWriter) against(r *Report, g *Group) {
	ws := GroupAB(r, g)
	if len(ws) == 0 {
		return
	}
	m.line("")
	m.line("### Against the controls")
	m.line("")
	m.line("Each failure of a window beside its control's (the same window disarmed): k/N = FAIL rows showing it / PASS+FAIL rows; the difference of the rates with its 95%% Newcombe interval.")
	m.line("")
	m.head("window", "criterion", "evidence", "fault k/N", "control k/N", "difference", "verdict")
	for _, w := range ws {
		for _, a := range w.Attributions {
			verdict := a.Verdict.Phrase()
			if a.Verdict == review.Unseparated && a.More > 0 {
				verdict += fmt.Sprintf(" (about %d more runs of each)", a.More)
			}
			m.row(w.Window, a.Criterion, code(a.Class), fmt.Sprintf("%d/%d", a.FaultK, a.FaultN), fmt.Sprintf("%d/%d", a.ControlK, a.ControlN),
				fmt.Sprintf("%+.2f [%+.2f, %+.2f]", a.Diff, a.Lo, a.Hi), verdict)
		}
	}
}

func (m *mdWriter) verdicts(r *Report, g *Group) {
	m.line("")
	m.line("### Verdicts")
	m.line("")
	head := []string{"Window"}
	for _, n := range g.Runs {
		head = append(head, "Run "+itoa(n))
	}
	m.head(head...)
	for _, id := range g.Windows {
		cells := []string{windowName(r, id)}
		for _, n := range g.Runs {
			c, ok := r.HasCell(g, id, n)
			switch {
			case !ok:
				cells = append(cells, "–")
			case len(c.Diffs) > 0:
				cells = append(cells, c.Short+" [replay disagrees]")
			default:
				cells = append(cells, c.Short)
			}
		}
		m.row(cells...)
	}
}

func windowName(r *Report, id string) string {
	if r.Unregistered[id] {
		return id + " (unregistered)"
	}
	return id
}

func (m *mdWriter) compare(r *Report) {
	c := r.Compare
	if c == nil {
		return
	}
	m.line("")
	m.line("## Changes from %s to %s", code(c.A), code(c.B))
	m.line("")
	m.line("%s", c.Sentence())
	if len(c.Changed) == 0 {
		return
	}
	m.line("")
	m.head("Window", "A", "B", "A k/N [95%]", "B k/N [95%]")
	for _, ch := range c.Changed {
		m.row(ch.Window, ch.A, ch.B, ch.RateA, ch.RateB)
	}
}

func (m *mdWriter) summaries(r *Report, g *Group) {
	for _, s := range g.Summaries {
		m.line("")
		if s.Mutants != "" {
			m.line("### Summary of %s: %s", code(s.Path), s.Mutants)
		} else {
			m.line("### Summary of %s", code(s.Path))
		}
		m.line("")
		m.line("Load before each window (1-minute average), min / median / max over the file: %s.", spread(s.Load))
		m.line("")
		m.head("Window", "Pass", "95% Wilson", "FAIL", "INVALID", "ERROR", "False criteria", "Load before min / median / max", "Median time")
		for _, w := range s.Sums {
			interval := "no measurement"
			if w.Measured() > 0 {
				interval = fmt.Sprintf("[%.2f, %.2f]", w.Lo, w.Hi)
			}
			m.row(windowName(r, w.Window), fmt.Sprintf("%d/%d", w.Pass, w.Measured()), interval, itoa(w.Fail),
				itoa(w.Invalid), itoa(w.Error), failedTally(w.Failed), spread(w.Load), fmt.Sprintf("%.1fs", w.Seconds.Median))
		}
	}
}

// landings prints, per window killed from outside, its rows grouped by the
// run's processes its trigger saw at the kill.
func (m *mdWriter) landings(r *Report) {
	if len(r.Landings) == 0 {
		return
	}
	m.line("")
	m.line("## Where the external kills landed")
	m.line("")
	m.line("%s", LandingRule)
	m.line("")
	m.head("Window", "Processes of the run at the kill", "Rows", "Outcomes")
	for _, l := range r.Landings {
		for _, s := range l.States {
			m.row(windowName(r, l.Window), s.Present, itoa(s.Rows), failedTally(s.Outcomes))
		}
	}
}

// details prints, for every row that did not pass or does not replay, its
// reason and every criterion with its evidence, as criteria.Explain does.
func (m *mdWriter) details(r *Report) {
	first := true
	for _, run := range r.Runs {
		for _, id := range r.Windows {
			c, ok := r.Cell(id, run.N)
			if !ok || (c.Status == model.StatusPass && len(c.Diffs) == 0) {
				continue
			}
			if first {
				m.line("")
				m.line("## Rows that did not pass")
				first = false
			}
			m.line("")
			switch {
			case c.Expected():
				m.line("### %s, run %d: %s (expected: %s)", id, run.N, c.Status, c.Mutant.Label())
			case c.Mutant != nil:
				m.line("### %s, run %d: %s (%s)", id, run.N, c.Status, c.Mutant.Label())
			default:
				m.line("### %s, run %d: %s", id, run.N, c.Status)
			}
			m.line("")
			m.line("%s row %d, fault %s, reason: %s", code(c.File), c.Line, code(c.Row.Window.Fault.String()), mdCell(c.Row.Reason))
			if c.Mutant != nil {
				m.line("")
				m.line("Mutant: %s.", c.Mutant.Origin())
			}
			for _, d := range c.Diffs {
				m.line("")
				m.line("**Replay disagrees:** %s", mdCell(d.String()))
			}
			m.line("")
			m.line("```text")
			if c.Results == nil {
				m.line("(recorded criteria do not decode)")
			}
			for _, res := range c.Results {
				m.line("%s", strings.TrimRight(explain(res), "\n"))
			}
			m.line("```")
		}
	}
}

// explain is criteria.ExplainResult with the fence kept intact.
func explain(r criteria.Result) string {
	return strings.ReplaceAll(criteria.ExplainResult(r), "```", "'''")
}
