package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"faultwin/reports/decoded"
	"faultwin/reports/findings"
	"faultwin/reports/rows"
	"faultwin/reports/upstream"
)

const findingsUsage = `usage: faultwin findings [--format md|json] [--supervisor NAME] FILE|DIR...
       faultwin findings --upstream NAME [--write] [--root DIR]

Groups the failed criteria of the rows of the files given (a directory
stands for every *.jsonl and *.jsonl.gz file below it) into distinct
findings, the most often seen first. A finding is one signature: the supervisor, the
criterion that was false, the class of its evidence (the supervisor's
message, or the first line of evidence, with ids, numbers, run names and
cgroup hierarchies taken out), the phase the kill landed in and the roles
it killed. Its id is a hash of the signature, so the same finding in a
later soak keeps it. Each finding lists its windows, k/N (the rows that
showed it over the PASS and FAIL rows of those windows), the commits of
the first and last rows that showed it, an example of its evidence as
recorded, and the hashes of its rows (faultwin rows FILE | jq 'select(.hash
== "...")' prints one). A second table rolls the findings up by supervisor,
criterion and evidence: the same leftover wherever the kill landed.

With --upstream, renders the finding page docs/findings/NAME.md as its
project's issue: the project's form, in plain words, filled from the
page's front matter (the hand-written prose, the rows files and windows
it counts, the standalone script's transcripts, the closest public
issues, what the rows do not hold) and from what those files recorded
(k/N, the tools' versions and the host's facts, as captured when the
runs started), followed by the page's hand-written part as written. It
prints the page, or with --write writes it back; --root is the
repository (default .). A cited file that is gone or does not verify, a
window it does not have, a count written by hand in the prose, and the
harness's own words in the issue are errors (exit 1).

Exit status: 0 when the findings were printed (there may be none); 4 (the
evidence does not verify) when a file does not read to its end or its
chain is broken (no finding read from it would stand); 64 a usage error.
`

func runFindings(_ context.Context, stdout io.Writer, args []string) error {
	fs := newFlags(stdout, "findings", findingsUsage)
	format := fs.String("format", "md", "md (a table and each finding's rows) or json (one finding a line)")
	sup := fs.String("supervisor", "", "only the findings about this supervisor (its driver's name)")
	up := fs.String("upstream", "", "render docs/findings/NAME.md as its project's issue")
	write := fs.Bool("write", false, "with --upstream: write the page back instead of printing it")
	root := fs.String("root", ".", "with --upstream: the repository")
	if err := fs.parse(args); err != nil {
		return err
	}
	if *up != "" {
		if fs.NArg() > 0 {
			return fs.usagef("--upstream takes no FILE (the page names what it cites)")
		}
		return runUpstream(stdout, *root, *up, *write)
	}
	if *write {
		return fs.usagef("--write goes with --upstream")
	}
	if *format != "md" && *format != "json" {
		return fs.usagef("--format %s: want md or json", *format)
	}
	paths, err := jsonlFiles("findings", fs.Args())
	if err != nil {
		return err
	}
	var all []decoded.Record
	for _, p := range paths {
		c, err := rows.VerifyContents(p)
		if err != nil {
			return statusExit{exitUnverified, fmt.Sprintf("findings: %s does not verify: %v (faultwin replay names the problem)", p, err)}
		}
		all = append(all, decoded.Of(c.Rows...)...)
	}
	var fs2 []findings.Finding
	for _, f := range findings.Group(all) {
		if *sup == "" || f.Supervisor == *sup {
			fs2 = append(fs2, f)
		}
	}
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		for _, f := range fs2 {
			if err := enc.Encode(f); err != nil {
				return err
			}
		}
		return nil
	}
	fmt.Fprintf(stdout, "# Findings: %d, from %d rows of %s\n\n", len(fs2), countRows(all), strings.Join(paths, ", "))
	fmt.Fprintln(stdout, "| id | supervisor | criterion | landed in | killed | evidence | windows | k/N | control k/N | workaround | first .. last |")
	fmt.Fprintln(stdout, "|---|---|---|---|---|---|---|---|---|---|---|")
	for _, f := range fs2 {
		ctrl := "-"
		if f.ControlMeasured > 0 {
			ctrl = fmt.Sprintf("%d/%d", f.ControlSeen, f.ControlMeasured)
		}
		fmt.Fprintf(stdout, "| %s | %s | %s | %s | %s | %s | %s | %d/%d | %s | %s | %s .. %s |\n", f.ID, f.Supervisor, f.Criterion,
			orDash(f.Phase), f.Killed, cell(f.Evidence), strings.Join(f.Windows, " "), f.Seen, f.Measured, ctrl,
			orDash(strings.Join(f.Workarounds, " ")), short(f.First.Commit), short(f.Last.Commit))
	}
	if across := findings.AcrossPhases(fs2); len(across) < len(fs2) {
		fmt.Fprintf(stdout, "\n## The same evidence wherever the kill landed\n\n")
		fmt.Fprintln(stdout, "| supervisor | criterion | evidence | seen | landed in | findings | windows |")
		fmt.Fprintln(stdout, "|---|---|---|---|---|---|---|")
		for _, a := range across {
			fmt.Fprintf(stdout, "| %s | %s | %s | %d | %s | %s | %s |\n", a.Supervisor, a.Criterion, cell(a.Evidence), a.Seen,
				orDash(strings.Join(a.Phases, " ")), strings.Join(a.Findings, " "), strings.Join(a.Windows, " "))
		}
	}
	for _, f := range fs2 {
		fmt.Fprintf(stdout, "\n## %s: %s %s in %s\n\n- example: %s\n", f.ID, f.Supervisor, f.Criterion, strings.Join(f.Windows, ", "), f.Example)
		if len(f.Versions) > 0 {
			fmt.Fprintf(stdout, "- seen on: %s\n", strings.Join(f.Versions, "; "))
		}
		fmt.Fprintf(stdout, "- rows: %s\n", strings.Join(f.Rows, " "))
	}
	return nil
}

func runUpstream(stdout io.Writer, root, name string, write bool) error {
	path := upstream.PagePath(root, name)
	b, err := upstream.RenderFile(root, path)
	if err != nil {
		return fmt.Errorf("findings --upstream: %w", err)
	}
	if write {
		return os.WriteFile(path, b, 0o644)
	}
	_, err = stdout.Write(b)
	return err
}

func countRows(rs []decoded.Record) int {
	n := 0
	for _, r := range rs {
		if r.Window.ID != "" {
			n++
		}
	}
	return n
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// cell makes s safe in a Markdown table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

func short(c string) string {
	if len(c) > 7 {
		return c[:7]
	}
	return orDash(c)
}
