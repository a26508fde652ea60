package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"faultwin/criteria"
	"faultwin/drivers"
	refsupdriver "faultwin/drivers/refsup"
	"faultwin/reports"
	"faultwin/snapshots"
	"faultwin/windows"
	"faultwin/windows/def"
)

// statusExit maps the worst status of a run to the exit codes every verb
// shares: 0 all PASS, 1 a FAIL, 2 only INVALID besides PASS, 3 an ERROR.
type statusExit struct {
	code int
	msg  string
}

func (e statusExit) Error() string { return e.msg }
func (e statusExit) ExitCode() int { return e.code }

// exitFor returns nil when every status is PASS, else the shared exit error.
func exitFor(counts map[string]int) error {
	switch {
	case counts[criteria.StatusError] > 0:
		return statusExit{3, fmt.Sprintf("%d window(s) ERROR: the harness broke", counts[criteria.StatusError])}
	case counts[criteria.StatusFail] > 0:
		return statusExit{1, fmt.Sprintf("%d window(s) FAIL", counts[criteria.StatusFail])}
	case counts[criteria.StatusInvalid] > 0:
		return statusExit{2, fmt.Sprintf("%d window(s) INVALID (not measurements)", counts[criteria.StatusInvalid])}
	}
	return nil
}

func selfDir() string {
	exe, err := os.Executable()
	if err != nil {
		return "."
	}
	return filepath.Dir(exe)
}

// selectWindows loads the registered windows and applies a ginkgo label
// filter, so `faultwin run` and `ginkgo run ./windows` pick the same ones.
func selectWindows(dir, filter string) ([]def.Window, error) {
	ws, err := def.Load(dir)
	if err != nil {
		return nil, err
	}
	if filter == "" {
		return ws, nil
	}
	lf, err := types.ParseLabelFilter(filter)
	if err != nil {
		return nil, fmt.Errorf("--label-filter %q: %w", filter, err)
	}
	var out []def.Window
	for _, w := range ws {
		if lf(windows.Labels(w)) {
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--label-filter %q: %w (of %d registered)", filter, windows.ErrNoWindows, len(ws))
	}
	return out, nil
}

func runWindows(ctx context.Context, stdout io.Writer, args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stdout)
	dir := fs.String("windows", "windows", "directory of window definitions (*.yaml)")
	filter := fs.String("label-filter", "", "ginkgo label filter, e.g. 'W3 && timed' or 'restore'")
	out := fs.String("results", "out/windows.jsonl", "JSONL file rows are appended to")
	root := fs.String("state-root", defaultStateRoot, "refsup state root")
	bin := fs.String("refsup", filepath.Join(selfDir(), "refsup"), "refsup binary")
	bugList := fs.String("bugs", "", "comma-separated refsup known-bug switches (mutant runs only)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("run: unexpected arguments %q", fs.Args())
	}
	ws, err := selectWindows(*dir, *filter)
	if err != nil {
		return err
	}
	if _, err := os.Stat(*bin); err != nil {
		return fmt.Errorf("refsup binary: %w (build it with `make build` or pass --refsup)", err)
	}
	var bugs []string
	if *bugList != "" {
		bugs = strings.Split(*bugList, ",")
	}
	if err := os.MkdirAll(*root, 0o755); err != nil {
		return err
	}
	w, err := reports.Open(*out)
	if err != nil {
		return err
	}
	defer w.Close()
	r := &windows.Runner{
		NewDriver: func(logDir string) drivers.Driver { return refsupdriver.New(*bin, *root, logDir, bugs) },
		Roots:     snapshots.DefaultRoots(*root),
		LogDir:    filepath.Join(filepath.Dir(*out), "logs"),
	}
	prov := windows.NewProvenance(".", "out", "results")
	counts := map[string]int{}
	t0 := time.Now()
	for i, win := range ws {
		if ctx.Err() != nil {
			return errors.Join(ctx.Err(), exitFor(counts))
		}
		o, err := r.Run(ctx, win)
		if err != nil {
			return fmt.Errorf("window %s: %w", win.ID, err)
		}
		row, err := prov.Row(o, "refsup")
		if err != nil {
			return fmt.Errorf("window %s: building row: %w", win.ID, err)
		}
		if err := w.Append(row); err != nil {
			return fmt.Errorf("window %s: writing row to %s: %w", win.ID, *out, err)
		}
		counts[o.Verdict.Status]++
		elapsed := time.Since(t0)
		eta := time.Duration(float64(elapsed) / float64(i+1) * float64(len(ws)-i-1))
		fmt.Fprintf(stdout, "[%d/%d] %-8s %-7s %6.1fs  %s  (eta %s)\n", i+1, len(ws), win.ID, o.Verdict.Status,
			o.Finished.Sub(o.Started).Seconds(), o.Verdict.Reason, eta.Round(time.Second))
	}
	fmt.Fprintf(stdout, "%d windows in %s: %d PASS, %d FAIL, %d INVALID, %d ERROR; rows in %s\n", len(ws),
		time.Since(t0).Round(time.Millisecond), counts[criteria.StatusPass], counts[criteria.StatusFail],
		counts[criteria.StatusInvalid], counts[criteria.StatusError], *out)
	return exitFor(counts)
}
