package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"faultwin/review"
)

const replayUsage = `usage: faultwin replay FILE|DIR...

Re-judges every row of each JSONL file (a directory stands for its *.jsonl
files) without root and without touching the host: checks the hash chain,
each window definition against its hash, and recomputes every criterion and
the status from the row's stored input. Prints a per-window table per file
(statuses as recorded, whether the re-judgement agrees), then each
difference as "FILE row N (WINDOW): CRITERION recorded ..., recomputed ...".

Exit status: 0 when every file reads to its end, every chain holds and every
row re-judges exactly as recorded, whatever the recorded statuses (a FAIL
faithfully recorded replays cleanly); 1 on any disagreement, broken chain,
unreadable file, or when there were no rows at all to replay.
`

// runReplay is `faultwin replay`: the reviewer's check that the evidence
// says what it claims, needing nothing but the files.
func runReplay(_ context.Context, stdout io.Writer, args []string) error {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stdout)
	fs.Usage = func() { fmt.Fprint(stdout, replayUsage) }
	if err := fs.Parse(args); err != nil {
		return helpOK(err)
	}
	paths, err := jsonlFiles(fs.Args())
	if err != nil {
		return err
	}
	var files []review.FileReplay
	rows := 0
	for _, p := range paths {
		f := review.ReplayFile(p)
		rows += len(f.Rows)
		files = append(files, f)
	}
	bad, err := review.WriteReplay(stdout, files)
	if err != nil {
		return err
	}
	switch {
	case bad > 0:
		return statusExit{1, fmt.Sprintf("replay: %d of %s do not replay cleanly (see the lines above)", bad, count(len(files), "file"))}
	case rows == 0:
		return statusExit{1, fmt.Sprintf("replay: no rows in %s: nothing was checked", count(len(files), "file"))}
	}
	fmt.Fprintf(stdout, "replay: %s, %s: every chain holds and every row re-judges as recorded\n", count(len(files), "file"), count(rows, "row"))
	return nil
}

// jsonlFiles expands the arguments: a file stands for itself, a directory
// for its *.jsonl files in name order. Naming nothing is an error, so a
// typo cannot turn into a check of zero files.
func jsonlFiles(args []string) ([]string, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("name at least one JSONL file or directory")
	}
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, a)
			continue
		}
		m, err := filepath.Glob(filepath.Join(a, "*.jsonl"))
		if err != nil {
			return nil, err
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("%s: no *.jsonl files", a)
		}
		sort.Strings(m)
		out = append(out, m...)
	}
	return out, nil
}

// helpOK makes -h a success: the usage was asked for and printed.
func helpOK(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

// count renders "1 file", "2 files".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
