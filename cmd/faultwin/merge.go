package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"faultwin/internal/model"
	"faultwin/reports/decoded"
	"faultwin/reports/findings"
	"faultwin/reports/render"
	"faultwin/reports/review"
	"faultwin/reports/rows"
)

const mergeUsage = `usage: faultwin merge [--out SUMMARY.md] [--prom FILE.prom] [--allow-mixed] [--signers ALLOWED_SIGNERS [--require-signed]] FILE|DIR...

Merges the rows files of a sharded soak (faultwin soak --shard k/n, one file
per shard, on as many machines) into one summary. It checks, and names
every file, line and pair that fails:

  - every file reads to its end, its chain and seals verify, and every row
    re-judges as recorded (as faultwin replay does);
  - every shard session records the same soak: shard count, passes,
    windows and shard rule;
  - each shard's rows are, in order, the (window, pass) pairs the rule gives
    that shard, and the shards together cover every pair exactly once
    (missing and duplicate pairs are named);
  - provenance: every row has the same run commit and a clean work tree,
    and each window one definition; --allow-mixed accepts a difference,
    with a warning in the summary;
  - with --signers, each sealed session's signature (FILE.sig, made by
    faultwin sign) verifies against that allowed_signers file, as replay
    checks it; with --require-signed every session must be signed.

The summary (Markdown, printed, and written to --out when given) holds k/N
per window with 95% Wilson intervals over the merged soak, then each
shard's rows, load (min/median/max of the 1-minute load average before its
windows) and host facts (kernel, CRIU version, cores, memory). --prom
writes the per-window numbers, each file's chain and seal state and the
count of problems in the Prometheus text format for node-exporter's
textfile collector (to a temporary file in the same directory, then
renamed; see docs/soak.md for the metrics).

Exit status: as soak: 0 all PASS, 1 a FAIL, 2 INVALID or an unknown status
but no FAIL or ERROR, 3 an ERROR; 4 (the evidence does not verify) on any
problem with the shards' files (a broken chain, an unsealed session, a row
that does not re-judge, a file cut short, a shard of another soak, a
missing or duplicate pair) or a signature check that fails, and 1 on mixed
provenance without --allow-mixed, whatever the statuses. 64 a usage error
(no file, a path that does not exist, a directory without rows files).
`

// runMerge is `faultwin merge`.
func runMerge(ctx context.Context, stdout io.Writer, args []string) error {
	fs := newFlags(stdout, "merge", mergeUsage)
	out := fs.String("out", "", "also write the merged summary (Markdown) to this file")
	prom := fs.String("prom", "", "also write the merged numbers in the Prometheus text format to this `file` (atomically)")
	allowMixed := fs.Bool("allow-mixed", false, "accept rows of more than one commit, a dirty tree or more than one definition of a window, with a warning")
	sf := addSignerFlags(fs)
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := outPath(fs, "--out", *out); err != nil {
		return err
	}
	if err := sf.check(fs); err != nil {
		return err
	}
	if err := promPath(fs, *prom); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return fs.usagef("no files given (give every shard's rows file, or a directory of them)")
	}
	// An empty shard file is not refused here: the merge names the pairs
	// it lacks.
	paths, err := jsonlFiles("merge", fs.Args())
	if err != nil {
		return err
	}
	m := review.MergeShards(paths)
	sums := m.Summary()
	var b bytes.Buffer
	if err := writeMerge(&b, m, sums, *allowMixed); err != nil {
		return err
	}
	if _, err := stdout.Write(b.Bytes()); err != nil {
		return err
	}
	if *out != "" {
		if err := writeFileAtomic(*out, b.Bytes()); err != nil {
			return fmt.Errorf("merge: --out: %w", err)
		}
		fmt.Fprintf(stdout, "\nmerge: summary written to %s\n", *out)
	}
	if *prom != "" {
		p := render.Prom{Windows: []render.PromWindows{{Sums: sums}}, Merge: &render.PromMerge{Problems: len(m.Problems), Mixed: len(m.Mixed)}}
		if ab := mergeAB(m); len(ab) > 0 {
			p.AB = []render.PromAB{{Windows: ab}}
		}
		for _, f := range m.Files {
			p.Files = append(p.Files, render.PromFile{Path: f.Path, Rows: len(f.Records), ChainOK: f.ReadErr == nil && f.Chain == nil, Seal: f.Seal})
		}
		if err := writeProm(stdout, "merge", *prom, p); err != nil {
			return err
		}
	}
	if problems := sf.verify(ctx, stdout, "merge", paths); len(problems) > 0 {
		if err := mergeExit(m, *allowMixed); err != nil {
			if se, ok := err.(statusExit); ok && se.code == exitFail {
				se.msg += "; and " + signatureExit("merge", problems).(statusExit).msg
				return se
			}
		}
		return signatureExit("merge", problems)
	}
	return mergeExit(m, *allowMixed)
}

// mergeExit is the merge's exit: 4 on a problem with the files, 1 on
// mixed provenance not allowed, else the shared status exit of the
// merged rows.
func mergeExit(m *review.Merge, allowMixed bool) error {
	if n := len(m.Problems); n > 0 {
		return statusExit{exitUnverified, fmt.Sprintf("merge: %d problem(s) with the shards' files (see the Problems section above)", n)}
	}
	var why []string
	if len(m.Mixed) > 0 && !allowMixed {
		why = append(why, fmt.Sprintf("mixed provenance (%d difference(s)); rerun the shards from one clean commit, or pass --allow-mixed to accept it", len(m.Mixed)))
	}
	if len(why) > 0 {
		return statusExit{exitFail, "merge: " + strings.Join(why, "; ") + " (see the Problems section above)"}
	}
	if len(m.Rows) == 0 {
		return statusExit{2, "merge: no rows: nothing was measured"}
	}
	c := newTally()
	for _, r := range m.Rows {
		c.add(r.Row.Window.ID, r.Row.Status)
	}
	return exitFor(c)
}

// writeMerge renders the merge, whose per-window summary is sums, as
// Markdown.
func writeMerge(w io.Writer, m *review.Merge, sums []review.WindowSummary, allowMixed bool) error {
	ew := &errw{w: w}
	ew.printf("# Merged soak\n\n")
	if m.Plan != nil {
		p := m.Plan
		ew.printf("%d shards of %d passes over %d windows (%s): %d of %d (window, pass) pairs merged.\n\n",
			p.N, p.Passes, len(p.Windows), strings.Join(p.Windows, " "), len(m.Rows), p.Passes*len(p.Windows))
		ew.printf("Shard rule `%s`: pair i, numbered pass-major (pass 1's windows in natural order, then pass 2's, ...), ran on shard (i mod %d)+1.\n\n", review.ShardRule, p.N)
	}
	commits, dirty := m.Commits()
	switch {
	case len(m.Mixed) > 0 && allowMixed:
		ew.printf("**WARNING: mixed provenance, accepted with --allow-mixed** (commits %s; see below).\n\n", strings.Join(commits, ", "))
	case len(m.Mixed) > 0:
		ew.printf("**MIXED PROVENANCE** (commits %s; see below).\n\n", strings.Join(commits, ", "))
	case len(commits) == 1:
		ew.printf("Every row: commit %s, clean work tree: %v.\n\n", commits[0], !dirty)
	}
	ew.printf("## Checks\n\n")
	checks := []string{
		fmt.Sprintf("files: %d read; chains, seals and re-judgement: %s", len(m.Paths), okOr(fileProblems(m))),
		fmt.Sprintf("coverage: %s", coverageText(m)),
		fmt.Sprintf("provenance: %s", okOr(len(m.Mixed))),
	}
	for _, c := range checks {
		ew.printf("- %s\n", c)
	}
	if len(m.Problems) > 0 || len(m.Mixed) > 0 || len(m.Notes) > 0 {
		ew.printf("\n## Problems\n\n")
		for _, p := range m.Problems {
			ew.printf("- %s\n", p)
		}
		for _, p := range m.Mixed {
			tag := ""
			if allowMixed {
				tag = "(accepted with --allow-mixed) "
			}
			ew.printf("- %s%s\n", tag, p)
		}
		for _, n := range m.Notes {
			ew.printf("- note: %s\n", n)
		}
	}
	ew.printf("\n## Per window\n\n```\n")
	if err := review.WriteSummary(ew, sums); err != nil {
		return err
	}
	ew.printf("```\n")
	if ab := mergeAB(m); len(ab) > 0 {
		ew.printf("\n## Against the controls\n\n```\n")
		if err := review.WriteAB(ew, ab); err != nil {
			return err
		}
		ew.printf("```\n")
	}
	ew.printf("\n## Per shard\n\n")
	ew.printf("| shard | rows | statuses | load 1m before min/median/max | kernel | CRIU | cores | memory | files |\n")
	ew.printf("|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range m.Shards() {
		load := "-"
		if s.Load.N > 0 {
			load = fmt.Sprintf("%.2f/%.2f/%.2f", s.Load.Min, s.Load.Median, s.Load.Max)
		}
		ew.printf("| %d/%d | %d of %d | %s | %s | %s | %s | %s | %s | %s |\n", s.K, s.N, s.Rows, s.Expected, statusText(s.Statuses), load,
			joinOr(s.Kernels), joinOr(s.CRIU), joinOr(s.Cores), joinOr(s.Mem), joinOr(s.Files))
	}
	ew.printf("\n## Files\n\n| file | shard sessions | rows | seal | last row hash |\n|---|---|---|---|---|\n")
	for _, f := range m.Files {
		var shards []string
		for _, s := range m.Sessions {
			if s.Path == f.Path {
				shards = append(shards, fmt.Sprintf("%s (line %d, %d of %d rows)", s.Shard(), s.Line, len(s.Rows), s.Expected))
			}
		}
		last := ""
		if n := len(f.Records); n > 0 {
			last = rows.ShortHash(f.Records[n-1].Hash)
		}
		seal := review.SealText(f.Seal)
		if f.ReadErr != nil {
			seal = "UNREADABLE"
		} else if f.Chain != nil {
			seal = "CHAIN BROKEN"
		}
		ew.printf("| %s | %s | %d | %s | %s |\n", f.Path, joinOr(shards), len(f.Records), seal, last)
	}
	return ew.err
}

func fileProblems(m *review.Merge) int {
	n := 0
	for _, f := range m.Files {
		if !f.OK() {
			n++
		}
	}
	return n
}

func okOr(n int) string {
	if n == 0 {
		return "ok"
	}
	return fmt.Sprintf("%d PROBLEM(S)", n)
}

func coverageText(m *review.Merge) string {
	if m.Plan == nil {
		return "NO SHARDS"
	}
	total := m.Plan.Passes * len(m.Plan.Windows)
	if len(m.Missing) == 0 && len(m.Duplicates) == 0 {
		return fmt.Sprintf("ok, each of the %d pairs exactly once", total)
	}
	return fmt.Sprintf("%d of %d pairs, %d MISSING, %d DUPLICATED", len(m.Rows), total, len(m.Missing), len(m.Duplicates))
}

func statusText(c map[string]int) string {
	var out []string
	for _, s := range model.Statuses {
		if c[s] > 0 {
			out = append(out, fmt.Sprintf("%s %d", s, c[s]))
		}
	}
	var other []string
	for s, n := range c {
		if !model.ValidStatus(s) {
			other = append(other, fmt.Sprintf("%s %d", s, n))
		}
	}
	sort.Strings(other)
	return joinOr(append(out, other...))
}

func joinOr(l []string) string {
	if len(l) == 0 {
		return "-"
	}
	return strings.Join(l, ", ")
}

// errw keeps the first write error.
type errw struct {
	w   io.Writer
	err error
}

func (e *errw) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	if err != nil {
		e.err = err
	}
	return n, err
}

func (e *errw) printf(format string, a ...any) { fmt.Fprintf(e, format, a...) }

// mergeAB compares the merged rows' failures with their controls', when
// any row is a control.
func mergeAB(m *review.Merge) []review.WindowAB {
	var rs []decoded.Record
	for _, r := range m.Rows {
		rs = append(rs, r.Record)
	}
	if !slices.ContainsFunc(rs, func(r decoded.Record) bool { return r.Window.Fault.Disarmed }) {
		return nil
	}
	return review.AB(rs, findings.Class)
}
