package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"faultwin/reports/decoded"
	"faultwin/reports/rows"
	"faultwin/windows/expected"
	"faultwin/windows/runner"
)

const expectUsage = `usage: faultwin expect --windows DIR [--name NAME] [--supervisor FILE] ROWS...

Learns the expected outcomes of a described supervisor's windows from its
recorded soaks and writes DIR/expected/outcomes.yaml: for every window
registered in DIR/*.yaml, how many rows showed each outcome (status, then
the criteria that did not hold) in all ROWS files together, with the files
that had rows of it and the median wall time of a row. A supervisor that
races shows its spread only over soaks run at different times, so a window
is stable only when every soak agrees. Then, per operation, the smoke
window make test runs: the one whose commonest outcome (a PASS or a FAIL)
has the largest share of its rows.

A window no ROWS file has rows of is an error: soak it first.

Exit status: 0 written, 1 a window has no rows, 64 a usage error.
`

func runExpect(ctx context.Context, stdout io.Writer, args []string) error {
	fs := newFlags(stdout, "expect", expectUsage)
	fs.supervisors()
	dir := fs.String("windows", "", "the suite's directory (windows/<name>)")
	name := fs.String("name", "", "the supervisor's name for the header (default: DIR's last element)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return usagef("expect", "--windows DIR is required")
	}
	if *name == "" {
		*name = filepath.Base(filepath.Clean(*dir))
	}
	ws, err := runner.LoadWindows(*dir)
	if err != nil {
		return err
	}
	paths, err := evidenceFiles("expect", fs.Args())
	if err != nil {
		return err
	}
	files := map[string][]decoded.Record{}
	for _, p := range paths {
		rs, err := readRecords(p)
		if err != nil {
			return err
		}
		files[p] = rs
	}
	ids := make([]string, len(ws))
	for i, w := range ws {
		ids[i] = w.ID
	}
	e, missing := expected.Learn(*name, ids, files, paths)
	if len(missing) > 0 {
		return statusExit{exitFail, fmt.Sprintf("expect: no rows of %s in %s: soak them first", strings.Join(missing, ", "), strings.Join(paths, ", "))}
	}
	e.Smoke = expected.ChooseSmoke(e, ws)
	if err := e.Check(ws); err != nil {
		return statusExit{exitFail, "expect: " + err.Error()}
	}
	out := filepath.Join(*dir, "expected", "outcomes.yaml")
	if err := e.Write(out); err != nil {
		return err
	}
	stable := 0
	for _, s := range e.Windows {
		if s.Stable() {
			stable++
		}
	}
	fmt.Fprintf(stdout, "expect: %s: %d windows (%d stable), smoke %s; from %s\n", out, len(e.Windows), stable, strings.Join(e.Smoke, " "), strings.Join(paths, ", "))
	return nil
}

const driftUsage = `usage: faultwin drift --windows DIR ROWS...

Holds new rows of a described supervisor's windows (a nightly's soak)
against DIR/expected/outcomes.yaml: per window and outcome, the share of
the new rows that showed it beside its share in the window's recorded soak,
and a one-sided Fisher exact test that it rose. An outcome whose p-value is
under 0.05 is a drift, named with the hashes of the rows to look at. One
run of an outcome ten soaked runs never showed is p = 0.09, not yet a
drift; two runs of it are. A row of a window the file has no outcomes for
is an error too.

Exit status: 0 no drift, 1 a drift or a window without outcomes, 64 a
usage error.
`

func runDrift(ctx context.Context, stdout io.Writer, args []string) error {
	fs := newFlags(stdout, "drift", driftUsage)
	fs.supervisors()
	dir := fs.String("windows", "", "the suite's directory (windows/<name>)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return usagef("drift", "--windows DIR is required")
	}
	e, err := expected.ReadExpectations(filepath.Join(*dir, "expected", "outcomes.yaml"))
	if err != nil {
		return err
	}
	paths, err := evidenceFiles("drift", fs.Args())
	if err != nil {
		return err
	}
	var all []decoded.Record
	for _, p := range paths {
		rs, err := readRecords(p)
		if err != nil {
			return err
		}
		all = append(all, rs...)
	}
	if len(all) == 0 {
		return noRows("drift", paths)
	}
	shifts, unknown := expected.Drift(e, all)
	drifts := 0
	for _, s := range shifts {
		mark := "  "
		if s.Drift {
			mark, drifts = "! ", drifts+1
		}
		fmt.Fprintf(stdout, "%s%s\n", mark, s)
		if s.Drift {
			fmt.Fprintf(stdout, "    rows to look at: %s (faultwin rows --window %s %s)\n", strings.Join(s.Rows, " "), s.Window, strings.Join(paths, " "))
		}
	}
	fmt.Fprintf(stdout, "drift: %d rows of %d windows against %s; %s\n", len(all), windowsIn(all), filepath.Join(*dir, "expected", "outcomes.yaml"), expected.DriftRule)
	var problems []string
	if drifts > 0 {
		problems = append(problems, fmt.Sprintf("%d outcomes drifted", drifts))
	}
	if len(unknown) > 0 {
		problems = append(problems, "no recorded outcomes for "+strings.Join(unknown, ", ")+": soak them and run faultwin expect")
	}
	if len(problems) > 0 {
		return statusExit{exitFail, "drift: " + strings.Join(problems, "; ")}
	}
	fmt.Fprintln(stdout, "drift: none")
	return nil
}

// readRecords reads path's rows, decoded once, without judging them.
func readRecords(path string) ([]decoded.Record, error) {
	rs, err := rows.Read(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return decoded.Of(rs...), nil
}

func windowsIn(rs []decoded.Record) int {
	ids := map[string]bool{}
	for _, r := range rs {
		ids[r.Window.ID] = true
	}
	return len(ids)
}
