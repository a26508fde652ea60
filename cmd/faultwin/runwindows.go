package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"faultwin/drivers/catalog"
	"faultwin/internal/model"
	"faultwin/reports/decoded"
	"faultwin/windows/definitions"
	"faultwin/windows/runner"
)

// statusExit maps the worst status of a run to the exit codes every verb
// shares: 0 all PASS, 1 a FAIL, 2 only INVALID besides PASS, 3 an ERROR.
type statusExit struct {
	code int
	msg  string
}

func (e statusExit) Error() string { return e.msg }
func (e statusExit) ExitCode() int { return e.code }

// tally counts rows by status, and the windows those rows are of, for the
// exit of the verbs that run or read rows. An unknown status is filed under
// INVALID, so it can never exit 0.
type tally struct {
	rows    map[string]int
	windows map[string]map[string]bool
}

func newTally() *tally {
	return &tally{rows: map[string]int{}, windows: map[string]map[string]bool{}}
}

// add counts one row of window with status.
func (t *tally) add(window, status string) {
	s := statusKey(status)
	t.rows[s]++
	if t.windows[s] == nil {
		t.windows[s] = map[string]bool{}
	}
	t.windows[s][window] = true
}

// tallyRows tallies rs.
func tallyRows(rs []decoded.Record) *tally {
	t := newTally()
	for _, r := range rs {
		t.add(r.Window.ID, r.Status)
	}
	return t
}

// of says how many rows have status and in how many windows: "3 rows FAIL
// in 2 windows".
func (t *tally) of(status string) string {
	return fmt.Sprintf("%s %s in %s", count(t.rows[status], "row"), status, count(len(t.windows[status]), "window"))
}

// exitFor returns nil when every row is PASS, else the shared exit error.
func exitFor(t *tally) error {
	switch {
	case t.rows[model.StatusError] > 0:
		return statusExit{exitError, t.of(model.StatusError) + ": the harness broke"}
	case t.rows[model.StatusFail] > 0:
		return statusExit{exitFail, t.of(model.StatusFail)}
	case t.rows[model.StatusInvalid] > 0:
		return statusExit{exitInvalid, t.of(model.StatusInvalid) + " (not measurements)"}
	}
	return nil
}

func selfDir() string {
	exe, err := os.Executable()
	if err != nil {
		return "."
	}
	return filepath.Dir(exe)
}

// windowFlags are the flags of every verb that runs windows (run, soak,
// explore).
type windowFlags struct {
	verb                                             string
	dir, filter, out, root, bin, bugs, logs, variant *string
}

func addWindowFlags(fs *verbFlags, defaultOut string) *windowFlags {
	fs.supervisors()
	return &windowFlags{
		verb:    fs.verb,
		dir:     fs.String("windows", defaultWindows, "directory of window definitions: DIR/*.yaml only (windows/<name>: one supervisor's windows); a directory of such directories is refused, naming them"),
		filter:  fs.String("label-filter", "", "ginkgo label filter, e.g. 'W3 && timed' or 'restore'"),
		out:     fs.String("results", defaultOut, "JSONL file rows are appended to"),
		root:    fs.String("state-root", model.DefaultStateRoot, "refsup state root"),
		bin:     fs.String("refsup", filepath.Join(selfDir(), "refsup"), "refsup binary"),
		bugs:    fs.String("bugs", "", "comma-separated refsup known-bug switches (mutant runs only)"),
		logs:    fs.String("logs", "out/logs", "directory for the supervisor's own stdout, one subdir per window (rows carry the logs too)"),
		variant: fs.String("variant", "", "run the windows on `NAME`, a variant of their supervisor (a description with variant_of, given through "+catalog.EnvDirs+")"),
	}
}

// onVariant moves the windows to the variant the flag names: every one of
// them must be of the supervisor it varies.
func (f *windowFlags) onVariant(ws []model.Window) error {
	if *f.variant == "" {
		return nil
	}
	if err := catalog.Err(); err != nil {
		return fmt.Errorf("%s: %w", f.verb, err)
	}
	d := catalog.Description(*f.variant)
	if d == nil || d.VariantOf == "" {
		return usagef(f.verb, "--variant %s: no variant of that name is described (a description with variant_of, loaded through %s)", *f.variant, catalog.EnvDirs)
	}
	for i := range ws {
		if ws[i].Driver != d.VariantOf {
			return usagef(f.verb, "--variant %s varies %s, but window %s is of %s", *f.variant, d.VariantOf, ws[i].ID, cmp.Or(ws[i].Driver, model.DefaultDriver))
		}
		ws[i].Driver = d.Name
	}
	return nil
}

// windowSession is what running windows needs once per invocation: the
// selected windows, something that runs one, and the runner's session that
// records rows. run and soak share it so a soak row is built exactly like a
// run row.
type windowSession struct {
	windows []model.Window
	runner  windowRunner
	// leftOut names the windows under the directory's subdirectories,
	// which are not run ("" when there are none).
	leftOut string
	*runner.Session
}

// defaultWindows is the reference supervisor's windows, what run, soak and
// explore read unless told.
const defaultWindows = "windows/refsup"

// loadWindows loads DIR/*.yaml; a DIR that is not a directory is a usage
// error, and so is one without definitions whose subdirectories hold
// suites (windows/): it names them.
func (f *windowFlags) loadWindows() ([]model.Window, error) {
	if st, err := os.Stat(*f.dir); err != nil || !st.IsDir() {
		return nil, usagef(f.verb, "--windows %s: not a directory of window definitions", *f.dir)
	}
	if yamls, _ := filepath.Glob(filepath.Join(*f.dir, "*"+definitions.Ext)); len(yamls) == 0 {
		if suites := suitesUnder(*f.dir); len(suites) > 0 {
			return nil, usagef(f.verb, "--windows %s: no window definitions of its own; its subdirectories are suites: %s; give one with --windows", *f.dir, strings.Join(suites, ", "))
		}
	}
	return runner.LoadWindows(*f.dir)
}

// open selects the windows, says which windows under the directory it
// leaves out, and opens the runner's session.
func (f *windowFlags) open(stdout io.Writer) (*windowSession, error) {
	ws, err := f.loadWindows()
	if err != nil {
		return nil, err
	}
	n := len(ws)
	if ws, err = runner.Select(ws, *f.filter); err != nil {
		return nil, usageErr(f.verb, "--label-filter", err)
	}
	if err := f.onVariant(ws); err != nil {
		return nil, err
	}
	left := leftOut(*f.dir)
	fmt.Fprintf(stdout, "%s: %d of the %d windows of %s\n", f.verb, len(ws), n, filepath.Join(*f.dir, "*.yaml"))
	if left != "" {
		fmt.Fprintf(stdout, "%s: %s\n", f.verb, left)
	}
	var bugs []string
	if *f.bugs != "" {
		bugs = strings.Split(*f.bugs, ",")
	}
	cfg := runner.Config{Bin: *f.bin, StateRoot: *f.root, Bugs: bugs, LogDir: *f.logs}
	s, err := runner.Open(cfg, ".", *f.out, nil)
	if err != nil {
		return nil, err
	}
	return &windowSession{windows: ws, runner: s.Runner, leftOut: left, Session: s}, nil
}

// leftOut names the windows defined in dir's subdirectories, which a run
// of dir leaves out: a subdirectory of window definitions is a suite of
// its own (windows/<name>), run with --windows naming it. "" when there
// are none.
func leftOut(dir string) string {
	parts := suitesUnder(dir)
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("NOT RUN: the windows under %s; --windows reads one directory's *.yaml, never its subdirectories, which are suites of their own: run each with --windows naming it (their supervisor's prerequisites: faultwin doctor)",
		strings.Join(parts, ", "))
}

// suitesUnder names dir's subdirectories of window definitions, each with
// its count of windows and drivers. A subdirectory whose *.yaml files do
// not load as windows is not named.
func suitesUnder(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var parts []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		if yamls, _ := filepath.Glob(filepath.Join(sub, "*.yaml")); len(yamls) == 0 {
			continue
		}
		ws, err := runner.LoadWindows(sub)
		if err != nil || len(ws) == 0 {
			// Not window definitions (windows/<name>/expected holds a
			// suite's expected outcomes); a broken definition is its own
			// suite's to report.
			continue
		}
		drivers := map[string]bool{}
		for _, w := range ws {
			drivers[cmp.Or(w.Driver, model.DefaultDriver)] = true
		}
		parts = append(parts, fmt.Sprintf("%s (%s, driver %s)", sub, count(len(ws), "window"), strings.Join(slices.Sorted(maps.Keys(drivers)), ", ")))
	}
	return parts
}

// closeSession seals the session's rows (if not sealed with a note already)
// and closes the results file, adding its failure to err: a file left
// unsealed must not go unnoticed.
func closeSession(s *windowSession, err error) error {
	if cerr := s.Close(); cerr != nil {
		return errors.Join(err, fmt.Errorf("closing %s: %w", s.Results, cerr))
	}
	return err
}

// windowRunner runs one window; *runner.Runner is the real one, and the
// soak's tests script outcomes through it without touching the host.
type windowRunner interface {
	Run(ctx context.Context, w model.Window) (*runner.Outcome, error)
}

const runUsage = `usage: faultwin run [--windows DIR] [--label-filter F] [--results FILE] [--state-root DIR] [--refsup BIN] [--bugs LIST] [--logs DIR]

Runs the windows defined in DIR/*.yaml (default windows/refsup/*.yaml, the
refsup windows), or those a ginkgo label filter selects, one at a time against
their supervisor, and appends one row per window to the results file as
one sealed session (see faultwin replay -h). One progress line per window,
then the count of each status.

Each supervisor's windows are a directory of their own: windows/refsup
(the default), and windows/<name> for a described supervisor, whose
verdicts are findings about it that its suite (make windows-<name>)
checks against windows/<name>/expected/outcomes.yaml. DIR's
subdirectories are not read; the output's first lines name every window
left out that way, and a DIR with none of its own (windows) is refused,
naming the suites under it.

Exit status: 0 all PASS, 1 a FAIL, 2 INVALID but no FAIL or ERROR, 3 an
ERROR (also when the run stops because the harness could not run a window
or record its row); 64 a usage error.
`

func runWindows(ctx context.Context, stdout io.Writer, args []string) (err error) {
	fs := newFlags(stdout, "run", runUsage)
	wf := addWindowFlags(fs, "out/windows.jsonl")
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := fs.noArgs(); err != nil {
		return err
	}
	s, err := wf.open(stdout)
	if err != nil {
		return err
	}
	defer func() { err = closeSession(s, err) }()
	return runAll(ctx, stdout, s)
}

// runAll runs the session's windows in order, one row each, and stops at
// the first window that leaves the host unclean (stopUnclean).
func runAll(ctx context.Context, stdout io.Writer, s *windowSession) error {
	ws := s.windows
	counts := newTally()
	t0 := time.Now()
	for i, win := range ws {
		if ctx.Err() != nil {
			serr := s.Seal(fmt.Sprintf("run interrupted after %d of %d windows: %v", i, len(ws), ctx.Err()))
			return errors.Join(ctx.Err(), exitFor(counts), serr)
		}
		o, err := s.runner.Run(ctx, win)
		if err == nil {
			_, err = s.Record(o)
		}
		if err != nil {
			// The harness broke: an ERROR, like the soak's row for it.
			err = fmt.Errorf("window %s: %w", win.ID, err)
			return errors.Join(statusExit{exitError, "run stopped: the harness broke"}, err, s.Seal("stopped: "+err.Error()))
		}
		counts.add(win.ID, o.Verdict.Status)
		elapsed := time.Since(t0)
		eta := time.Duration(float64(elapsed) / float64(i+1) * float64(len(ws)-i-1))
		fmt.Fprintf(stdout, "[%d/%d] %-8s %-7s %6.1fs  %s  (eta %s)\n", i+1, len(ws), win.ID, o.Verdict.Status,
			o.Finished.Sub(o.Started).Seconds(), o.Verdict.Reason, eta.Round(time.Second))
		if len(o.HostLeft) > 0 {
			return stopUnclean(stdout, s, win, o, ws[i+1:], counts)
		}
	}
	fmt.Fprintf(stdout, "%d windows in %s: %d PASS, %d FAIL, %d INVALID, %d ERROR; rows in %s\n", len(ws),
		time.Since(t0).Round(time.Millisecond), counts.rows[model.StatusPass], counts.rows[model.StatusFail],
		counts.rows[model.StatusInvalid], counts.rows[model.StatusError], s.Results)
	if s.leftOut != "" {
		fmt.Fprintf(stdout, "run: %s\n", s.leftOut)
	}
	return exitFor(counts)
}

// stopUnclean ends a run whose window left the host unclean: one message
// naming what is left and how to clean it, a NOT RUN line for each window
// not run, the session sealed with why. A run that went on would write one
// INVALID row per remaining window, each measuring the leftover.
func stopUnclean(stdout io.Writer, s *windowSession, win model.Window, o *runner.Outcome, rest []model.Window, counts *tally) error {
	fmt.Fprint(stdout, runner.StopMessage(win.ID, o, len(rest), s.StateRoot()))
	why := "the host was left unclean by " + win.ID
	if o.HostLeftAt == "preflight" {
		why = "the host was unclean at the preflight of " + win.ID
	}
	for _, w := range rest {
		fmt.Fprintf(stdout, "NOT RUN: %s: %s\n", w.ID, why)
	}
	note := fmt.Sprintf("stopped after %s: %s (%d leftovers); %d windows not run", win.ID, strings.TrimSuffix(why, " by "+win.ID), len(o.HostLeft), len(rest))
	return errors.Join(statusExit{stoppedCode(exitFor(counts)), note}, s.Seal(note))
}

// stoppedCode is the exit of a run stopped on an unclean host: a FAIL or
// ERROR already seen decides it, as in exitFor; else INVALID, since the
// windows not run measured nothing.
func stoppedCode(sofar error) int {
	var se statusExit
	if errors.As(sofar, &se) {
		return se.code
	}
	return exitInvalid
}
