package review

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"faultwin/internal/model"
	"faultwin/reports/rows"
)

// WriteReplay prints each file's replay: a header with its row count, chain
// state, seal state and last hash, the per-window table (statuses as recorded, whether
// the re-judgement agrees), then every difference on a line of its own, so
// a failing replay names the file, row, window and criterion at fault, and
// each session without its seal, and each sealed afterwards as unfinished.
// It returns the number of files that did not replay cleanly.
func WriteReplay(w io.Writer, files []FileReplay) (bad int, err error) {
	ew := &errWriter{w: w}
	for _, f := range files {
		if !f.OK() {
			bad++
		}
		chain := "chain ok"
		switch {
		case f.Chain != nil:
			chain = "CHAIN BROKEN"
		case f.ReadErr != nil && f.N == 0:
			// Nothing was read: there is no chain to call good.
			chain = "NOT ROWS (its first line does not read as a row or a marker)"
		case f.ReadErr != nil:
			chain = "chain ok up to the unreadable line"
		}
		if seal := SealText(f.Seal); seal != "" && f.ReadErr == nil {
			chain += ", " + seal
		}
		ew.printf("%s: %d rows, %s, last hash %s\n", f.Path, f.N, chain, rows.ShortHash(f.Last))
		tw := tabwriter.NewWriter(ew, 2, 8, 2, ' ', 0)
		fmt.Fprintf(tw, "  window\trows\tPASS\tFAIL\tINVALID\tERROR\tagree\n")
		for _, wr := range f.Windows {
			agree := "yes"
			if !wr.Agree {
				agree = "NO"
			}
			fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%d\t%d\t%s", wr.Window, wr.Rows, wr.Statuses[model.StatusPass], wr.Statuses[model.StatusFail],
				wr.Statuses[model.StatusInvalid], wr.Statuses[model.StatusError], agree)
			var notes []string
			if n := otherStatuses(wr.Statuses); n > 0 {
				notes = append(notes, fmt.Sprintf("%d with an unknown status", n))
			}
			if wr.Unregistered > 0 {
				notes = append(notes, fmt.Sprintf("%d unregistered", wr.Unregistered))
			}
			if len(notes) > 0 {
				fmt.Fprintf(tw, " (%s)", strings.Join(notes, ", "))
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
		if f.ReadErr != nil {
			ew.printf("%s: UNREADABLE past row %d: %v\n", f.Path, f.N, f.ReadErr)
		}
		if f.Chain != nil {
			ew.printf("%v\n", f.Chain)
		}
		for _, p := range SealProblems(f.Path, f.Seal) {
			ew.printf("%s\n", p)
		}
		for _, n := range SealNotes(f.Path, f.Seal) {
			ew.printf("%s\n", n)
		}
		for _, d := range f.Diffs {
			ew.printf("%s\n", d)
		}
	}
	return bad, ew.err
}

// otherStatuses counts rows whose status is none of Statuses.
func otherStatuses(m map[string]int) int {
	n := 0
	for s, c := range m {
		if !model.ValidStatus(s) {
			n += c
		}
	}
	return n
}

// errWriter keeps the first write error so printing code stays linear.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, a ...any) { fmt.Fprintf(e, format, a...) }
