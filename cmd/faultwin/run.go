package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"sort"
	"strings"
)

// exitCoder lets a verb choose its exit status (see exitCodesText).
type exitCoder interface{ ExitCode() int }

type verb struct {
	summary string
	run     func(ctx context.Context, stdout io.Writer, args []string) error
}

func verbs() map[string]verb {
	return map[string]verb{
		"doctor":    {"check this host's prerequisites, one line each", runDoctor},
		"lint":      {"check descriptions, window definitions and learned outcomes without root or the host", runLint},
		"try":       {"run a description's commands once with no fault on throwaway runs; say per step what it did and which field to look at", runTry},
		"run":       {"run the windows of one directory (default windows/refsup/*.yaml), one row each", runWindows},
		"hostcheck": {"say whether anything of a faultwin run is left on this host", runHostcheck},
		"sweep":     {"sweep every dead run under the state root with its supervisor's own sweep", runSweep},
		"replay":    {"re-judge rows of JSONL files without root; exit 4 when a row does not re-judge as recorded", runReplay},
		"sign":      {"sign the seals of rows files with an SSH key (FILE.sig); replay and merge --signers verify them", runSign},
		"seal":      {"seal a rows file's last session as unfinished after its harness died", runSeal},
		"report":    {"render rows as Markdown or one self-contained HTML page", runReport},
		"findings":  {"group the failed criteria of rows into distinct findings, each with its windows, k/N and rows", runFindings},
		"soak":      {"run the selected windows N times; per-window pass rates", runSoak},
		"merge":     {"check and summarise the rows files of a sharded soak (soak --shard) together", runMerge},
		"explore":   {"map a timed window: kill at every delay of a range, bisect the boundaries between outcomes", runExplore},
		"compact":   {"convert a rows file to compact rows (.jsonl.gz): evidence stored once, deltas, gzip", runCompact},
		"expect":    {"learn a described supervisor's expected outcomes per window from its soaks (expected/outcomes.yaml)", runExpect},
		"drift":     {"hold new rows of a described supervisor against its expected outcomes; exit 1 on a drift", runDrift},
		"results":   {"results prune: keep what is cited and the newest soaks, remove the rest, pack what stays (results/README.md)", runResults},
		"rows":      {"print rows as plain JSONL (compact files expanded), selected by window, status or criterion", runRows},
	}
}

// run runs one command line. -h and --help, of faultwin or of a verb,
// print the usage to stdout and succeed.
func run(ctx context.Context, stdout io.Writer, args []string) error {
	err := dispatch(ctx, stdout, args)
	if errors.Is(err, errHelpShown) {
		return nil
	}
	return err
}

func dispatch(ctx context.Context, stdout io.Writer, args []string) error {
	vs := verbs()
	if len(args) == 0 {
		return usagef("", "no verb given (verbs: %s)", strings.Join(names(vs), ", "))
	}
	switch args[0] {
	case "--version", "-version", "version":
		fmt.Fprintln(stdout, version())
		return nil
	case "-h", "-help", "--help":
		usage(stdout, vs)
		return nil
	case "help":
		if len(args) == 1 {
			usage(stdout, vs)
			return nil
		}
		if len(args) > 2 {
			return usagef("", "help: unexpected arguments %q: name one verb", args[2:])
		}
		v, ok := vs[args[1]]
		if !ok {
			return unknownVerb(vs, args[1])
		}
		return v.run(ctx, stdout, []string{"-h"})
	}
	v, ok := vs[args[0]]
	if !ok {
		return unknownVerb(vs, args[0])
	}
	return v.run(ctx, stdout, args[1:])
}

func names(vs map[string]verb) []string {
	out := make([]string, 0, len(vs))
	for n := range vs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func usage(w io.Writer, vs map[string]verb) {
	fmt.Fprintln(w, "usage: faultwin <verb> [flags] [arguments]")
	fmt.Fprintln(w, "       faultwin <verb> -h    (or faultwin help <verb>): the verb's usage and flags")
	fmt.Fprintln(w, "\nRuns registered fault windows against a supervisor and reads back the rows they recorded.")
	fmt.Fprintln(w, "\nVerbs:")
	for _, n := range names(vs) {
		fmt.Fprintf(w, "  %-10s %s\n", n, vs[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprint(w, exitCodesText)
}

// version is the commit the binary was built from, as go build stamps it
// (vcs.revision, and -dirty when the tree had changes), and the Go
// release.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "faultwin (no build information)"
	}
	return versionOf(bi)
}

func versionOf(bi *debug.BuildInfo) string {
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "faultwin (built without version control information) " + bi.GoVersion
	}
	if dirty {
		rev += "-dirty"
	}
	return "faultwin " + rev + " " + bi.GoVersion
}
