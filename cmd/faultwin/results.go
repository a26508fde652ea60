package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"faultwin/reports/rows"
)

const resultsUsage = `usage: faultwin results prune [--dry-run] [DIR]

Applies the policy of results/ (DIR/README.md, default DIR results) to DIR,
which is a directory of the repository: the repository is DIR's parent.

A file stays when a file of the repository cites it (*.md, docs/**/*.md,
windows/*/expected/outcomes.yaml, and Go files, which read results by
name): by its path from the repository, by that path without its .jsonl or
.jsonl.gz, with {a,b} alternatives, or in a doc by its bare file name. A
rows file also stays when it is the newest (by its rows' finish time) of
its supervisor (DIR's subdirectory, refsup at the top) and variant (its
name without the pass count and commit: soak, ab, checkpoint-ab, ...;
every part of a soak split by compact --rows goes with it). The
subdirectories logs/, mutants/ and explore/ stay whole. Every other file
is removed: git history keeps it. Each file is listed as keep or remove
with the reason (cited by which files).

Then every compact file that stays (*.jsonl.gz) and is sealed is packed:
its lines, blobs as text, in one zstd stream, about a quarter of its size.
Its rows, markers and hashes are unchanged, so its chain, seals and
signatures hold, and it keeps its name. A packed file is read by every
verb and refused by run and soak as a file to append to.

--dry-run lists what would be removed and packed, changing nothing.

Exit status: 0 when done, 1 when a file could not be read, removed or
packed, 64 a usage error.
`

// runResults is `faultwin results`: one sub-verb, prune.
func runResults(_ context.Context, stdout io.Writer, args []string) error {
	fs := newFlags(stdout, "results", resultsUsage)
	dry := fs.Bool("dry-run", false, "list what would be removed and packed; change nothing")
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() < 1 || fs.Arg(0) != "prune" || fs.NArg() > 2 {
		return fs.usagef("name the sub-verb prune and at most one DIR")
	}
	dir := "results"
	if fs.NArg() == 2 {
		dir = fs.Arg(1)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return fs.usagef("%s is not a directory", dir)
	}
	repo := filepath.Dir(abs)
	before, err := tallyResults(abs)
	if err != nil {
		return err
	}
	ds, err := decide(repo, abs)
	if err != nil {
		return fmt.Errorf("results prune: %w", err)
	}
	verb := map[bool]string{true: "keep  ", false: "remove"}
	for _, d := range ds {
		fmt.Fprintf(stdout, "%s %s: %s\n", verb[d.keep], d.path, d.why)
	}
	for _, d := range ds {
		p := filepath.Join(repo, d.path)
		switch {
		case !d.keep && *dry:
		case !d.keep:
			if err := os.Remove(p); err != nil {
				return fmt.Errorf("results prune: %w", err)
			}
		case isRowsName(p) && !strings.HasPrefix(d.path, "results/logs/"):
			if err := compactKept(stdout, p, d.path, *dry); err != nil {
				return fmt.Errorf("results prune: %w", err)
			}
		}
	}
	after, err := tallyResults(abs)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "results prune: %s before: %s\n", dir, before)
	if *dry {
		fmt.Fprintf(stdout, "results prune: dry run, nothing changed\n")
		return nil
	}
	fmt.Fprintf(stdout, "results prune: %s after:  %s\n", dir, after)
	return nil
}

// resultsTotal is the size of a results directory.
type resultsTotal struct {
	files, rows  int
	bytes, rowsB int64 // every file's bytes; the rows files' bytes
}

func (t resultsTotal) String() string {
	return fmt.Sprintf("%d files, %.1f MB, %d rows, %.0f bytes a row", t.files, float64(t.bytes)/1e6, t.rows, float64(t.rowsB)/float64(max(t.rows, 1)))
}

func tallyResults(dir string) (resultsTotal, error) {
	var t resultsTotal
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || strings.HasPrefix(info.Name(), ".pack-") || strings.HasPrefix(info.Name(), ".strip-") {
			return err
		}
		t.files++
		t.bytes += info.Size()
		rel, _ := filepath.Rel(dir, p)
		if !isRowsName(info.Name()) || strings.HasPrefix(filepath.ToSlash(rel), "logs/") {
			return nil
		}
		rs, err := rows.Read(p)
		if err != nil {
			return fmt.Errorf("results prune: %w", err)
		}
		t.rows += len(rs)
		t.rowsB += info.Size()
		return nil
	})
	return t, err
}

// compactKept stores a kept rows file as the policy says: without its
// logs' text (a new chain whose seal names the file it came from) and,
// compact, packed. A legacy file is left as written: converting it would
// seal it.
func compactKept(stdout io.Writer, p, name string, dry bool) error {
	c, err := rows.VerifyContents(p)
	if err != nil {
		return err
	}
	if c.Sealing().State == rows.Legacy {
		fmt.Fprintf(stdout, "leave  %s: legacy (written before sealing), left as written\n", name)
		return nil
	}
	if rows.HasOutput(c.Rows) {
		if dry {
			fmt.Fprintf(stdout, "strip  %s: would drop the supervisor output no criterion reads (logs' text, sweeps' raw output)\n", name)
		} else {
			tmp := filepath.Join(filepath.Dir(p), ".strip-"+filepath.Base(p))
			os.Remove(tmp)
			cv, err := rows.ConvertForResults(p, tmp)
			if err != nil {
				os.Remove(tmp)
				return err
			}
			before := fileSize(p)
			if err := os.Rename(tmp, p); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "strip  %s: %d rows without the supervisor output no criterion reads, re-chained (the seal records the old sha256 %s), %d -> %d bytes\n", name, cv.Rows, cv.InSHA256[:12], before, fileSize(p))
		}
	}
	if !rows.IsCompactPath(p) {
		return nil
	}
	if packed, err := rows.IsPacked(p); err != nil || packed {
		return err
	}
	if dry {
		fmt.Fprintf(stdout, "pack   %s\n", name)
		return nil
	}
	pk, err := rows.Pack(p, p)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "pack   %s: %d rows, %d -> %d bytes (%.0f bytes a row)\n", name, pk.Rows, pk.InBytes, pk.OutBytes, float64(pk.OutBytes)/float64(max(pk.Rows, 1)))
	return nil
}

func fileSize(p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size()
}
