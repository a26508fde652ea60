package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"faultwin/reports/review"
	"faultwin/reports/rows"
)

const compactUsage = `usage: faultwin compact [--rows FROM-TO] IN OUT

Converts the rows file IN into OUT, compact when OUT's name ends in ".gz"
(plain otherwise): each row stored by reference to its evidence (the row
without its long logs, and each log of 4 KiB or more) in sha256-named blobs
written once, as text or as a DEFLATE delta against an earlier blob, the
lines gzip-compressed. faultwin replay, report and soak --summary read both
forms; run and soak write compact rows to a --results path ending in .gz.

IN must read to its end, verify (chain and seals; a legacy file without
seals is accepted) and replay cleanly; OUT must not exist. Every row keeps
its content, but its hash is the hash of its new form: OUT starts a new
chain, as one session, and proves only that it matched IN when it was
converted. Its seal's note records IN's name, sha256, row count and last
row hash; keep IN's last hash (or IN) where it can be compared. OUT is read
back, verified and compared row by row with IN before the verb succeeds;
on any failure it is removed.

With --rows FROM-TO, OUT holds only IN's rows FROM to TO (1-based,
inclusive): a file too large to keep whole is split into parts, each its
own chain, whose seal notes name the rows of IN they hold and the hashes of
the first and last of them. soak --summary, report and replay read the
parts together as they read IN.

Exit status: 0 when OUT was written and checked, 1 when IN was refused or
OUT could not be written or checked, 64 a usage error (not exactly IN and
OUT).
`

// runCompact is `faultwin compact`.
func runCompact(_ context.Context, stdout io.Writer, args []string) error {
	fs := newFlags(stdout, "compact", compactUsage)
	part := fs.String("rows", "", "convert only IN's rows `FROM-TO` (1-based, inclusive)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return fs.usagef("name IN and OUT, got %d arguments", fs.NArg())
	}
	from, to := 0, 0
	if *part != "" {
		if n, err := fmt.Sscanf(*part, "%d-%d", &from, &to); n != 2 || err != nil || from < 1 || to < from {
			return fs.usagef("--rows %q: give FROM-TO, two row numbers from 1 with FROM <= TO (e.g. 1-650)", *part)
		}
	}
	in, out := fs.Arg(0), fs.Arg(1)
	t0 := time.Now()
	f := review.ReplayFile(in)
	if !f.OK() {
		var why error = f.ReadErr
		switch {
		case why == nil && f.Chain != nil:
			why = f.Chain
		case why == nil && len(f.Diffs) > 0:
			why = fmt.Errorf("%s", f.Diffs[0])
		case why == nil:
			why = fmt.Errorf("a session has no seal")
		}
		return fmt.Errorf("compact: %s does not replay cleanly, not converted (run `faultwin replay %s`): %v", in, in, why)
	}
	cv, err := rows.ConvertPart(in, out, from, to)
	if err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	inSize, outSize := size(in), size(out)
	fmt.Fprintf(stdout, "compact: %s (%s, %s, %d bytes, %.0f bytes a row) -> %s (%d bytes, %.0f bytes a row, %.1f%%) in %s\n",
		in, count(cv.InRows, "row"), cv.InState, inSize, float64(inSize)/float64(cv.InRows),
		out, outSize, float64(outSize)/float64(cv.Rows), 100*float64(outSize)/float64(inSize), time.Since(t0).Round(time.Millisecond))
	if *part != "" {
		fmt.Fprintf(stdout, "compact: %s holds rows %d-%d of %s\n", out, cv.From, cv.To, in)
	}
	fmt.Fprintf(stdout, "compact: %s is a new chain; its seal records %s's sha256 %s and last row hash %s\n", out, in, cv.InSHA256, cv.InLast)
	return nil
}

func size(p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size()
}
