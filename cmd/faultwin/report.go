package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"faultwin/internal/model"
	"faultwin/reports/render"
	"faultwin/reports/review"
)

const reportUsage = `usage: faultwin report [--format md|html] [--max-bytes N] [--out PATH] FILE|DIR...
       faultwin report --compare [--format md|html] [--out PATH] A B

Renders rows for a reviewer: which files verify (chain and replay), the
runs, a windows-by-runs verdict table, per-file summaries with pass rates
and load averages, and the criteria and evidence of every row that did not
pass. --format html writes one self-contained page (inline CSS and script,
nothing fetched) whose heatmap cells open each row's criteria and evidence.
Without --format the format follows --out's extension: HTML for .html or
.htm, Markdown otherwise (and on stdout). A --format that contradicts the
extension (--format md --out x.html) is refused as a usage error.
--compare takes exactly two files and adds the windows that changed from
A to B: only windows that ran in both, and only where the pass rates' 95%
intervals do not overlap; the others are counted apart (a different
commonest verdict within the intervals, a window of one side only).

Each supervisor comes first: in the HTML its map (windows by files, a
square per run, with the pass k/N and its interval over every file of
it), its findings, its controls and one example of each outcome; the files,
runs and per-file summaries last, folded. --max-bytes N writes a brief
Markdown report within N bytes, failures first (a job summary takes 1 MiB,
a pull-request comment 65,536 characters): what does not fit is cut at a
line, and the report says so.

A directory stands for every *.jsonl and *.jsonl.gz file under it, at
any depth (a directory's own files first, then its subdirectories in name
order), so "faultwin report results/" covers results/podman/,
results/mutants/ and any directory added later. Directories named logs
(the supervisors' output, one directory per window) are not entered, and
no other file is read as rows. A file named twice is reported once.

A run (a column) is a stretch of consecutive rows of one file, under one
harness commit, in which no window repeats: each pass of a soak, or each
` + "`faultwin run`" + ` appended to a file, is one run. The verdict tables and
the files' summaries are grouped by supervisor (the row's driver), with the
mutants apart: rows of a supervisor run with a known-bug switch (run.bugs,
or for an older row a file mutants/<bug>.jsonl; mutants/control.jsonl is
the control run, no bug), whose FAILs are expected.

Exit status: 4 (the evidence does not verify) when any file is
unreadable, its chain is broken, a session of it has no seal (see faultwin
replay -h) or a row does not re-judge as recorded (the report is still
written and says so at the top); otherwise the shared status codes over the rows reported (with
--compare, B's rows only; the mutants' rows are not counted, make mutants
judges them against the verdicts they expect): 0 all PASS, 1 a FAIL, 2 INVALID or an unknown
status but no FAIL or ERROR, 3 an ERROR. 64 a usage error, also when an
argument names no evidence (a path that does not exist, an empty file,
files that hold no rows at all): nothing is written then, as replay and
soak --summary refuse the same files.
`

// runReport is `faultwin report`.
func runReport(_ context.Context, stdout io.Writer, args []string) error {
	fs := newFlags(stdout, "report", reportUsage)
	format := fs.String("format", "", "md or html (default: html when --out ends in .html or .htm, else md)")
	out := fs.String("out", "-", "where to write the report; - for stdout")
	compare := fs.Bool("compare", false, "compare two files: list windows whose verdict changed from the first to the second")
	maxBytes := fs.Int("max-bytes", 0, "write a brief Markdown report of at most `N` bytes, failures first (at least 2048)")
	if err := fs.parse(args); err != nil {
		return err
	}
	f, err := reportFormat(*format, *out)
	if err != nil {
		return fs.usagef("%v", err)
	}
	switch {
	case *maxBytes != 0 && *maxBytes < 2048:
		return fs.usagef("--max-bytes %d: give at least 2048 bytes (a job summary takes 1048576, a pull-request comment 65536)", *maxBytes)
	case *maxBytes != 0 && f == "html":
		return fs.usagef("--max-bytes bounds the Markdown report; the HTML one is not cut")
	}
	if err := outPath(fs, "--out", *out); err != nil {
		return err
	}
	*format = f
	expanded, err := rowsFilesUnder("report", fs.Args())
	if err != nil {
		return err
	}
	paths, err := evidenceFiles("report", expanded)
	if err != nil {
		return err
	}
	if *compare && len(paths) != 2 {
		if len(paths) == 1 && len(fs.Args()) == 2 {
			return fs.usagef("--compare %s %s: A and B are the same file; name two files", fs.Arg(0), fs.Arg(1))
		}
		return fs.usagef("--compare takes exactly two files, A and B; got %d", len(paths))
	}
	files := render.Load(paths)
	if rowCount(files) == 0 && verifies(files) {
		return noRows("report", paths)
	}
	r := render.Build(files, *compare)
	for _, f := range files {
		// A session without its seal is evidence that may be cut short.
		r.Problems = append(r.Problems, review.SealProblems(f.Path, f.Replay.Seal)...)
	}
	var b bytes.Buffer
	switch {
	case *format == "html":
		err = render.HTML(&b, r)
	case *maxBytes > 0:
		err = render.MarkdownBrief(&b, r, *maxBytes)
	default:
		err = render.Markdown(&b, r)
	}
	if err != nil {
		return err
	}
	if err := writeOut(stdout, *out, b.Bytes()); err != nil {
		return err
	}
	if *out != "-" {
		fmt.Fprintf(stdout, "report: wrote %s (%d windows, %d runs, %d files)\n", *out, len(r.Windows), len(r.Runs), len(files))
	}
	if len(r.Problems) > 0 {
		return statusExit{exitUnverified, fmt.Sprintf("report: the evidence does not verify (%d problems, first: %s)", len(r.Problems), r.Problems[0])}
	}
	judged := files
	if *compare {
		judged = files[1:]
	}
	counts := newTally()
	for _, f := range judged {
		for _, row := range f.Records {
			if _, planted := render.MutantOf(f.Path, row); planted {
				// A bug planted on purpose fails on purpose; it says
				// nothing of a supervisor's health.
				continue
			}
			counts.add(row.Window.ID, row.Status)
		}
	}
	return exitFor(counts)
}

// rowsFilesUnder expands the rows verbs' arguments: a file stands for itself, a
// directory for every rows file at any depth below it, so a results tree
// that gains a directory is covered without naming it. Directories named
// logs hold the supervisors' output, never rows, and are not entered; a
// path named twice (results/ and results/podman/) is kept once.
func rowsFilesUnder(verb string, args []string) ([]string, error) {
	if len(args) == 0 {
		return nil, usagef(verb, "name at least one JSONL file or directory")
	}
	var out []string
	seen := map[string]bool{}
	keep := func(p string) {
		if c := filepath.Clean(p); !seen[c] {
			seen[c] = true
			out = append(out, p)
		}
	}
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, missingPath(verb, a, err)
		}
		if !st.IsDir() {
			keep(a)
			continue
		}
		if filepath.Base(filepath.Clean(a)) == logsDir {
			return nil, noEvidence(verb, a, "is a directory of the supervisors' logs, which holds no rows")
		}
		found, err := rowsFilesIn(a)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", verb, err)
		}
		if len(found) == 0 {
			return nil, noEvidence(verb, a, "is a directory with no *.jsonl files (nor compact *.jsonl.gz)")
		}
		for _, p := range found {
			keep(p)
		}
	}
	return out, nil
}

// logsDir is where the harness keeps the supervisors' output, one
// directory per window (out/logs/, results/logs/): never rows, whatever a
// file there is named.
const logsDir = "logs"

// rowsFilesIn lists dir's rows files, then each subdirectory's, in name
// order. Symlinked directories are not followed: a loop cannot make the
// report read a file twice.
func rowsFilesIn(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files, subs []string
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.IsDir():
			if e.Name() != logsDir {
				subs = append(subs, p)
			}
		case e.Type().IsRegular() || e.Type()&os.ModeSymlink != 0:
			if isRowsName(e.Name()) {
				files = append(files, p)
			}
		}
	}
	for _, s := range subs {
		more, err := rowsFilesIn(s)
		if err != nil {
			return nil, err
		}
		files = append(files, more...)
	}
	return files, nil
}

// isRowsName is the one naming rule of rows files: plain *.jsonl and
// compact *.jsonl.gz (a signature FILE.jsonl.sig is neither).
func isRowsName(name string) bool {
	return strings.HasSuffix(name, ".jsonl") || strings.HasSuffix(name, ".jsonl.gz")
}

// reportFormat is the format to write: --format when given, else the one
// --out's extension names, else Markdown. A --format the extension
// contradicts is an error: one of the two is a mistake.
func reportFormat(format, out string) (string, error) {
	ext := ""
	switch strings.ToLower(filepath.Ext(out)) {
	case ".html", ".htm":
		ext = "html"
	case ".md", ".markdown":
		ext = "md"
	}
	switch {
	case format != "" && format != "md" && format != "html":
		return "", fmt.Errorf("--format %q: want md or html", format)
	case format == "":
		if ext == "" {
			return "md", nil
		}
		return ext, nil
	case ext != "" && ext != format:
		return "", fmt.Errorf("--format %s but --out %s names %s; drop --format, or name the file for its format", format, out, map[string]string{"md": "Markdown", "html": "HTML"}[ext])
	}
	return format, nil
}

func rowCount(files []render.File) int {
	n := 0
	for _, f := range files {
		n += len(f.Records)
	}
	return n
}

// verifies reports whether every file reads to its end, its chain holds
// and no session lacks its seal: a file that does not verify is reported
// as such, rows or none.
func verifies(files []render.File) bool {
	for _, f := range files {
		if !f.Replay.OK() {
			return false
		}
	}
	return true
}

// statusKey files an unknown status under INVALID, so it can never exit 0.
func statusKey(s string) string {
	switch s {
	case model.StatusPass, model.StatusFail, model.StatusInvalid, model.StatusError:
		return s
	}
	return model.StatusInvalid
}

// writeOut writes b to stdout ("-") or to path with writeFileAtomic.
func writeOut(stdout io.Writer, path string, b []byte) error {
	if path == "-" || path == "" {
		_, err := stdout.Write(b)
		return err
	}
	return writeFileAtomic(path, b)
}

// writeFileAtomic writes b to path through a temporary file in path's
// directory renamed into place, so a reader (a reviewer's browser,
// node-exporter's textfile collector) never sees half a file. The
// temporary file's name starts with a dot and ends in .tmp, so a collector
// that reads *.prom never reads it.
func writeFileAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
