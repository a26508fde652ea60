package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"faultwin/internal/model"
	"faultwin/reports/decoded"
	"faultwin/reports/review"
	"faultwin/reports/rows"
)

const rowsUsage = `usage: faultwin rows [--brief] [--window ID|FAMILY] [--status S] [--criterion C] FILE|DIR...

Prints the rows of rows files as plain JSONL, one row a line, in file
order, the files in the order given (a directory stands for every *.jsonl
and *.jsonl.gz file below it but in logs/, in name order), so that

  faultwin rows results/podman/soak-10-5cffb9b.jsonl.gz | jq .status

works on plain and compact files alike: a compact file's rows are expanded
to the full rows (every blob checked against its sha256), each line the
JSON a plain file holds for that row. Its "prev" and "hash" are the file's
own chain (a compact file's chain covers its compact lines). Open and seal
markers are not rows and are not printed. Nothing is judged: replay does
that.

Filters, each repeatable or a comma list; a row is printed when it matches
every filter given, and a filter when the row matches any of its values:

  --window W3,PR1_50   the window's instance id (W3_30) or its family (W3)
  --status FAIL        PASS, FAIL, INVALID or ERROR (any case)
  --criterion P3       rows where that criterion was judged and did not
                       hold (it is false in the row's criteria)

--brief prints, instead of the JSON, one line per row (window, status,
reason) and under it each judged criterion that did not hold with its
summary and its first evidence lines: what a CI log's tail must show.

Exit status: 0 when every file read to its end and its chain verifies,
whatever the rows' statuses (select them with --status); 4 (the evidence
does not verify) when a file does not read to its end (a cut or damaged
file) or its chain is broken: the rows read are printed first, and
faultwin replay names the problem.
64 a usage error: an unknown status or criterion, no file, a path that
does not exist, a directory without rows files.
`

// listFlag is a flag that may be given more than once, each time a value
// or a comma list of values.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for _, x := range strings.Split(v, ",") {
		if x = strings.TrimSpace(x); x != "" {
			*l = append(*l, x)
		}
	}
	return nil
}

// rowFilter selects rows by window, status and criterion; an empty list
// selects every row.
type rowFilter struct {
	windows, statuses, criteria []string
}

func (f rowFilter) match(r rows.Row) bool {
	if len(f.windows) > 0 && !slices.Contains(f.windows, r.Window.ID) && !slices.Contains(f.windows, r.Window.Family) {
		return false
	}
	if len(f.statuses) > 0 && !slices.Contains(f.statuses, r.Status) {
		return false
	}
	if len(f.criteria) > 0 {
		rs, _ := decoded.Results(r)
		failed := review.FailedCriteria(decoded.Record{Row: r, Results: rs})
		if !slices.ContainsFunc(f.criteria, func(c string) bool { return slices.Contains(failed, c) }) {
			return false
		}
	}
	return true
}

// runRows is `faultwin rows`.
func runRows(_ context.Context, stdout io.Writer, args []string) error {
	fs := newFlags(stdout, "rows", rowsUsage)
	var windows, statuses, crits listFlag
	fs.Var(&windows, "window", "print the rows of this window `id or family` (repeatable, or a comma list)")
	fs.Var(&statuses, "status", "print the rows of this `status`: PASS, FAIL, INVALID or ERROR (repeatable, or a comma list)")
	fs.Var(&crits, "criterion", "print the rows where this `criterion` did not hold (repeatable, or a comma list)")
	brief := fs.Bool("brief", false, "one line per row and its failed criteria, not the JSON")
	if err := fs.parse(args); err != nil {
		return err
	}
	f := rowFilter{windows: windows}
	for _, s := range statuses {
		s = strings.ToUpper(s)
		if !model.ValidStatus(s) {
			return fs.usagef("--status %s: want one of %s", s, strings.Join(model.Statuses, ", "))
		}
		f.statuses = append(f.statuses, s)
	}
	for _, c := range crits {
		c = strings.ToUpper(c)
		if !slices.Contains(model.CriterionIDs, c) {
			return fs.usagef("--criterion %s: want one of %s", c, strings.Join(model.CriterionIDs, ", "))
		}
		f.criteria = append(f.criteria, c)
	}
	paths, err := jsonlFiles("rows", fs.Args())
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(stdout, 1<<20)
	var bad []error
	total, matched := 0, 0
	seen, ids := map[string]bool{}, map[string]bool{}
	for _, p := range paths {
		c, verr := rows.VerifyContents(p)
		for _, r := range c.Rows {
			if r.Window.ID != "" {
				total++
				seen[r.Window.ID], seen[r.Window.Family] = true, true
				ids[r.Window.ID] = true
			}
			if !f.match(r) {
				continue
			}
			matched++
			if *brief {
				writeBrief(w, r)
				continue
			}
			// The encoding the writer uses, so a plain file's row prints
			// as the line it holds.
			b, err := json.Marshal(r)
			if err != nil {
				return fmt.Errorf("rows: %s: row %s: %w", p, r.Window.ID, err)
			}
			w.Write(b)
			if err := w.WriteByte('\n'); err != nil {
				return err
			}
		}
		if verr != nil {
			bad = append(bad, verr)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if len(bad) > 0 {
		return statusExit{exitUnverified, fmt.Sprintf("rows: %s not read to its end or its chain does not verify (the rows read were printed); run `faultwin replay` on it: %v",
			count(len(bad), "file"), errors.Join(bad...))}
	}
	if total == 0 {
		return noRows("rows", paths)
	}
	if matched == 0 && len(windows) > 0 && !slices.ContainsFunc(windows, func(x string) bool { return seen[x] }) {
		return fs.usagef("--window %s: no row of %s is of that window or family; they hold %s", strings.Join(windows, ","),
			count(len(paths), "file"), strings.Join(slices.SortedFunc(maps.Keys(ids), model.CompareIDs), " "))
	}
	return nil
}

// briefEvidence bounds the evidence lines --brief prints per criterion.
const briefEvidence = 4

// writeBrief prints r as one line and its failed criteria indented under it.
func writeBrief(w io.Writer, r rows.Row) {
	fmt.Fprintf(w, "%s %s %s\n", r.Window.ID, r.Status, r.Reason)
	results, err := decoded.Results(r)
	if results == nil && err != nil {
		fmt.Fprintf(w, "  criteria unreadable: %v\n", err)
		return
	}
	for _, c := range results {
		if !c.Judged || c.Pass {
			continue
		}
		fmt.Fprintf(w, "  %s: %s\n", c.ID, c.Summary)
		for i, e := range c.Evidence {
			if i == briefEvidence {
				fmt.Fprintf(w, "    (%d more)\n", len(c.Evidence)-i)
				break
			}
			fmt.Fprintf(w, "    %s\n", e)
		}
	}
}
