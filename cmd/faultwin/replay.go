package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"faultwin/reports/review"
	"faultwin/reports/rows"
)

const replayUsage = `usage: faultwin replay [--signers ALLOWED_SIGNERS [--require-signed]] FILE|DIR...

Re-judges every row of each JSONL file (a directory stands for every
*.jsonl and *.jsonl.gz file below it but in logs/; a .jsonl.gz file holds
compact rows, see faultwin compact -h) without root and without touching the host: checks the hash chain,
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

Signatures (faultwin sign): with --signers, each sealed session's
signature in FILE.sig is verified with ssh-keygen against that
allowed_signers file. A signature by a key not in it, one that does not
verify over the seal (the file was re-chained after signing) and one of a
seal the file does not hold fail the replay; with --require-signed so does
a session, or a legacy file, without a signature. Without --signers, .sig
files are not read.

Exit status: 0 when every file reads to its end, every chain holds, no
session lacks its seal and every row re-judges exactly as recorded, whatever
the recorded statuses (a FAIL faithfully recorded replays cleanly); 4 (the
evidence does not verify) on any disagreement, broken chain, unsealed
session or unreadable file, or a signature check above that fails; 64 a
usage error, also when an argument names no evidence: a path that does not
exist, an empty (0-byte) file, a directory without rows files, or files
that hold no rows at all (report and soak --summary refuse them alike).
`

// runReplay is `faultwin replay`: the reviewer's check that the evidence
// says what it claims, needing nothing but the files.
func runReplay(ctx context.Context, stdout io.Writer, args []string) error {
	fs := newFlags(stdout, "replay", replayUsage)
	sf := addSignerFlags(fs)
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := sf.check(fs); err != nil {
		return err
	}
	paths, err := evidenceFiles("replay", fs.Args())
	if err != nil {
		return err
	}
	defer lightGC()()
	var files []review.FileReplay
	nrows := 0
	states := map[rows.SealState]int{}
	var unsealed []string
	// The files replay as the report's do (as many at once as there are
	// CPUs, each row judged as it is decoded), but only counts and
	// differences are printed: no file's records are kept past its
	// replay. They are listed in the order given.
	for i, f := range review.ReplayFiles(paths, false) {
		p := paths[i]
		nrows += f.N
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
	sigProblems := sf.verify(ctx, stdout, "replay", paths)
	switch {
	case bad > 0:
		msg := fmt.Sprintf("replay: %d of %s do not replay cleanly (see the lines above)", bad, count(len(files), "file"))
		if len(unsealed) > 0 {
			msg += fmt.Sprintf("; unsealed: %s. If the run that wrote them died, seal each with `faultwin seal --unfinished --reason WHY FILE`; if a file was cut, restore it from a copy",
				strings.Join(unsealed, ", "))
		}
		if len(sigProblems) > 0 {
			msg += fmt.Sprintf("; and %s rejected: %s", count(len(sigProblems), "signature check"), strings.Join(sigProblems, "; "))
		}
		return statusExit{exitUnverified, msg}
	case nrows == 0:
		return noRows("replay", paths)
	case len(sigProblems) > 0:
		return signatureExit("replay", sigProblems)
	}
	var seals []string
	if n := states[rows.Sealed]; n > 0 {
		seals = append(seals, fmt.Sprintf("%d sealed", n))
	}
	if n := states[rows.Legacy]; n > 0 {
		seals = append(seals, fmt.Sprintf("%d legacy (written before sealing: a cut tail cannot be told)", n))
	}
	if *sf.signers != "" {
		seals = append(seals, "every signature verifies")
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

Exit status: 0 when every FILE was sealed, 1 when one was refused or
could not be sealed, 64 a usage error (no FILE, no --unfinished, no
--reason).
`

// runSeal is `faultwin seal`: the explicit way out of an unsealed file.
func runSeal(_ context.Context, stdout io.Writer, args []string) error {
	fs := newFlags(stdout, "seal", sealUsage)
	unfinished := fs.Bool("unfinished", false, "seal the last session as unfinished (required: the only kind of seal written afterwards)")
	reason := fs.String("reason", "", "why the session never finished, recorded in the seal (required)")
	if err := fs.parse(args); err != nil {
		return err
	}
	switch {
	case !*unfinished:
		return fs.usagef("--unfinished is required: a session's own writer seals it as closed; afterwards it can only be sealed as unfinished")
	case strings.TrimSpace(*reason) == "":
		return fs.usagef("--reason is required: say why the run never finished (e.g. --reason 'harness killed by the OOM killer')")
	case fs.NArg() == 0:
		return fs.usagef("name at least one JSONL file")
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

// lightGC lets a replay's heap grow to replayHeap before the collector
// runs (GOGC 400 under a soft limit), instead of twice what is live: a
// replay holds one file per CPU while it reads (tens of MiB) and
// allocates gigabytes in passing, so it collects about a third as often
// within the same peak. It returns the undo.
func lightGC() func() {
	pct := debug.SetGCPercent(400)
	limit := debug.SetMemoryLimit(replayHeap)
	return func() { debug.SetGCPercent(pct); debug.SetMemoryLimit(limit) }
}

// replayHeap is the soft limit of a replay's heap: within the 200 MiB
// of resident memory docs/performance.md holds it to, with the runtime's
// own and the binary's share beside it.
const replayHeap = 150 << 20

// jsonlFiles expands the arguments of verb: the one rule of every verb
// that reads rows (rowsFilesUnder): a file stands for itself, a directory
// for every *.jsonl and *.jsonl.gz file at any depth below it but in logs/,
// in name order, each once.
func jsonlFiles(verb string, args []string) ([]string, error) { return rowsFilesUnder(verb, args) }

// evidenceFiles is jsonlFiles for the verbs that judge rows (replay,
// report, soak --summary): an empty file among them is refused too. A
// rows file is never empty: a session opens with a marker line before
// its first row.
func evidenceFiles(verb string, args []string) ([]string, error) {
	paths, err := jsonlFiles(verb, args)
	if err != nil {
		return nil, err
	}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, missingPath(verb, p, err)
		}
		if st.Size() == 0 {
			return nil, noEvidence(verb, p, "is empty (0 bytes), so it holds no row")
		}
	}
	return paths, nil
}

// noRows refuses files that verify but hold no row at all (a session
// opened and sealed before its first window): nothing to judge.
func noRows(verb string, paths []string) error {
	if len(paths) == 1 {
		return noEvidence(verb, paths[0], "verifies but holds no row")
	}
	return noEvidence(verb, strings.Join(paths, ", "), "verify but hold no row")
}

// count renders "1 file", "2 files".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
