package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"faultwin/criteria"
	"faultwin/internal/model"
	"faultwin/reports/decoded"
	"faultwin/reports/findings"
	"faultwin/reports/render"
	"faultwin/reports/review"
	"faultwin/reports/rows"
	"faultwin/snapshots/host"
	"faultwin/windows/runner"
)

const soakUsage = `usage: faultwin soak [-n 20] [--control] [--shard k/n] [--windows DIR] [--label-filter F] [--results FILE] [--state-root DIR] [--refsup BIN]
       faultwin soak --summary [--caused-only] [--prom FILE.prom] FILE|DIR...

Runs N full passes over the selected windows, one at a time, appending every
row to one JSONL file. It never stops at a failure: a flaky window shows as a
rate, not as the first red. One progress line per window:

  [k/N] W3_30    PASS     4.1s load 0.52 eta 12m03s

(k is the pass, load the 1-minute load average before the window). At the
end, one summary line per window:

  W3_30  19/20 pass  (95% Wilson [0.76, 0.99])  FAIL 1  INVALID 0  ERROR 0  load 0.31/0.52/1.20  4.1s

The pass rate is PASS / (PASS + FAIL): INVALID rows (unclean host, fault not
fired, precondition not reached) and ERROR rows (the harness broke) measured
nothing about the supervisor, so they are excluded from the rate and counted
apart. --summary prints the same summary for rows already written, per file,
without running anything; with --prom it also writes those numbers, and
each file's chain and seal state, in the Prometheus text format for
node-exporter's textfile collector (written to a temporary file in the same
directory, then renamed; see docs/soak.md for the metrics).

--control runs, right after each window, its control: the same window
disarmed (the same precondition, operation, aftermath, sweeps and
criteria; the trigger watches and records where it would have fired, and
kills nothing). The order is A B A B..., the control's row marked by its
window's fault (disarmed). Only windows on an external trigger can be
disarmed; the others run alone, and the output names them. The summary
then compares each window's failures with its control's (see
docs/soak.md): per failed criterion and evidence class, the faulted k/N
beside the control k/N, the difference with its 95% interval (Newcombe's
method on the two Wilson intervals) and a verdict: caused by the kill
(the interval excludes zero), baseline (the control fails the same way)
or not separable yet (with how many more runs of each would decide).
--caused-only, with --summary, makes the exit status count only the
failures caused by the kill: 1 when there is one, whatever else failed.

--shard k/n runs shard k of n of the soak, so n machines share one soak:
every shard selects the same windows with the same -n, numbers the soak's
(window, pass) pairs in pass-major order (pass 1's windows in natural
order, then pass 2's, ...) and runs pair i when (i mod n)+1 = k, in that
order. Shard sizes differ by at most one pair. The session's open marker
records the shard (k, n, passes, windows, rule), so each row's shard and
pass follow from the marker and the row's place after it; the rows
themselves are unchanged. faultwin merge checks and summarises the shards'
files together.

The rows are one session of the results file, sealed when the soak ends
(see faultwin replay -h); a file whose last session has no seal is refused.

The windows are those of DIR/*.yaml (--windows, default
windows/refsup/*.yaml, the refsup windows); a described supervisor's are
windows/<name>, soaked with --windows naming it. DIR's subdirectories are
not read: the output's first lines, and its last, name every window left
out that way.

Exit status over the rows summarised: 0 all PASS, 1 a FAIL, 2 INVALID or an
unknown status but no FAIL or ERROR, 3 an ERROR (a soak that cannot write
its rows also exits 3); with --summary, 4 (the evidence does not verify)
when a file's chain is broken, it cannot be read to its end, or a session
of it has no seal.
64 a usage error, also when --summary names a path that does not exist,
an empty (0-byte) file, or files that hold no rows at all (as replay and
report).
`

// runSoak is `faultwin soak`.
func runSoak(ctx context.Context, stdout io.Writer, args []string) (err error) {
	fs := newFlags(stdout, "soak", soakUsage)
	n := fs.Int("n", 20, "full passes over the selected windows")
	summary := fs.Bool("summary", false, "summarise the rows of FILE|DIR... instead of running")
	shardFlag := fs.String("shard", "", "run shard `k/n` of the soak's (window, pass) pairs (1 <= k <= n)")
	prom := fs.String("prom", "", "with --summary: also write the summary in the Prometheus text format to this `file` (atomically)")
	withControl := fs.Bool("control", false, "run each window's control (the window disarmed) right after it: A B A B...")
	causedOnly := fs.Bool("caused-only", false, "with --summary: exit 1 only for failures caused by the kill (not seen as often in the controls)")
	wf := addWindowFlags(fs, "out/soak.jsonl")
	if err := fs.parse(args); err != nil {
		return err
	}
	if *prom != "" && !*summary {
		return fs.usagef("--prom %s: only with --summary (run `faultwin soak --summary --prom FILE RESULTS` after the soak)", *prom)
	}
	if err := promPath(fs, *prom); err != nil {
		return err
	}
	if *causedOnly && !*summary {
		return fs.usagef("--caused-only: only with --summary (it chooses which failures the exit status counts)")
	}
	if *summary && (*shardFlag != "" || *withControl) {
		return fs.usagef("--summary summarises rows already written; --shard and --control choose what a soak runs: drop them (a shard's rows are numbered from their file's marker)")
	}
	if *summary {
		return soakSummary(stdout, fs.Args(), *prom, *causedOnly)
	}
	if *withControl && *shardFlag != "" {
		return fs.usagef("--control with --shard: a shard's pairs are numbered without controls; run the A/B soak unsharded")
	}
	if fs.NArg() > 0 {
		return fs.usagef("unexpected arguments %q (did you mean --summary?)", fs.Args())
	}
	if *n < 1 {
		return fs.usagef("-n %d: want at least one pass", *n)
	}
	var shard *review.Shard
	if *shardFlag != "" {
		sh, err := review.ParseShard(*shardFlag)
		if err != nil {
			return usageErr("soak", "", err) // it names --shard and its value
		}
		shard = &sh
	}
	s, err := wf.open(stdout)
	if err != nil {
		return err
	}
	defer func() { err = closeSession(s, err) }()
	return soakShard(ctx, stdout, s, *n, shard, *withControl)
}

// soak runs every (window, pass) pair of an n-pass soak.
func soak(ctx context.Context, stdout io.Writer, s *windowSession, n int) error {
	return soakShard(ctx, stdout, s, n, nil, false)
}

// soakShard runs the pairs of an n-pass soak that shard runs (all of them
// when shard is nil), in pass-major order. A shard's session opens with a
// marker recording the shard, so merge can tell each row's pair.
//
// With control, each window that can be disarmed is followed by its
// control (A B A B ...); the rows say which is which.
func soakShard(ctx context.Context, stdout io.Writer, s *windowSession, n int, shard *review.Shard, control bool) error {
	byID := map[string]model.Window{}
	var ids []string
	for _, w := range s.windows {
		byID[w.ID] = w
		ids = append(ids, w.ID)
	}
	plan := review.AllPairs(ids, n)
	var mark *rows.ShardMark
	if shard != nil {
		plan = review.ShardPairs(ids, n, *shard)
		if len(plan) == 0 {
			return fmt.Errorf("soak: --shard %s: the soak has %d pairs (%d passes x %d windows), fewer than %d shards, so shard %d has none; raise -n or lower n",
				shard, n*len(ids), n, len(ids), shard.N, shard.K)
		}
		mark = &rows.ShardMark{K: shard.K, N: shard.N, Passes: n, Windows: ids, Rule: review.ShardRule}
	}
	type run struct {
		win  model.Window
		pass int
	}
	var runs []run
	var alone []string
	for _, p := range plan {
		win := byID[p.Window]
		runs = append(runs, run{win, p.Pass})
		switch {
		case control && runner.Disarmable(win):
			runs = append(runs, run{runner.Control(win), p.Pass})
		case control && p.Pass == 1:
			alone = append(alone, win.ID)
		}
	}
	total := len(runs)
	if control {
		fmt.Fprintf(stdout, "soak: %d passes over %d windows, each followed by its control (A B A B ...): %d rows, appended to %s\n",
			n, len(s.windows), total, s.Results)
		if len(alone) > 0 {
			fmt.Fprintf(stdout, "soak: no control for %s: their points fire inside the supervisor and cannot be disarmed\n", strings.Join(alone, " "))
		}
	} else if shard != nil {
		fmt.Fprintf(stdout, "soak: shard %s (%s): %d of the %d rows of %d passes over %d windows, appended to %s\n",
			shard, review.ShardRule, total, n*len(ids), n, len(ids), s.Results)
	} else {
		fmt.Fprintf(stdout, "soak: %d passes over %d windows, %d rows, appended to %s\n", n, len(s.windows), total, s.Results)
	}
	var rs []decoded.Record
	var passes []int
	t0 := time.Now()
	for _, p := range runs {
		win := p.win
		if ctx.Err() != nil {
			fmt.Fprintf(stdout, "soak: interrupted after %d of %d rows\n", len(rs), total)
			serr := s.Seal(fmt.Sprintf("soak interrupted after %d of %d rows: %v", len(rs), total, ctx.Err()))
			return errors.Join(ctx.Err(), soakEnd(stdout, s, rs, passes, t0), serr)
		}
		o, rerr := s.runner.Run(ctx, win)
		if rerr != nil {
			o = harnessOutcome(win, rerr)
		}
		var err error
		if mark != nil && len(rs) == 0 {
			// The shard's facts go in the session's open marker, written
			// just before its first row.
			err = s.Rows.StartSession(mark)
		}
		var row *rows.Row
		if err == nil {
			row, err = s.Record(o)
		}
		if err != nil {
			// Without a place to write evidence the soak measures
			// nothing more: stop, and say so as a harness error.
			msg := fmt.Sprintf("soak: window %s, pass %d: %v", label(win), p.pass, err)
			serr := soakEnd(stdout, s, rs, passes, t0)
			return errors.Join(statusExit{exitError, msg}, serr, s.Seal("stopped: "+msg))
		}
		rec, _ := decoded.Decode(*row)
		rs = append(rs, rec)
		passes = append(passes, p.pass)
		done := len(rs)
		eta := time.Duration(float64(time.Since(t0)) / float64(done) * float64(total-done))
		fmt.Fprintf(stdout, "[%d/%d] %-8s %-7s %5.1fs load %.2f eta %s\n", p.pass, n, label(win), row.Status,
			row.Run.Finished.Sub(row.Run.Started).Seconds(), row.Host.LoadBefore[0], clock(eta))
		if len(o.HostLeft) > 0 {
			fmt.Fprint(stdout, runner.StopMessage(win.ID, o, total-done, s.StateRoot()))
			note := fmt.Sprintf("soak stopped after %s in pass %d: the host was left unclean (%d leftovers); %d of %d rows not run",
				label(win), p.pass, len(o.HostLeft), total-done, total)
			fmt.Fprintf(stdout, "NOT RUN: %s\n", note)
			code := stoppedCode(soakEnd(stdout, s, rs, passes, t0))
			return errors.Join(statusExit{code, note}, s.Seal(note))
		}
	}
	return soakEnd(stdout, s, rs, passes, t0)
}

// label names a window in progress lines: its id, and "control" for one
// run disarmed.
func label(w model.Window) string {
	if w.Fault.Disarmed {
		return w.ID + review.ControlSuffix
	}
	return w.ID
}

// harnessOutcome stands in for a window the runner could not run at all,
// so the soak still writes a row for it (ERROR) and keeps going; a pass
// with a missing row would read as a window that was never selected.
func harnessOutcome(w model.Window, err error) *runner.Outcome {
	now := time.Now().UTC()
	o := &runner.Outcome{Started: now, Finished: now, Host: host.Facts()}
	o.Input = criteria.Input{Window: w, HarnessErr: "runner: " + err.Error()}
	o.Verdict = criteria.Evaluate(o.Input)
	if l, lerr := host.LoadAvg(); lerr == nil {
		o.Host.LoadAfter = l
	}
	return o
}

// soakEnd prints the summary of this soak's rows and returns its exit.
func soakEnd(stdout io.Writer, s *windowSession, rs []decoded.Record, passes []int, t0 time.Time) error {
	fmt.Fprintf(stdout, "\nsoak: %d rows in %s, appended to %s (last hash %s)\n", len(rs),
		time.Since(t0).Round(time.Second), s.Results, s.Rows.Last())
	if err := review.WriteSummary(stdout, review.SummarizePasses(rs, passes)); err != nil {
		return err
	}
	if s.leftOut != "" {
		fmt.Fprintf(stdout, "soak: %s\n", s.leftOut)
	}
	if len(rs) == 0 {
		return statusExit{exitError, "soak: no row was written"}
	}
	return exitFor(tallyRows(rs))
}

// soakSummary is `faultwin soak --summary`: each file's rows summarised
// apart, since pass numbers and load belong to one file's runs. Open and
// seal markers are not rows: they are checked, not summarised. With prom
// set, the same summaries and each file's checks are written there in the
// Prometheus text format.
func soakSummary(stdout io.Writer, args []string, prom string, causedOnly bool) error {
	paths, err := evidenceFiles("soak", args)
	if err != nil {
		return err
	}
	var pm render.Prom
	var all []decoded.Record
	var broken []error
	var unsealed []string
	for i, p := range paths {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		c, verr := rows.VerifyContents(p)
		rs := decoded.Of(c.Rows...)
		state := "chain ok"
		if verr != nil {
			state = "DOES NOT VERIFY: " + verr.Error()
			broken = append(broken, verr)
		} else {
			seal := c.Sealing()
			state += ", " + review.SealText(seal)
			unsealed = append(unsealed, review.SealProblems(p, seal)...)
		}
		sums := review.Summarize(rs)
		passes := maxPass(rs)
		if sp, ok := review.ShardPasses(c); ok {
			// A shard's rows: numbered by the shard rule, not file order.
			sums, passes = review.SummarizePasses(rs, sp), slices.Max(sp)
			state += ", shard " + shardText(c)
		}
		fmt.Fprintf(stdout, "%s: %d rows, %d passes, %s\n", p, len(rs), passes, state)
		if err := review.WriteSummary(stdout, sums); err != nil {
			return err
		}
		if gs := review.GradesOf(rs); slices.ContainsFunc(gs, func(g review.Grades) bool { return g.Kept+g.Recovered+g.Stuck+g.Lost > 0 }) {
			fmt.Fprintf(stdout, "\n%s: what the death cost the user (U1's grades per window, rows that measured)\n", p)
			if err := review.WriteGrades(stdout, gs); err != nil {
				return err
			}
		}
		if slices.ContainsFunc(rs, func(r decoded.Record) bool { return r.Window.Fault.Disarmed }) {
			fmt.Fprintf(stdout, "\n%s: each window's failures against its control's\n", p)
			ab := review.AB(rs, findings.Class)
			if err := review.WriteAB(stdout, ab); err != nil {
				return err
			}
			pm.AB = append(pm.AB, render.PromAB{File: p, Windows: ab})
		}
		all = append(all, rs...)
		pm.Windows = append(pm.Windows, render.PromWindows{File: p, Sums: sums})
		pm.Files = append(pm.Files, render.PromFile{Path: p, Rows: len(rs), ChainOK: verr == nil, Seal: c.Sealing()})
	}
	for _, u := range unsealed {
		fmt.Fprintln(stdout, u)
	}
	if len(all) == 0 && len(broken) == 0 && len(unsealed) == 0 {
		return noRows("soak", paths)
	}
	if prom != "" {
		if err := writeProm(stdout, "soak --summary", prom, pm); err != nil {
			return err
		}
	}
	if len(broken) > 0 {
		return statusExit{exitUnverified, fmt.Sprintf("soak --summary: %d file(s) do not verify; run `faultwin replay` on them: %v", len(broken), errors.Join(broken...))}
	}
	if len(unsealed) > 0 {
		return statusExit{exitUnverified, fmt.Sprintf("soak --summary: %d session(s) without a seal (see the lines above): the run never finished or the file was cut; run `faultwin replay` on them", len(unsealed))}
	}
	if causedOnly {
		return causedExit(stdout, all)
	}
	return exitFor(tallyRows(all))
}

// causedExit is the exit status counting, of the failures, only those
// caused by the kill (review.CausedOnly): a harness error still counts,
// and INVALID rows still say they measured nothing.
func causedExit(stdout io.Writer, rs []decoded.Record) error {
	caused := review.CausedOnly(review.AB(rs, findings.Class))
	t := tallyRows(rs)
	switch {
	case t.rows[model.StatusError] > 0:
		return statusExit{exitError, t.of(model.StatusError) + ": the harness broke"}
	case len(caused) > 0:
		var names []string
		for _, a := range caused {
			names = append(names, a.Window+" "+a.Criterion)
		}
		return statusExit{exitFail, fmt.Sprintf("%d failure(s) caused by the kill: %s", len(caused), strings.Join(names, ", "))}
	case t.rows[model.StatusInvalid] > 0:
		return statusExit{exitInvalid, t.of(model.StatusInvalid) + " (not measurements)"}
	}
	if t.rows[model.StatusFail] > 0 {
		fmt.Fprintf(stdout, "soak --summary --caused-only: %s, none caused by the kill (baseline, or not separable yet)\n", t.of(model.StatusFail))
	}
	return nil
}

func maxPass(rs []decoded.Record) int {
	p := review.Passes(rs)
	if len(p) == 0 {
		return 0
	}
	return p[len(p)-1]
}

// clock renders a duration as 12m03s (1h02m03s past an hour).
func clock(d time.Duration) string {
	d = d.Round(time.Second)
	h, m, s := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	if h > 0 {
		return fmt.Sprintf("%dh%02dm%02ds", h, m, s)
	}
	return fmt.Sprintf("%dm%02ds", m, s)
}

// shardText names the shards of a file's shard sessions: "2/4".
func shardText(c *rows.Contents) string {
	var out []string
	for _, m := range c.Markers {
		if m.Open != nil && m.Open.Shard != nil {
			out = append(out, fmt.Sprintf("%d/%d", m.Open.Shard.K, m.Open.Shard.N))
		}
	}
	return strings.Join(out, ", ")
}
