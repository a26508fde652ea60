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

// windowFlags are the flags of every verb that runs windows (run, soak).
type windowFlags struct {
	dir, filter, out, root, bin, bugs, logs *string
}

func addWindowFlags(fs *flag.FlagSet, defaultOut string) *windowFlags {
	return &windowFlags{
		dir:    fs.String("windows", "windows", "directory of window definitions (*.yaml)"),
		filter: fs.String("label-filter", "", "ginkgo label filter, e.g. 'W3 && timed' or 'restore'"),
		out:    fs.String("results", defaultOut, "JSONL file rows are appended to"),
		root:   fs.String("state-root", defaultStateRoot, "refsup state root"),
		bin:    fs.String("refsup", filepath.Join(selfDir(), "refsup"), "refsup binary"),
		bugs:   fs.String("bugs", "", "comma-separated refsup known-bug switches (mutant runs only)"),
		logs:   fs.String("logs", "out/logs", "directory for the supervisor's own stdout, one subdir per window (rows carry the logs too)"),
	}
}

// windowSession is what running windows needs once per invocation: the
// selected windows, a runner, the provenance rows record and the open
// results file. run and soak share it so a soak row is built exactly like
// a run row.
type windowSession struct {
	windows []def.Window
	runner  windowRunner
	prov    *windows.Provenance
	w       *reports.Writer
	out     string
}

// open selects the windows, checks the refsup binary and opens the results
// file (locked, so two invocations cannot interleave rows).
func (f *windowFlags) open() (*windowSession, error) {
	ws, err := selectWindows(*f.dir, *f.filter)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(*f.bin); err != nil {
		return nil, fmt.Errorf("refsup binary: %w (build it with `make build` or pass --refsup)", err)
	}
	var bugs []string
	if *f.bugs != "" {
		bugs = strings.Split(*f.bugs, ",")
	}
	if err := os.MkdirAll(*f.root, 0o755); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(*f.out), 0o755); err != nil {
		return nil, err
	}
	w, err := reports.Open(*f.out)
	if err != nil {
		return nil, err
	}
	bin, root := *f.bin, *f.root
	return &windowSession{
		windows: ws,
		runner: &windows.Runner{
			NewDriver: func(logDir string) drivers.Driver { return refsupdriver.New(bin, root, logDir, bugs) },
			Roots:     snapshots.DefaultRoots(root),
			LogDir:    *f.logs,
		},
		prov: windows.NewProvenance(".", "out", "results"),
		w:    w,
		out:  *f.out,
	}, nil
}

func (s *windowSession) close() error { return s.w.Close() }

// windowRunner runs one window; *windows.Runner is the real one, and the
// soak's tests script outcomes through it without touching the host.
type windowRunner interface {
	Run(ctx context.Context, w def.Window) (*windows.Outcome, error)
}

// record turns an outcome into its row and appends it.
func (s *windowSession) record(o *windows.Outcome) (*reports.Row, error) {
	row, err := s.prov.Row(o, "refsup")
	if err != nil {
		return nil, fmt.Errorf("building row: %w", err)
	}
	if err := s.w.Append(row); err != nil {
		return nil, fmt.Errorf("writing row to %s: %w", s.out, err)
	}
	return row, nil
}

func runWindows(ctx context.Context, stdout io.Writer, args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stdout)
	wf := addWindowFlags(fs, "out/windows.jsonl")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("run: unexpected arguments %q", fs.Args())
	}
	s, err := wf.open()
	if err != nil {
		return err
	}
	defer s.close()
	ws := s.windows
	counts := map[string]int{}
	t0 := time.Now()
	for i, win := range ws {
		if ctx.Err() != nil {
			return errors.Join(ctx.Err(), exitFor(counts))
		}
		o, err := s.runner.Run(ctx, win)
		if err != nil {
			return fmt.Errorf("window %s: %w", win.ID, err)
		}
		if _, err := s.record(o); err != nil {
			return fmt.Errorf("window %s: %w", win.ID, err)
		}
		counts[o.Verdict.Status]++
		elapsed := time.Since(t0)
		eta := time.Duration(float64(elapsed) / float64(i+1) * float64(len(ws)-i-1))
		fmt.Fprintf(stdout, "[%d/%d] %-8s %-7s %6.1fs  %s  (eta %s)\n", i+1, len(ws), win.ID, o.Verdict.Status,
			o.Finished.Sub(o.Started).Seconds(), o.Verdict.Reason, eta.Round(time.Second))
	}
	fmt.Fprintf(stdout, "%d windows in %s: %d PASS, %d FAIL, %d INVALID, %d ERROR; rows in %s\n", len(ws),
		time.Since(t0).Round(time.Millisecond), counts[criteria.StatusPass], counts[criteria.StatusFail],
		counts[criteria.StatusInvalid], counts[criteria.StatusError], s.out)
	return exitFor(counts)
}
