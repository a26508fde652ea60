package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
)

// exitCoder lets a verb choose its exit status (replay and soak distinguish
// FAIL, INVALID and ERROR).
type exitCoder interface{ ExitCode() int }

type verb struct {
	summary string
	run     func(ctx context.Context, stdout io.Writer, args []string) error
}

func verbs() map[string]verb {
	return map[string]verb{
		"doctor":    {"check this host's prerequisites, one line each", runDoctor},
		"run":       {"run registered windows against refsup, one row each", runWindows},
		"hostcheck": {"say whether anything of a faultwin run is left on this host", runHostcheck},
		"sweep":     {"sweep every dead run under the state root with its supervisor's own sweep", runSweep},
		"replay":    {"re-judge rows of JSONL files without root; exit 1 on any difference", runReplay},
		"seal":      {"seal a rows file's last session as unfinished after its harness died", runSeal},
		"report":    {"render rows as Markdown or one self-contained HTML page", runReport},
		"soak":      {"run the selected windows N times; per-window pass rates", runSoak},
		"merge":     {"check and summarise the rows files of a sharded soak (soak --shard) together", runMerge},
		"explore":   {"map a timed window: kill at every delay of a range, bisect the boundaries between outcomes", runExplore},
		"compact":   {"convert a rows file to compact rows (.jsonl.gz): evidence stored once, deltas, gzip", runCompact},
	}
}

func run(ctx context.Context, stdout io.Writer, args []string) error {
	vs := verbs()
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout, vs)
		if len(args) == 0 {
			return fmt.Errorf("no verb given")
		}
		return nil
	}
	v, ok := vs[args[0]]
	if !ok {
		return fmt.Errorf("unknown verb %q (verbs: %s)", args[0], strings.Join(names(vs), ", "))
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
	fmt.Fprintln(w, "usage: faultwin <verb> [flags]")
	for _, n := range names(vs) {
		fmt.Fprintf(w, "  %-10s %s\n", n, vs[n].summary)
	}
}
