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
	"strings"

	"faultwin/reports/review"
	"faultwin/reports/rows"
)

const replayUsage = `usage: faultwin replay FILE|DIR...

Re-judges every row of each JSONL file (a directory stands for its *.jsonl
and *.jsonl.gz files; a .jsonl.gz file holds compact rows, see faultwin
compact -h) without root and without touching the host: checks the hash chain,
each window definition against its hash, and recomputes every criterion and
the status from the row's stored input. Prints a per-window table per file
(statuses as recorded, whether the re-judgement agrees), then each
difference as "FILE row N (WINDOW): CRITERION recorded ..., recomputed ...".

Seals: each run, soak or suite that writes rows opens its session with an
open marker and, when it closes, seals it with a seal line (row count and
last row hash, chained like the rows). The header says "sealed", "UNSEALED"
(a session without its seal: the run never finished, or the file was cut
from the end) or "unsealed (legacy: written before sealing)" for files that
predate seals, which replay cleanly but whose cut tail cannot be told.

Exit status: 0 when every file reads to its end, every chain holds, no
session lacks its seal and every row re-judges exactly as recorded, whatever
the recorded statuses (a FAIL faithfully recorded replays cleanly); 1 on any
disagreement, broken chain, unsealed session, unreadable file, or when there
were no rows at all to replay.
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
	nrows := 0
	states := map[rows.SealState]int{}
	var unsealed []string
	for _, p := range paths {
		f := review.ReplayFile(p)
		nrows += len(f.Rows)
		files = append(files, f)
		states[f.Seal.State]++
		for _, u := range f.Seal.Unsealed() {
			unsealed = append(unsealed, fmt.Sprintf("%s (%s from line %d, no seal)", p, count(u.Rows, "row"), u.Line))
		}
	}
	bad, err := review.WriteReplay(stdout, files)
	if err != nil {
		return err
	}
	switch {
	case bad > 0:
		msg := fmt.Sprintf("replay: %d of %s do not replay cleanly (see the lines above)", bad, count(len(files), "file"))
		if len(unsealed) > 0 {
			msg += fmt.Sprintf("; unsealed: %s. If the run that wrote them died, seal each with `faultwin seal --unfinished --reason WHY FILE`; if a file was cut, restore it from a copy",
				strings.Join(unsealed, ", "))
		}
		return statusExit{1, msg}
	case nrows == 0:
		return statusExit{1, fmt.Sprintf("replay: no rows in %s: nothing was checked", count(len(files), "file"))}
	}
	var seals []string
	if n := states[rows.Sealed]; n > 0 {
		seals = append(seals, fmt.Sprintf("%d sealed", n))
	}
	if n := states[rows.Legacy]; n > 0 {
		seals = append(seals, fmt.Sprintf("%d legacy (written before sealing: a cut tail cannot be told)", n))
	}
	fmt.Fprintf(stdout, "replay: %s, %s: every chain holds and every row re-judges as recorded; %s\n", count(len(files), "file"), count(nrows, "row"), strings.Join(seals, ", "))
	return nil
}

const sealUsage = `usage: faultwin seal --unfinished --reason WHY FILE...

Seals the last session of each FILE as unfinished, recording WHY. A session
is left without its seal when the harness that wrote it died before closing
the file (killed, host rebooted); faultwin run, soak and the suites refuse
to append to such a file. Run ` + "`faultwin replay FILE`" + ` first: its rows are
genuine if the chain holds and they re-judge as recorded. If instead the
file was cut from the end, do not seal it: restore it from a copy.

The seal is a chained line like the rows; the file then replays cleanly,
with a note naming the unfinished session and WHY. A file another writer
has open (a run in progress), one that does not read or verify, a legacy
file (no sessions) and a sealed file are refused.

Exit status: 0 when every FILE was sealed, 1 otherwise.
`

// runSeal is `faultwin seal`: the explicit way out of an unsealed file.
func runSeal(_ context.Context, stdout io.Writer, args []string) error {
	fs := flag.NewFlagSet("seal", flag.ContinueOnError)
	fs.SetOutput(stdout)
	fs.Usage = func() { fmt.Fprint(stdout, sealUsage); fs.PrintDefaults() }
	unfinished := fs.Bool("unfinished", false, "seal the last session as unfinished (required: the only kind of seal written afterwards)")
	reason := fs.String("reason", "", "why the session never finished, recorded in the seal (required)")
	if err := fs.Parse(args); err != nil {
		return helpOK(err)
	}
	switch {
	case !*unfinished:
		return fmt.Errorf("seal: --unfinished is required: a session's own writer seals it as closed; afterwards it can only be sealed as unfinished")
	case strings.TrimSpace(*reason) == "":
		return fmt.Errorf("seal: --reason is required: say why the run never finished (e.g. --reason 'harness killed by the OOM killer')")
	case fs.NArg() == 0:
		return fmt.Errorf("seal: name at least one JSONL file")
	}
	var errs []error
	for _, p := range fs.Args() {
		m, err := rows.SealUnfinished(p, *reason)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(stdout, "seal: %s: sealed its last session (%s) as unfinished: %s; the file holds %s, last hash %s\n",
			p, count(m.Seal.SessionRows, "row"), m.Seal.Note, count(m.Seal.Rows, "row"), rows.ShortHash(m.Seal.Last))
	}
	if len(errs) > 0 {
		return fmt.Errorf("seal: %w", errors.Join(errs...))
	}
	return nil
}

// jsonlFiles expands the arguments: a file stands for itself, a directory
// for its *.jsonl and *.jsonl.gz (compact) files in name order. Naming nothing is an error, so a
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
		gz, err := filepath.Glob(filepath.Join(a, "*.jsonl.gz"))
		if err != nil {
			return nil, err
		}
		m = append(m, gz...)
		if len(m) == 0 {
			return nil, fmt.Errorf("%s: no *.jsonl files (nor compact *.jsonl.gz)", a)
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
